// piper.reshape, piper.transpose and their piper.vjp lower to tensor and
// linalg ops (LayoutToLinalg.cpp): no kernel call, no copy where the new
// shape regroups neighbouring dims.
// RUN: piper-opt %s -split-input-file --piper-convert-to-kernels | FileCheck %s -enable-var-scope
// RUN: piper-opt %s -split-input-file --piper-convert-to-kernels | FileCheck %s --check-prefix=NOCALL
// NOCALL-NOT: call

// A reshape that merges leading dims is a collapse_shape (a view).
// CHECK-LABEL: func.func @reshape_merging_dims_collapses(
// CHECK-SAME:    %[[X:.*]]: tensor<2x8x4xf64>
// CHECK:         %[[R:.*]] = tensor.collapse_shape %[[X]] {{\[\[}}0, 1], [2]] : tensor<2x8x4xf64> into tensor<16x4xf64>
// CHECK-NEXT:    return %[[R]]
func.func @reshape_merging_dims_collapses(%x: tensor<2x8x4xf64>) -> tensor<16x4xf64> {
  %r = piper.reshape %x : tensor<2x8x4xf64> -> tensor<16x4xf64>
  return %r : tensor<16x4xf64>
}

// -----

// A reshape that splits a dim (heads) is an expand_shape.
// CHECK-LABEL: func.func @reshape_splitting_a_dim_expands(
// CHECK-SAME:    %[[X:.*]]: tensor<16x8xf32>
// CHECK:         %[[R:.*]] = tensor.expand_shape %[[X]] {{\[\[}}0], [1, 2]] output_shape [16, 2, 4] : tensor<16x8xf32> into tensor<16x2x4xf32>
// CHECK-NEXT:    return %[[R]]
func.func @reshape_splitting_a_dim_expands(%x: tensor<16x8xf32>) -> tensor<16x2x4xf32> {
  %r = piper.reshape %x : tensor<16x8xf32> -> tensor<16x2x4xf32>
  return %r : tensor<16x2x4xf32>
}

// -----

// A reshape that regroups no dims goes through 1-D, both steps views.
// CHECK-LABEL: func.func @reshape_without_regrouping_goes_through_1d(
// CHECK-SAME:    %[[X:.*]]: tensor<2x6xf64>
// CHECK:         %[[F:.*]] = tensor.collapse_shape %[[X]] {{\[\[}}0, 1]] : tensor<2x6xf64> into tensor<12xf64>
// CHECK-NEXT:    %[[R:.*]] = tensor.expand_shape %[[F]] {{\[\[}}0, 1]] output_shape [3, 4] : tensor<12xf64> into tensor<3x4xf64>
// CHECK-NEXT:    return %[[R]]
func.func @reshape_without_regrouping_goes_through_1d(%x: tensor<2x6xf64>) -> tensor<3x4xf64> {
  %r = piper.reshape %x : tensor<2x6xf64> -> tensor<3x4xf64>
  return %r : tensor<3x4xf64>
}

// -----

// A reshape to its own type is nothing.
// CHECK-LABEL: func.func @reshape_to_the_same_type_vanishes(
// CHECK-SAME:    %[[X:.*]]: tensor<2x6xf64>
// CHECK-NEXT:    return %[[X]]
func.func @reshape_to_the_same_type_vanishes(%x: tensor<2x6xf64>) -> tensor<2x6xf64> {
  %r = piper.reshape %x : tensor<2x6xf64> -> tensor<2x6xf64>
  return %r : tensor<2x6xf64>
}

// -----

// A transpose is linalg.transpose with the same permutation.
// CHECK-LABEL: func.func @transpose_is_linalg_transpose(
// CHECK-SAME:    %[[X:.*]]: tensor<2x4x8xf32>
// CHECK:         %[[E:.*]] = tensor.empty() : tensor<8x2x4xf32>
// CHECK-NEXT:    %[[T:.*]] = linalg.transpose ins(%[[X]] : tensor<2x4x8xf32>) outs(%[[E]] : tensor<8x2x4xf32>) permutation = [2, 0, 1]
// CHECK-NEXT:    return %[[T]]
func.func @transpose_is_linalg_transpose(%x: tensor<2x4x8xf32>) -> tensor<8x2x4xf32> {
  %t = piper.transpose %x permutation = [2, 0, 1] : tensor<2x4x8xf32> -> tensor<8x2x4xf32>
  return %t : tensor<8x2x4xf32>
}

// -----

// The VJP of a reshape reshapes the cotangent back to the primal's shape.
// CHECK-LABEL: func.func @reshape_vjp_is_the_inverse_reshape(
// CHECK-SAME:    %{{.*}}: tensor<2x8x4xf64>, %[[D:.*]]: tensor<16x4xf64>
// CHECK:         %[[G:.*]] = tensor.expand_shape %[[D]] {{\[\[}}0, 1], [2]] output_shape [2, 8, 4] : tensor<16x4xf64> into tensor<2x8x4xf64>
// CHECK-NEXT:    return %[[G]]
func.func @reshape_vjp_is_the_inverse_reshape(%x: tensor<2x8x4xf64>, %d: tensor<16x4xf64>) -> tensor<2x8x4xf64> {
  %g = piper.vjp "piper.reshape" wrt [0] (%x) cotangents (%d) : (tensor<2x8x4xf64>), (tensor<16x4xf64>) -> tensor<2x8x4xf64>
  return %g : tensor<2x8x4xf64>
}

// -----

// The VJP of transpose [2, 0, 1] transposes the cotangent by [1, 2, 0].
// CHECK-LABEL: func.func @transpose_vjp_inverts_the_permutation(
// CHECK-SAME:    %{{.*}}: tensor<2x4x8xf64>, %[[D:.*]]: tensor<8x2x4xf64>
// CHECK:         %[[E:.*]] = tensor.empty() : tensor<2x4x8xf64>
// CHECK-NEXT:    %[[G:.*]] = linalg.transpose ins(%[[D]] : tensor<8x2x4xf64>) outs(%[[E]] : tensor<2x4x8xf64>) permutation = [1, 2, 0]
// CHECK-NEXT:    return %[[G]]
func.func @transpose_vjp_inverts_the_permutation(%x: tensor<2x4x8xf64>, %d: tensor<8x2x4xf64>) -> tensor<2x4x8xf64> {
  %g = piper.vjp "piper.transpose" wrt [0] (%x) cotangents (%d) forward_attrs {permutation = array<i64: 2, 0, 1>} : (tensor<2x4x8xf64>), (tensor<8x2x4xf64>) -> tensor<2x4x8xf64>
  return %g : tensor<2x4x8xf64>
}
