// RUN: piper-opt %s -split-input-file -verify-diagnostics
// Diagnostics of the device-program ops, one per constraint.

piper.mesh @mesh axes = [dp = 2, pp = 2]
func.func @step(%x: tensor<4x8xf32>) -> tensor<f32> {
  %c = arith.constant dense<0.0> : tensor<f32>
  return %c : tensor<f32>
}
func.func private @body(tensor<2x8xf32>) -> tensor<f32>

// A program runs on at least one stream.
// expected-error@+1 {{'piper.program' op declares no stream}}
piper.program @p role {pp = 0} of @mesh step @step streams [] {
}

// -----

piper.mesh @mesh axes = [dp = 2, pp = 2]
func.func @step(%x: tensor<4x8xf32>) -> tensor<f32> {
  %c = arith.constant dense<0.0> : tensor<f32>
  return %c : tensor<f32>
}
func.func private @body(tensor<2x8xf32>) -> tensor<f32>

// Stream names are unique.
// expected-error@+1 {{'piper.program' op declares stream "compute" twice}}
piper.program @p role {pp = 0} of @mesh step @step streams ["compute", "compute"] {
}

// -----

piper.mesh @mesh axes = [dp = 2, pp = 2]
func.func @step(%x: tensor<4x8xf32>) -> tensor<f32> {
  %c = arith.constant dense<0.0> : tensor<f32>
  return %c : tensor<f32>
}
func.func private @body(tensor<2x8xf32>) -> tensor<f32>

// Only program instructions.
piper.program @p role {pp = 0} of @mesh step @step streams ["compute"] {
  // expected-error@+1 {{'arith.constant' op is inside a piper.program, which holds only program instructions (piper.input, piper.output, piper.launch, piper.send, piper.recv, piper.comm, piper.record, piper.wait, piper.sum)}}
  %c = arith.constant dense<0.0> : tensor<f32>
}

// -----

piper.mesh @mesh axes = [dp = 2, pp = 2]
func.func @step(%x: tensor<4x8xf32>) -> tensor<f32> {
  %c = arith.constant dense<0.0> : tensor<f32>
  return %c : tensor<f32>
}
func.func private @body(tensor<2x8xf32>) -> tensor<f32>

// Every instruction runs on a declared stream.
piper.program @p role {pp = 0} of @mesh step @step streams ["compute"] {
  // expected-error@+1 {{'piper.record' op runs on stream "pp", which the program does not declare (streams: ["compute"])}}
  piper.record 0 on "pp"
}

// -----

piper.mesh @mesh axes = [dp = 2, pp = 2]
func.func @step(%x: tensor<4x8xf32>) -> tensor<f32> {
  %c = arith.constant dense<0.0> : tensor<f32>
  return %c : tensor<f32>
}
func.func private @body(tensor<2x8xf32>) -> tensor<f32>

// An event is recorded once.
piper.program @p role {pp = 0} of @mesh step @step streams ["compute"] {
  // expected-note@+1 {{the first record}}
  piper.record 0 on "compute"
  // expected-error@+1 {{'piper.record' op records event 0, which is already recorded}}
  piper.record 0 on "compute"
}

// -----

piper.mesh @mesh axes = [dp = 2, pp = 2]
func.func @step(%x: tensor<4x8xf32>) -> tensor<f32> {
  %c = arith.constant dense<0.0> : tensor<f32>
  return %c : tensor<f32>
}
func.func private @body(tensor<2x8xf32>) -> tensor<f32>

// The mesh exists.
// expected-error@+1 {{'piper.program' op unknown mesh @nowhere}}
piper.program @p role {pp = 0} of @nowhere step @step streams ["compute"] {
}

// -----

piper.mesh @mesh axes = [dp = 2, pp = 2]
func.func @step(%x: tensor<4x8xf32>) -> tensor<f32> {
  %c = arith.constant dense<0.0> : tensor<f32>
  return %c : tensor<f32>
}
func.func private @body(tensor<2x8xf32>) -> tensor<f32>

