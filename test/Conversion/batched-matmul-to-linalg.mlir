// --piper-convert-to-kernels lowers the matmul and linear shapes beyond the
// 2-D ones (lib/Conversion/BatchedMatmulToLinalg.cpp) to linalg GEMMs, and
// the VJP of a batched matmul to linalg.batch_matmul with transposing maps.
// RUN: piper-opt %s -split-input-file --piper-convert-to-kernels | FileCheck %s --enable-var-scope

// Equal batch dims: collapsed into one batch_matmul batch, expanded back.
// CHECK-LABEL: func.func @batched_matmul(
// CHECK-SAME:    %[[A:.*]]: tensor<2x3x4x5xf64>, %[[B:.*]]: tensor<2x3x5x6xf64>)
// CHECK:         %[[A3:.*]] = tensor.collapse_shape %[[A]] {{\[\[}}0, 1], [2], [3]] : tensor<2x3x4x5xf64> into tensor<6x4x5xf64>
// CHECK:         %[[B3:.*]] = tensor.collapse_shape %[[B]] {{\[\[}}0, 1], [2], [3]] : tensor<2x3x5x6xf64> into tensor<6x5x6xf64>
// CHECK:         %[[Z:.*]] = linalg.fill
// CHECK:         %[[C:.*]] = linalg.batch_matmul ins(%[[A3]], %[[B3]] : tensor<6x4x5xf64>, tensor<6x5x6xf64>) outs(%[[Z]] : tensor<6x4x6xf64>)
// CHECK:         %[[R:.*]] = tensor.expand_shape %[[C]] {{\[\[}}0, 1], [2], [3]] output_shape [2, 3, 4, 6]
// CHECK:         return %[[R]]
// CHECK-NOT:     call
func.func @batched_matmul(%a: tensor<2x3x4x5xf64>, %b: tensor<2x3x5x6xf64>) -> tensor<2x3x4x6xf64> {
  %c = piper.matmul %a, %b : tensor<2x3x4x5xf64>, tensor<2x3x5x6xf64> -> tensor<2x3x4x6xf64>
  return %c : tensor<2x3x4x6xf64>
}

// -----

// A weight shared by the batch: the leading dims collapsed into rows of one
// linalg.matmul.
// CHECK-LABEL: func.func @shared_rhs_matmul(
// CHECK:         %[[X:.*]] = tensor.collapse_shape %{{.*}} {{\[\[}}0, 1], [2]] : tensor<2x4x5xf32> into tensor<8x5xf32>
// CHECK:         %[[C:.*]] = linalg.matmul ins(%[[X]], %{{.*}} : tensor<8x5xf32>, tensor<5x3xf32>)
// CHECK:         tensor.expand_shape %[[C]] {{\[\[}}0, 1], [2]] output_shape [2, 4, 3]
// CHECK-NOT:     call
func.func @shared_rhs_matmul(%a: tensor<2x4x5xf32>, %w: tensor<5x3xf32>) -> tensor<2x4x3xf32> {
  %c = piper.matmul %a, %w : tensor<2x4x5xf32>, tensor<5x3xf32> -> tensor<2x4x3xf32>
  return %c : tensor<2x4x3xf32>
}

// -----

// linear of a vector: x as one row, the bias added, back to a vector.
// CHECK-LABEL: func.func @vector_linear(
// CHECK-SAME:    %[[X:.*]]: tensor<5xf64>, %[[W:.*]]: tensor<5x3xf64>, %[[BIAS:.*]]: tensor<3xf64>)
// CHECK:         %[[ROW:.*]] = tensor.expand_shape %[[X]] {{\[\[}}0, 1]] output_shape [1, 5] : tensor<5xf64> into tensor<1x5xf64>
// CHECK:         %[[C:.*]] = linalg.matmul ins(%[[ROW]], %[[W]] : tensor<1x5xf64>, tensor<5x3xf64>)
// CHECK:         %[[CB:.*]] = linalg.generic {{.*}} ins(%[[C]], %[[BIAS]] : tensor<1x3xf64>, tensor<3xf64>)
// CHECK:         %[[R:.*]] = tensor.collapse_shape %[[CB]] {{\[\[}}0, 1]] : tensor<1x3xf64> into tensor<3xf64>
// CHECK:         return %[[R]]
// CHECK-NOT:     call
func.func @vector_linear(%x: tensor<5xf64>, %w: tensor<5x3xf64>, %b: tensor<3xf64>) -> tensor<3xf64> {
  %y = piper.linear %x, %w, %b : tensor<5xf64>, tensor<5x3xf64>, tensor<3xf64> -> tensor<3xf64>
  return %y : tensor<3xf64>
}

