// RUN: piper-opt %s | piper-opt | FileCheck %s
// RUN: piper-opt %s --mlir-print-op-generic | piper-opt | FileCheck %s
// Round trip of the microbatch nodes: slices of a global-batch argument and
// the ordered, scaled sum of the copies' contributions.

func.func private @body(tensor<2x8xf64>) -> tensor<8x4xf64>

// CHECK-LABEL: func.func @two_microbatches(
// CHECK-SAME:    %[[X:[^:]*]]: tensor<4x8xf64>, %[[S:[^:]*]]: tensor<3x4xi64>
// CHECK:         %[[X0:.*]] = piper.microbatch "x[MB=0]" %[[X]][0 of 2] : tensor<4x8xf64> -> tensor<2x8xf64>
// CHECK-NEXT:    %[[X1:.*]] = piper.microbatch "x[MB=1]" %[[X]][1 of 2] : tensor<4x8xf64> -> tensor<2x8xf64>
// CHECK-NEXT:    %{{.*}} = piper.microbatch "s[MB=1]" %[[S]][1 of 2] along 1 : tensor<3x4xi64> -> tensor<3x2xi64>
// CHECK-NEXT:    %[[G0:.*]] = piper.task "BW{MB=0}" @body(%[[X0]])
// CHECK-NEXT:    %[[G1:.*]] = piper.task "BW{MB=1}" @body(%[[X1]])
// CHECK-NEXT:    %[[G:.*]] = piper.accumulate "accumulate(BW{}#0)" %[[G0]], %[[G1]] scale 5.000000e-01 : (tensor<8x4xf64>, tensor<8x4xf64>) -> tensor<8x4xf64>
// CHECK-NEXT:    piper.dag_yield %[[G]] : tensor<8x4xf64>
func.func @two_microbatches(%x: tensor<4x8xf64>, %s: tensor<3x4xi64>) -> tensor<8x4xf64> {
  %r = piper.dag -> tensor<8x4xf64> {
    %x0 = piper.microbatch "x[MB=0]" %x[0 of 2] : tensor<4x8xf64> -> tensor<2x8xf64>
    %x1 = piper.microbatch "x[MB=1]" %x[1 of 2] : tensor<4x8xf64> -> tensor<2x8xf64>
    %s1 = piper.microbatch "s[MB=1]" %s[1 of 2] along 1 : tensor<3x4xi64> -> tensor<3x2xi64>
    %g0 = piper.task "BW{MB=0}" @body(%x0) {tags = {MB = 0}, pass = #piper<pass BW>} : (tensor<2x8xf64>) -> tensor<8x4xf64>
    %g1 = piper.task "BW{MB=1}" @body(%x1) {tags = {MB = 1}, pass = #piper<pass BW>} : (tensor<2x8xf64>) -> tensor<8x4xf64>
    %g = piper.accumulate "accumulate(BW{}#0)" %g0, %g1 scale 0.5 : (tensor<8x4xf64>, tensor<8x4xf64>) -> tensor<8x4xf64>
    piper.dag_yield %g : tensor<8x4xf64>
  }
  return %r : tensor<8x4xf64>
}