// Role axes are axes of the mesh.
// expected-error@+1 {{'piper.program' op role names axis 'tp', but mesh @mesh has no such axis (axes: dp, pp)}}
piper.program @p role {tp = 0} of @mesh step @step streams ["compute"] {
}

// -----

piper.mesh @mesh axes = [dp = 2, pp = 2]
func.func @step(%x: tensor<4x8xf32>) -> tensor<f32> {
  %c = arith.constant dense<0.0> : tensor<f32>
  return %c : tensor<f32>
}
func.func private @body(tensor<2x8xf32>) -> tensor<f32>

// Role coordinates lie within the axis.
// expected-error@+1 {{'piper.program' op role coordinate of axis 'pp' must be an integer in [0, 2)}}
piper.program @p role {pp = 2} of @mesh step @step streams ["compute"] {
}

// -----

piper.mesh @mesh axes = [dp = 2, pp = 2]
func.func @step(%x: tensor<4x8xf32>) -> tensor<f32> {
  %c = arith.constant dense<0.0> : tensor<f32>
  return %c : tensor<f32>
}
func.func private @body(tensor<2x8xf32>) -> tensor<f32>

// The step is a function.
// expected-error@+1 {{'piper.program' op step @mesh is not a function}}
piper.program @p role {pp = 0} of @mesh step @mesh streams ["compute"] {
}

// -----

piper.mesh @mesh axes = [dp = 2, pp = 2]
func.func @step(%x: tensor<4x8xf32>) -> tensor<f32> {
  %c = arith.constant dense<0.0> : tensor<f32>
  return %c : tensor<f32>
}
func.func private @body(tensor<2x8xf32>) -> tensor<f32>

// Inputs index the step's arguments.
piper.program @p role {pp = 0} of @mesh step @step streams ["compute"] {
  // expected-error@+1 {{'piper.input' op argument 1 is out of range: @step has 1 arguments}}
  %x = piper.input 1 : tensor<4x8xf32>
}

// -----

piper.mesh @mesh axes = [dp = 2, pp = 2]
func.func @step(%x: tensor<4x8xf32>) -> tensor<f32> {
  %c = arith.constant dense<0.0> : tensor<f32>
  return %c : tensor<f32>
}
func.func private @body(tensor<2x8xf32>) -> tensor<f32>

// An input has its argument's type.
piper.program @p role {pp = 0} of @mesh step @step streams ["compute"] {
  // expected-error@+1 {{'piper.input' op type 'tensor<2x8xf32>' differs from 'tensor<4x8xf32>' (argument 0 of @step)}}
  %x = piper.input 0 : tensor<2x8xf32>
}

// -----

piper.mesh @mesh axes = [dp = 2, pp = 2]
func.func @step(%x: tensor<4x8xf32>) -> tensor<f32> {
  %c = arith.constant dense<0.0> : tensor<f32>
  return %c : tensor<f32>
}
func.func private @body(tensor<2x8xf32>) -> tensor<f32>

// A microbatch input has the sliced type.
piper.program @p role {pp = 0} of @mesh step @step streams ["compute"] {
  // expected-error@+1 {{'piper.input' op type 'tensor<2x8xf32>' differs from 'tensor<4x4xf32>' (argument 0 of @step)}}
  %x = piper.input 0 microbatch 0 of 2 along 1 : tensor<2x8xf32>
}

// -----

piper.mesh @mesh axes = [dp = 2, pp = 2]
func.func @step(%x: tensor<4x8xf32>) -> tensor<f32> {
  %c = arith.constant dense<0.0> : tensor<f32>
  return %c : tensor<f32>
}
func.func private @body(tensor<2x8xf32>) -> tensor<f32>

// A microbatch divides its dimension.
piper.program @p role {pp = 0} of @mesh step @step streams ["compute"] {
  // expected-error@+1 {{'piper.input' op argument 0 of type 'tensor<4x8xf32>' has no static dimension 0 divisible by 3}}
  %x = piper.input 0 microbatch 0 of 3 along 0 : tensor<2x8xf32>
}

// -----

