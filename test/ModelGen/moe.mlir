// RUN: piper-gen --config=tiny-moe --pp=2 | FileCheck %s
// RUN: piper-gen --config=tiny-moe --pp=2 --dtype=f64 | piper-opt --piper-autodiff | FileCheck %s --check-prefix=GRAD
// RUN: piper-gen --model=moe --pp=2 --mesh=dp=2,pp=2,ep=2 --zero=1 | piper-opt --piper-print-summary -o /dev/null | FileCheck %s --check-prefix=SUMMARY
// The Qwen3-style MoE GPT (tiny-moe: 2 layers, H = 16, 4 experts, top-2,
// expert FFN 16, T = 16 tokens). The FFN of layer l is a router in the
// layer's PP chunk and a nested {EP = l} chunk with dispatch, expert_ffn
// and combine. tiny-moe's capacity is T = 16: no token is dropped.

// CHECK-LABEL: func.func @step(
// CHECK-SAME:    {piper.param = #piper.param<"layers.0.mlp_norm.weight", ones>}
// CHECK-SAME:    %[[R0:[^:]*]]: tensor<16x4xf32> {piper.param = #piper.param<"layers.0.mlp.router.weight", normal(0.02)>}
// CHECK-SAME:    %[[G0:[^:]*]]: tensor<4x16x16xf32> {piper.param = #piper.param<"layers.0.mlp.experts.w_gate", normal(0.02)>}
// CHECK-SAME:    %[[U0:[^:]*]]: tensor<4x16x16xf32> {piper.param = #piper.param<"layers.0.mlp.experts.w_up", normal(0.02)>}
// CHECK-SAME:    %[[D0:[^:]*]]: tensor<4x16x16xf32> {piper.param = #piper.param<"layers.0.mlp.experts.w_down", normal(0.02)>}
// CHECK-SAME:    {piper.param = #piper.param<"layers.1.attn_norm.weight", ones>}
// CHECK-SAME:    %[[D1:[^:]*]]: tensor<4x16x16xf32> {piper.param = #piper.param<"layers.1.mlp.experts.w_down", normal(0.02)>}
// CHECK-SAME:    {piper.param = #piper.param<"final_norm.weight", ones>}
// CHECK-SAME:    %[[IDS:[^:]*]]: tensor<2x8xi64>, %[[LABELS:[^:]*]]: tensor<16xi64>) -> tensor<f32>
// CHECK:         %[[S0:.*]] = piper.annotate {PP = 0} -> tensor<16x16xf32> {
// CHECK:           piper.attention
// CHECK:           %[[RES:.*]] = piper.add
// CHECK-NEXT:      %[[N:.*]] = piper.rmsnorm %[[RES]]
// CHECK-NEXT:      %[[W:.*]], %[[I:.*]] = piper.router %[[N]], %[[R0]] {top_k = 2 : i64} : tensor<16x16xf32>, tensor<16x4xf32> -> tensor<16x2xf32>, tensor<16x2xi64>
// CHECK-NEXT:      %[[EP:.*]] = piper.annotate {EP = 0} -> tensor<16x16xf32> {
// CHECK-NEXT:        %[[BUF:.*]] = piper.dispatch %[[N]], %[[I]] {capacity = 16 : i64} : tensor<16x16xf32>, tensor<16x2xi64> -> tensor<4x16x16xf32>
// CHECK-NEXT:        %[[Y:.*]] = piper.expert_ffn %[[BUF]], %[[G0]], %[[U0]], %[[D0]] : tensor<4x16x16xf32>, tensor<4x16x16xf32>, tensor<4x16x16xf32>, tensor<4x16x16xf32> -> tensor<4x16x16xf32>
// CHECK-NEXT:        %[[OUT:.*]] = piper.combine %[[Y]], %[[W]], %[[I]] : tensor<4x16x16xf32>, tensor<16x2xf32>, tensor<16x2xi64> -> tensor<16x16xf32>
// CHECK-NEXT:        piper.yield %[[OUT]] : tensor<16x16xf32>
// CHECK-NEXT:      }
// CHECK-NEXT:      %[[H:.*]] = piper.add %[[RES]], %[[EP]] : tensor<16x16xf32>
// CHECK-NEXT:      piper.yield %[[H]] : tensor<16x16xf32>
// CHECK:         %[[S1:.*]] = piper.annotate {PP = 1} -> tensor<f32> {
// CHECK:           piper.router
// CHECK-NEXT:      piper.annotate {EP = 1} -> tensor<16x16xf32> {
// CHECK-NEXT:        piper.dispatch
// CHECK-NEXT:        piper.expert_ffn %{{.*}}, %{{.*}}, %{{.*}}, %[[D1]]
// CHECK-NEXT:        piper.combine
// CHECK:           %[[LOSS:.*]] = piper.cross_entropy %{{.*}}, %[[LABELS]] : tensor<16x32xf32>, tensor<16xi64> -> tensor<f32>
// CHECK-NEXT:      piper.yield %[[LOSS]] : tensor<f32>
// CHECK:         return %[[S1]] : tensor<f32>

