// What the native lowering rejects, with exact diagnostics.
// RUN: split-file %s %t
// RUN: not piper-compile %t/bf16.mlir --emit=kernels 2>&1 | FileCheck %s --check-prefix=BF16
// RUN: not piper-compile %t/send.mlir --emit=kernels 2>&1 | FileCheck %s --check-prefix=SEND
// RUN: not piper-compile %t/unknown-op.mlir --emit=kernels 2>&1 | FileCheck %s --check-prefix=OP
// RUN: not piper-compile %t/no-program.mlir --emit=lowered 2>&1 | FileCheck %s --check-prefix=NONE

// BF16: bf16.mlir:7:8: error: element type 'bf16' is not supported by the native lowering (f32 and f64 are)
// SEND: send.mlir:8:3: error: cannot lower 'piper.send': axis 'dp' (size 2) is named by neither role; the multi-rank lowering runs one device per role (no replicas yet)
// OP: unknown-op.mlir:7:8: error: unsupported operation 'math.exp' in a chunk body: the native lowering handles piper NN ops, piper.vjp, optimizer updates, arith, tensor and func ops
// NONE: error: piper-compile: no public function to compile

//--- bf16.mlir
// A bf16 body: the kernels exist for f32 and f64 only.
piper.mesh @mesh axes = [dp = 1]
func.func @step(%x: tensor<2xbf16>) -> tensor<2xbf16> {
  return %x : tensor<2xbf16>
}
func.func private @body(%x: tensor<2xbf16>) -> tensor<2xbf16> {
  %y = piper.softmax %x : tensor<2xbf16>
  return %y : tensor<2xbf16>
}
piper.program @step.all role {} of @mesh step @step streams ["compute"] {
  %x = piper.input 0 : tensor<2xbf16>
  %y = piper.launch "F" @body(%x) on "compute" : (tensor<2xbf16>) -> tensor<2xbf16>
  piper.output 0 %y : tensor<2xbf16>
}

//--- send.mlir
// Sends between roles with data replicas need per-replica peers: not yet.
piper.mesh @mesh axes = [dp = 2, pp = 2]
func.func @step(%x: tensor<2xf64>) -> tensor<2xf64> {
  return %x : tensor<2xf64>
}
piper.program @step.pp0 role {pp = 0} of @mesh step @step streams ["pp"] {
  %x = piper.input 0 : tensor<2xf64>
  piper.send "x" %x to @step.pp1 tag 0 on "pp" : tensor<2xf64>
}
piper.program @step.pp1 role {pp = 1} of @mesh step @step streams ["pp"] {
  %x = piper.recv "x" from @step.pp0 tag 0 on "pp" : tensor<2xf64>
  piper.output 0 %x : tensor<2xf64>
  piper.send "x" %x to @step.pp0 tag 1 on "pp" : tensor<2xf64>
}

//--- unknown-op.mlir
// A body op outside piper, arith, tensor and func has no lowering.
piper.mesh @mesh axes = [dp = 1]
func.func @step(%x: tensor<2xf64>) -> tensor<2xf64> {
  return %x : tensor<2xf64>
}
func.func private @body(%x: tensor<2xf64>) -> tensor<2xf64> {
  %y = math.exp %x : tensor<2xf64>
  return %y : tensor<2xf64>
}
piper.program @step.all role {} of @mesh step @step streams ["compute"] {
  %x = piper.input 0 : tensor<2xf64>
  %y = piper.launch "F" @body(%x) on "compute" : (tensor<2xf64>) -> tensor<2xf64>
  piper.output 0 %y : tensor<2xf64>
}

//--- no-program.mlir
// Nothing partitioned: there is nothing to lower.
func.func private @body(%x: tensor<2xf64>) -> tensor<2xf64> {
  return %x : tensor<2xf64>
}
