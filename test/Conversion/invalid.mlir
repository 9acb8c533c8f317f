// What the native lowering rejects, with exact diagnostics.
// RUN: split-file %s %t
// RUN: not piper-compile %t/comm-bf16.mlir --emit=kernels 2>&1 | FileCheck %s --check-prefix=COMMBF16
// RUN: not piper-compile %t/unreduced.mlir --emit=kernels 2>&1 | FileCheck %s --check-prefix=UNREDUCED
// RUN: not piper-compile %t/a2a.mlir --emit=kernels 2>&1 | FileCheck %s --check-prefix=A2A
// RUN: not piper-compile %t/gather-whole.mlir --emit=kernels 2>&1 | FileCheck %s --check-prefix=GATHER
// RUN: not piper-compile %t/comm-i64.mlir --emit=kernels 2>&1 | FileCheck %s --check-prefix=I64
// RUN: not piper-compile %t/unknown-op.mlir --emit=kernels 2>&1 | FileCheck %s --check-prefix=OP
// RUN: not piper-compile %t/no-program.mlir --emit=lowered 2>&1 | FileCheck %s --check-prefix=NONE

// COMMBF16: comm-bf16.mlir:10:8: error: cannot lower 'piper.comm' of element type 'bf16' (f32 and f64 are supported)
// UNREDUCED: unreduced.mlir:17:10: error: update 'UPD' applies a gradient (argument #1 of @upd) that no collective reduces over the batch axes [dp]; replicate every updated parameter over them
// A2A: a2a.mlir:8:8: error: cannot lower 'x': all_to_all between programs is not lowered (only data-parallel gradient and ZeRO collectives are)
// GATHER: gather-whole.mlir:8:8: error: cannot lower 'ag': all_gather of a whole tensor (it gathers ZeRO shards)
// I64: comm-i64.mlir:8:8: error: cannot lower 'piper.comm' of element type 'i64' (f32 and f64 are supported)
// OP: unknown-op.mlir:7:8: error: unsupported operation 'scf.execute_region' in a chunk body: the native lowering handles piper NN ops, piper.vjp, optimizer updates, arith, math, tensor and func ops
// NONE: error: piper-compile: no public function to compile

//--- comm-bf16.mlir
// Gradient collectives reduce f32 or f64: MPI has no bf16 datatype, and
// bf16-mixed reduces gradients in f32 (--grad-reduce-dtype=bf16 is
// refused before this point).
piper.mesh @mesh axes = [dp = 2]
func.func @step(%x: tensor<2xbf16>) -> tensor<2xbf16> {
  return %x : tensor<2xbf16>
}
piper.program @step.all role {} of @mesh step @step streams ["dp"] {
  %x = piper.input 0 : tensor<2xbf16>
  %y = piper.comm "ar" all_reduce %x over ["dp"] on "dp" : tensor<2xbf16>
  piper.output 0 %y : tensor<2xbf16>
}

//--- unreduced.mlir
// Batch replicas over dp (one gradient is all-reduced), but the update of
// %v applies an unreduced gradient: each replica would drift.
piper.mesh @mesh axes = [dp = 2]
func.func @step(%w: tensor<2xf64>, %v: tensor<2xf64>) -> (tensor<2xf64>, tensor<2xf64>) {
  return %w, %v : tensor<2xf64>, tensor<2xf64>
}
func.func private @upd(%w: tensor<2xf64>, %g: tensor<2xf64>, %m: tensor<2xf64>) -> (tensor<2xf64>, tensor<2xf64>) {
  %p, %b = piper.sgd_update %w, %g, %m {lr = 1.0e-01 : f64} : tensor<2xf64>
  return %p, %b : tensor<2xf64>, tensor<2xf64>
}
piper.program @step.all role {} of @mesh step @step streams ["compute", "dp_grad"] {
  %w = piper.input 0 : tensor<2xf64>
  %v = piper.input 1 : tensor<2xf64>
  %r = piper.comm "ar" all_reduce %w over ["dp"] on "dp_grad" : tensor<2xf64>
  %u:2 = piper.launch "UPD" @upd(%w, %r, %v) on "compute" : (tensor<2xf64>, tensor<2xf64>, tensor<2xf64>) -> (tensor<2xf64>, tensor<2xf64>)
  piper.output 0 %u#0 : tensor<2xf64>
  %x:2 = piper.launch "UPD" @upd(%v, %v, %v) on "compute" : (tensor<2xf64>, tensor<2xf64>, tensor<2xf64>) -> (tensor<2xf64>, tensor<2xf64>)
  piper.output 1 %x#0 : tensor<2xf64>
}

//--- a2a.mlir
// Token exchanges between programs (expert parallelism) are not lowered.
piper.mesh @mesh axes = [ep = 2]
func.func @step(%x: tensor<2xf64>) -> tensor<2xf64> {
  return %x : tensor<2xf64>
}
piper.program @step.all role {} of @mesh step @step streams ["ep"] {
  %x = piper.input 0 : tensor<2xf64>
  %y = piper.comm "x" all_to_all %x over ["ep"] on "ep" : tensor<2xf64>
  piper.output 0 %y : tensor<2xf64>
}

//--- gather-whole.mlir
// all_gather collects ZeRO chunks; a whole tensor is not one.
piper.mesh @mesh axes = [dp = 2]
func.func @step(%x: tensor<2xf64>) -> tensor<2xf64> {
  return %x : tensor<2xf64>
}
piper.program @step.all role {} of @mesh step @step streams ["dp"] {
  %x = piper.input 0 : tensor<2xf64>
  %y = piper.comm "ag" all_gather %x over ["dp"] on "dp" : tensor<2xf64>
  piper.output 0 %y : tensor<2xf64>
}

//--- comm-i64.mlir
// Collectives move gradients and parameters: floating point only.
piper.mesh @mesh axes = [dp = 2]
func.func @step(%x: tensor<2xi64>) -> tensor<2xi64> {
  return %x : tensor<2xi64>
}
piper.program @step.all role {} of @mesh step @step streams ["dp"] {
  %x = piper.input 0 : tensor<2xi64>
  %y = piper.comm "ar" all_reduce %x over ["dp"] on "dp" : tensor<2xi64>
  piper.output 0 %y : tensor<2xi64>
}

//--- unknown-op.mlir
// A body op outside piper, arith, tensor and func has no lowering.
piper.mesh @mesh axes = [dp = 1]
func.func @step(%x: tensor<2xf64>) -> tensor<2xf64> {
  return %x : tensor<2xf64>
}
func.func private @body(%x: tensor<2xf64>) -> tensor<2xf64> {
  %y = scf.execute_region -> tensor<2xf64> {
    scf.yield %x : tensor<2xf64>
  }
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
