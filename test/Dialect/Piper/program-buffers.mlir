// RUN: piper-opt %s | piper-opt | FileCheck %s --enable-var-scope
// Round trip of a program's buffer table and the buffers its instructions
// name, on every value-defining instruction kind.

piper.mesh @mesh axes = [dp = 2, pp = 2]
func.func @step(%x: tensor<4x8xf32>, %w: tensor<8x8xf32> {piper.param = #piper.param<"w", zeros>}) -> tensor<8x8xf32> {
  return %w : tensor<8x8xf32>
}
func.func private @f(tensor<2x8xf32>, tensor<8x8xf32>) -> (tensor<2x8xf32>, tensor<8x8xf32>)

// CHECK-LABEL: piper.program @step.pp0 role {pp = 0 : i64} of @mesh step @step streams ["compute", "pp", "dp_grad"] buffers [256, 64, 64, 256] persistent 1 {
// CHECK-NEXT:    %[[W:.*]] = piper.input 1 buffers [0] : tensor<8x8xf32>
// CHECK-NEXT:    %[[X:.*]] = piper.input 0 microbatch 0 of 2 along 0 buffers [1] : tensor<2x8xf32>
// CHECK-NEXT:    %[[R:.*]] = piper.recv "r" from @step.pp1 tag 0 on "pp" buffers [2] : tensor<2x8xf32>
// CHECK-NEXT:    %[[H:.*]]:2 = piper.launch "F" @f(%[[X]], %[[W]]) on "compute" buffers [1, 3] {overlap = "G"} : (tensor<2x8xf32>, tensor<8x8xf32>) -> (tensor<2x8xf32>, tensor<8x8xf32>)
// CHECK-NEXT:    %[[S:.*]] = piper.sum "acc" %[[H]]#1, %[[H]]#1 scale 5.000000e-01 on "compute" buffers [3] : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
// CHECK-NEXT:    %[[G:.*]] = piper.comm "ar" all_reduce %[[S]] over ["dp"] on "dp_grad" buffers [3] : tensor<8x8xf32>
piper.program @step.pp0 role {pp = 0} of @mesh step @step
    streams ["compute", "pp", "dp_grad"] buffers [256, 64, 64, 256] persistent 1 {
  %w = piper.input 1 buffers [0] : tensor<8x8xf32>
  %x = piper.input 0 microbatch 0 of 2 along 0 buffers [1] : tensor<2x8xf32>
  %r = piper.recv "r" from @step.pp1 tag 0 on "pp" buffers [2] : tensor<2x8xf32>
  %h:2 = piper.launch "F" @f(%x, %w) on "compute" buffers [1, 3] {overlap = "G"} : (tensor<2x8xf32>, tensor<8x8xf32>) -> (tensor<2x8xf32>, tensor<8x8xf32>)
  %s = piper.sum "acc" %h#1, %h#1 scale 0.5 on "compute" buffers [3] : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %g = piper.comm "ar" all_reduce %s over ["dp"] on "dp_grad" buffers [3] : tensor<8x8xf32>
}
// A program without a table prints none.
// CHECK-LABEL: piper.program @step.pp1 role {pp = 1 : i64} of @mesh step @step streams ["pp"] {
piper.program @step.pp1 role {pp = 1} of @mesh step @step streams ["pp"] {
}
