// What the lowering of bodies on local types (expert and tensor
// parallelism) rejects, with exact diagnostics.
// RUN: split-file %s %t
// RUN: not piper-compile %t/other-op.mlir --emit=kernels 2>&1 | FileCheck %s --check-prefix=OTHER
// RUN: not piper-compile %t/indivisible.mlir --emit=kernels 2>&1 | FileCheck %s --check-prefix=DIVIDE
// RUN: not piper-compile %t/all-reduce.mlir --emit=kernels 2>&1 | FileCheck %s --check-prefix=REDUCE
// RUN: not piper-compile %t/heads.mlir --emit=kernels 2>&1 | FileCheck %s --check-prefix=HEADS
// RUN: not piper-compile %t/reshape.mlir --emit=kernels 2>&1 | FileCheck %s --check-prefix=RESHAPE

// OTHER: other-op.mlir:14:8: error: cannot run 'F' on local types: 'piper.matmul' in @body reads 'tensor<2x3xf64>' where the body has 'tensor<4x3xf64>' (only all_to_all, piper.vjp, piper.expert_ffn, piper.linear, piper.reshape, piper.attention, elementwise ops and updates follow local types)
// OTHER: other-op.mlir:8:8: note: in the body, here
// DIVIDE: indivisible.mlir:12:8: error: cannot lower 'to': its buffer 'tensor<3x2x3xf64>' does not split into 2 expert groups along dim 0
// DIVIDE: indivisible.mlir:7:8: note: in the body, here
// REDUCE: all-reduce.mlir:12:8: error: cannot lower 'ar' in @body: only all_to_all (expert parallelism) and all_reduce (tensor parallelism) are lowered inside bodies, not reduce_scatter
// HEADS: heads.mlir:19:8: error: cannot run 'F' on local types: 'piper.attention' in @body has 3 heads, which do not split over its operands 'tensor<1x2x3xf64>'
// RESHAPE: reshape.mlir:16:8: error: cannot run 'F' on local types: 'piper.reshape' in @body of 'tensor<2x2xf64>' (only regrouping the leading dims of split channels is followed)

