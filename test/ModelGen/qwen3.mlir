// RUN: piper-gen --config=qwen3_1b | FileCheck %s --check-prefix=Q1B
// RUN: piper-gen --config=qwen3_1b --pp=8 | grep 'piper.annotate {PP = ' | count 8
// RUN: piper-gen --config=qwen3_1b --pp=3 | FileCheck %s --check-prefix=SPLIT
// RUN: piper-gen --config=qwen3_9b --pp=8 | FileCheck %s --check-prefix=Q9B
// RUN: piper-gen --config=qwen3_9b --pp=8 | grep 'piper.annotate {PP = ' | count 8
// RUN: piper-gen --config=qwen3_9b --pp=8 | grep 'piper.annotate {EP = ' | count 24
// RUN: piper-gen --config=qwen3_9b --pp=8 --mesh=dp=4,pp=8,ep=8 --zero=1 | piper-opt --piper-print-summary -o /dev/null | FileCheck %s --check-prefix=SUMMARY
// Piper's evaluation models generate (each in well under a second) with
// their published sizes: heads of 128 channels, Qwen3's vocabulary, one
// sequence per step, capacity factor 1; Qwen3's attention: 4 key/value
// heads (grouped-query), per-head q/k RMSNorm, rotary embeddings with
// theta 1e6.

// qwen3_1b: 16 layers, H = 1024, 8 heads, 4 experts top-2, F = 3584,
// S = 512; capacity ceil(512 * 2 / 4) = 256. One layer's parameters:
// Q1B-LABEL: func.func @step(
// Q1B-SAME:    tensor<151936x1024xf32> {piper.param = #piper.param<"embed.weight", normal(0.02)>}
// Q1B-SAME:    tensor<1024xf32> {piper.param = #piper.param<"layers.0.attn_norm.weight", ones>}
// Q1B-SAME:    tensor<1024x1024xf32> {piper.param = #piper.param<"layers.0.attn.wq", normal(0.02)>}
// Q1B-SAME:    tensor<1024x512xf32> {piper.param = #piper.param<"layers.0.attn.wk", normal(0.02)>}
// Q1B-SAME:    tensor<1024x512xf32> {piper.param = #piper.param<"layers.0.attn.wv", normal(0.02)>}
// Q1B-SAME:    tensor<1024x1024xf32> {piper.param = #piper.param<"layers.0.attn.wo", normal(0.02)>}
// Q1B-SAME:    tensor<128xf32> {piper.param = #piper.param<"layers.0.attn.q_norm.weight", ones>}
// Q1B-SAME:    tensor<128xf32> {piper.param = #piper.param<"layers.0.attn.k_norm.weight", ones>}
// Q1B-SAME:    tensor<1024xf32> {piper.param = #piper.param<"layers.0.mlp_norm.weight", ones>}
// Q1B-SAME:    tensor<1024x4xf32> {piper.param = #piper.param<"layers.0.mlp.router.weight", normal(0.02)>}
// Q1B-SAME:    tensor<4x1024x3584xf32> {piper.param = #piper.param<"layers.0.mlp.experts.w_gate", normal(0.02)>}
// Q1B-SAME:    tensor<4x1024x3584xf32> {piper.param = #piper.param<"layers.0.mlp.experts.w_up", normal(0.02)>}
// Q1B-SAME:    tensor<4x3584x1024xf32> {piper.param = #piper.param<"layers.0.mlp.experts.w_down", normal(0.02)>}
// Q1B-SAME:    tensor<1024x4xf32> {piper.param = #piper.param<"layers.1.mlp.router.weight", normal(0.02)>}
// Q1B-SAME:    tensor<4x3584x1024xf32> {piper.param = #piper.param<"layers.15.mlp.experts.w_down", normal(0.02)>}
// Q1B-SAME:    tensor<1024xf32> {piper.param = #piper.param<"final_norm.weight", ones>}
// Q1B-SAME:    tensor<1024x151936xf32> {piper.param = #piper.param<"lm_head.weight", normal(0.02)>}
// Q1B-SAME:    tensor<1x512xi64>, %{{[^:]*}}: tensor<512xi64>) -> tensor<f32>
// Without --pp the whole step is one stage.
// Q1B:         piper.annotate {PP = 0} -> tensor<f32> {
// Q1B:           piper.rmsnorm %{{.*}}, %layers.0.attn.q_norm.weight : tensor<1x512x1024xf32>, tensor<128xf32> -> tensor<1x512x1024xf32>
// Q1B:           piper.rmsnorm %{{.*}}, %layers.0.attn.k_norm.weight : tensor<1x512x512xf32>, tensor<128xf32> -> tensor<1x512x512xf32>
// Q1B:           piper.rope %{{.*}} {head_dim = 128 : i64, theta = 1.000000e+06 : f64} : tensor<1x512x1024xf32>
// Q1B:           piper.rope %{{.*}} {head_dim = 128 : i64, theta = 1.000000e+06 : f64} : tensor<1x512x512xf32>
// Q1B:           piper.attention {{.*}} {num_heads = 8 : i64, num_kv_heads = 4 : i64} : tensor<1x512x1024xf32>, tensor<1x512x512xf32>, tensor<1x512x512xf32> -> tensor<1x512x1024xf32>
// Q1B:           piper.router {{.*}} {top_k = 2 : i64} : tensor<512x1024xf32>, tensor<1024x4xf32> -> tensor<512x2xf32>, tensor<512x2xi64>
// Q1B-NEXT:      piper.annotate {EP = 0} -> tensor<512x1024xf32> {
// Q1B-NEXT:        piper.dispatch {{.*}} {capacity = 256 : i64} : tensor<512x1024xf32>, tensor<512x2xi64> -> tensor<4x256x1024xf32>
// Q1B-NEXT:        piper.expert_ffn {{.*}} : tensor<4x256x1024xf32>, tensor<4x1024x3584xf32>, tensor<4x1024x3584xf32>, tensor<4x3584x1024xf32> -> tensor<4x256x1024xf32>
// Q1B:           piper.annotate {EP = 15}
// Q1B:           piper.cross_entropy {{.*}} : tensor<512x151936xf32>, tensor<512xi64> -> tensor<f32>
// Q1B-NOT:     piper.annotate {PP = 1}

