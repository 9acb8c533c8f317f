// RUN: piper-opt %s -split-input-file --piper-verify-programs -verify-diagnostics
// Planted deadlocks: each program set would hang under mpiexec; the
// verifier names the cycle of blocked streams before anything runs.

piper.mesh @mesh axes = [pp = 3]
func.func @step(%x: tensor<4xf32>) {
  return
}

// Three stages that each receive before they send: a ring that never
// starts.
piper.program @a role {pp = 0} of @mesh step @step streams ["pp"] {
  // expected-error@+1 {{deadlock: stream "pp" of @a {pp=0} blocks in recv 'ca' (from @c, tag 2), waiting for stream "pp" of @c {pp=2}, which blocks in recv 'bc' (from @b, tag 1), waiting for stream "pp" of @b {pp=1}, which blocks in recv 'ab' (from @a, tag 0), waiting for stream "pp" of @a {pp=0}}}
  %x = piper.recv "ca" from @c tag 2 on "pp" : tensor<4xf32>
  piper.send "ab" %x to @b tag 0 on "pp" : tensor<4xf32>
}
piper.program @b role {pp = 1} of @mesh step @step streams ["pp"] {
  // expected-note@+1 {{stream "pp" of @b {pp=1} blocks here}}
  %x = piper.recv "ab" from @a tag 0 on "pp" : tensor<4xf32>
  piper.send "bc" %x to @c tag 1 on "pp" : tensor<4xf32>
}
piper.program @c role {pp = 2} of @mesh step @step streams ["pp"] {
  // expected-note@+1 {{stream "pp" of @c {pp=2} blocks here}}
  %x = piper.recv "bc" from @b tag 1 on "pp" : tensor<4xf32>
  piper.send "ca" %x to @a tag 2 on "pp" : tensor<4xf32>
}

// -----

piper.mesh @mesh axes = [pp = 2]
func.func @step(%x: tensor<4xf32>) {
  return
}

// Both stages send first. Sends are rendezvous (a large MPI_Send or an
// NCCL send waits for its receiver), so neither reaches its recv.
piper.program @a role {pp = 0} of @mesh step @step streams ["pp"] {
  %x = piper.input 0 : tensor<4xf32>
  // expected-error@+1 {{deadlock: stream "pp" of @a {pp=0} blocks in send 'x' (to @b, tag 0), waiting for stream "pp" of @b {pp=1}, which blocks in send 'y' (to @a, tag 1), waiting for stream "pp" of @a {pp=0}}}
  piper.send "x" %x to @b tag 0 on "pp" : tensor<4xf32>
  %y = piper.recv "y" from @b tag 1 on "pp" : tensor<4xf32>
}
piper.program @b role {pp = 1} of @mesh step @step streams ["pp"] {
  %x0 = piper.input 0 : tensor<4xf32>
  // expected-note@+1 {{stream "pp" of @b {pp=1} blocks here}}
  piper.send "y" %x0 to @a tag 1 on "pp" : tensor<4xf32>
  %x = piper.recv "x" from @a tag 0 on "pp" : tensor<4xf32>
}

// -----

piper.mesh @mesh axes = [pp = 2]
func.func @step(%x: tensor<4xf32>) {
  return
}

// Two messages on one stream received in the opposite order: the receiver
// waits for the second while the sender is stuck in the first.
piper.program @a role {pp = 0} of @mesh step @step streams ["pp"] {
  %x = piper.input 0 : tensor<4xf32>
  // expected-error@+1 {{deadlock: stream "pp" of @a {pp=0} blocks in send 'first' (to @b, tag 0), waiting for stream "pp" of @b {pp=1}, which blocks in recv 'second' (from @a, tag 1), waiting for stream "pp" of @a {pp=0}}}
  piper.send "first" %x to @b tag 0 on "pp" : tensor<4xf32>
  piper.send "second" %x to @b tag 1 on "pp" : tensor<4xf32>
}
piper.program @b role {pp = 1} of @mesh step @step streams ["pp"] {
  // expected-note@+1 {{stream "pp" of @b {pp=1} blocks here}}
  %s = piper.recv "second" from @a tag 1 on "pp" : tensor<4xf32>
  %f = piper.recv "first" from @a tag 0 on "pp" : tensor<4xf32>
}

// -----

piper.mesh @mesh axes = [pp = 2]
func.func @step(%x: tensor<4xf32>) {
  return
}

// A collective and a point-to-point message on one stream, in opposite
// orders: @a enters the all-reduce, @b first waits for a message @a only
// sends after it.
piper.program @a role {pp = 0} of @mesh step @step streams ["pp"] {
  %x = piper.input 0 : tensor<4xf32>
  // expected-error@+1 {{deadlock: stream "pp" of @a {pp=0} blocks in all_reduce 'ar(x)' (tensor<4xf32>), waiting for stream "pp" of @b {pp=1}, which blocks in recv 'x' (from @a, tag 0), waiting for stream "pp" of @a {pp=0}}}
  %s = piper.comm "ar(x)" all_reduce %x over ["pp"] on "pp" : tensor<4xf32>
  piper.send "x" %x to @b tag 0 on "pp" : tensor<4xf32>
}
piper.program @b role {pp = 1} of @mesh step @step streams ["pp"] {
  %x0 = piper.input 0 : tensor<4xf32>
  // expected-note@+1 {{stream "pp" of @b {pp=1} blocks here}}
  %x = piper.recv "x" from @a tag 0 on "pp" : tensor<4xf32>
  %s = piper.comm "ar(x)" all_reduce %x0 over ["pp"] on "pp" : tensor<4xf32>
}

// -----

piper.mesh @mesh axes = [pp = 2]
func.func @step(%x: tensor<4xf32>) {
  return
}

// A cross-stream event closes the cycle: @b sends 'z' from its compute
// stream only after an event its pp stream records once 'x' has arrived,
// and @a sends 'x' only after receiving 'z'.
piper.program @a role {pp = 0} of @mesh step @step streams ["pp"] {
  // expected-error@+1 {{deadlock: stream "pp" of @a {pp=0} blocks in recv 'z' (from @b, tag 1), waiting for stream "compute" of @b {pp=1}, which blocks in wait for event 0, waiting for stream "pp" of @b {pp=1}, which blocks in recv 'x' (from @a, tag 0), waiting for stream "pp" of @a {pp=0}}}
  %z = piper.recv "z" from @b tag 1 on "pp" : tensor<4xf32>
  piper.send "x" %z to @b tag 0 on "pp" : tensor<4xf32>
}
piper.program @b role {pp = 1} of @mesh step @step streams ["compute", "pp"] {
  %c = piper.input 0 : tensor<4xf32>
  // expected-note@+1 {{stream "pp" of @b {pp=1} blocks here}}
  %x = piper.recv "x" from @a tag 0 on "pp" : tensor<4xf32>
  piper.record 0 on "pp"
  // expected-note@+1 {{stream "compute" of @b {pp=1} blocks here}}
  piper.wait 0 on "compute"
  piper.send "z" %c to @a tag 1 on "compute" : tensor<4xf32>
}
