// RUN: piper-opt %s -split-input-file --piper-verify-programs -verify-diagnostics
// Planted event and buffer faults: a stream that does not wait for the
// value it reads, or a buffer handed to a second value while the first is
// still in use, gives wrong numbers without any error at run time.

piper.mesh @mesh axes = [pp = 2]
func.func @step(%x: tensor<4xf32>) {
  return
}

// Events belong to one program: @b waits for an event that only @a
// records, which on a GPU returns at once.
piper.program @a role {pp = 0} of @mesh step @step streams ["compute"] {
  piper.record 5 on "compute"
}
piper.program @b role {pp = 1} of @mesh step @step streams ["compute", "pp"] {
  // expected-error@+1 {{stream "pp" of @b {pp=1} waits for event 5, which is never recorded}}
  piper.wait 5 on "pp"
}

// -----

piper.mesh @mesh axes = [pp = 2]
func.func @step(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  return %x : tensor<4x8xf32>
}
func.func private @f(tensor<4x8xf32>) -> tensor<4x8xf32>

// A receive lands in the buffer of a value that compute still reads, with
// an event that orders only F0 (which writes it), not F1 (which reads it),
// before the receive: the message may overwrite F1's input mid-kernel.
piper.program @a role {pp = 0} of @mesh step @step
    streams ["compute", "pp"] buffers [128, 128, 128] persistent 0 {
  %x = piper.input 0 buffers [0] : tensor<4x8xf32>
  // expected-note@+1 {{the first value}}
  %h = piper.launch "F0" @f(%x) on "compute" buffers [1] : (tensor<4x8xf32>) -> tensor<4x8xf32>
  piper.record 0 on "compute"
  // expected-note@+1 {{the first value's use}}
  %y = piper.launch "F1" @f(%h) on "compute" buffers [2] : (tensor<4x8xf32>) -> tensor<4x8xf32>
  piper.wait 0 on "pp"
  // expected-error@+1 {{buffer 1 of @a {pp=0} holds launch 'F0' and recv 'g' (from @b, tag 0), whose lifetimes may overlap: launch 'F1' on stream "compute", which reads the first, does not happen before recv 'g' (from @b, tag 0) on stream "pp", which writes the second}}
  %g = piper.recv "g" from @b tag 0 on "pp" buffers [1] : tensor<4x8xf32>
  piper.output 0 %y : tensor<4x8xf32>
}
piper.program @b role {pp = 1} of @mesh step @step streams ["pp"] {
  %x = piper.input 0 : tensor<4x8xf32>
  piper.send "g" %x to @a tag 0 on "pp" : tensor<4x8xf32>
}

// -----

piper.mesh @mesh axes = [dp = 2]
func.func @step(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  return %x : tensor<4x8xf32>
}
func.func private @f(tensor<4x8xf32>) -> tensor<4x8xf32>

// A gradient all-reduce on its own stream writes into the buffer of an
// activation the compute stream has not finished reading.
piper.program @a role {} of @mesh step @step
    streams ["compute", "grad"] buffers [128, 128, 128] persistent 0 {
  %x = piper.input 0 buffers [0] : tensor<4x8xf32>
  // expected-note@+1 {{the first value}}
  %h = piper.launch "F" @f(%x) on "compute" buffers [1] : (tensor<4x8xf32>) -> tensor<4x8xf32>
  piper.record 0 on "compute"
  // expected-note@+1 {{the first value's use}}
  %y = piper.launch "B" @f(%h) on "compute" buffers [2] : (tensor<4x8xf32>) -> tensor<4x8xf32>
  piper.wait 0 on "grad"
  // expected-error@+1 {{buffer 1 of @a {} holds launch 'F' and all_reduce 'ar(x)' (tensor<4x8xf32>), whose lifetimes may overlap: launch 'B' on stream "compute", which reads the first, does not happen before all_reduce 'ar(x)' (tensor<4x8xf32>) on stream "grad", which writes the second}}
  %g = piper.comm "ar(x)" all_reduce %x over ["dp"] on "grad" buffers [1] : tensor<4x8xf32>
  piper.output 0 %y : tensor<4x8xf32>
}

// -----

piper.mesh @mesh axes = [pp = 2]
func.func @step(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  return %x : tensor<4x8xf32>
}
func.func private @g(tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>)

// Two results of one kernel in one buffer: the kernel writes both at once.
piper.program @two_results_one_buffer role {pp = 0} of @mesh step @step
    streams ["compute"] buffers [128, 128] persistent 0 {
  %x = piper.input 0 buffers [0] : tensor<4x8xf32>
  // expected-error@+2 {{buffer 1 of @two_results_one_buffer {pp=0} holds result #0 of launch 'G' and result #1 of launch 'G', whose lifetimes may overlap: launch 'G' on stream "compute", which writes the first, does not happen before launch 'G' on stream "compute", which writes the second}}
  // expected-note@+1 {{the first value}}
  %a, %b = piper.launch "G" @g(%x) on "compute" buffers [1, 1] : (tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>)
  piper.output 0 %b : tensor<4x8xf32>
}
