// The MoE ops and their piper.vjp lower to linalg and tensor ops
// (MoEToLinalg.cpp, RouterToLinalg.cpp): GEMMs as linalg.matmul /
// linalg.batch_matmul, the top-k as tie-ordered reductions, the slot rule
// as one scf.for over the pairs, data movement as gathers. No kernel call.
// RUN: piper-opt %s -split-input-file --piper-convert-to-kernels | FileCheck %s -enable-var-scope
// RUN: piper-opt %s -split-input-file --piper-convert-to-kernels | FileCheck %s --check-prefix=NOCALL
// NOCALL-NOT: call

// The router: logits GEMM, softmax (max, exp, sum, divide), then one
// reduction over the experts per choice; choice 1 takes only experts after
// choice 0 in the order (probability descending, index ascending), so
// equal probabilities pick the lower expert first.
// CHECK-LABEL: func.func @router_is_gemm_softmax_and_k_reductions(
// CHECK-SAME:    %[[X:.*]]: tensor<6x4xf64>, %[[W:.*]]: tensor<4x3xf64>
// CHECK:         %[[L:.*]] = linalg.matmul ins(%[[X]], %[[W]] : tensor<6x4xf64>, tensor<4x3xf64>)
// CHECK:         %[[MAX:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[L]] : tensor<6x3xf64>)
// CHECK:           arith.maximumf
// CHECK:         %[[EXP:.*]] = linalg.generic {{.*}} ins(%[[L]], %[[MAX]] : tensor<6x3xf64>, tensor<6xf64>)
// CHECK:           math.exp
// CHECK:         %[[SUM:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[EXP]] : tensor<6x3xf64>)
// CHECK:         %[[P:.*]] = linalg.generic {{.*}} ins(%[[EXP]], %[[SUM]] : tensor<6x3xf64>, tensor<6xf64>)
// CHECK:           arith.divf
// CHECK:         %[[C0:.*]]:2 = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[P]] : tensor<6x3xf64>) outs(%{{.*}}, %{{.*}} : tensor<6xf64>, tensor<6xi64>)
// CHECK:         ^bb0(%[[PI:.*]]: f64, %[[BEST:.*]]: f64, %[[AT:.*]]: i64):
// CHECK:           %[[E:.*]] = linalg.index 1 : index
// CHECK:           %[[I:.*]] = arith.index_cast %[[E]] : index to i64
// CHECK:           %[[NONE:.*]] = arith.cmpi slt, %[[AT]], %{{.*}} : i64
// CHECK:           %[[GT:.*]] = arith.cmpf ogt, %[[PI]], %[[BEST]] : f64
// CHECK:           %[[EQ:.*]] = arith.cmpf oeq, %[[PI]], %[[BEST]] : f64
// CHECK:           %[[LOWER:.*]] = arith.cmpi slt, %[[I]], %[[AT]] : i64
// CHECK:         %[[C1:.*]]:2 = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[P]], %[[C0]]#0, %[[C0]]#1 : tensor<6x3xf64>, tensor<6xf64>, tensor<6xi64>)
// CHECK:         ^bb0(%[[QI:.*]]: f64, %[[PREV:.*]]: f64, %[[PREVAT:.*]]: i64, %{{.*}}: f64, %{{.*}}: i64):
// CHECK:           %[[AFTER:.*]] = arith.cmpf ogt, %[[PREV]], %[[QI]] : f64
// CHECK:           %[[TIE:.*]] = arith.cmpf oeq, %[[PREV]], %[[QI]] : f64
// CHECK:           %[[LATER:.*]] = arith.cmpi slt, %[[PREVAT]], %{{.*}} : i64
// CHECK:         %[[CHOSEN:.*]] = linalg.generic {{.*}} ins(%[[C0]]#0, %[[C1]]#0 : tensor<6xf64>, tensor<6xf64>) outs(%{{.*}} : tensor<6x2xf64>)
// CHECK:         %[[IDX:.*]] = linalg.generic {{.*}} ins(%[[C0]]#1, %[[C1]]#1 : tensor<6xi64>, tensor<6xi64>) outs(%{{.*}} : tensor<6x2xi64>)
// CHECK:         %[[S:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[CHOSEN]] : tensor<6x2xf64>)
// CHECK:         %[[WTS:.*]] = linalg.generic {{.*}} ins(%[[CHOSEN]], %[[S]] : tensor<6x2xf64>, tensor<6xf64>)
// CHECK:         return %[[WTS]], %[[IDX]] : tensor<6x2xf64>, tensor<6x2xi64>
func.func @router_is_gemm_softmax_and_k_reductions(%x: tensor<6x4xf64>, %w: tensor<4x3xf64>) -> (tensor<6x2xf64>, tensor<6x2xi64>) {
  %wts, %idx = piper.router %x, %w {top_k = 2 : i64} : tensor<6x4xf64>, tensor<4x3xf64> -> tensor<6x2xf64>, tensor<6x2xi64>
  return %wts, %idx : tensor<6x2xf64>, tensor<6x2xi64>
}