piper.mesh @mesh axes = [dp = 2, pp = 2]
func.func @step(%x: tensor<4x8xf32>) -> tensor<f32> {
  %c = arith.constant dense<0.0> : tensor<f32>
  return %c : tensor<f32>
}
func.func private @body(tensor<2x8xf32>) -> tensor<f32>

// A microbatch names its index, count and dimension together.
piper.program @p role {pp = 0} of @mesh step @step streams ["compute"] {
  // expected-error@+1 {{'piper.input' op a microbatch needs 'microbatch', 'of' and 'along' together}}
  %x = piper.input 0 microbatch 0 : tensor<2x8xf32>
}

// -----

piper.mesh @mesh axes = [dp = 2, pp = 2]
func.func @step(%x: tensor<4x8xf32>) -> tensor<f32> {
  %c = arith.constant dense<0.0> : tensor<f32>
  return %c : tensor<f32>
}
func.func private @body(tensor<2x8xf32>) -> tensor<f32>

// A microbatch index lies below the count.
piper.program @p role {pp = 0} of @mesh step @step streams ["compute"] {
  // expected-error@+1 {{'piper.input' op microbatch 2 of 2 along 0 is out of range}}
  %x = piper.input 0 microbatch 2 of 2 along 0 : tensor<2x8xf32>
}

// -----

piper.mesh @mesh axes = [dp = 2, pp = 2]
func.func @step(%x: tensor<4x8xf32>) -> tensor<f32> {
  %c = arith.constant dense<0.0> : tensor<f32>
  return %c : tensor<f32>
}
func.func private @body(tensor<2x8xf32>) -> tensor<f32>

// Outputs index the step's results.
piper.program @p role {pp = 0} of @mesh step @step streams ["compute"] {
  %x = piper.input 0 microbatch 0 of 2 along 0 : tensor<2x8xf32>
  %l = piper.launch "F" @body(%x) on "compute" : (tensor<2x8xf32>) -> tensor<f32>
  // expected-error@+1 {{'piper.output' op result 1 is out of range: @step has 1 results}}
  piper.output 1 %l : tensor<f32>
}

// -----

piper.mesh @mesh axes = [dp = 2, pp = 2]
func.func @step(%x: tensor<4x8xf32>) -> tensor<f32> {
  %c = arith.constant dense<0.0> : tensor<f32>
  return %c : tensor<f32>
}
func.func private @body(tensor<2x8xf32>) -> tensor<f32>

// An output has its result's type.
piper.program @p role {pp = 0} of @mesh step @step streams ["compute"] {
  %x = piper.input 0 : tensor<4x8xf32>
  // expected-error@+1 {{'piper.output' op type 'tensor<4x8xf32>' differs from 'tensor<f32>' of result 0 of @step}}
  piper.output 0 %x : tensor<4x8xf32>
}

// -----

piper.mesh @mesh axes = [dp = 2, pp = 2]
func.func @step(%x: tensor<4x8xf32>) -> tensor<f32> {
  %c = arith.constant dense<0.0> : tensor<f32>
  return %c : tensor<f32>
}
func.func private @body(tensor<2x8xf32>) -> tensor<f32>

// A launch calls a function.
piper.program @p role {pp = 0} of @mesh step @step streams ["compute"] {
  %x = piper.input 0 microbatch 0 of 2 along 0 : tensor<2x8xf32>
  // expected-error@+1 {{'piper.launch' op launches @nothing, which is not a function}}
  %l = piper.launch "F" @nothing(%x) on "compute" : (tensor<2x8xf32>) -> tensor<f32>
}

// -----

piper.mesh @mesh axes = [dp = 2, pp = 2]
func.func @step(%x: tensor<4x8xf32>) -> tensor<f32> {
  %c = arith.constant dense<0.0> : tensor<f32>
  return %c : tensor<f32>
}
func.func private @body(tensor<2x8xf32>) -> tensor<f32>

// A launch has its body's types.
piper.program @p role {pp = 0} of @mesh step @step streams ["compute"] {
  %x = piper.input 0 : tensor<4x8xf32>
  // expected-error@+1 {{'piper.launch' op types differ from those of @body}}
  %l = piper.launch "F" @body(%x) on "compute" : (tensor<4x8xf32>) -> tensor<f32>
}