// The expert chunks' backward nests in the stage's BI and BW chunks: input
// gradients through combine, the experts and dispatch in {EP = l} BI, the
// expert weight gradients in {EP = l} BW; the router's gradients outside.
// GRAD-LABEL: func.func @step(
// GRAD-SAME:    tensor<4x16x16xf64> {piper.grad = "layers.0.mlp.experts.w_gate"}
// GRAD:         piper.annotate {PP = 1} pass = BI
// GRAD:           piper.annotate {EP = 1} pass = BI
// GRAD-NEXT:        piper.vjp "piper.combine" wrt [0]
// GRAD-NEXT:        piper.vjp "piper.combine" wrt [1]
// GRAD-NEXT:        piper.vjp "piper.expert_ffn" wrt [0]
// GRAD-NEXT:        piper.vjp "piper.dispatch" wrt [0] {{.*}} forward_attrs {capacity = 16 : i64}
// GRAD-NEXT:        piper.yield
// GRAD-NEXT:      }
// GRAD-NEXT:      piper.vjp "piper.router" wrt [0]
// GRAD:         piper.annotate {PP = 1} pass = BW
// GRAD:           piper.annotate {EP = 1} pass = BW
// GRAD-NEXT:        piper.vjp "piper.expert_ffn" wrt [1]
// GRAD-NEXT:        piper.vjp "piper.expert_ffn" wrt [2]
// GRAD-NEXT:        piper.vjp "piper.expert_ffn" wrt [3]
// GRAD-NEXT:        piper.yield
// GRAD-NEXT:      }
// GRAD-NEXT:      piper.vjp "piper.router" wrt [1]
// GRAD:         piper.annotate {PP = 0} pass = BI
// GRAD:           piper.annotate {EP = 0} pass = BI
// GRAD:         piper.annotate {PP = 0} pass = BW
// GRAD:           piper.annotate {EP = 0} pass = BW
// GRAD:         return

// Expert weights are split over ep (4 experts, 2 per rank); everything is
// replicated over dp with ZeRO-1. The EP chunks nest in the PP chunks.
// SUMMARY-LABEL: mesh @mesh: 8 devices
// SUMMARY-NEXT:    axis dp: size 2
// SUMMARY-NEXT:    axis pp: size 2
// SUMMARY-NEXT:    axis ep: size 2
// SUMMARY-LABEL: function @step
// SUMMARY:         param "layers.0.mlp.router.weight" normal(0.02) (arg 7) tensor<16x4xf32> #piper.placement<@mesh, [{}, {}], replicated = {dp}, zero = 1>
// SUMMARY-NEXT:      per device: tensor<16x4xf32>, 256 bytes; ZeRO-1 shards optimizer state 1/2
// SUMMARY-NEXT:    param "layers.0.mlp.experts.w_gate" normal(0.02) (arg 8) tensor<4x16x16xf32> #piper.placement<@mesh, [{ep}, {}, {}], replicated = {dp}, zero = 1>
// SUMMARY-NEXT:      per device: tensor<2x16x16xf32>, 2048 bytes; ZeRO-1 shards optimizer state 1/2
// SUMMARY-NEXT:    param "layers.0.mlp.experts.w_up" normal(0.02) (arg 9) tensor<4x16x16xf32> #piper.placement<@mesh, [{ep}, {}, {}], replicated = {dp}, zero = 1>
// SUMMARY-NEXT:      per device: tensor<2x16x16xf32>, 2048 bytes; ZeRO-1 shards optimizer state 1/2
// SUMMARY-NEXT:    param "layers.0.mlp.experts.w_down" normal(0.02) (arg 10) tensor<4x16x16xf32> #piper.placement<@mesh, [{ep}, {}, {}], replicated = {dp}, zero = 1>
// SUMMARY-NEXT:      per device: tensor<2x16x16xf32>, 2048 bytes; ZeRO-1 shards optimizer state 1/2
// SUMMARY:         chunk {PP = 0}: 16 ops, 1 nested chunk
// SUMMARY-NEXT:      chunk {PP = 0, EP = 0}: 3 ops
// SUMMARY-NEXT:    chunk {PP = 1}: 17 ops, 1 nested chunk
// SUMMARY-NEXT:      chunk {PP = 1, EP = 1}: 3 ops
// SUMMARY-NOT:     chunk
