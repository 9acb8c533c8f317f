// RUN: piper-gen --config=tiny-gpt --pp=2 | FileCheck %s
// RUN: piper-gen --config=tiny-gpt --pp=2 --dtype=f64 | piper-opt --piper-autodiff | FileCheck %s --check-prefix=GRAD
// RUN: piper-gen --model=gpt --pp=2 --mesh=dp=2,pp=2 --zero=3 | piper-opt --piper-print-summary -o /dev/null | FileCheck %s --check-prefix=SUMMARY
// The dense GPT (tiny-gpt: 2 layers, H = 16, 2 heads, F = 32, V = 32,
// S = 8, B = 2, so T = 16 tokens): embedding, per layer RMSNorm, causal
// attention, residual, RMSNorm, SwiGLU FFN, residual; final norm, LM head,
// cross-entropy against [B*S] labels.

// CHECK-LABEL: func.func @step(
// CHECK-SAME:    %[[EMB:[^:]*]]: tensor<32x16xf32> {piper.param = #piper.param<"embed.weight", normal(0.02)>}
// CHECK-SAME:    %[[N0:[^:]*]]: tensor<16xf32> {piper.param = #piper.param<"layers.0.attn_norm.weight", ones>}
// CHECK-SAME:    %[[WQ:[^:]*]]: tensor<16x16xf32> {piper.param = #piper.param<"layers.0.attn.wq", normal(0.02)>}
// CHECK-SAME:    %[[WK:[^:]*]]: tensor<16x16xf32> {piper.param = #piper.param<"layers.0.attn.wk", normal(0.02)>}
// CHECK-SAME:    %[[WV:[^:]*]]: tensor<16x16xf32> {piper.param = #piper.param<"layers.0.attn.wv", normal(0.02)>}
// CHECK-SAME:    %[[WO:[^:]*]]: tensor<16x16xf32> {piper.param = #piper.param<"layers.0.attn.wo", normal(0.02)>}
// CHECK-SAME:    %[[M0:[^:]*]]: tensor<16xf32> {piper.param = #piper.param<"layers.0.mlp_norm.weight", ones>}
// CHECK-SAME:    %[[WG:[^:]*]]: tensor<16x32xf32> {piper.param = #piper.param<"layers.0.mlp.w_gate", normal(0.02)>}
// CHECK-SAME:    %[[WU:[^:]*]]: tensor<16x32xf32> {piper.param = #piper.param<"layers.0.mlp.w_up", normal(0.02)>}
// CHECK-SAME:    %[[WD:[^:]*]]: tensor<32x16xf32> {piper.param = #piper.param<"layers.0.mlp.w_down", normal(0.02)>}
// CHECK-SAME:    {piper.param = #piper.param<"layers.1.attn_norm.weight", ones>}
// CHECK-SAME:    {piper.param = #piper.param<"layers.1.mlp.w_down", normal(0.02)>}
// CHECK-SAME:    %[[FN:[^:]*]]: tensor<16xf32> {piper.param = #piper.param<"final_norm.weight", ones>}
// CHECK-SAME:    %[[HEAD:[^:]*]]: tensor<16x32xf32> {piper.param = #piper.param<"lm_head.weight", normal(0.02)>}
// CHECK-SAME:    %[[IDS:[^:]*]]: tensor<2x8xi64>, %[[LABELS:[^:]*]]: tensor<16xi64>) -> tensor<f32>
// Stage 0: the embedding and layer 0.
// CHECK:         %[[S0:.*]] = piper.annotate {PP = 0} -> tensor<16x16xf32> {
// CHECK-NEXT:      %[[E:.*]] = piper.embedding %[[EMB]], %[[IDS]] : tensor<32x16xf32>, tensor<2x8xi64> -> tensor<2x8x16xf32>
// CHECK-NEXT:      %[[H:.*]] = piper.reshape %[[E]] : tensor<2x8x16xf32> -> tensor<16x16xf32>
// CHECK-NEXT:      %[[A:.*]] = piper.rmsnorm %[[H]], %[[N0]] : tensor<16x16xf32>, tensor<16xf32> -> tensor<16x16xf32>
// CHECK-NEXT:      %[[QP:.*]] = piper.linear %[[A]], %[[WQ]] : tensor<16x16xf32>, tensor<16x16xf32> -> tensor<16x16xf32>
// CHECK-NEXT:      %[[Q:.*]] = piper.reshape %[[QP]] : tensor<16x16xf32> -> tensor<2x8x16xf32>
// CHECK-NEXT:      %[[KP:.*]] = piper.linear %[[A]], %[[WK]]
// CHECK-NEXT:      %[[K:.*]] = piper.reshape %[[KP]]
// CHECK-NEXT:      %[[VP:.*]] = piper.linear %[[A]], %[[WV]]
// CHECK-NEXT:      %[[V:.*]] = piper.reshape %[[VP]]
// CHECK-NEXT:      %[[ATT:.*]] = piper.attention %[[Q]], %[[K]], %[[V]] {num_heads = 2 : i64} : tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf32> -> tensor<2x8x16xf32>
// CHECK-NEXT:      %[[MERGED:.*]] = piper.reshape %[[ATT]] : tensor<2x8x16xf32> -> tensor<16x16xf32>
// CHECK-NEXT:      %[[OP:.*]] = piper.linear %[[MERGED]], %[[WO]]
// CHECK-NEXT:      %[[R1:.*]] = piper.add %[[H]], %[[OP]] : tensor<16x16xf32>
// CHECK-NEXT:      %[[MN:.*]] = piper.rmsnorm %[[R1]], %[[M0]]
// CHECK-NEXT:      %[[G:.*]] = piper.linear %[[MN]], %[[WG]] : tensor<16x16xf32>, tensor<16x32xf32> -> tensor<16x32xf32>
// CHECK-NEXT:      %[[U:.*]] = piper.linear %[[MN]], %[[WU]] : tensor<16x16xf32>, tensor<16x32xf32> -> tensor<16x32xf32>
// CHECK-NEXT:      %[[ACT:.*]] = piper.swiglu %[[G]], %[[U]] : tensor<16x32xf32>
// CHECK-NEXT:      %[[D:.*]] = piper.linear %[[ACT]], %[[WD]] : tensor<16x32xf32>, tensor<32x16xf32> -> tensor<16x16xf32>
// CHECK-NEXT:      %[[R2:.*]] = piper.add %[[R1]], %[[D]] : tensor<16x16xf32>
// CHECK-NEXT:      piper.yield %[[R2]] : tensor<16x16xf32>
// Stage 1: layer 1, then the final norm, the LM head and the loss.
// CHECK:         %[[S1:.*]] = piper.annotate {PP = 1} -> tensor<f32> {
// CHECK-NEXT:      piper.rmsnorm %[[S0]]
// CHECK-NOT:       piper.embedding
// CHECK:           piper.attention
// CHECK:           piper.swiglu
// CHECK:           %[[LAST:.*]] = piper.add
// CHECK-NEXT:      %[[F:.*]] = piper.rmsnorm %[[LAST]], %[[FN]] : tensor<16x16xf32>, tensor<16xf32> -> tensor<16x16xf32>
// CHECK-NEXT:      %[[LOGITS:.*]] = piper.linear %[[F]], %[[HEAD]] : tensor<16x16xf32>, tensor<16x32xf32> -> tensor<16x32xf32>
// CHECK-NEXT:      %[[LOSS:.*]] = piper.cross_entropy %[[LOGITS]], %[[LABELS]] : tensor<16x32xf32>, tensor<16xi64> -> tensor<f32>
// CHECK-NEXT:      piper.yield %[[LOSS]] : tensor<f32>
// CHECK:         return %[[S1]] : tensor<f32>

