// --piper-convert-to-kernels lowers piper.attention and its piper.vjp to
// linalg on tensors (lib/Conversion/AttentionToLinalg.cpp): heads split to
// [B H, S, Dh], the GEMMs as linalg.batch_matmul (transposed operands by
// indexing maps), the causal softmax and its VJP as linalg.generic over
// [B H, S, S] with the mask from linalg.index, heads merged back. Each
// lives in a private function per shape (and set of gradients), called by
// every layer of that shape.
// RUN: piper-opt %s -split-input-file --piper-convert-to-kernels | FileCheck %s --enable-var-scope

// CHECK-DAG: #[[$A:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
// CHECK-DAG: #[[$BT:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>
// CHECK-DAG: #[[$C:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-DAG: #[[$SQ:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[$ROW:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>

// The forward, 2 heads of 2 channels over a batch of 2 sequences of 3, in
// two layers that share one function.
// CHECK-LABEL: func.func @forward_two_heads(
// CHECK-SAME:    %[[Q:.*]]: tensor<2x3x4xf64>, %[[K:.*]]: tensor<2x3x4xf64>, %[[V:.*]]: tensor<2x3x4xf64>)
// CHECK-NEXT:    %[[O1:.*]] = call @piper_attention_2x3x4_h2_f64(%[[Q]], %[[K]], %[[V]])
// CHECK-NEXT:    %[[O2:.*]] = call @piper_attention_2x3x4_h2_f64(%[[O1]], %[[K]], %[[V]])
// CHECK-NEXT:    return %[[O2]]
// CHECK-LABEL: func.func private @piper_attention_2x3x4_h2_f64(
// CHECK-SAME:    %[[Q:.*]]: tensor<2x3x4xf64>, %[[K:.*]]: tensor<2x3x4xf64>, %[[V:.*]]: tensor<2x3x4xf64>) -> tensor<2x3x4xf64>
// CHECK:         %[[QE:.*]] = tensor.expand_shape %[[Q]] {{\[\[}}0], [1], [2, 3]] output_shape [2, 3, 2, 2] : tensor<2x3x4xf64> into tensor<2x3x2x2xf64>
// CHECK:         %[[QT:.*]] = linalg.transpose ins(%[[QE]] : tensor<2x3x2x2xf64>) outs(%{{.*}} : tensor<2x2x3x2xf64>) permutation = [0, 2, 1, 3]
// CHECK:         %[[QH:.*]] = tensor.collapse_shape %[[QT]] {{\[\[}}0, 1], [2], [3]] : tensor<2x2x3x2xf64> into tensor<4x3x2xf64>
// CHECK:         tensor.expand_shape %[[K]]
// CHECK:         %[[KH:.*]] = tensor.collapse_shape
// CHECK:         tensor.expand_shape %[[V]]
// CHECK:         %[[VH:.*]] = tensor.collapse_shape
// Scores Q K^T, K read transposed.
// CHECK:         %[[ZERO:.*]] = linalg.fill ins(%{{.*}} : f64) outs(%{{.*}} : tensor<4x3x3xf64>)
// CHECK:         %[[S:.*]] = linalg.batch_matmul indexing_maps = [#[[$A]], #[[$BT]], #[[$C]]] ins(%[[QH]], %[[KH]] : tensor<4x3x2xf64>, tensor<4x3x2xf64>) outs(%[[ZERO]] : tensor<4x3x3xf64>)
// CHECK:         %[[SCALE:.*]] = arith.constant 0.70710678118654746 : f64
// CHECK:         %[[NEGINF:.*]] = arith.constant 0xFFF0000000000000 : f64
// Row max over the visible columns j <= i.
// CHECK:         %[[MAX:.*]] = linalg.generic {indexing_maps = [#[[$SQ]], #[[$ROW]]], iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[S]] : tensor<4x3x3xf64>) outs(%{{.*}} : tensor<4x3xf64>)
// CHECK:           %[[I:.*]] = linalg.index 1
// CHECK:           %[[J:.*]] = linalg.index 2
// CHECK:           %[[VIS:.*]] = arith.cmpi ule, %[[J]], %[[I]]
// CHECK:           arith.select %[[VIS]], %{{.*}}, %[[NEGINF]]
// CHECK:           arith.maximumf
// exp(scale (s - max)), 0 where masked.
// CHECK:         %[[E:.*]] = linalg.generic {indexing_maps = [#[[$SQ]], #[[$ROW]], #[[$SQ]]], iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[S]], %[[MAX]] : tensor<4x3x3xf64>, tensor<4x3xf64>)
// CHECK:           arith.subf
// CHECK:           arith.mulf %{{.*}}, %[[SCALE]]
// CHECK:           math.exp
// CHECK:           arith.cmpi ule
// CHECK:           arith.select
// CHECK:         %[[SUM:.*]] = linalg.generic {indexing_maps = [#[[$SQ]], #[[$ROW]]], iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[E]] : tensor<4x3x3xf64>)
// CHECK:           arith.addf
// CHECK:         %[[P:.*]] = linalg.generic {indexing_maps = [#[[$SQ]], #[[$ROW]], #[[$SQ]]], {{.*}} ins(%[[E]], %[[SUM]] : tensor<4x3x3xf64>, tensor<4x3xf64>)
// CHECK:           arith.divf
// P V with the default maps, then the heads merged back.
// CHECK:         %[[O:.*]] = linalg.batch_matmul ins(%[[P]], %[[VH]] : tensor<4x3x3xf64>, tensor<4x3x2xf64>) outs(%{{.*}} : tensor<4x3x2xf64>)
// CHECK:         %[[OE:.*]] = tensor.expand_shape %[[O]] {{\[\[}}0, 1], [2], [3]] output_shape [2, 2, 3, 2] : tensor<4x3x2xf64> into tensor<2x2x3x2xf64>
// CHECK:         %[[OT:.*]] = linalg.transpose ins(%[[OE]] : tensor<2x2x3x2xf64>) outs(%{{.*}} : tensor<2x3x2x2xf64>) permutation = [0, 2, 1, 3]
// CHECK:         %[[R:.*]] = tensor.collapse_shape %[[OT]] {{\[\[}}0], [1], [2, 3]] : tensor<2x3x2x2xf64> into tensor<2x3x4xf64>
// CHECK:         return %[[R]]
// CHECK-NOT:     call
func.func @forward_two_heads(%q: tensor<2x3x4xf64>, %k: tensor<2x3x4xf64>, %v: tensor<2x3x4xf64>) -> tensor<2x3x4xf64> {
  %o = piper.attention %q, %k, %v {num_heads = 2 : i64} : tensor<2x3x4xf64>, tensor<2x3x4xf64>, tensor<2x3x4xf64> -> tensor<2x3x4xf64>
  %o2 = piper.attention %o, %k, %v {num_heads = 2 : i64} : tensor<2x3x4xf64>, tensor<2x3x4xf64>, tensor<2x3x4xf64> -> tensor<2x3x4xf64>
  return %o2 : tensor<2x3x4xf64>
}

