// cross_entropy, embedding and their piper.vjp lower to linalg
// (LossToLinalg.cpp). The loss: the row max, then one reduction for the exp
// sum and the label's logit (a select on the column index), then the mean
// of (max + log sum) - logit; its VJP (softmax - onehot) dLoss / N. The
// embedding: a parallel gather through tensor.extract; its VJP a
// scatter-add, an scf.for over tokens adding each cotangent row into its
// table row in place. Ids outside the table read and add nothing. No kernel
// library call is left.
// RUN: piper-opt %s -split-input-file --piper-convert-to-kernels | FileCheck %s --enable-var-scope --implicit-check-not=piper_k_

// CHECK-DAG:   #[[$WHOLE:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG:   #[[$ROW:.*]] = affine_map<(d0, d1) -> (d0)>
// CHECK-DAG:   #[[$VEC:.*]] = affine_map<(d0) -> (d0)>
// CHECK-DAG:   #[[$SUM:.*]] = affine_map<(d0) -> ()>
// CHECK-LABEL: func.func @cross_entropy_mean_over_rows(
// CHECK-SAME:      %[[L:.*]]: tensor<3x5xf32>, %[[LAB:.*]]: tensor<3xi64>)
// CHECK:         %[[MAX:.*]] = linalg.generic {indexing_maps = [#[[$WHOLE]], #[[$ROW]]], iterator_types = ["parallel", "reduction"]} ins(%[[L]] : tensor<3x5xf32>)
// CHECK:           arith.maximumf
// CHECK:         %[[SP:.*]]:2 = linalg.generic {indexing_maps = [#[[$WHOLE]], #[[$ROW]], #[[$ROW]], #[[$ROW]], #[[$ROW]]], iterator_types = ["parallel", "reduction"]} ins(%[[L]], %[[MAX]], %[[LAB]] : tensor<3x5xf32>, tensor<3xf32>, tensor<3xi64>)
// CHECK:         ^bb0(%[[LV:.*]]: f32, %[[MV:.*]]: f32, %[[LABV:.*]]: i64, %[[S:.*]]: f32, %[[P:.*]]: f32):
// CHECK:           %[[D:.*]] = arith.subf %[[LV]], %[[MV]] : f32
// CHECK:           %[[E:.*]] = math.exp %[[D]] : f32
// CHECK:           %[[J:.*]] = linalg.index 1 : index
// CHECK:           %[[LABI:.*]] = arith.index_cast %[[LABV]] : i64 to index
// CHECK:           %[[HIT:.*]] = arith.cmpi eq, %[[J]], %[[LABI]] : index
// CHECK:           %[[PICK:.*]] = arith.select %[[HIT]], %[[LV]], %{{.*}} : f32
// CHECK:           %[[S2:.*]] = arith.addf %[[S]], %[[E]] : f32
// CHECK:           %[[P2:.*]] = arith.addf %[[P]], %[[PICK]] : f32
// CHECK:           linalg.yield %[[S2]], %[[P2]] : f32, f32
// CHECK:         %[[TOTAL:.*]] = linalg.generic {indexing_maps = [#[[$VEC]], #[[$VEC]], #[[$VEC]], #[[$SUM]]], iterator_types = ["reduction"]} ins(%[[MAX]], %[[SP]]#0, %[[SP]]#1 : tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) outs(%{{.*}} : tensor<f32>)
// CHECK:           %[[LOG:.*]] = math.log
// CHECK:           %[[LSE:.*]] = arith.addf %{{.*}}, %[[LOG]] : f32
// CHECK:           arith.subf %[[LSE]],
// CHECK:         %[[LOSS:.*]] = linalg.generic {{.*}} iterator_types = []} ins(%[[TOTAL]] : tensor<f32>)
// CHECK:           arith.constant 3.000000e+00 : f32
// CHECK:           arith.divf
// CHECK:         return %[[LOSS]]
func.func @cross_entropy_mean_over_rows(%l: tensor<3x5xf32>, %labels: tensor<3xi64>) -> tensor<f32> {
  %loss = piper.cross_entropy %l, %labels : tensor<3x5xf32>, tensor<3xi64> -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// CHECK-DAG:   #[[$SCALAR:.*]] = affine_map<(d0, d1) -> ()>
// CHECK-LABEL: func.func @cross_entropy_vjp(
// CHECK-SAME:      %[[L:.*]]: tensor<3x5xf64>, %[[LAB:.*]]: tensor<3xi64>, %[[DL:.*]]: tensor<f64>)
// CHECK-COUNT-3: linalg.generic
// CHECK:         %[[Y:.*]] = linalg.generic {{.*}} ins(%{{[^ ]*}}, %{{[^ ]*}} : tensor<3x5xf64>, tensor<3xf64>) outs(%{{[^ ]*}} : tensor<3x5xf64>)
// CHECK:           arith.divf
// CHECK:         %[[G:.*]] = linalg.generic {indexing_maps = [{{.*}}, #[[$SCALAR]], {{.*}}]{{.*}} ins(%[[Y]], %[[LAB]], %[[DL]] : tensor<3x5xf64>, tensor<3xi64>, tensor<f64>)
// CHECK:           %[[ONE:.*]] = arith.constant 1.000000e+00 : f64
// CHECK:           %[[HITV:.*]] = arith.subf %{{.*}}, %[[ONE]] : f64
// CHECK:           %[[HIT:.*]] = arith.cmpi eq
// CHECK:           %[[SEL:.*]] = arith.select %[[HIT]], %[[HITV]], %{{.*}} : f64
// CHECK:           arith.constant 3.000000e+00 : f64
// CHECK:           %[[SCALE:.*]] = arith.divf
// CHECK:           arith.mulf %[[SEL]], %[[SCALE]] : f64
// CHECK:         return %[[G]]
func.func @cross_entropy_vjp(%l: tensor<3x5xf64>, %labels: tensor<3xi64>, %d: tensor<f64>) -> tensor<3x5xf64> {
  %g = piper.vjp "piper.cross_entropy" wrt [0] (%l, %labels) cotangents (%d) : (tensor<3x5xf64>, tensor<3xi64>), (tensor<f64>) -> tensor<3x5xf64>
  return %g : tensor<3x5xf64>
}

// -----

// CHECK-LABEL: func.func @embedding_gathers_rows(
// CHECK-SAME:      %[[T:.*]]: tensor<10x4xf32>, %[[IDS:.*]]: tensor<2x3xi64>)
// CHECK:         %[[FLAT:.*]] = tensor.collapse_shape %[[IDS]] {{\[}}[0, 1]] : tensor<2x3xi64> into tensor<6xi64>
// CHECK:         %[[ROWS:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]} ins(%[[FLAT]] : tensor<6xi64>) outs(%{{.*}} : tensor<6x4xf32>)
// CHECK:         ^bb0(%[[ID:.*]]: i64, %{{.*}}: f32):
// CHECK:           %[[I:.*]] = arith.index_cast %[[ID]] : i64 to index
// CHECK:           %[[C0:.*]] = arith.constant 0 : index
// CHECK:           %[[C10:.*]] = arith.constant 10 : index
// CHECK:           %[[GE:.*]] = arith.cmpi sge, %[[I]], %[[C0]] : index
// CHECK:           %[[LT:.*]] = arith.cmpi slt, %[[I]], %[[C10]] : index
// CHECK:           %[[OK:.*]] = arith.andi %[[GE]], %[[LT]] : i1
// CHECK:           %[[R:.*]] = arith.select %[[OK]], %[[I]], %[[C0]] : index
// CHECK:           %[[J:.*]] = linalg.index 1 : index
// CHECK:           %[[V:.*]] = tensor.extract %[[T]][%[[R]], %[[J]]] : tensor<10x4xf32>
// CHECK:           %[[Z:.*]] = arith.select %[[OK]], %[[V]], %{{.*}} : f32
// CHECK:           linalg.yield %[[Z]] : f32
// CHECK:         %[[OUT:.*]] = tensor.expand_shape %[[ROWS]] {{\[}}[0, 1], [2]] output_shape [2, 3, 4] : tensor<6x4xf32> into tensor<2x3x4xf32>
// CHECK:         return %[[OUT]]
func.func @embedding_gathers_rows(%t: tensor<10x4xf32>, %ids: tensor<2x3xi64>) -> tensor<2x3x4xf32> {
  %e = piper.embedding %t, %ids : tensor<10x4xf32>, tensor<2x3xi64> -> tensor<2x3x4xf32>
  return %e : tensor<2x3x4xf32>
}

// -----

// CHECK-LABEL: func.func @embedding_vjp_scatter_adds_in_token_order(
// CHECK-SAME:      %[[T:.*]]: tensor<10x4xf32>, %[[IDS:.*]]: tensor<2x3xi64>, %[[DY:.*]]: tensor<2x3x4xf32>)
// CHECK:         %[[FLAT:.*]] = tensor.collapse_shape %[[IDS]] {{\[}}[0, 1]] : tensor<2x3xi64> into tensor<6xi64>
// CHECK:         %[[DYR:.*]] = tensor.collapse_shape %[[DY]] {{\[}}[0, 1], [2]] : tensor<2x3x4xf32> into tensor<6x4xf32>
// CHECK:         %[[ZERO:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<10x4xf32>)
// CHECK:         %[[C6:.*]] = arith.constant 6 : index
// CHECK:         %[[G:.*]] = scf.for %[[TOK:.*]] = %{{.*}} to %[[C6]] step %{{.*}} iter_args(%[[ACC:.*]] = %[[ZERO]]) -> (tensor<10x4xf32>) {
// CHECK:           %[[ID:.*]] = tensor.extract %[[FLAT]][%[[TOK]]] : tensor<6xi64>
// CHECK:           %[[OK:.*]] = arith.andi
// CHECK:           %[[R:.*]] = arith.select %[[OK]], %{{.*}}, %{{.*}} : index
// CHECK:           %[[ROW:.*]] = tensor.extract_slice %[[ACC]][%[[R]], 0] [1, 4] [1, 1] : tensor<10x4xf32> to tensor<1x4xf32>
// CHECK:           %[[SRC:.*]] = tensor.extract_slice %[[DYR]][%[[TOK]], 0] [1, 4] [1, 1] : tensor<6x4xf32> to tensor<1x4xf32>
// CHECK:           %[[ADD:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]} ins(%[[SRC]] : tensor<1x4xf32>) outs(%[[ROW]] : tensor<1x4xf32>)
// CHECK:           ^bb0(%[[DV:.*]]: f32, %[[AV:.*]]: f32):
// CHECK:             %[[GV:.*]] = arith.select %[[OK]], %[[DV]], %{{.*}} : f32
// CHECK:             arith.addf %[[AV]], %[[GV]] : f32
// CHECK:           %[[NEW:.*]] = tensor.insert_slice %[[ADD]] into %[[ACC]][%[[R]], 0] [1, 4] [1, 1] : tensor<1x4xf32> into tensor<10x4xf32>
// CHECK:           scf.yield %[[NEW]] : tensor<10x4xf32>
// CHECK:         return %[[G]]
func.func @embedding_vjp_scatter_adds_in_token_order(%t: tensor<10x4xf32>, %ids: tensor<2x3xi64>, %dy: tensor<2x3x4xf32>) -> tensor<10x4xf32> {
  %g = piper.vjp "piper.embedding" wrt [0] (%t, %ids) cotangents (%dy) : (tensor<10x4xf32>, tensor<2x3xi64>), (tensor<2x3x4xf32>) -> tensor<10x4xf32>
  return %g : tensor<10x4xf32>
}