// -----

// dispatch: the slot scan over the 12 pairs (counts per expert, each
// pair's slot, each slot's pair; a pair at count >= capacity 2 is
// dropped), then a gather of x rows into the [3, 2, 4] buffer.
// CHECK-LABEL: func.func @dispatch_is_a_slot_scan_and_a_gather(
// CHECK-SAME:    %[[X:.*]]: tensor<6x4xf32>, %[[I:.*]]: tensor<6x2xi64>
// CHECK:         %[[FLAT:.*]] = tensor.collapse_shape %[[I]] {{\[\[}}0, 1]] : tensor<6x2xi64> into tensor<12xi64>
// CHECK:         %[[LOOP:.*]]:3 = scf.for %[[P:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[CNT:.*]] = %{{.*}}, %[[SLOT:.*]] = %{{.*}}, %[[PAIR:.*]] = %{{.*}}) -> (tensor<3xi64>, tensor<12xi64>, tensor<3x2xi64>)
// CHECK:           %[[E:.*]] = tensor.extract %[[FLAT]][%[[P]]] : tensor<12xi64>
// CHECK:           %[[N:.*]] = tensor.extract %[[CNT]][%{{.*}}] : tensor<3xi64>
// CHECK:           %[[CAP:.*]] = arith.constant 2 : i64
// CHECK:           %[[FITS:.*]] = arith.cmpi slt, %[[N]], %[[CAP]] : i64
// CHECK:           tensor.insert %{{.*}} into %[[SLOT]][%[[P]]] : tensor<12xi64>
// CHECK:           tensor.insert %{{.*}} into %[[PAIR]][%{{.*}}, %{{.*}}] : tensor<3x2xi64>
// CHECK:           scf.yield
// CHECK:         %[[B:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[LOOP]]#2 : tensor<3x2xi64>) outs(%{{.*}} : tensor<3x2x4xf32>)
// CHECK:           tensor.extract %[[X]][%{{.*}}, %{{.*}}] : tensor<6x4xf32>
// CHECK:         return %[[B]]
func.func @dispatch_is_a_slot_scan_and_a_gather(%x: tensor<6x4xf32>, %idx: tensor<6x2xi64>) -> tensor<3x2x4xf32> {
  %b = piper.dispatch %x, %idx {capacity = 2 : i64} : tensor<6x4xf32>, tensor<6x2xi64> -> tensor<3x2x4xf32>
  return %b : tensor<3x2x4xf32>
}

// -----

// combine: the same slot scan, then per token a sum over its choices j
// (the reduction) of weight times the expert output it gathers.
// CHECK-LABEL: func.func @combine_is_a_weighted_gather(
// CHECK-SAME:    %[[Y:.*]]: tensor<3x2x4xf32>, %[[W:.*]]: tensor<6x2xf32>, %[[I:.*]]: tensor<6x2xi64>
// CHECK:         %[[LOOP:.*]]:3 = scf.for
// CHECK:         %[[SLOTS:.*]] = tensor.expand_shape %[[LOOP]]#1 {{\[\[}}0, 1]] output_shape [6, 2]
// CHECK:         %[[O:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[SLOTS]], %[[I]], %[[W]] : tensor<6x2xi64>, tensor<6x2xi64>, tensor<6x2xf32>) outs(%{{.*}} : tensor<6x4xf32>)
// CHECK:           %[[V:.*]] = tensor.extract %[[Y]][%{{.*}}, %{{.*}}, %{{.*}}] : tensor<3x2x4xf32>
// CHECK:           arith.mulf %{{.*}}, %[[V]] : f32
// CHECK:         return %[[O]]
func.func @combine_is_a_weighted_gather(%y: tensor<3x2x4xf32>, %w: tensor<6x2xf32>, %idx: tensor<6x2xi64>) -> tensor<6x4xf32> {
  %o = piper.combine %y, %w, %idx : tensor<3x2x4xf32>, tensor<6x2xf32>, tensor<6x2xi64> -> tensor<6x4xf32>
  return %o : tensor<6x4xf32>
}