// -----

// All three gradients share the recomputed P and dS: five GEMMs (scores,
// dV = P^T dO, dP = dO V^T, dQ = dS K, dK = dS^T Q) and no kernel call.
// CHECK-DAG: #[[$A:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
// CHECK-DAG: #[[$BT:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>
// CHECK-DAG: #[[$C:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-DAG: #[[$AT:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d3, d1)>
// CHECK-DAG: #[[$B:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>
// CHECK-LABEL: func.func @vjp_all(
// CHECK-NEXT:    call @piper_attention_vjp012_1x4x6_h2_f32(
// CHECK-LABEL: func.func private @piper_attention_vjp012_1x4x6_h2_f32(
// CHECK:         %[[QH:.*]] = tensor.collapse_shape {{.*}} into tensor<2x4x3xf32>
// CHECK:         %[[KH:.*]] = tensor.collapse_shape {{.*}} into tensor<2x4x3xf32>
// CHECK:         %[[DOH:.*]] = tensor.collapse_shape {{.*}} into tensor<2x4x3xf32>
// CHECK:         linalg.batch_matmul indexing_maps = [#[[$A]], #[[$BT]], #[[$C]]] ins(%[[QH]], %[[KH]] : {{.*}}) {{.*}} -> tensor<2x4x4xf32>
// CHECK:         arith.divf
// CHECK:         %[[DV:.*]] = linalg.batch_matmul indexing_maps = [#[[$AT]], #[[$B]], #[[$C]]] ins(%[[P:[0-9a-z_]+]], %[[DOH]] : tensor<2x4x4xf32>, tensor<2x4x3xf32>) {{.*}} -> tensor<2x4x3xf32>
// CHECK:         %[[VH:.*]] = tensor.collapse_shape {{.*}} into tensor<2x4x3xf32>
// CHECK:         %[[DP:.*]] = linalg.batch_matmul indexing_maps = [#[[$A]], #[[$BT]], #[[$C]]] ins(%[[DOH]], %[[VH]] : {{.*}}) {{.*}} -> tensor<2x4x4xf32>
// rowsum(dP P), then dS = P (dP - rowsum) scale.
// CHECK:         %[[DOT:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[P]], %[[DP]] : tensor<2x4x4xf32>, tensor<2x4x4xf32>)
// CHECK:           arith.mulf
// CHECK:           arith.addf
// CHECK:         %[[DS:.*]] = linalg.generic {{.*}} ins(%[[P]], %[[DP]], %[[DOT]] : tensor<2x4x4xf32>, tensor<2x4x4xf32>, tensor<2x4xf32>)
// CHECK:           arith.subf
// CHECK:           arith.mulf
// CHECK:           arith.mulf
// CHECK:         %[[DQ:.*]] = linalg.batch_matmul ins(%[[DS]], %[[KH]] : tensor<2x4x4xf32>, tensor<2x4x3xf32>)
// CHECK:         %[[DK:.*]] = linalg.batch_matmul indexing_maps = [#[[$AT]], #[[$B]], #[[$C]]] ins(%[[DS]], %[[QH]] : tensor<2x4x4xf32>, tensor<2x4x3xf32>)
// CHECK:         tensor.expand_shape %[[DQ]]
// CHECK:         %[[RQ:.*]] = tensor.collapse_shape {{.*}} into tensor<1x4x6xf32>
// CHECK:         tensor.expand_shape %[[DK]]
// CHECK:         %[[RK:.*]] = tensor.collapse_shape {{.*}} into tensor<1x4x6xf32>
// CHECK:         tensor.expand_shape %[[DV]]
// CHECK:         %[[RV:.*]] = tensor.collapse_shape {{.*}} into tensor<1x4x6xf32>
// CHECK:         return %[[RQ]], %[[RK]], %[[RV]]
// CHECK-NOT:     call
func.func @vjp_all(%q: tensor<1x4x6xf32>, %k: tensor<1x4x6xf32>, %v: tensor<1x4x6xf32>, %d: tensor<1x4x6xf32>) -> (tensor<1x4x6xf32>, tensor<1x4x6xf32>, tensor<1x4x6xf32>) {
  %g:3 = piper.vjp "piper.attention" wrt [0, 1, 2] (%q, %k, %v) cotangents (%d) forward_attrs {num_heads = 2 : i64} : (tensor<1x4x6xf32>, tensor<1x4x6xf32>, tensor<1x4x6xf32>), (tensor<1x4x6xf32>) -> tensor<1x4x6xf32>, tensor<1x4x6xf32>, tensor<1x4x6xf32>
  return %g#0, %g#1, %g#2 : tensor<1x4x6xf32>, tensor<1x4x6xf32>, tensor<1x4x6xf32>
}

