// RUN: piper-opt %s -split-input-file --piper-verify-programs -verify-diagnostics
// Planted buffer faults that --piper-verify-programs must catch: values
// whose lifetimes may overlap in one buffer, under program order on a
// stream and record/wait events across streams.

piper.mesh @mesh axes = [pp = 2]
func.func @step(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  return %x : tensor<4x8xf32>
}
func.func private @f(tensor<4x8xf32>) -> tensor<4x8xf32>

// Two values overlap on one stream: F1 reads %h while writing %y into the
// same buffer.
piper.program @overlap_on_one_stream_is_rejected role {pp = 0} of @mesh step @step
    streams ["compute"] buffers [128, 128] persistent 0 {
  %x = piper.input 0 buffers [0] : tensor<4x8xf32>
  // expected-note@+1 {{the first value}}
  %h = piper.launch "F0" @f(%x) on "compute" buffers [1] : (tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-error@+2 {{buffer 1 of @overlap_on_one_stream_is_rejected {pp=0} holds launch 'F0' and launch 'F1', whose lifetimes may overlap: launch 'F1' on stream "compute", which reads the first, does not happen before launch 'F1' on stream "compute", which writes the second}}
  // expected-note@+1 {{the first value's use}}
  %y = piper.launch "F1" @f(%h) on "compute" buffers [1] : (tensor<4x8xf32>) -> tensor<4x8xf32>
  piper.output 0 %y : tensor<4x8xf32>
}

// -----

piper.mesh @mesh axes = [pp = 2]
func.func @step(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  return %x : tensor<4x8xf32>
}
func.func private @f(tensor<4x8xf32>) -> tensor<4x8xf32>

// %y's last use is a send on "pp"; F2 on "compute" reuses its buffer with
// no event ordering the send before it, so F2 may overwrite %y while it is
// being sent.
piper.program @a role {pp = 0} of @mesh step @step
    streams ["compute", "pp"] buffers [128, 128, 128] persistent 0 {
  %x = piper.input 0 buffers [0] : tensor<4x8xf32>
  %h = piper.launch "F0" @f(%x) on "compute" buffers [1] : (tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-note@+1 {{the first value}}
  %y = piper.launch "F1" @f(%h) on "compute" buffers [0] : (tensor<4x8xf32>) -> tensor<4x8xf32>
  piper.record 0 on "compute"
  piper.wait 0 on "pp"
  // expected-note@+1 {{the first value's use}}
  piper.send "y" %y to @b tag 0 on "pp" : tensor<4x8xf32>
  // expected-error@+1 {{buffer 0 of @a {pp=0} holds launch 'F1' and launch 'F2', whose lifetimes may overlap: send 'y' (to @b, tag 0) on stream "pp", which reads the first, does not happen before launch 'F2' on stream "compute", which writes the second}}
  %z = piper.launch "F2" @f(%h) on "compute" buffers [0] : (tensor<4x8xf32>) -> tensor<4x8xf32>
  piper.output 0 %z : tensor<4x8xf32>
}
piper.program @b role {pp = 1} of @mesh step @step streams ["pp"] {
  %y = piper.recv "y" from @a tag 0 on "pp" : tensor<4x8xf32>
}

// -----

piper.mesh @mesh axes = [pp = 2]
func.func @step(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  return %x : tensor<4x8xf32>
}
func.func private @f(tensor<4x8xf32>) -> tensor<4x8xf32>

// The wait is on the wrong stream: event 1 orders the send before "pp"'s
// later work, not before F2 on "compute".
piper.program @a role {pp = 0} of @mesh step @step
    streams ["compute", "pp"] buffers [128, 128] persistent 0 {
  %x = piper.input 0 buffers [0] : tensor<4x8xf32>
  // expected-note@+1 {{the first value}}
  %h = piper.launch "F0" @f(%x) on "compute" buffers [1] : (tensor<4x8xf32>) -> tensor<4x8xf32>
  piper.record 0 on "compute"
  piper.wait 0 on "pp"
  // expected-note@+1 {{the first value's use}}
  piper.send "h" %h to @b tag 0 on "pp" : tensor<4x8xf32>
  piper.record 1 on "pp"
  piper.wait 1 on "pp"
  // expected-error@+1 {{buffer 1 of @a {pp=0} holds launch 'F0' and launch 'F2', whose lifetimes may overlap: send 'h' (to @b, tag 0) on stream "pp", which reads the first, does not happen before launch 'F2' on stream "compute", which writes the second}}
  %z = piper.launch "F2" @f(%x) on "compute" buffers [1] : (tensor<4x8xf32>) -> tensor<4x8xf32>
  piper.output 0 %z : tensor<4x8xf32>
}
piper.program @b role {pp = 1} of @mesh step @step streams ["pp"] {
  %h = piper.recv "h" from @a tag 0 on "pp" : tensor<4x8xf32>
}

// -----

piper.mesh @mesh axes = [pp = 2]
func.func @step(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  return %x : tensor<4x8xf32>
}
func.func private @f(tensor<4x8xf32>) -> tensor<4x8xf32>

// A value the step returns lives to the end; nothing after it may take
// its buffer.
piper.program @output_lives_to_the_end role {pp = 0} of @mesh step @step
    streams ["compute"] buffers [128, 128] persistent 0 {
  %x = piper.input 0 buffers [0] : tensor<4x8xf32>
  // expected-note@+1 {{the first value}}
  %h = piper.launch "F0" @f(%x) on "compute" buffers [1] : (tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-error@+1 {{buffer 1 of @output_lives_to_the_end {pp=0} holds launch 'F0' and launch 'F1', whose lifetimes overlap: output 0 reads the first at the end of the step}}
  %y = piper.launch "F1" @f(%x) on "compute" buffers [1] : (tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-note@+1 {{the first value's use}}
  piper.output 0 %h : tensor<4x8xf32>
}

// -----

piper.mesh @mesh axes = [pp = 2]
func.func @step(%w: tensor<4x8xf32> {piper.param = #piper.param<"w", zeros>},
                %x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  return %x : tensor<4x8xf32>
}
func.func private @f(tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>

// A parameter's buffer persists into the next step: a temporary may not
// take it over after the parameter's last use.
piper.program @persistent_is_not_reused role {pp = 0} of @mesh step @step
    streams ["compute"] buffers [128, 128, 128] persistent 1 {
  // expected-note@+1 {{the first value}}
  %w = piper.input 0 buffers [0] : tensor<4x8xf32>
  %x = piper.input 1 buffers [1] : tensor<4x8xf32>
  %h = piper.launch "F0" @f(%x, %w) on "compute" buffers [2] : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-error@+1 {{persistent buffer 0 of @persistent_is_not_reused {pp=0} holds input 0 and launch 'F1', which is not an in-place update of it; a persistent buffer keeps its value for the next step}}
  %y = piper.launch "F1" @f(%x, %x) on "compute" buffers [0] : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  piper.output 0 %y : tensor<4x8xf32>
}

// -----

piper.mesh @mesh axes = [pp = 2]
func.func @step(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>) {
  return
}

// Inputs are all there from the start of the step.
piper.program @inputs_do_not_share role {pp = 0} of @mesh step @step
    streams ["compute"] buffers [128] persistent 0 {
  // expected-note@+1 {{the first value}}
  %x = piper.input 0 buffers [0] : tensor<4x8xf32>
  // expected-error@+1 {{buffer 0 of @inputs_do_not_share {pp=0} holds input 0 and input 1, but inputs are all there from the start of the step}}
  %y = piper.input 1 buffers [0] : tensor<4x8xf32>
}

// -----

piper.mesh @mesh axes = [pp = 2]
func.func @step(%x: tensor<4x8xf32>) {
  return
}

// A value larger than its buffer.
piper.program @value_does_not_fit role {pp = 0} of @mesh step @step
    streams ["compute"] buffers [64] persistent 0 {
  // expected-error@+1 {{input 0 ('tensor<4x8xf32>', 128 bytes) does not fit buffer 0 of @value_does_not_fit {pp=0} (64 bytes)}}
  %x = piper.input 0 buffers [0] : tensor<4x8xf32>
}
