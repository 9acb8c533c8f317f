// --piper-convert-to-kernels lowers piper.cast (--piper-mixed-precision's
// conversions between f32 master copies and bf16 compute copies) to one
// elementwise linalg.generic: arith.truncf to narrow (round to nearest
// even), arith.extf to widen (exact).
// RUN: piper-opt %s --piper-convert-to-kernels | FileCheck %s --enable-var-scope

// A master weight's bf16 working copy.
// CHECK-LABEL: func.func @cast_narrows(
// CHECK-SAME:    %[[X:.*]]: tensor<4x8xf32>)
// CHECK:         %[[E:.*]] = tensor.empty() : tensor<4x8xbf16>
// CHECK:         %[[G:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]{{.*}} ins(%[[X]] : tensor<4x8xf32>) outs(%[[E]] : tensor<4x8xbf16>)
// CHECK-NEXT:    ^bb0(%[[IN:.*]]: f32, %{{.*}}: bf16):
// CHECK-NEXT:      %[[T:.*]] = arith.truncf %[[IN]] : f32 to bf16
// CHECK-NEXT:      linalg.yield %[[T]] : bf16
// CHECK:         return %[[G]] : tensor<4x8xbf16>
func.func @cast_narrows(%x: tensor<4x8xf32>) -> tensor<4x8xbf16> {
  %y = piper.cast %x : tensor<4x8xf32> -> tensor<4x8xbf16>
  return %y : tensor<4x8xbf16>
}

// The cast's VJP: a bf16 weight gradient to the f32 master's gradient.
// CHECK-LABEL: func.func @cast_widens(
// CHECK-SAME:    %[[X:.*]]: tensor<4x8xbf16>)
// CHECK:         linalg.generic {{.*}} ins(%[[X]] : tensor<4x8xbf16>) outs(%{{.*}} : tensor<4x8xf32>)
// CHECK-NEXT:    ^bb0(%[[IN:.*]]: bf16, %{{.*}}: f32):
// CHECK-NEXT:      %[[T:.*]] = arith.extf %[[IN]] : bf16 to f32
// CHECK-NEXT:      linalg.yield %[[T]] : f32
func.func @cast_widens(%x: tensor<4x8xbf16>) -> tensor<4x8xf32> {
  %y = piper.cast %x : tensor<4x8xbf16> -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// f64 <-> bf16 and f64 <-> f32 are casts too (one rounding).
// CHECK-LABEL: func.func @cast_f64(
// CHECK:         arith.truncf %{{.*}} : f64 to bf16
// CHECK:         arith.extf %{{.*}} : f32 to f64
func.func @cast_f64(%x: tensor<3xf64>, %y: tensor<3xf32>) -> (tensor<3xbf16>, tensor<3xf64>) {
  %a = piper.cast %x : tensor<3xf64> -> tensor<3xbf16>
  %b = piper.cast %y : tensor<3xf32> -> tensor<3xf64>
  return %a, %b : tensor<3xbf16>, tensor<3xf64>
}
