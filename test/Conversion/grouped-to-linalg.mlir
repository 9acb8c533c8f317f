// --piper-convert-to-kernels on the grouped forms of attention and RMSNorm:
// grouped-query attention repeats each key/value head for the query heads
// of its group (linalg.broadcast) and sums their gradients back
// (linalg.reduce), in functions named with the key/value head count; a
// grouped RMSNorm (w shorter than the channels: per-head q/k norms) views
// the rows [R, H] as rows of w's size [R H / G, G] and back.
// RUN: piper-opt %s -split-input-file --piper-convert-to-kernels | FileCheck %s --enable-var-scope

// 4 query heads of 2 channels read 2 key/value heads.
// CHECK-LABEL: func.func @grouped_attention(
// CHECK-SAME:    %[[Q:.*]]: tensor<2x3x8xf64>, %[[K:.*]]: tensor<2x3x4xf64>, %[[V:.*]]: tensor<2x3x4xf64>, %[[DY:.*]]: tensor<2x3x8xf64>)
// CHECK:         call @piper_attention_2x3x8_h4_kv2_f64(%[[Q]], %[[K]], %[[V]]) : (tensor<2x3x8xf64>, tensor<2x3x4xf64>, tensor<2x3x4xf64>) -> tensor<2x3x8xf64>
// CHECK:         call @piper_attention_vjp12_2x3x8_h4_kv2_f64(%[[Q]], %[[K]], %[[V]], %[[DY]]) : (tensor<2x3x8xf64>, tensor<2x3x4xf64>, tensor<2x3x4xf64>, tensor<2x3x8xf64>) -> (tensor<2x3x4xf64>, tensor<2x3x4xf64>)
// CHECK-LABEL: func.func private @piper_attention_2x3x8_h4_kv2_f64(
// CHECK-SAME:    %[[Q:.*]]: tensor<2x3x8xf64>, %[[K:.*]]: tensor<2x3x4xf64>, %[[V:.*]]: tensor<2x3x4xf64>)
// CHECK:         %[[KE:.*]] = tensor.expand_shape %[[K]] {{\[\[}}0], [1], [2, 3]] output_shape [2, 3, 2, 2] : tensor<2x3x4xf64> into tensor<2x3x2x2xf64>
// CHECK:         %[[KB:.*]] = linalg.broadcast ins(%[[KE]] : tensor<2x3x2x2xf64>) outs(%{{.*}} : tensor<2x3x2x2x2xf64>) dimensions = [3]
// CHECK:         tensor.collapse_shape %[[KB]] {{\[\[}}0], [1], [2, 3, 4]] : tensor<2x3x2x2x2xf64> into tensor<2x3x8xf64>
// CHECK:         linalg.broadcast
// CHECK:         linalg.batch_matmul
// CHECK-LABEL: func.func private @piper_attention_vjp12_2x3x8_h4_kv2_f64(
// CHECK:         %[[DKE:.*]] = tensor.expand_shape %{{.*}} {{\[\[}}0], [1], [2, 3, 4]] output_shape [2, 3, 2, 2, 2] : tensor<2x3x8xf64> into tensor<2x3x2x2x2xf64>
// CHECK:         %[[DK:.*]] = linalg.reduce { arith.addf } ins(%[[DKE]] : tensor<2x3x2x2x2xf64>) outs(%{{.*}} : tensor<2x3x2x2xf64>) dimensions = [3]
// CHECK:         tensor.collapse_shape %[[DK]] {{\[\[}}0], [1], [2, 3]] : tensor<2x3x2x2xf64> into tensor<2x3x4xf64>
// CHECK:         linalg.reduce { arith.addf }
// CHECK:         return {{.*}} : tensor<2x3x4xf64>, tensor<2x3x4xf64>
func.func @grouped_attention(%q: tensor<2x3x8xf64>, %k: tensor<2x3x4xf64>, %v: tensor<2x3x4xf64>, %dy: tensor<2x3x8xf64>) -> (tensor<2x3x8xf64>, tensor<2x3x4xf64>, tensor<2x3x4xf64>) {
  %o = piper.attention %q, %k, %v {num_heads = 4, num_kv_heads = 2} : tensor<2x3x8xf64>, tensor<2x3x4xf64>, tensor<2x3x4xf64> -> tensor<2x3x8xf64>
  %dk = piper.vjp "piper.attention" wrt [1] (%q, %k, %v) cotangents (%dy) {forward_attrs = {num_heads = 4 : i64, num_kv_heads = 2 : i64}} : (tensor<2x3x8xf64>, tensor<2x3x4xf64>, tensor<2x3x4xf64>), (tensor<2x3x8xf64>) -> tensor<2x3x4xf64>
  %dv = piper.vjp "piper.attention" wrt [2] (%q, %k, %v) cotangents (%dy) {forward_attrs = {num_heads = 4 : i64, num_kv_heads = 2 : i64}} : (tensor<2x3x8xf64>, tensor<2x3x4xf64>, tensor<2x3x4xf64>), (tensor<2x3x8xf64>) -> tensor<2x3x4xf64>
  return %o, %dk, %dv : tensor<2x3x8xf64>, tensor<2x3x4xf64>, tensor<2x3x4xf64>
}