// -----

// Only dV: P and one more GEMM; v itself is never read.
// CHECK-LABEL: func.func @vjp_v_only(
// CHECK-NEXT:    call @piper_attention_vjp2_1x4x6_h3_f64(
// CHECK-LABEL: func.func private @piper_attention_vjp2_1x4x6_h3_f64(
// CHECK-SAME:    %[[Q:.*]]: tensor<1x4x6xf64>, %[[K:.*]]: tensor<1x4x6xf64>, %[[V:.*]]: tensor<1x4x6xf64>, %[[D:.*]]: tensor<1x4x6xf64>)
// CHECK-NOT:     %[[V]]
// CHECK-COUNT-2: linalg.batch_matmul
// CHECK-NOT:     linalg.batch_matmul
// CHECK-NOT:     %[[V]]
// CHECK:         return
func.func @vjp_v_only(%q: tensor<1x4x6xf64>, %k: tensor<1x4x6xf64>, %v: tensor<1x4x6xf64>, %d: tensor<1x4x6xf64>) -> tensor<1x4x6xf64> {
  %g = piper.vjp "piper.attention" wrt [2] (%q, %k, %v) cotangents (%d) forward_attrs {num_heads = 3 : i64} : (tensor<1x4x6xf64>, tensor<1x4x6xf64>, tensor<1x4x6xf64>), (tensor<1x4x6xf64>) -> tensor<1x4x6xf64>
  return %g : tensor<1x4x6xf64>
}