//--- other-op.mlir
// A split weight reaching an op that has no local typing rule.
piper.mesh @mesh axes = [ep = 2]
func.func @step(%w: tensor<4x3xf64> {piper.param = #piper.param<"w", zeros, placement = #piper.placement<@mesh, [{ep}, {}]>>}, %x: tensor<3x2xf64>) -> tensor<4x2xf64> {
  %y = piper.matmul %w, %x : tensor<4x3xf64>, tensor<3x2xf64> -> tensor<4x2xf64>
  return %y : tensor<4x2xf64>
}
func.func private @body(%w: tensor<4x3xf64>, %x: tensor<3x2xf64>) -> tensor<4x2xf64> {
  %y = piper.matmul %w, %x : tensor<4x3xf64>, tensor<3x2xf64> -> tensor<4x2xf64>
  return %y : tensor<4x2xf64>
}
piper.program @step.all role {} of @mesh step @step streams ["compute"] {
  %w = piper.input 0 : tensor<4x3xf64>
  %x = piper.input 1 : tensor<3x2xf64>
  %y = piper.launch "F" @body(%w, %x) on "compute" : (tensor<4x3xf64>, tensor<3x2xf64>) -> tensor<4x2xf64>
  piper.output 0 %y : tensor<4x2xf64>
}

//--- indivisible.mlir
// 3 experts cannot be split over 2 devices.
piper.mesh @mesh axes = [ep = 2]
func.func @step(%x: tensor<3x2x3xf64>) -> tensor<3x2x3xf64> {
  return %x : tensor<3x2x3xf64>
}
func.func private @body(%x: tensor<3x2x3xf64>) -> tensor<3x2x3xf64> {
  %y = piper.collective "to" all_to_all %x over ["ep"] of @mesh stream "ep" : tensor<3x2x3xf64>
  return %y : tensor<3x2x3xf64>
}
piper.program @step.all role {} of @mesh step @step streams ["compute", "ep"] {
  %x = piper.input 0 : tensor<3x2x3xf64>
  %y = piper.launch "F" @body(%x) on "compute" : (tensor<3x2x3xf64>) -> tensor<3x2x3xf64>
  piper.output 0 %y : tensor<3x2x3xf64>
}

//--- all-reduce.mlir
// Sequence parallelism's in-body reduce-scatters are not lowered yet.
piper.mesh @mesh axes = [tp = 2]
func.func @step(%x: tensor<2xf64>) -> tensor<2xf64> {
  return %x : tensor<2xf64>
}
func.func private @body(%x: tensor<2xf64>) -> tensor<2xf64> {
  %y = piper.collective "ar" reduce_scatter %x over ["tp"] of @mesh stream "tp" : tensor<2xf64>
  return %y : tensor<2xf64>
}
piper.program @step.all role {} of @mesh step @step streams ["compute", "tp"] {
  %x = piper.input 0 : tensor<2xf64>
  %y = piper.launch "F" @body(%x) on "compute" : (tensor<2xf64>) -> tensor<2xf64>
  piper.output 0 %y : tensor<2xf64>
}

//--- heads.mlir
// Column-split q, k, v (6 channels over tp = 2) under 3 heads: a head
// would straddle two devices.
piper.mesh @mesh axes = [tp = 2]
func.func @step(%w: tensor<4x6xf64> {piper.param = #piper.param<"w", zeros, placement = #piper.placement<@mesh, [{}, {tp}]>>}, %x: tensor<2x4xf64>) -> tensor<1x2x6xf64> {
  %p = piper.linear %x, %w : tensor<2x4xf64>, tensor<4x6xf64> -> tensor<2x6xf64>
  %q = piper.reshape %p : tensor<2x6xf64> -> tensor<1x2x6xf64>
  %o = piper.attention %q, %q, %q {num_heads = 3 : i64} : tensor<1x2x6xf64>, tensor<1x2x6xf64>, tensor<1x2x6xf64> -> tensor<1x2x6xf64>
  return %o : tensor<1x2x6xf64>
}
func.func private @body(%w: tensor<4x6xf64>, %x: tensor<2x4xf64>) -> tensor<1x2x6xf64> {
  %p = piper.linear %x, %w : tensor<2x4xf64>, tensor<4x6xf64> -> tensor<2x6xf64>
  %q = piper.reshape %p : tensor<2x6xf64> -> tensor<1x2x6xf64>
  %o = piper.attention %q, %q, %q {num_heads = 3 : i64} : tensor<1x2x6xf64>, tensor<1x2x6xf64>, tensor<1x2x6xf64> -> tensor<1x2x6xf64>
  return %o : tensor<1x2x6xf64>
}
piper.program @step.all role {} of @mesh step @step streams ["compute"] {
  %w = piper.input 0 : tensor<4x6xf64>
  %x = piper.input 1 : tensor<2x4xf64>
  %o = piper.launch "F" @body(%w, %x) on "compute" : (tensor<4x6xf64>, tensor<2x4xf64>) -> tensor<1x2x6xf64>
  piper.output 0 %o : tensor<1x2x6xf64>
}

//--- reshape.mlir
// A reshape that moves the split channels off the last dim.
piper.mesh @mesh axes = [tp = 2]
func.func @step(%w: tensor<4x4xf64> {piper.param = #piper.param<"w", zeros, placement = #piper.placement<@mesh, [{}, {tp}]>>}, %x: tensor<2x4xf64>) -> tensor<8xf64> {
  %p = piper.linear %x, %w : tensor<2x4xf64>, tensor<4x4xf64> -> tensor<2x4xf64>
  %f = piper.reshape %p : tensor<2x4xf64> -> tensor<8xf64>
  return %f : tensor<8xf64>
}
func.func private @body(%w: tensor<4x4xf64>, %x: tensor<2x4xf64>) -> tensor<8xf64> {
  %p = piper.linear %x, %w : tensor<2x4xf64>, tensor<4x4xf64> -> tensor<2x4xf64>
  %f = piper.reshape %p : tensor<2x4xf64> -> tensor<8xf64>
  return %f : tensor<8xf64>
}
piper.program @step.all role {} of @mesh step @step streams ["compute"] {
  %w = piper.input 0 : tensor<4x4xf64>
  %x = piper.input 1 : tensor<2x4xf64>
  %f = piper.launch "F" @body(%w, %x) on "compute" : (tensor<4x4xf64>, tensor<2x4xf64>) -> tensor<8xf64>
  piper.output 0 %f : tensor<8xf64>
}
