// rmsnorm, layernorm and their piper.vjp lower to linalg.generic over the
// rows [R, H] of x (NormToLinalg.cpp): per-row statistics as reductions
// over H, the result as one elementwise kernel reading them per row and the
// weights per column; weight gradients as column reductions. No kernel
// library call is left.
// RUN: piper-opt %s -split-input-file --piper-convert-to-kernels | FileCheck %s --enable-var-scope --implicit-check-not=piper_k_

// The leading dims collapse to rows; epsilon comes from the op.
// CHECK-DAG:   #[[$WHOLE:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG:   #[[$ROW:.*]] = affine_map<(d0, d1) -> (d0)>
// CHECK-DAG:   #[[$COL:.*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-DAG:   #[[$VEC:.*]] = affine_map<(d0) -> (d0)>
// CHECK-LABEL: func.func @rmsnorm_rows_of_a_3d_tensor(
// CHECK-SAME:      %[[X:.*]]: tensor<2x3x4xf32>, %[[W:.*]]: tensor<4xf32>)
// CHECK:         %[[ROWS:.*]] = tensor.collapse_shape %[[X]] {{\[}}[0, 1], [2]] : tensor<2x3x4xf32> into tensor<6x4xf32>
// CHECK:         %[[ZERO:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<6xf32>)
// CHECK:         %[[SQ:.*]] = linalg.generic {indexing_maps = [#[[$WHOLE]], #[[$ROW]]], iterator_types = ["parallel", "reduction"]} ins(%[[ROWS]] : tensor<6x4xf32>) outs(%[[ZERO]] : tensor<6xf32>)
// CHECK:           %[[P:.*]] = arith.mulf %{{.*}}, %{{.*}} : f32
// CHECK:           arith.addf %{{.*}}, %[[P]] : f32
// CHECK:         %[[S:.*]] = linalg.generic {indexing_maps = [#[[$VEC]], #[[$VEC]]], iterator_types = ["parallel"]} ins(%[[SQ]] : tensor<6xf32>)
// CHECK:           arith.constant 4.000000e+00 : f32
// CHECK:           arith.constant 9.99999974E-6 : f32
// CHECK:           math.sqrt
// CHECK:           arith.divf
// CHECK:         %[[Y:.*]] = linalg.generic {indexing_maps = [#[[$WHOLE]], #[[$ROW]], #[[$COL]], #[[$WHOLE]]], iterator_types = ["parallel", "parallel"]} ins(%[[ROWS]], %[[S]], %[[W]] : tensor<6x4xf32>, tensor<6xf32>, tensor<4xf32>)
// CHECK:         %[[OUT:.*]] = tensor.expand_shape %[[Y]] {{\[}}[0, 1], [2]] output_shape [2, 3, 4]
// CHECK:         return %[[OUT]]
func.func @rmsnorm_rows_of_a_3d_tensor(%x: tensor<2x3x4xf32>, %w: tensor<4xf32>) -> tensor<2x3x4xf32> {
  %y = piper.rmsnorm %x, %w {epsilon = 1.0e-05 : f64} : tensor<2x3x4xf32>, tensor<4xf32> -> tensor<2x3x4xf32>
  return %y : tensor<2x3x4xf32>
}

// -----

// Without the attribute, epsilon is the op's default, 1e-6.
// CHECK-LABEL: func.func @rmsnorm_default_epsilon(
// CHECK:         linalg.generic
// CHECK:         linalg.generic
// CHECK:           arith.constant 9.9999999999999995E-7 : f64
func.func @rmsnorm_default_epsilon(%x: tensor<3x4xf64>, %w: tensor<4xf64>) -> tensor<3x4xf64> {
  %y = piper.rmsnorm %x, %w : tensor<3x4xf64>, tensor<4xf64> -> tensor<3x4xf64>
  return %y : tensor<3x4xf64>
}

// -----

// layernorm: the mean, then the variance from the centred second pass, then
// (x - mean) s w + b.
// CHECK-LABEL: func.func @layernorm_two_pass(
// CHECK-SAME:      %[[X:.*]]: tensor<3x4xf64>, %[[W:.*]]: tensor<4xf64>, %[[B:.*]]: tensor<4xf64>)
// CHECK:         %[[SUM:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[X]] : tensor<3x4xf64>)
// CHECK:         %[[MEAN:.*]] = linalg.generic {{.*}} ins(%[[SUM]] : tensor<3xf64>)
// CHECK:           arith.divf %{{.*}}, %{{.*}} : f64
// CHECK:         %[[VAR:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[X]], %[[MEAN]] : tensor<3x4xf64>, tensor<3xf64>)
// CHECK:           %[[D:.*]] = arith.subf
// CHECK:           arith.mulf %[[D]], %[[D]] : f64
// CHECK:         %[[S:.*]] = linalg.generic {{.*}} ins(%[[VAR]] : tensor<3xf64>)
// CHECK:           arith.constant 1.000000e-05 : f64
// CHECK:         %[[Y:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]} ins(%[[X]], %[[MEAN]], %[[S]], %[[W]], %[[B]] : tensor<3x4xf64>, tensor<3xf64>, tensor<3xf64>, tensor<4xf64>, tensor<4xf64>)
// CHECK:           %[[C:.*]] = arith.subf
// CHECK:           %[[N:.*]] = arith.mulf %[[C]],
// CHECK:           %[[NW:.*]] = arith.mulf %[[N]],
// CHECK:           arith.addf %[[NW]],
// CHECK:         return %[[Y]]
func.func @layernorm_two_pass(%x: tensor<3x4xf64>, %w: tensor<4xf64>, %b: tensor<4xf64>) -> tensor<3x4xf64> {
  %y = piper.layernorm %x, %w, %b : tensor<3x4xf64>, tensor<4xf64>, tensor<4xf64> -> tensor<3x4xf64>
  return %y : tensor<3x4xf64>
}