// -----

piper.mesh @mesh axes = [dp = 2, pp = 2]
func.func @step(%x: tensor<4x8xf32>) -> tensor<f32> {
  %c = arith.constant dense<0.0> : tensor<f32>
  return %c : tensor<f32>
}
func.func private @body(tensor<2x8xf32>) -> tensor<f32>

// A send's peer is a program.
piper.program @p role {pp = 0} of @mesh step @step streams ["compute"] {
  %x = piper.input 0 : tensor<4x8xf32>
  // expected-error@+1 {{'piper.send' op peer @step is not a piper.program}}
  piper.send "x" %x to @step tag 0 on "compute" : tensor<4x8xf32>
}

// -----

piper.mesh @mesh axes = [dp = 2, pp = 2]
func.func @step(%x: tensor<4x8xf32>) -> tensor<f32> {
  %c = arith.constant dense<0.0> : tensor<f32>
  return %c : tensor<f32>
}
func.func private @body(tensor<2x8xf32>) -> tensor<f32>

// A program does not send to itself.
piper.program @p role {pp = 0} of @mesh step @step streams ["compute"] {
  %x = piper.input 0 : tensor<4x8xf32>
  // expected-error@+1 {{'piper.send' op peer @p is the program the op is in}}
  piper.send "x" %x to @p tag 0 on "compute" : tensor<4x8xf32>
}

// -----

piper.mesh @mesh axes = [dp = 2, pp = 2]
func.func @step(%x: tensor<4x8xf32>) -> tensor<f32> {
  %c = arith.constant dense<0.0> : tensor<f32>
  return %c : tensor<f32>
}
func.func private @body(tensor<2x8xf32>) -> tensor<f32>

// Tags are non-negative.
piper.program @p role {pp = 0} of @mesh step @step streams ["compute"] {
  // expected-error@+1 {{'piper.recv' op tag must be non-negative, got -1}}
  %x = piper.recv "x" from @q tag -1 on "compute" : tensor<4x8xf32>
}
piper.program @q role {pp = 1} of @mesh step @step streams ["compute"] {
}

// -----

piper.mesh @mesh axes = [dp = 2, pp = 2]
func.func @step(%x: tensor<4x8xf32>) -> tensor<f32> {
  %c = arith.constant dense<0.0> : tensor<f32>
  return %c : tensor<f32>
}
func.func private @body(tensor<2x8xf32>) -> tensor<f32>

// A receive's peer is a program.
piper.program @p role {pp = 0} of @mesh step @step streams ["compute"] {
  // expected-error@+1 {{'piper.recv' op peer @nowhere is not a piper.program}}
  %x = piper.recv "x" from @nowhere tag 0 on "compute" : tensor<4x8xf32>
}

// -----

piper.mesh @mesh axes = [dp = 2, pp = 2]
func.func @step(%x: tensor<4x8xf32>) -> tensor<f32> {
  %c = arith.constant dense<0.0> : tensor<f32>
  return %c : tensor<f32>
}
func.func private @body(tensor<2x8xf32>) -> tensor<f32>

// A collective names at least one axis.
piper.program @p role {pp = 0} of @mesh step @step streams ["compute"] {
  %x = piper.input 0 : tensor<4x8xf32>
  // expected-error@+1 {{'piper.comm' op needs at least one mesh axis}}
  %g = piper.comm "g" all_reduce %x over [] on "compute" : tensor<4x8xf32>
}

// -----

piper.mesh @mesh axes = [dp = 2, pp = 2]
func.func @step(%x: tensor<4x8xf32>) -> tensor<f32> {
  %c = arith.constant dense<0.0> : tensor<f32>
  return %c : tensor<f32>
}
func.func private @body(tensor<2x8xf32>) -> tensor<f32>

// A collective names an axis once.
piper.program @p role {pp = 0} of @mesh step @step streams ["compute"] {
  %x = piper.input 0 : tensor<4x8xf32>
  // expected-error@+1 {{'piper.comm' op axis 'dp' is listed twice}}
  %g = piper.comm "g" all_reduce %x over ["dp", "dp"] on "compute" : tensor<4x8xf32>
}

