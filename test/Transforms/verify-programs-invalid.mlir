// RUN: piper-opt %s -split-input-file --piper-verify-programs -verify-diagnostics
// Planted faults that --piper-verify-programs must catch, with the programs,
// streams and ops it names.

piper.mesh @mesh axes = [dp = 2, pp = 2]
func.func @step(%x: tensor<4xf32>, %y: tensor<8xf32>) {
  return
}

// Two ranks that both receive first: each pp stream blocks in a recv whose
// send comes after the peer's own recv.
piper.program @a role {pp = 0} of @mesh step @step streams ["pp"] {
  // expected-error@+1 {{deadlock: stream "pp" of @a {pp=0} blocks in recv 'y' (from @b, tag 1), waiting for stream "pp" of @b {pp=1}, which blocks in recv 'x' (from @a, tag 0), waiting for stream "pp" of @a {pp=0}}}
  %y = piper.recv "y" from @b tag 1 on "pp" : tensor<4xf32>
  piper.send "x" %y to @b tag 0 on "pp" : tensor<4xf32>
}
piper.program @b role {pp = 1} of @mesh step @step streams ["pp"] {
  // expected-note@+1 {{stream "pp" of @b {pp=1} blocks here}}
  %x = piper.recv "x" from @a tag 0 on "pp" : tensor<4xf32>
  piper.send "y" %x to @a tag 1 on "pp" : tensor<4xf32>
}

// -----

piper.mesh @mesh axes = [dp = 2, pp = 2]
func.func @step(%x: tensor<4xf32>, %y: tensor<8xf32>) {
  return
}

// A send and its recv disagree on the shape.
piper.program @a role {pp = 0} of @mesh step @step streams ["pp"] {
  %x = piper.recv "z" from @b tag 1 on "pp" : tensor<4xf32>
  // expected-error@+1 {{send 'x' (to @b, tag 0) of @a {pp=0} sends 'tensor<4xf32>', but recv 'x' (from @a, tag 0) of @b {pp=1} receives 'tensor<8xf32>'}}
  piper.send "x" %x to @b tag 0 on "pp" : tensor<4xf32>
}
piper.program @b role {pp = 1} of @mesh step @step streams ["pp"] {
  // expected-note@+1 {{the recv}}
  %x = piper.recv "x" from @a tag 0 on "pp" : tensor<8xf32>
}

// -----

piper.mesh @mesh axes = [dp = 2, pp = 2]
func.func @step(%x: tensor<4xf32>, %y: tensor<8xf32>) {
  return
}

// The members of a communicator over pp issue its collectives in
// different orders.
piper.program @a role {pp = 0} of @mesh step @step streams ["compute", "grad"] {
  %x = piper.input 0 : tensor<4xf32>
  %y = piper.input 1 : tensor<8xf32>
  // expected-note@+1 {{the other member's collective}}
  %gx = piper.comm "ar(x)" all_reduce %x over ["pp"] on "grad" : tensor<4xf32>
  %gy = piper.comm "ar(y)" all_reduce %y over ["pp"] on "grad" : tensor<8xf32>
}
piper.program @b role {pp = 1} of @mesh step @step streams ["compute", "grad"] {
  %x = piper.input 0 : tensor<4xf32>
  %y = piper.input 1 : tensor<8xf32>
  // expected-error@+1 {{collective order differs between members of communicator ["pp"] on "grad": collective #0 of @b {pp=1} is all_reduce 'ar(y)' (tensor<8xf32>), but of @a {pp=0} it is all_reduce 'ar(x)' (tensor<4xf32>)}}
  %gy = piper.comm "ar(y)" all_reduce %y over ["pp"] on "grad" : tensor<8xf32>
  %gx = piper.comm "ar(x)" all_reduce %x over ["pp"] on "grad" : tensor<4xf32>
}

// -----

piper.mesh @mesh axes = [dp = 2, pp = 2]
func.func @step(%x: tensor<4xf32>, %y: tensor<8xf32>) {
  return
}

// An event waited on but never recorded: the wait would return at once on a
// GPU and the stream would read a value not yet computed.
piper.program @a role {pp = 0} of @mesh step @step streams ["compute", "pp"] {
  piper.record 0 on "compute"
  piper.wait 0 on "pp"
  // expected-error@+1 {{stream "compute" of @a {pp=0} waits for event 1, which is never recorded}}
  piper.wait 1 on "compute"
}

// -----

piper.mesh @mesh axes = [dp = 2, pp = 2]
func.func @step(%x: tensor<4xf32>, %y: tensor<8xf32>) {
  return
}

// A wait issued before its record.
piper.program @a role {pp = 0} of @mesh step @step streams ["compute", "pp"] {
  // expected-error@+1 {{stream "pp" of @a {pp=0} waits for event 0 before it is recorded (on stream "compute")}}
  piper.wait 0 on "pp"
  // expected-note@+1 {{the record}}
  piper.record 0 on "compute"
}

// -----

piper.mesh @mesh axes = [dp = 2, pp = 2]
func.func @step(%x: tensor<4xf32>, %y: tensor<8xf32>) {
  return
}

// A send nobody receives.
piper.program @a role {pp = 0} of @mesh step @step streams ["pp"] {
  %x = piper.input 0 : tensor<4xf32>
  // expected-error@+1 {{send 'x' (to @b, tag 3) of @a {pp=0} has no matching recv in @b {pp=1}}}
  piper.send "x" %x to @b tag 3 on "pp" : tensor<4xf32>
}
piper.program @b role {pp = 1} of @mesh step @step streams ["pp"] {
}