// -----

// rmsnorm VJP w.r.t. x and w: one scale kernel for both (epsilon from
// forward_attrs), the row dot of dy w x for dx, a column reduction for dw.
// CHECK-DAG:   #[[$WHOLE:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG:   #[[$ROW:.*]] = affine_map<(d0, d1) -> (d0)>
// CHECK-DAG:   #[[$COL:.*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func @rmsnorm_vjp_shares_the_scale(
// CHECK-SAME:      %[[X:.*]]: tensor<3x4xf64>, %[[W:.*]]: tensor<4xf64>, %[[DY:.*]]: tensor<3x4xf64>)
// CHECK:         %[[SQ:.*]] = linalg.generic {{.*}} ins(%[[X]] : tensor<3x4xf64>)
// CHECK:         %[[S:.*]] = linalg.generic {{.*}} ins(%[[SQ]] : tensor<3xf64>)
// CHECK:           arith.constant 1.000000e-05 : f64
// CHECK:         %[[DOT:.*]] = linalg.generic {indexing_maps = [#[[$WHOLE]], #[[$COL]], #[[$WHOLE]], #[[$ROW]]], iterator_types = ["parallel", "reduction"]} ins(%[[DY]], %[[W]], %[[X]] : tensor<3x4xf64>, tensor<4xf64>, tensor<3x4xf64>)
// CHECK:         %[[DX:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]} ins(%[[X]], %[[DY]], %[[W]], %[[S]], %[[DOT]] :
// CHECK:         %[[DW:.*]] = linalg.generic {indexing_maps = [#[[$WHOLE]], #[[$WHOLE]], #[[$ROW]], #[[$COL]]], iterator_types = ["reduction", "parallel"]} ins(%[[DY]], %[[X]], %[[S]] : tensor<3x4xf64>, tensor<3x4xf64>, tensor<3xf64>) outs(%{{.*}} : tensor<4xf64>)
// CHECK-NOT:     linalg.generic
// CHECK:         return %[[DX]], %[[DW]]
func.func @rmsnorm_vjp_shares_the_scale(%x: tensor<3x4xf64>, %w: tensor<4xf64>, %dy: tensor<3x4xf64>) -> (tensor<3x4xf64>, tensor<4xf64>) {
  %dx, %dw = piper.vjp "piper.rmsnorm" wrt [0, 1] (%x, %w) cotangents (%dy) forward_attrs {epsilon = 1.0e-05 : f64} : (tensor<3x4xf64>, tensor<4xf64>), (tensor<3x4xf64>) -> tensor<3x4xf64>, tensor<4xf64>
  return %dx, %dw : tensor<3x4xf64>, tensor<4xf64>
}

// -----

// layernorm VJP: dx from one two-result row reduction (sum g, sum g xhat),
// dw and db as column reductions.
// CHECK-LABEL: func.func @layernorm_vjp_all_operands(
// CHECK-SAME:      %[[X:.*]]: tensor<3x4xf64>, %[[W:.*]]: tensor<4xf64>, %[[B:.*]]: tensor<4xf64>, %[[DY:.*]]: tensor<3x4xf64>)
// CHECK:         %[[SUM:.*]] = linalg.generic {{.*}} ins(%[[X]] : tensor<3x4xf64>)
// CHECK:         %[[MEAN:.*]] = linalg.generic {{.*}} ins(%[[SUM]] : tensor<3xf64>)
// CHECK:         %[[VAR:.*]] = linalg.generic {{.*}} ins(%[[X]], %[[MEAN]] : tensor<3x4xf64>, tensor<3xf64>)
// CHECK:         %[[S:.*]] = linalg.generic {{.*}} ins(%[[VAR]] : tensor<3xf64>)
// CHECK:         %[[G:.*]]:2 = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[X]], %[[DY]], %[[W]], %[[MEAN]], %[[S]] : {{.*}}) outs(%{{.*}}, %{{.*}} : tensor<3xf64>, tensor<3xf64>)
// CHECK:         %[[DX:.*]] = linalg.generic {{.*}} ins(%[[X]], %[[DY]], %[[W]], %[[MEAN]], %[[S]], %[[G]]#0, %[[G]]#1 : {{.*}})
// CHECK:           arith.constant 2.500000e-01 : f64
// CHECK:         %[[DW:.*]] = linalg.generic {{.*}} iterator_types = ["reduction", "parallel"]} ins(%[[DY]], %[[X]], %[[MEAN]], %[[S]] :
// CHECK:         %[[DB:.*]] = linalg.generic {{.*}} iterator_types = ["reduction", "parallel"]} ins(%[[DY]] : tensor<3x4xf64>)
// CHECK:         return %[[DX]], %[[DW]], %[[DB]]
func.func @layernorm_vjp_all_operands(%x: tensor<3x4xf64>, %w: tensor<4xf64>, %b: tensor<4xf64>, %dy: tensor<3x4xf64>) -> (tensor<3x4xf64>, tensor<4xf64>, tensor<4xf64>) {
  %dx, %dw, %db = piper.vjp "piper.layernorm" wrt [0, 1, 2] (%x, %w, %b) cotangents (%dy) : (tensor<3x4xf64>, tensor<4xf64>, tensor<4xf64>), (tensor<3x4xf64>) -> tensor<3x4xf64>, tensor<4xf64>, tensor<4xf64>
  return %dx, %dw, %db : tensor<3x4xf64>, tensor<4xf64>, tensor<4xf64>
}