// -----

piper.mesh @mesh axes = [dp = 2, pp = 2]
func.func @step(%x: tensor<4x8xf32>) -> tensor<f32> {
  %c = arith.constant dense<0.0> : tensor<f32>
  return %c : tensor<f32>
}
func.func private @body(tensor<2x8xf32>) -> tensor<f32>

// A collective's axes are axes of the program's mesh.
piper.program @p role {pp = 0} of @mesh step @step streams ["compute"] {
  %x = piper.input 0 : tensor<4x8xf32>
  // expected-error@+1 {{'piper.comm' op mesh @mesh has no axis 'ep' (axes: dp, pp)}}
  %g = piper.comm "g" all_reduce %x over ["ep"] on "compute" : tensor<4x8xf32>
}

// -----

piper.mesh @mesh axes = [dp = 2, pp = 2]
func.func @step(%x: tensor<4x8xf32>) -> tensor<f32> {
  %c = arith.constant dense<0.0> : tensor<f32>
  return %c : tensor<f32>
}
func.func private @body(tensor<2x8xf32>) -> tensor<f32>

// Events are non-negative.
piper.program @p role {pp = 0} of @mesh step @step streams ["compute"] {
  // expected-error@+1 {{'piper.wait' op event must be non-negative, got -1}}
  piper.wait -1 on "compute"
}

// -----

piper.mesh @mesh axes = [dp = 2, pp = 2]
func.func @step(%x: tensor<4x8xf32>) -> tensor<f32> {
  %c = arith.constant dense<0.0> : tensor<f32>
  return %c : tensor<f32>
}
func.func private @body(tensor<2x8xf32>) -> tensor<f32>

// Recorded events too.
piper.program @p role {pp = 0} of @mesh step @step streams ["compute"] {
  // expected-error@+1 {{'piper.record' op event must be non-negative, got -2}}
  piper.record -2 on "compute"
}

// -----

piper.mesh @mesh axes = [dp = 2, pp = 2]
func.func @step(%x: tensor<4x8xf32>) -> tensor<f32> {
  %c = arith.constant dense<0.0> : tensor<f32>
  return %c : tensor<f32>
}
func.func private @body(tensor<2x8xf32>) -> tensor<f32>

// A sum has operands.
piper.program @p role {pp = 0} of @mesh step @step streams ["compute"] {
  // expected-error@+1 {{'piper.sum' op needs at least one value}}
  %s = piper.sum "s" scale 1.0 on "compute" : () -> tensor<f32>
}

// -----

piper.mesh @mesh axes = [dp = 2, pp = 2]
func.func @step(%x: tensor<4x8xf32>) -> tensor<f32> {
  %c = arith.constant dense<0.0> : tensor<f32>
  return %c : tensor<f32>
}
func.func private @body(tensor<2x8xf32>) -> tensor<f32>

// A sum adds values of its result type.
piper.program @p role {pp = 0} of @mesh step @step streams ["compute"] {
  %x = piper.input 0 : tensor<4x8xf32>
  // expected-error@+1 {{'piper.sum' op value #0 has type 'tensor<4x8xf32>', not the result type 'tensor<f32>'}}
  %s = piper.sum "s" %x scale 1.0 on "compute" : (tensor<4x8xf32>) -> tensor<f32>
}

// -----

piper.mesh @mesh axes = [dp = 2, pp = 2]
func.func @step(%x: tensor<4x8xf32>) -> tensor<f32> {
  %c = arith.constant dense<0.0> : tensor<f32>
  return %c : tensor<f32>
}
func.func private @body(tensor<2x8xf32>) -> tensor<f32>

// Instructions live in programs.
func.func @outside(%x: tensor<2x8xf32>) {
  // expected-error@+1 {{'piper.launch' op expects parent op 'piper.program'}}
  %l = piper.launch "F" @body(%x) on "compute" : (tensor<2x8xf32>) -> tensor<f32>
  return
}
