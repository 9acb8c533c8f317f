// RUN: piper-opt %s -split-input-file --piper-verify-programs -verify-diagnostics
// Planted collective faults: members of one communicator that disagree on
// what they call would hang in NCCL/MPI or reduce unrelated buffers.

piper.mesh @mesh axes = [dp = 2, pp = 2]
func.func @step(%x: tensor<4xf32>) {
  return
}

// Same position, same tensor type, different kind: an all-reduce on one
// member meets an all-gather on the other.
piper.program @a role {pp = 0} of @mesh step @step streams ["grad"] {
  %x = piper.input 0 : tensor<4xf32>
  // expected-note@+1 {{the other member's collective}}
  %s = piper.comm "ar(x)" all_reduce %x over ["pp"] on "grad" : tensor<4xf32>
}
piper.program @b role {pp = 1} of @mesh step @step streams ["grad"] {
  %x = piper.input 0 : tensor<4xf32>
  // expected-error@+1 {{collective order differs between members of communicator ["pp"] on "grad": collective #0 of @b {pp=1} is all_gather 'ag(x)' (tensor<4xf32>), but of @a {pp=0} it is all_reduce 'ar(x)' (tensor<4xf32>)}}
  %s = piper.comm "ag(x)" all_gather %x over ["pp"] on "grad" : tensor<4xf32>
}

// -----

piper.mesh @mesh axes = [dp = 2, pp = 2]
func.func @step(%x: tensor<4xf32>, %y: tensor<8xf32>) {
  return
}

// The same all-reduce on tensors of different sizes: MPI would read past
// the smaller buffer.
piper.program @a role {pp = 0} of @mesh step @step streams ["grad"] {
  %x = piper.input 0 : tensor<4xf32>
  // expected-note@+1 {{the other member's collective}}
  %s = piper.comm "ar(g)" all_reduce %x over ["pp"] on "grad" : tensor<4xf32>
}
piper.program @b role {pp = 1} of @mesh step @step streams ["grad"] {
  %y = piper.input 1 : tensor<8xf32>
  // expected-error@+1 {{collective order differs between members of communicator ["pp"] on "grad": collective #0 of @b {pp=1} is all_reduce 'ar(g)' (tensor<8xf32>), but of @a {pp=0} it is all_reduce 'ar(g)' (tensor<4xf32>)}}
  %s = piper.comm "ar(g)" all_reduce %y over ["pp"] on "grad" : tensor<8xf32>
}

// -----

piper.mesh @mesh axes = [dp = 2, pp = 2]
func.func @step(%x: tensor<4xf32>) {
  return
}

// One member issues a second collective the other never joins: the last
// all-reduce would wait for ever.
piper.program @a role {pp = 0} of @mesh step @step streams ["grad"] {
  %x = piper.input 0 : tensor<4xf32>
  %s = piper.comm "ar(x)" all_reduce %x over ["pp"] on "grad" : tensor<4xf32>
  // expected-error@+1 {{collective order differs between members of communicator ["pp"] on "grad": collective #1 of @b {pp=1} is missing, but of @a {pp=0} it is all_reduce 'ar(s)' (tensor<4xf32>)}}
  %t = piper.comm "ar(s)" all_reduce %s over ["pp"] on "grad" : tensor<4xf32>
}
piper.program @b role {pp = 1} of @mesh step @step streams ["grad"] {
  %x = piper.input 0 : tensor<4xf32>
  %s = piper.comm "ar(x)" all_reduce %x over ["pp"] on "grad" : tensor<4xf32>
}

// -----

piper.mesh @mesh axes = [dp = 2, pp = 2]
func.func @step(%x: tensor<4xf32>, %y: tensor<4xf32>) {
  return
}

// Two communicators on one stream, entered in opposite orders by the two
// stages: each waits in a collective the other has not reached.
piper.program @a role {pp = 0} of @mesh step @step streams ["grad"] {
  %x = piper.input 0 : tensor<4xf32>
  // expected-error@+1 {{deadlock: stream "grad" of @a {pp=0} blocks in all_reduce 'ar_pp' (tensor<4xf32>), waiting for stream "grad" of @b {pp=1}, which blocks in all_reduce 'ar_all' (tensor<4xf32>), waiting for stream "grad" of @a {pp=0}}}
  %s = piper.comm "ar_pp" all_reduce %x over ["pp"] on "grad" : tensor<4xf32>
  %t = piper.comm "ar_all" all_reduce %x over ["dp", "pp"] on "grad" : tensor<4xf32>
}
piper.program @b role {pp = 1} of @mesh step @step streams ["grad"] {
  %x = piper.input 0 : tensor<4xf32>
  // expected-note@+1 {{stream "grad" of @b {pp=1} blocks here}}
  %t = piper.comm "ar_all" all_reduce %x over ["dp", "pp"] on "grad" : tensor<4xf32>
  %s = piper.comm "ar_pp" all_reduce %x over ["pp"] on "grad" : tensor<4xf32>
}