// Autodiff differentiates every op: the last stage's BI chunk starts at the
// loss and runs back through the attention; its BW chunk has the LM head's
// weight gradient; stage 0's BW chunk ends with the embedding's.
// GRAD-LABEL: func.func @step(
// GRAD-SAME:    -> (tensor<f64>, tensor<32x16xf64> {piper.grad = "embed.weight"}
// GRAD-SAME:        tensor<16x32xf64> {piper.grad = "lm_head.weight"})
// GRAD:         piper.annotate {PP = 1} pass = BI
// GRAD-NEXT:      piper.vjp "piper.cross_entropy" wrt [0]
// GRAD-NEXT:      piper.vjp "piper.linear" wrt [0]
// GRAD:           piper.vjp "piper.swiglu" wrt [0]
// GRAD-NEXT:      piper.vjp "piper.swiglu" wrt [1]
// GRAD:           piper.vjp "piper.attention" wrt [0]
// GRAD:         piper.annotate {PP = 1} pass = BW
// GRAD-NEXT:      piper.vjp "piper.linear" wrt [1] ({{.*}}) cotangents ({{.*}}) : (tensor<16x16xf64>, tensor<16x32xf64>), (tensor<16x32xf64>) -> tensor<16x32xf64>
// GRAD:         piper.annotate {PP = 0} pass = BI
// GRAD:         piper.annotate {PP = 0} pass = BW
// GRAD:           piper.vjp "piper.embedding" wrt [0] ({{.*}}) cotangents ({{.*}}) : (tensor<32x16xf64>, tensor<2x8xi64>), (tensor<2x8x16xf64>) -> tensor<32x16xf64>
// GRAD:         return

// ZeRO-3 over dp = 2 keeps half of every parameter.
// SUMMARY-LABEL: mesh @mesh: 4 devices
// SUMMARY-NEXT:    axis dp: size 2
// SUMMARY-NEXT:    axis pp: size 2
// SUMMARY-LABEL: function @step
// SUMMARY-NEXT:    param "embed.weight" normal(0.02) (arg 0) tensor<32x16xf32> #piper.placement<@mesh, [{}, {}], replicated = {dp}, zero = 3>
// SUMMARY-NEXT:      per device: tensor<32x16xf32>, 2048 bytes; ZeRO-3 shards parameters, gradients and optimizer state 1/2 (keeps 1024 bytes)
// SUMMARY:         param "lm_head.weight" normal(0.02) (arg 20) tensor<16x32xf32> #piper.placement<@mesh, [{}, {}], replicated = {dp}, zero = 3>
// SUMMARY-NEXT:      per device: tensor<16x32xf32>, 2048 bytes; ZeRO-3 shards parameters, gradients and optimizer state 1/2 (keeps 1024 bytes)
// SUMMARY-NEXT:    chunk {PP = 0}: 19 ops
// SUMMARY-NEXT:    chunk {PP = 1}: 20 ops
// SUMMARY-NOT:     chunk
