// The diagnostic of a piper.vjp on local types comes from the distribution
// rule of the op it differentiates: the backward of attention over split
// channels runs on the forward's share of the heads, and 3 heads over tp = 2
// would straddle devices.
// RUN: not piper-compile %s --emit=kernels 2>&1 | FileCheck %s

// CHECK: invalid-local-vjp.mlir:24:9: error: cannot run 'BI' on local types: 'piper.vjp' in @body differentiates 'piper.attention' with 3 heads, which do not split 2 ways
// CHECK: invalid-local-vjp.mlir:17:9: note: in the body, here

piper.mesh @mesh axes = [tp = 2]
func.func @step(%w: tensor<4x6xf64> {piper.param = #piper.param<"w", zeros, placement = #piper.placement<@mesh, [{}, {tp}]>>}, %x: tensor<2x4xf64>, %do: tensor<1x2x6xf64>) -> tensor<1x2x6xf64> {
  return %do : tensor<1x2x6xf64>
}
func.func private @body(%w: tensor<4x6xf64>, %x: tensor<2x4xf64>, %do: tensor<1x2x6xf64>) -> tensor<1x2x6xf64> {
  %p = piper.linear %x, %w : tensor<2x4xf64>, tensor<4x6xf64> -> tensor<2x6xf64>
  %q = piper.reshape %p : tensor<2x6xf64> -> tensor<1x2x6xf64>
  %dq = piper.vjp "piper.attention" wrt [0] (%q, %q, %q) cotangents (%do) forward_attrs {num_heads = 3 : i64} : (tensor<1x2x6xf64>, tensor<1x2x6xf64>, tensor<1x2x6xf64>), (tensor<1x2x6xf64>) -> tensor<1x2x6xf64>
  return %dq : tensor<1x2x6xf64>
}
piper.program @step.all role {} of @mesh step @step streams ["compute"] {
  %w = piper.input 0 : tensor<4x6xf64>
  %x = piper.input 1 : tensor<2x4xf64>
  %do = piper.input 2 : tensor<1x2x6xf64>
  %dq = piper.launch "BI" @body(%w, %x, %do) on "compute" : (tensor<4x6xf64>, tensor<2x4xf64>, tensor<1x2x6xf64>) -> tensor<1x2x6xf64>
  piper.output 0 %dq : tensor<1x2x6xf64>
}
