# REQUIRES: torch, mpi
# A Llama/Qwen3-style module written in plain PyTorch (Inputs/llama_model.py:
# RMSNorm as a module, grouped-query attention with 4 query and 2 key/value
# heads, per-head q/k RMSNorm, rotary position embeddings written the
# rotate_half way, key/value heads repeated by expand + reshape in layer 0
# and by repeat_interleave in layer 1, a boolean triu mask, SwiGLU MLP
# spelled down(silu(gate(x)) * up(x)), the LM head tied to the token
# embedding) imported by piper.trace, compiled under three strategies and
# trained 5 AdamW steps in f64 by piper-run from the module's weights:
# every loss equals torch.optim.AdamW on the same batches to 1e-10. Serial
# (batch 4); TP over 2 ranks (q, k, v, gate, up by column: one key/value
# head and two query heads per rank; wo, down by row; the q/k norms'
# weight gradients, summed over a rank's heads, all-reduced); PP over 2
# stages, 1F1B over 2 microbatches of 2, with the tied embedding/head
# weight read by both stages.
#
# RUN: rm -rf %t && mkdir -p %t
# RUN: %python_torch %S/Inputs/export.py llama %t
# RUN: piper-opt %t/serial.mlir -o /dev/null
# RUN: FileCheck %s --input-file=%t/serial.mlir
# RUN: piper-compile %t/serial.mlir --optimizer=adamw --lr=0.01 --beta1=0.9 --beta2=0.95 --eps=1e-8 --weight-decay=0.1 --no-decay=none -o %t/serial.plan
# RUN: piper-run %t/serial.plan --steps=5 --params-in=%t/serial.params > %t/serial.txt
# RUN: %python_torch %S/Inputs/harness.py %t/torch.txt %t/serial.txt 1e-10 | FileCheck %s --check-prefix=SAME
# RUN: piper-compile %t/tp.mlir --directives=%S/Inputs/llama-tp.json --optimizer=adamw --lr=0.01 --beta1=0.9 --beta2=0.95 --eps=1e-8 --weight-decay=0.1 --no-decay=none -o %t/tp.plan
# RUN: %mpiexec -np 2 piper-run %t/tp.plan --steps=5 --params-in=%t/tp.params > %t/tp.txt
# RUN: %python_torch %S/Inputs/harness.py %t/torch.txt %t/tp.txt 1e-10 | FileCheck %s --check-prefix=SAME
# RUN: piper-compile %t/pp.mlir --directives=%S/Inputs/gpt2-pp.json --optimizer=adamw --lr=0.01 --beta1=0.9 --beta2=0.95 --eps=1e-8 --weight-decay=0.1 --no-decay=none -o %t/pp.plan
# RUN: %mpiexec -np 2 piper-run %t/pp.plan --steps=5 --params-in=%t/pp.params > %t/pp.txt
# RUN: %python_torch %S/Inputs/harness.py %t/torch.txt %t/pp.txt 1e-10 | FileCheck %s --check-prefix=SAME

# RMSNorm modules become piper.rmsnorm with their eps (the q/k norms
# grouped over the packed heads: a 4-element weight on 16 and 8 channels),
# the rotary embedding one piper.rope, the repeated key/value heads
# num_kv_heads, silu(g) * u one piper.swiglu, the tied head a transpose of
# the embedding table.
# CHECK-LABEL: func.func @step(
# CHECK-SAME:    %[[EMB:[^:]*]]: tensor<32x16xf64> {piper.param = #piper.param<"embed.weight",
# CHECK-SAME:    tensor<16xf64> {piper.param = #piper.param<"layers.0.attn_norm.weight",
# CHECK-SAME:    tensor<16x8xf64> {piper.param = #piper.param<"layers.0.attn.wk.weight",
# CHECK-SAME:    tensor<4xf64> {piper.param = #piper.param<"layers.0.attn.q_norm.weight",
# CHECK-SAME:    tensor<16x32xf64> {piper.param = #piper.param<"layers.0.ffn.gate.weight",
# CHECK-NOT:     "output.weight"
# CHECK:         piper.rmsnorm {{.*}} {epsilon = 9.99999999999999955e-07 : f64}
# CHECK:         %[[Q:.*]] = piper.rmsnorm {{.*}} : tensor<4x8x16xf64>, tensor<4xf64> -> tensor<4x8x16xf64>
# CHECK:         %[[K:.*]] = piper.rmsnorm {{.*}} : tensor<4x8x8xf64>, tensor<4xf64> -> tensor<4x8x8xf64>
# CHECK:         %[[QR:.*]] = piper.rope %[[Q]] {head_dim = 4 : i64, theta = 1.00000000000000000e+04 : f64} : tensor<4x8x16xf64>
# CHECK:         %[[KR:.*]] = piper.rope %[[K]] {head_dim = 4 : i64, theta = 1.00000000000000000e+04 : f64} : tensor<4x8x8xf64>
# CHECK:         piper.attention %[[QR]], %[[KR]], %{{.*}} {num_heads = 4 : i64, num_kv_heads = 2 : i64} : tensor<4x8x16xf64>, tensor<4x8x8xf64>, tensor<4x8x8xf64> -> tensor<4x8x16xf64>
# CHECK:         piper.swiglu {{.*}} : tensor<4x8x32xf64>
# CHECK-NOT:     piper.silu
# CHECK:         piper.attention {{.*}} {num_heads = 4 : i64, num_kv_heads = 2 : i64}
# CHECK:         %[[HEAD:.*]] = piper.transpose %[[EMB]] permutation = [1, 0] : tensor<32x16xf64> -> tensor<16x32xf64>
# CHECK:         piper.linear %{{.*}}, %[[HEAD]]
# CHECK:         piper.cross_entropy

# SAME-COUNT-5: step {{[1-5]}} torch
# SAME-NOT:     MISMATCH
# SAME:         OK: 5 steps
