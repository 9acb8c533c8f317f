// RUN: piper-gen --config=tiny-moe --pp=0 --capacity-factor=1.5 --dtype=bf16 | FileCheck %s --check-prefix=NOPP
// RUN: piper-gen --model=gpt --config=qwen3_1b --layers=3 --hidden=64 --heads=4 --ffn=96 --vocab=50 --seq=4 --batch=3 --pp=2 | FileCheck %s --check-prefix=OVERRIDE
// RUN: piper-gen --model=mlp --in-features=5 --hidden=7 --layers=3 --vocab=3 --batch=2 --dtype=f64 | FileCheck %s --check-prefix=MLP
// RUN: piper-gen --config=tiny-moe --pp=2 --mesh=dp=2,pp=2,ep=2 --zero=1 -o %t.mlir
// RUN: piper-opt %t.mlir | piper-opt | FileCheck %s --check-prefix=ROUNDTRIP
// RUN: piper-gen --config=tiny-gpt --name-values=false | FileCheck %s --check-prefix=NUMBERED
// RUN: piper-gen --config=tiny-gpt --mlir-print-debuginfo --name-values=false | FileCheck %s --check-prefix=DEBUGINFO
// Options that change the shape of the generated module.

// --pp=0: no PP chunks; the expert blocks are still {EP = l} chunks. The
// capacity factor 1.5 gives ceil(1.5 * 16 * 2 / 4) = 12 slots; bf16
// everywhere, the loss included.
// NOPP-LABEL: func.func @step(
// NOPP-SAME:    tensor<32x16xbf16> {piper.param = #piper.param<"embed.weight", normal(0.02)>}
// NOPP-SAME:    -> tensor<bf16>
// NOPP-NOT:     piper.annotate {PP
// NOPP:         piper.annotate {EP = 0} -> tensor<16x16xbf16> {
// NOPP-NEXT:      piper.dispatch {{.*}} {capacity = 12 : i64} : tensor<16x16xbf16>, tensor<16x2xi64> -> tensor<4x12x16xbf16>
// NOPP:         piper.annotate {EP = 1}
// NOPP:         %[[LOSS:.*]] = piper.cross_entropy {{.*}} -> tensor<bf16>
// NOPP-NEXT:    return %[[LOSS]] : tensor<bf16>

// Every size can be overridden, and --model picks a family for any config:
// here a dense GPT from qwen3_1b with every size it reads replaced.
// 3 layers over 2 stages: layers 0-1, then layer 2.
// OVERRIDE-LABEL: func.func @step(
// OVERRIDE-SAME:    tensor<50x64xf32> {piper.param = #piper.param<"embed.weight", normal(0.02)>}
// OVERRIDE-SAME:    tensor<64x96xf32> {piper.param = #piper.param<"layers.0.mlp.w_gate", normal(0.02)>}
// OVERRIDE-SAME:    tensor<96x64xf32> {piper.param = #piper.param<"layers.2.mlp.w_down", normal(0.02)>}
// OVERRIDE-SAME:    tensor<64x50xf32> {piper.param = #piper.param<"lm_head.weight", normal(0.02)>}
// OVERRIDE-SAME:    %ids: tensor<3x4xi64>, %labels: tensor<12xi64>) -> tensor<f32>
// OVERRIDE:         %stage.0 = piper.annotate {PP = 0} -> tensor<12x64xf32> {
// OVERRIDE:           piper.attention {{.*}} {num_heads = 4 : i64} : tensor<3x4x64xf32>
// OVERRIDE:           %layers.1.mlp.residual = piper.add
// OVERRIDE-NEXT:      piper.yield %layers.1.mlp.residual
// OVERRIDE:         %stage.1 = piper.annotate {PP = 1} -> tensor<f32> {
// OVERRIDE-NEXT:      %layers.2.attn_norm = piper.rmsnorm %stage.0, %layers.2.attn_norm.weight
// OVERRIDE-NOT:       piper.router
// OVERRIDE:           %loss = piper.cross_entropy %lm_head, %labels : tensor<12x50xf32>, tensor<12xi64> -> tensor<f32>

// An MLP of any depth and width.
// MLP-LABEL: func.func @step(
// MLP-SAME:    %layers.0.weight: tensor<5x7xf64>
// MLP-SAME:    %layers.2.weight: tensor<7x7xf64>
// MLP-SAME:    %head.weight: tensor<7x3xf64>
// MLP-SAME:    %inputs: tensor<2x5xf64>, %labels: tensor<2xi64>) -> tensor<f64>
// MLP:         piper.annotate {PP = 0} -> tensor<f64>
// MLP-COUNT-3:   piper.relu
// MLP:           %loss = piper.cross_entropy %head, %labels : tensor<2x3xf64>, tensor<2xi64> -> tensor<f64>

// The output parses back and prints the same (-o writes the file).
// ROUNDTRIP:       piper.mesh @mesh axes = [dp = 2, pp = 2, ep = 2]
// ROUNDTRIP-LABEL: func.func @step(
// ROUNDTRIP-SAME:    tensor<4x16x16xf32> {piper.param = #piper.param<"layers.0.mlp.experts.w_gate", normal(0.02), placement = #piper.placement<@mesh, [{ep}, {}, {}], replicated = {dp}, zero = 1>>}
// ROUNDTRIP:         piper.annotate {PP = 0}
// ROUNDTRIP:           piper.annotate {EP = 0}
// ROUNDTRIP:         piper.annotate {PP = 1}
// ROUNDTRIP:           piper.annotate {EP = 1}

// --name-values=false prints plain %argN / %N names.
// NUMBERED-LABEL: func.func @step(%arg0: tensor<32x16xf32> {piper.param = #piper.param<"embed.weight", normal(0.02)>}
// NUMBERED:         %0 = piper.annotate {PP = 0} -> tensor<f32> {
// NUMBERED-NEXT:      %1 = piper.embedding %arg0, %arg21

// Each op's location is the module path it belongs to.
// DEBUGINFO: piper.attention {{.*}} loc([[ATTN:#loc[0-9]+]])
// DEBUGINFO: [[ATTN]] = loc("layers.0.attn.core")