// -----

// Two heads of 4 channels per row, normalised apart.
// CHECK-LABEL: func.func @grouped_rmsnorm(
// CHECK-SAME:    %[[X:.*]]: tensor<2x8xf64>, %[[W:.*]]: tensor<4xf64>, %[[DY:.*]]: tensor<2x8xf64>)
// CHECK:         %[[XE:.*]] = tensor.expand_shape %[[X]] {{\[\[}}0], [1, 2]] output_shape [2, 2, 4] : tensor<2x8xf64> into tensor<2x2x4xf64>
// CHECK:         %[[G:.*]] = tensor.collapse_shape %[[XE]] {{\[\[}}0, 1], [2]] : tensor<2x2x4xf64> into tensor<4x4xf64>
// CHECK:         linalg.generic {{.*}} ins(%[[G]] : tensor<4x4xf64>) outs(%{{.*}} : tensor<4xf64>)
// CHECK:         %[[Y:.*]] = linalg.generic {{.*}} ins(%[[G]], %{{.*}}, %[[W]] : tensor<4x4xf64>, tensor<4xf64>, tensor<4xf64>) outs(%{{.*}} : tensor<4x4xf64>)
// CHECK:         %[[YE:.*]] = tensor.expand_shape %[[Y]] {{\[\[}}0, 1], [2]] output_shape [2, 2, 4] : tensor<4x4xf64> into tensor<2x2x4xf64>
// CHECK:         tensor.collapse_shape %[[YE]] {{\[\[}}0], [1, 2]] : tensor<2x2x4xf64> into tensor<2x8xf64>
// The weight gradient sums over every group of every row.
// CHECK:         tensor.expand_shape %[[DY]] {{\[\[}}0], [1, 2]] output_shape [2, 2, 4]
// CHECK:         linalg.generic {{.*}} iterator_types = ["reduction", "parallel"]{{.*}} outs(%{{.*}} : tensor<4xf64>)
func.func @grouped_rmsnorm(%x: tensor<2x8xf64>, %w: tensor<4xf64>, %dy: tensor<2x8xf64>) -> (tensor<2x8xf64>, tensor<4xf64>) {
  %y = piper.rmsnorm %x, %w : tensor<2x8xf64>, tensor<4xf64> -> tensor<2x8xf64>
  %dw = piper.vjp "piper.rmsnorm" wrt [1] (%x, %w) cotangents (%dy) : (tensor<2x8xf64>, tensor<4xf64>), (tensor<2x8xf64>) -> tensor<4xf64>
  return %y, %dw : tensor<2x8xf64>, tensor<4xf64>
}
