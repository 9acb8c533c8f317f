// RUN: piper-opt %s | piper-opt | FileCheck %s --enable-var-scope
// piper.cast round-trips in both directions.

// CHECK-LABEL: func.func @casts(
// CHECK-SAME:    %[[W:.*]]: tensor<4x8xf32>
// CHECK:         %[[H:.*]] = piper.cast %[[W]] : tensor<4x8xf32> -> tensor<4x8xbf16>
// CHECK:         %[[F:.*]] = piper.cast %[[H]] : tensor<4x8xbf16> -> tensor<4x8xf32>
// CHECK:         %[[D:.*]] = piper.cast %[[F]] : tensor<4x8xf32> -> tensor<4x8xf64>
// CHECK:         return %[[D]]
func.func @casts(%w: tensor<4x8xf32>) -> tensor<4x8xf64> {
  %h = piper.cast %w : tensor<4x8xf32> -> tensor<4x8xbf16>
  %f = piper.cast %h : tensor<4x8xbf16> -> tensor<4x8xf32>
  %d = piper.cast %f : tensor<4x8xf32> -> tensor<4x8xf64>
  return %d : tensor<4x8xf64>
}