// 16 layers over 3 stages: 6, 5, 5 (the first stages take the remainder;
// the last also holds the LM head).
// SPLIT:       piper.annotate {PP = 0}
// SPLIT-NOT:   piper.annotate {PP
// SPLIT:         piper.annotate {EP = 5}
// SPLIT-NEXT:      piper.dispatch
// SPLIT:       piper.annotate {PP = 1}
// SPLIT-NOT:   piper.annotate {PP
// SPLIT:         piper.annotate {EP = 6}
// SPLIT:         piper.annotate {EP = 10}
// SPLIT:       piper.annotate {PP = 2}
// SPLIT-NOT:   piper.annotate {PP
// SPLIT:         piper.annotate {EP = 11}
// SPLIT:         piper.annotate {EP = 15}
// SPLIT:         piper.cross_entropy

// qwen3_9b: 24 layers, H = 2048, 16 heads, 8 experts top-2, F = 7168,
// S = 2048; capacity ceil(2048 * 2 / 8) = 512. Three layers per stage.
// Q9B-LABEL: func.func @step(
// Q9B-SAME:    tensor<151936x2048xf32> {piper.param = #piper.param<"embed.weight", normal(0.02)>}
// Q9B-SAME:    tensor<2048x2048xf32> {piper.param = #piper.param<"layers.0.attn.wq", normal(0.02)>}
// Q9B-SAME:    tensor<2048x8xf32> {piper.param = #piper.param<"layers.0.mlp.router.weight", normal(0.02)>}
// Q9B-SAME:    tensor<8x2048x7168xf32> {piper.param = #piper.param<"layers.0.mlp.experts.w_gate", normal(0.02)>}
// Q9B-SAME:    tensor<8x2048x7168xf32> {piper.param = #piper.param<"layers.0.mlp.experts.w_up", normal(0.02)>}
// Q9B-SAME:    tensor<8x7168x2048xf32> {piper.param = #piper.param<"layers.0.mlp.experts.w_down", normal(0.02)>}
// Q9B-SAME:    tensor<8x7168x2048xf32> {piper.param = #piper.param<"layers.23.mlp.experts.w_down", normal(0.02)>}
// Q9B-SAME:    tensor<2048x151936xf32> {piper.param = #piper.param<"lm_head.weight", normal(0.02)>}
// Q9B-SAME:    tensor<1x2048xi64>, %{{[^:]*}}: tensor<2048xi64>) -> tensor<f32>
// Q9B:         piper.annotate {PP = 0} -> tensor<2048x2048xf32> {
// Q9B:           piper.attention {{.*}} {num_heads = 16 : i64, num_kv_heads = 4 : i64} : tensor<1x2048x2048xf32>, tensor<1x2048x512xf32>
// Q9B:           piper.dispatch {{.*}} {capacity = 512 : i64} : tensor<2048x2048xf32>, tensor<2048x2xi64> -> tensor<8x512x2048xf32>
// Q9B:           piper.annotate {EP = 2}
// Q9B:         piper.annotate {PP = 1} -> tensor<2048x2048xf32> {
// Q9B-NEXT:      piper.rmsnorm
// Q9B:           piper.annotate {EP = 3}
// Q9B:         piper.annotate {PP = 7} -> tensor<f32> {
// Q9B:           piper.annotate {EP = 21}
// Q9B:           piper.annotate {EP = 23}
// Q9B:           piper.cross_entropy {{.*}} : tensor<2048x151936xf32>, tensor<2048xi64> -> tensor<f32>

// On 256 devices (dp 4 x pp 8 x ep 8) each rank keeps one expert.
// SUMMARY-LABEL: mesh @mesh: 256 devices
// SUMMARY-LABEL: function @step
// SUMMARY:         param "layers.23.mlp.experts.w_down" normal(0.02) (arg 288) tensor<8x7168x2048xf32> #piper.placement<@mesh, [{ep}, {}, {}], replicated = {dp}, zero = 1>
// SUMMARY-NEXT:      per device: tensor<1x7168x2048xf32>, 58720256 bytes; ZeRO-1 shards optimizer state 1/4
// SUMMARY:         chunk {PP = 0}: 56 ops, 3 nested chunks
// SUMMARY-NEXT:      chunk {PP = 0, EP = 0}: 3 ops
// SUMMARY:         chunk {PP = 7}: {{[0-9]+}} ops, 3 nested chunks
// SUMMARY-NEXT:      chunk {PP = 7, EP = 21}: 3 ops
// SUMMARY-NEXT:      chunk {PP = 7, EP = 22}: 3 ops
// SUMMARY-NEXT:      chunk {PP = 7, EP = 23}: 3 ops
// SUMMARY-NOT:     chunk