// -----

// expert_ffn: gate and up batched GEMMs, the SwiGLU generic, the down GEMM.
// CHECK-LABEL: func.func @expert_ffn_is_three_batch_matmuls(
// CHECK-SAME:    %[[B:.*]]: tensor<3x2x4xf32>, %[[G:.*]]: tensor<3x4x5xf32>, %[[U:.*]]: tensor<3x4x5xf32>, %[[D:.*]]: tensor<3x5x4xf32>
// CHECK:         %[[GATE:.*]] = linalg.batch_matmul ins(%[[B]], %[[G]] : tensor<3x2x4xf32>, tensor<3x4x5xf32>)
// CHECK:         %[[UP:.*]] = linalg.batch_matmul ins(%[[B]], %[[U]] : tensor<3x2x4xf32>, tensor<3x4x5xf32>)
// CHECK:         %[[ACT:.*]] = linalg.generic {{.*}} ins(%[[GATE]], %[[UP]] : tensor<3x2x5xf32>, tensor<3x2x5xf32>)
// CHECK:           math.exp
// CHECK:         %[[Y:.*]] = linalg.batch_matmul ins(%[[ACT]], %[[D]] : tensor<3x2x5xf32>, tensor<3x5x4xf32>)
// CHECK:         return %[[Y]]
func.func @expert_ffn_is_three_batch_matmuls(%b: tensor<3x2x4xf32>, %g: tensor<3x4x5xf32>, %u: tensor<3x4x5xf32>, %d: tensor<3x5x4xf32>) -> tensor<3x2x4xf32> {
  %y = piper.expert_ffn %b, %g, %u, %d : tensor<3x2x4xf32>, tensor<3x4x5xf32>, tensor<3x4x5xf32>, tensor<3x5x4xf32> -> tensor<3x2x4xf32>
  return %y : tensor<3x2x4xf32>
}

// -----

// The router VJP recomputes the routing, forms the logits' cotangent dz and
// multiplies: dx = dz w^T, dw = x^T dz (transposes materialised so both
// are plain GEMMs).
// CHECK-LABEL: func.func @router_vjp_is_two_gemms_of_the_logits_cotangent(
// CHECK-SAME:    %[[X:.*]]: tensor<6x4xf64>, %[[W:.*]]: tensor<4x3xf64>, %[[DW:.*]]: tensor<6x2xf64>
// CHECK:         linalg.matmul ins(%[[X]], %[[W]]
// CHECK:         %[[DOT:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[DW]], %{{.*}}, %{{.*}} : tensor<6x2xf64>, tensor<6x2xf64>, tensor<6xf64>)
// CHECK:         %[[DP:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]} ins(%{{.*}}, %[[DW]], %[[DOT]], %{{.*}} : tensor<6x2xi64>, tensor<6x2xf64>, tensor<6xf64>, tensor<6xf64>) outs(%{{.*}} : tensor<6x3xf64>)
// CHECK:         %[[PDP:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %[[DP]] : tensor<6x3xf64>, tensor<6x3xf64>) outs(%{{.*}} : tensor<6xf64>)
// CHECK:         %[[DZ:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %[[DP]], %[[PDP]] : tensor<6x3xf64>, tensor<6x3xf64>, tensor<6xf64>) outs(%{{.*}} : tensor<6x3xf64>)
// CHECK:         %[[WT:.*]] = linalg.transpose ins(%[[W]] : tensor<4x3xf64>) outs(%{{.*}} : tensor<3x4xf64>) permutation = [1, 0]
// CHECK:         %[[DX:.*]] = linalg.matmul ins(%[[DZ]], %[[WT]] : tensor<6x3xf64>, tensor<3x4xf64>)
// CHECK:         %[[XT:.*]] = linalg.transpose ins(%[[X]] : tensor<6x4xf64>) outs(%{{.*}} : tensor<4x6xf64>) permutation = [1, 0]
// CHECK:         %[[DWT:.*]] = linalg.matmul ins(%[[XT]], %[[DZ]] : tensor<4x6xf64>, tensor<6x3xf64>)
// CHECK:         return %[[DX]], %[[DWT]]
func.func @router_vjp_is_two_gemms_of_the_logits_cotangent(%x: tensor<6x4xf64>, %w: tensor<4x3xf64>, %d: tensor<6x2xf64>) -> (tensor<6x4xf64>, tensor<4x3xf64>) {
  %a, %b = piper.vjp "piper.router" wrt [0, 1] (%x, %w) cotangents (%d) forward_attrs {top_k = 2 : i64} : (tensor<6x4xf64>, tensor<4x3xf64>), (tensor<6x2xf64>) -> tensor<6x4xf64>, tensor<4x3xf64>
  return %a, %b : tensor<6x4xf64>, tensor<4x3xf64>
}