// -----

// Only dQ: scores, dP and dS K (no P^T dO, no dS^T Q).
// CHECK-LABEL: func.func @vjp_q_only(
// CHECK-NEXT:    call @piper_attention_vjp0_1x4x6_h1_f64(
// CHECK-LABEL: func.func private @piper_attention_vjp0_1x4x6_h1_f64(
// CHECK-COUNT-3: linalg.batch_matmul
// CHECK-NOT:     linalg.batch_matmul
// CHECK:         return
func.func @vjp_q_only(%q: tensor<1x4x6xf64>, %k: tensor<1x4x6xf64>, %v: tensor<1x4x6xf64>, %d: tensor<1x4x6xf64>) -> tensor<1x4x6xf64> {
  %g = piper.vjp "piper.attention" wrt [0] (%q, %k, %v) cotangents (%d) forward_attrs {num_heads = 1 : i64} : (tensor<1x4x6xf64>, tensor<1x4x6xf64>, tensor<1x4x6xf64>), (tensor<1x4x6xf64>) -> tensor<1x4x6xf64>
  return %g : tensor<1x4x6xf64>
}

// -----

// Autodiff's one piper.vjp per gradient: those of one attention (same
// primals, cotangent and heads) become one call sharing P and dS; a VJP with
// another cotangent gets its own.
// CHECK-LABEL: func.func @vjps_of_one_attention_share_a_call(
// CHECK-SAME:    %[[Q:.*]]: tensor<1x4x6xf64>, %[[K:.*]]: tensor<1x4x6xf64>, %[[V:.*]]: tensor<1x4x6xf64>, %[[D:.*]]: tensor<1x4x6xf64>, %[[D2:.*]]: tensor<1x4x6xf64>)
// CHECK-NEXT:    %[[G:.*]]:3 = call @piper_attention_vjp012_1x4x6_h2_f64(%[[Q]], %[[K]], %[[V]], %[[D]])
// CHECK-NEXT:    %[[H:.*]] = call @piper_attention_vjp1_1x4x6_h2_f64(%[[Q]], %[[K]], %[[V]], %[[D2]])
// CHECK-NEXT:    return %[[G]]#2, %[[G]]#0, %[[G]]#1, %[[H]]
// CHECK-COUNT-2: func.func private
// CHECK-NOT:     func.func private
func.func @vjps_of_one_attention_share_a_call(%q: tensor<1x4x6xf64>, %k: tensor<1x4x6xf64>, %v: tensor<1x4x6xf64>, %d: tensor<1x4x6xf64>, %d2: tensor<1x4x6xf64>) -> (tensor<1x4x6xf64>, tensor<1x4x6xf64>, tensor<1x4x6xf64>, tensor<1x4x6xf64>) {
  %gv = piper.vjp "piper.attention" wrt [2] (%q, %k, %v) cotangents (%d) forward_attrs {num_heads = 2 : i64} : (tensor<1x4x6xf64>, tensor<1x4x6xf64>, tensor<1x4x6xf64>), (tensor<1x4x6xf64>) -> tensor<1x4x6xf64>
  %gq = piper.vjp "piper.attention" wrt [0] (%q, %k, %v) cotangents (%d) forward_attrs {num_heads = 2 : i64} : (tensor<1x4x6xf64>, tensor<1x4x6xf64>, tensor<1x4x6xf64>), (tensor<1x4x6xf64>) -> tensor<1x4x6xf64>
  %h = piper.vjp "piper.attention" wrt [1] (%q, %k, %v) cotangents (%d2) forward_attrs {num_heads = 2 : i64} : (tensor<1x4x6xf64>, tensor<1x4x6xf64>, tensor<1x4x6xf64>), (tensor<1x4x6xf64>) -> tensor<1x4x6xf64>
  %gk = piper.vjp "piper.attention" wrt [1] (%q, %k, %v) cotangents (%d) forward_attrs {num_heads = 2 : i64} : (tensor<1x4x6xf64>, tensor<1x4x6xf64>, tensor<1x4x6xf64>), (tensor<1x4x6xf64>) -> tensor<1x4x6xf64>
  return %gv, %gq, %gk, %h : tensor<1x4x6xf64>, tensor<1x4x6xf64>, tensor<1x4x6xf64>, tensor<1x4x6xf64>
}