// -----

// The VJP with equal batch dims: dA = dY B^T, dB = A^T dY per batch.
// CHECK-DAG: #[[$A:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
// CHECK-DAG: #[[$BT:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>
// CHECK-DAG: #[[$C:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-DAG: #[[$AT:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d3, d1)>
// CHECK-DAG: #[[$B:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>
// CHECK-LABEL: func.func @batched_matmul_vjp(
// CHECK-SAME:    %[[A:.*]]: tensor<2x4x5xf64>, %[[B:.*]]: tensor<2x5x3xf64>, %[[DY:.*]]: tensor<2x4x3xf64>)
// CHECK:         %[[DA:.*]] = linalg.batch_matmul indexing_maps = [#[[$A]], #[[$BT]], #[[$C]]] ins(%[[DY]], %[[B]] : tensor<2x4x3xf64>, tensor<2x5x3xf64>) {{.*}} -> tensor<2x4x5xf64>
// CHECK:         %[[DB:.*]] = linalg.batch_matmul indexing_maps = [#[[$AT]], #[[$B]], #[[$C]]] ins(%[[A]], %[[DY]] : tensor<2x4x5xf64>, tensor<2x4x3xf64>) {{.*}} -> tensor<2x5x3xf64>
// CHECK:         return %[[DA]], %[[DB]]
// CHECK-NOT:     call
func.func @batched_matmul_vjp(%a: tensor<2x4x5xf64>, %b: tensor<2x5x3xf64>, %dy: tensor<2x4x3xf64>) -> (tensor<2x4x5xf64>, tensor<2x5x3xf64>) {
  %g:2 = piper.vjp "piper.matmul" wrt [0, 1] (%a, %b) cotangents (%dy) : (tensor<2x4x5xf64>, tensor<2x5x3xf64>), (tensor<2x4x3xf64>) -> tensor<2x4x5xf64>, tensor<2x5x3xf64>
  return %g#0, %g#1 : tensor<2x4x5xf64>, tensor<2x5x3xf64>
}

// -----

// The VJP with a shared weight: all rows as one batch, so dB = A^T dY sums
// over the whole batch inside one GEMM.
// CHECK-LABEL: func.func @shared_rhs_matmul_vjp(
// CHECK:         tensor.expand_shape %{{.*}} {{\[\[}}0, 1], [2]] output_shape [1, 8, 5] : tensor<8x5xf32> into tensor<1x8x5xf32>
// CHECK:         %[[DB:.*]] = linalg.batch_matmul indexing_maps = [#{{.*}}, #{{.*}}, #{{.*}}] ins(%{{.*}}, %{{.*}} : tensor<1x8x5xf32>, tensor<1x8x3xf32>) {{.*}} -> tensor<1x5x3xf32>
// CHECK:         %[[R:.*]] = tensor.collapse_shape %[[DB]] {{\[\[}}0, 1], [2]] : tensor<1x5x3xf32> into tensor<5x3xf32>
// CHECK:         return %[[R]]
// CHECK-NOT:     call
func.func @shared_rhs_matmul_vjp(%a: tensor<2x4x5xf32>, %w: tensor<5x3xf32>, %dy: tensor<2x4x3xf32>) -> tensor<5x3xf32> {
  %g = piper.vjp "piper.matmul" wrt [1] (%a, %w) cotangents (%dy) : (tensor<2x4x5xf32>, tensor<5x3xf32>), (tensor<2x4x3xf32>) -> tensor<5x3xf32>
  return %g : tensor<5x3xf32>
}