// -----

// The dispatch VJP sums, per token, the cotangent rows of its kept slots.
// CHECK-LABEL: func.func @dispatch_vjp_gathers_the_slots_back(
// CHECK-SAME:    %{{.*}}: tensor<6x4xf64>, %[[I:.*]]: tensor<6x2xi64>, %[[D:.*]]: tensor<3x2x4xf64>
// CHECK:         %[[LOOP:.*]]:3 = scf.for
// CHECK:         %[[SLOTS:.*]] = tensor.expand_shape %[[LOOP]]#1
// CHECK:         %[[DX:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[SLOTS]], %[[I]] : tensor<6x2xi64>, tensor<6x2xi64>) outs(%{{.*}} : tensor<6x4xf64>)
// CHECK:           tensor.extract %[[D]][%{{.*}}, %{{.*}}, %{{.*}}] : tensor<3x2x4xf64>
// CHECK:         return %[[DX]]
func.func @dispatch_vjp_gathers_the_slots_back(%x: tensor<6x4xf64>, %i: tensor<6x2xi64>, %d: tensor<3x2x4xf64>) -> tensor<6x4xf64> {
  %g = piper.vjp "piper.dispatch" wrt [0] (%x, %i) cotangents (%d) forward_attrs {capacity = 2 : i64} : (tensor<6x4xf64>, tensor<6x2xi64>), (tensor<3x2x4xf64>) -> tensor<6x4xf64>
  return %g : tensor<6x4xf64>
}

// -----

// The combine VJP: dy gathers weight times the token's cotangent into each
// filled slot; dweights is a dot product over the hidden dim per kept pair.
// CHECK-LABEL: func.func @combine_vjp_is_a_slot_gather_and_dots(
// CHECK-SAME:    %[[Y:.*]]: tensor<3x2x4xf64>, %[[W:.*]]: tensor<6x2xf64>, %[[I:.*]]: tensor<6x2xi64>, %[[D:.*]]: tensor<6x4xf64>
// CHECK:         %[[LOOP:.*]]:3 = scf.for
// CHECK:         %[[DY:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[LOOP]]#2 : tensor<3x2xi64>) outs(%{{.*}} : tensor<3x2x4xf64>)
// CHECK:           tensor.extract %[[W]][%{{.*}}, %{{.*}}] : tensor<6x2xf64>
// CHECK:           tensor.extract %[[D]][%{{.*}}, %{{.*}}] : tensor<6x4xf64>
// CHECK:         %[[DW:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]} ins(%{{.*}}, %[[I]], %[[D]] : tensor<6x2xi64>, tensor<6x2xi64>, tensor<6x4xf64>) outs(%{{.*}} : tensor<6x2xf64>)
// CHECK:           tensor.extract %[[Y]][%{{.*}}, %{{.*}}, %{{.*}}] : tensor<3x2x4xf64>
// CHECK:         return %[[DY]], %[[DW]]
func.func @combine_vjp_is_a_slot_gather_and_dots(%y: tensor<3x2x4xf64>, %w: tensor<6x2xf64>, %i: tensor<6x2xi64>, %d: tensor<6x4xf64>) -> (tensor<3x2x4xf64>, tensor<6x2xf64>) {
  %a, %b = piper.vjp "piper.combine" wrt [0, 1] (%y, %w, %i) cotangents (%d) : (tensor<3x2x4xf64>, tensor<6x2xf64>, tensor<6x2xi64>), (tensor<6x4xf64>) -> tensor<3x2x4xf64>, tensor<6x2xf64>
  return %a, %b : tensor<3x2x4xf64>, tensor<6x2xf64>
}

