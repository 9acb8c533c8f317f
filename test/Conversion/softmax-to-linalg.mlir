// softmax and its piper.vjp lower to linalg.generic over the rows [R, N]
// (SoftmaxToLinalg.cpp): the row max (from -inf), exp(x - max), the row sum,
// the quotient; the VJP recomputes y from x and adds the row dot sum(dy y)
// and y (dy - dot). No kernel library call is left.
// RUN: piper-opt %s -split-input-file --piper-convert-to-kernels | FileCheck %s --enable-var-scope --implicit-check-not=piper_k_

// CHECK-DAG:   #[[$WHOLE:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG:   #[[$ROW:.*]] = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @softmax_is_stable(
// CHECK-SAME:      %[[X:.*]]: tensor<2x3x5xf32>)
// CHECK:         %[[ROWS:.*]] = tensor.collapse_shape %[[X]] {{\[}}[0, 1], [2]] : tensor<2x3x5xf32> into tensor<6x5xf32>
// CHECK:         %[[NEG:.*]] = arith.constant 0xFF800000 : f32
// CHECK:         %[[INIT:.*]] = linalg.fill ins(%[[NEG]] : f32) outs(%{{.*}} : tensor<6xf32>)
// CHECK:         %[[MAX:.*]] = linalg.generic {indexing_maps = [#[[$WHOLE]], #[[$ROW]]], iterator_types = ["parallel", "reduction"]} ins(%[[ROWS]] : tensor<6x5xf32>) outs(%[[INIT]] : tensor<6xf32>)
// CHECK:           arith.maximumf
// CHECK:         %[[E:.*]] = linalg.generic {indexing_maps = [#[[$WHOLE]], #[[$ROW]], #[[$WHOLE]]], iterator_types = ["parallel", "parallel"]} ins(%[[ROWS]], %[[MAX]] : tensor<6x5xf32>, tensor<6xf32>)
// CHECK:           %[[D:.*]] = arith.subf
// CHECK:           math.exp %[[D]] : f32
// CHECK:         %[[SUM:.*]] = linalg.generic {indexing_maps = [#[[$WHOLE]], #[[$ROW]]], iterator_types = ["parallel", "reduction"]} ins(%[[E]] : tensor<6x5xf32>)
// CHECK:           arith.addf
// CHECK:         %[[Y:.*]] = linalg.generic {{.*}} ins(%[[E]], %[[SUM]] : tensor<6x5xf32>, tensor<6xf32>)
// CHECK:           arith.divf
// CHECK:         %[[OUT:.*]] = tensor.expand_shape %[[Y]] {{\[}}[0, 1], [2]] output_shape [2, 3, 5]
// CHECK:         return %[[OUT]]
func.func @softmax_is_stable(%x: tensor<2x3x5xf32>) -> tensor<2x3x5xf32> {
  %y = piper.softmax %x : tensor<2x3x5xf32>
  return %y : tensor<2x3x5xf32>
}

// -----

// A vector is one row.
// CHECK-LABEL: func.func @softmax_of_a_vector(
// CHECK-SAME:      %[[X:.*]]: tensor<5xf64>)
// CHECK:         %[[ROW:.*]] = tensor.expand_shape %[[X]] {{\[}}[0, 1]] output_shape [1, 5] : tensor<5xf64> into tensor<1x5xf64>
// CHECK-COUNT-4: linalg.generic
// CHECK:         %[[Y:.*]] = tensor.collapse_shape %{{.*}} {{\[}}[0, 1]] : tensor<1x5xf64> into tensor<5xf64>
// CHECK:         return %[[Y]]
func.func @softmax_of_a_vector(%x: tensor<5xf64>) -> tensor<5xf64> {
  %y = piper.softmax %x : tensor<5xf64>
  return %y : tensor<5xf64>
}

// -----

// CHECK-LABEL: func.func @softmax_vjp_recomputes_y(
// CHECK-SAME:      %[[X:.*]]: tensor<4x5xf64>, %[[DY:.*]]: tensor<4x5xf64>)
// CHECK:         %[[MAX:.*]] = linalg.generic {{.*}} ins(%[[X]] : tensor<4x5xf64>)
// CHECK:         %[[E:.*]] = linalg.generic {{.*}} ins(%[[X]], %[[MAX]] :
// CHECK:         %[[SUM:.*]] = linalg.generic {{.*}} ins(%[[E]] : tensor<4x5xf64>)
// CHECK:         %[[Y:.*]] = linalg.generic {{.*}} ins(%[[E]], %[[SUM]] :
// CHECK:         %[[DOT:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[Y]], %[[DY]] : tensor<4x5xf64>, tensor<4x5xf64>)
// CHECK:           %[[P:.*]] = arith.mulf
// CHECK:           arith.addf %{{.*}}, %[[P]] : f64
// CHECK:         %[[DX:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]} ins(%[[Y]], %[[DY]], %[[DOT]] : tensor<4x5xf64>, tensor<4x5xf64>, tensor<4xf64>)
// CHECK:           %[[C:.*]] = arith.subf
// CHECK:           arith.mulf %{{.*}}, %[[C]] : f64
// CHECK:         return %[[DX]]
func.func @softmax_vjp_recomputes_y(%x: tensor<4x5xf64>, %dy: tensor<4x5xf64>) -> tensor<4x5xf64> {
  %dx = piper.vjp "piper.softmax" wrt [0] (%x) cotangents (%dy) : (tensor<4x5xf64>), (tensor<4x5xf64>) -> tensor<4x5xf64>
  return %dx : tensor<4x5xf64>
}
