// RUN: piper-opt %s | piper-opt | FileCheck %s
// RUN: piper-opt %s --mlir-print-op-generic | piper-opt | FileCheck %s
// Round trip of the optimizer updates and optimizer-state attributes.

// CHECK-LABEL: func.func @sgd(
// CHECK:         piper.sgd_update %{{.*}}, %{{.*}}, %{{.*}} {lr = 1.000000e-01 : f64, momentum = 9.000000e-01 : f64, weight_decay = 1.000000e-04 : f64} : tensor<4x8xf32>
// CHECK:         piper.sgd_update %{{.*}}, %{{.*}}, %{{.*}} {lr = 5.000000e-01 : f64} : tensor<4x8xf32>
func.func @sgd(%p: tensor<4x8xf32>, %g: tensor<4x8xf32>, %b: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %p1, %b1 = piper.sgd_update %p, %g, %b {lr = 0.1 : f64, momentum = 0.9 : f64, weight_decay = 1.0e-4 : f64} : tensor<4x8xf32>
  %p2, %b2 = piper.sgd_update %p1, %g, %b1 {lr = 0.5 : f64} : tensor<4x8xf32>
  return %p2, %b2 : tensor<4x8xf32>, tensor<4x8xf32>
}

// CHECK-LABEL: func.func @adamw(
// CHECK-SAME:    tensor<16xbf16> {piper.param = #piper.param<"w", zeros>}
// CHECK-SAME:    tensor<16xbf16> {piper.state = #piper.state<"w", "exp_avg">}
// CHECK-SAME:    tensor<16xbf16> {piper.state = #piper.state<"w", "exp_avg_sq">}
// CHECK-SAME:    tensor<i64> {piper.state = #piper.state<"w", "step">}
// CHECK-SAME:    -> (tensor<16xbf16> {piper.updated = "w"}
// CHECK:         piper.adamw_update %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {beta2 = 0.94999999999999996 : f64, lr = 1.000000e-03 : f64} : tensor<16xbf16>
func.func @adamw(%w: tensor<16xbf16> {piper.param = #piper.param<"w", zeros>},
                 %m: tensor<16xbf16> {piper.state = #piper.state<"w", "exp_avg">},
                 %v: tensor<16xbf16> {piper.state = #piper.state<"w", "exp_avg_sq">},
                 %t: tensor<i64> {piper.state = #piper.state<"w", "step">},
                 %g: tensor<16xbf16>) -> (tensor<16xbf16> {piper.updated = "w"}) {
  %p, %m2, %v2 = piper.adamw_update %w, %g, %m, %v, %t {lr = 1.0e-3 : f64, beta2 = 0.95 : f64} : tensor<16xbf16>
  return %p : tensor<16xbf16>
}