// -----

piper.mesh @mesh axes = [dp = 2, pp = 2]
func.func @step(%x: tensor<4xf32>, %y: tensor<8xf32>) {
  return
}

// A recv nobody sends to.
piper.program @a role {pp = 0} of @mesh step @step streams ["pp"] {
}
piper.program @b role {pp = 1} of @mesh step @step streams ["pp"] {
  // expected-error@+1 {{recv 'x' (from @a, tag 0) of @b {pp=1} has no matching send in @a {pp=0}}}
  %x = piper.recv "x" from @a tag 0 on "pp" : tensor<4xf32>
}

// -----

piper.mesh @mesh axes = [dp = 2, pp = 2]
func.func @step(%x: tensor<4xf32>, %y: tensor<8xf32>) {
  return
}

// Tags tell messages between two programs apart.
piper.program @a role {pp = 0} of @mesh step @step streams ["pp"] {
  %x = piper.input 0 : tensor<4xf32>
  // expected-note@+1 {{the other send}}
  piper.send "x" %x to @b tag 0 on "pp" : tensor<4xf32>
  // expected-error@+1 {{@a {pp=0} sends twice to @b with tag 0}}
  piper.send "y" %x to @b tag 0 on "pp" : tensor<4xf32>
}
piper.program @b role {pp = 1} of @mesh step @step streams ["pp"] {
  %x = piper.recv "x" from @a tag 0 on "pp" : tensor<4xf32>
}

// -----

piper.mesh @mesh axes = [dp = 2, pp = 2]
func.func @step(%x: tensor<4xf32>, %y: tensor<8xf32>) {
  return
}

// A member that never issues a collective of its communicator.
piper.program @a role {pp = 0} of @mesh step @step streams ["grad"] {
  %x = piper.input 0 : tensor<4xf32>
  // expected-error@+1 {{collective order differs between members of communicator ["pp"] on "grad": collective #0 of @b {pp=1} is missing, but of @a {pp=0} it is all_reduce 'ar(x)' (tensor<4xf32>)}}
  %g = piper.comm "ar(x)" all_reduce %x over ["pp"] on "grad" : tensor<4xf32>
}
piper.program @b role {pp = 1} of @mesh step @step streams ["grad"] {
}

// -----

piper.mesh @mesh axes = [dp = 2, pp = 2]
func.func @step(%x: tensor<4xf32>, %y: tensor<8xf32>) {
  return
}

// A deadlock through events: @b sends only after its launch, which waits
// for what @a sends only after receiving from @b.
func.func private @f(tensor<4xf32>) -> tensor<4xf32>
piper.program @a role {pp = 0} of @mesh step @step streams ["pp"] {
  // expected-error@+1 {{deadlock: stream "pp" of @a {pp=0} blocks in recv 'y' (from @b, tag 0), waiting for stream "pp" of @b {pp=1}, which blocks in wait for event 1, waiting for stream "compute" of @b {pp=1}, which blocks in wait for event 0, waiting for stream "pp2" of @b {pp=1}, which blocks in recv 'x' (from @a, tag 0), waiting for stream "pp" of @a {pp=0}}}
  %y = piper.recv "y" from @b tag 0 on "pp" : tensor<4xf32>
  piper.send "x" %y to @b tag 0 on "pp" : tensor<4xf32>
}
piper.program @b role {pp = 1} of @mesh step @step streams ["compute", "pp", "pp2"] {
  %c = piper.input 0 : tensor<4xf32>
  // expected-note@+1 {{stream "pp2" of @b {pp=1} blocks here}}
  %x = piper.recv "x" from @a tag 0 on "pp2" : tensor<4xf32>
  piper.record 0 on "pp2"
  // expected-note@+1 {{stream "compute" of @b {pp=1} blocks here}}
  piper.wait 0 on "compute"
  %z = piper.launch "F" @f(%c) on "compute" : (tensor<4xf32>) -> tensor<4xf32>
  piper.record 1 on "compute"
  // expected-note@+1 {{stream "pp" of @b {pp=1} blocks here}}
  piper.wait 1 on "pp"
  piper.send "y" %z to @a tag 0 on "pp" : tensor<4xf32>
}

// -----

piper.mesh @mesh axes = [pp = 2]
func.func @step(%w: tensor<4xf32> {piper.param = #piper.param<"embed.weight", normal(0.02)>}) -> (tensor<4xf32> {piper.updated = "embed.weight"}) {
  return %w : tensor<4xf32>
}

// A tied weight updated on one stage only: @b reads embed.weight and never
// writes its update, so from step 2 on it computes with the initial value.
piper.program @a role {pp = 0} of @mesh step @step streams ["compute"] {
  %w = piper.input 0 : tensor<4xf32>
  piper.output 0 %w : tensor<4xf32>
}
piper.program @b role {pp = 1} of @mesh step @step streams ["compute"] {
  // expected-error@+1 {{@b {pp=1} reads parameter 'embed.weight' (argument 0), but only @a {pp=0} writes its update (result 0): from the second step on it would read a stale value; every program that reads a parameter must write its update}}
  %w = piper.input 0 : tensor<4xf32>
}