// -----

// The expert FFN VJP: dbuf = dgate wg^T + dup wu^T (the second batched GEMM
// accumulates into the first), dw_down = act^T dout.
// CHECK-LABEL: func.func @expert_ffn_vjp_is_batched_gemms(
// CHECK-SAME:    %[[B:.*]]: tensor<3x2x4xf32>, %[[G:.*]]: tensor<3x4x5xf32>, %[[U:.*]]: tensor<3x4x5xf32>, %[[DN:.*]]: tensor<3x5x4xf32>, %[[D:.*]]: tensor<3x2x4xf32>
// CHECK:         %[[GATE:.*]] = linalg.batch_matmul ins(%[[B]], %[[G]]
// CHECK:         %[[UP:.*]] = linalg.batch_matmul ins(%[[B]], %[[U]]
// CHECK:         %[[DNT:.*]] = linalg.transpose ins(%[[DN]] : tensor<3x5x4xf32>) outs(%{{.*}} : tensor<3x4x5xf32>) permutation = [0, 2, 1]
// CHECK:         %[[DACT:.*]] = linalg.batch_matmul ins(%[[D]], %[[DNT]]
// CHECK:         %[[DGATE:.*]] = linalg.generic {{.*}} ins(%[[GATE]], %[[UP]], %[[DACT]]
// CHECK:         %[[GT:.*]] = linalg.transpose ins(%[[G]] : tensor<3x4x5xf32>) outs(%{{.*}} : tensor<3x5x4xf32>) permutation = [0, 2, 1]
// CHECK:         %[[PART:.*]] = linalg.batch_matmul ins(%[[DGATE]], %[[GT]] : tensor<3x2x5xf32>, tensor<3x5x4xf32>)
// CHECK:         %[[DUP:.*]] = linalg.generic {{.*}} ins(%[[GATE]], %[[UP]], %[[DACT]]
// CHECK:         %[[UT:.*]] = linalg.transpose ins(%[[U]] : tensor<3x4x5xf32>)
// CHECK:         %[[DBUF:.*]] = linalg.batch_matmul ins(%[[DUP]], %[[UT]] : tensor<3x2x5xf32>, tensor<3x5x4xf32>) outs(%[[PART]] : tensor<3x2x4xf32>)
// CHECK:         %[[ACT:.*]] = linalg.generic {{.*}} ins(%[[GATE]], %[[UP]] : tensor<3x2x5xf32>, tensor<3x2x5xf32>)
// CHECK:         %[[ACTT:.*]] = linalg.transpose ins(%[[ACT]] : tensor<3x2x5xf32>) outs(%{{.*}} : tensor<3x5x2xf32>)
// CHECK:         %[[DWD:.*]] = linalg.batch_matmul ins(%[[ACTT]], %[[D]] : tensor<3x5x2xf32>, tensor<3x2x4xf32>)
// CHECK:         return %[[DBUF]], %[[DWD]]
func.func @expert_ffn_vjp_is_batched_gemms(%b: tensor<3x2x4xf32>, %g: tensor<3x4x5xf32>, %u: tensor<3x4x5xf32>, %dn: tensor<3x5x4xf32>, %d: tensor<3x2x4xf32>) -> (tensor<3x2x4xf32>, tensor<3x5x4xf32>) {
  %a, %c = piper.vjp "piper.expert_ffn" wrt [0, 3] (%b, %g, %u, %dn) cotangents (%d) : (tensor<3x2x4xf32>, tensor<3x4x5xf32>, tensor<3x4x5xf32>, tensor<3x5x4xf32>), (tensor<3x2x4xf32>) -> tensor<3x2x4xf32>, tensor<3x5x4xf32>
  return %a, %c : tensor<3x2x4xf32>, tensor<3x5x4xf32>
}
