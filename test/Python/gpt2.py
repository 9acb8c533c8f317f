# REQUIRES: torch, mpi
# A GPT-2-style module written in plain PyTorch (Inputs/gpt2_model.py:
# learned positions, LayerNorm, hand-written causal attention, GELU (tanh),
# biases, LM head tied to the token embedding) imported by piper.trace,
# compiled by piper-compile under three strategies and trained 5 AdamW steps
# in f64 by piper-run from the module's own weights (--params-in): every
# loss equals torch.optim.AdamW training the same module on the same
# batches to 1e-10 (relative).
#
# Global batch 4 sequences of 8 tokens everywhere: serial; DP over 2
# replicas; TP over 2 ranks (q, k, v, c_fc by column with their biases,
# c_proj by row, so the trace splits biases out: split_bias=True); PP over
# 2 stages, 1F1B over 2 microbatches. PP runs the untied variant (lm_head
# has its own weight): a weight used by two pipeline stages is not yet
# supported by piper-compile (gpt2-pp-tied.py, XFAIL until it is).
#
# RUN: rm -rf %t && mkdir -p %t
# RUN: %python_torch %S/Inputs/export.py gpt2 %t
# RUN: piper-opt %t/serial.mlir -o /dev/null
# RUN: FileCheck %s --input-file=%t/serial.mlir
# RUN: piper-compile %t/serial.mlir --optimizer=adamw --lr=0.01 --beta1=0.9 --beta2=0.95 --eps=1e-8 --weight-decay=0.1 --no-decay=none -o %t/serial.plan
# RUN: piper-run %t/serial.plan --steps=5 --params-in=%t/serial.params > %t/serial.txt
# RUN: %python_torch %S/Inputs/harness.py %t/torch.txt %t/serial.txt 1e-10 | FileCheck %s --check-prefix=SAME
# RUN: piper-compile %t/dp.mlir --directives=%S/Inputs/gpt2-dp.json --optimizer=adamw --lr=0.01 --beta1=0.9 --beta2=0.95 --eps=1e-8 --weight-decay=0.1 --no-decay=none -o %t/dp.plan
# RUN: %mpiexec -np 2 piper-run %t/dp.plan --steps=5 --params-in=%t/dp.params > %t/dp.txt
# RUN: %python_torch %S/Inputs/harness.py %t/torch.txt %t/dp.txt 1e-10 | FileCheck %s --check-prefix=SAME
# RUN: piper-compile %t/tp.mlir --directives=%S/Inputs/gpt2-tp.json --optimizer=adamw --lr=0.01 --beta1=0.9 --beta2=0.95 --eps=1e-8 --weight-decay=0.1 --no-decay=none -o %t/tp.plan
# RUN: %mpiexec -np 2 piper-run %t/tp.plan --steps=5 --params-in=%t/tp.params > %t/tp.txt
# RUN: %python_torch %S/Inputs/harness.py %t/torch.txt %t/tp.txt 1e-10 | FileCheck %s --check-prefix=SAME
# RUN: piper-compile %t/pp.mlir --directives=%S/Inputs/gpt2-pp.json --optimizer=adamw --lr=0.01 --beta1=0.9 --beta2=0.95 --eps=1e-8 --weight-decay=0.1 --no-decay=none -o %t/pp.plan
# RUN: %mpiexec -np 2 piper-run %t/pp.plan --steps=5 --params-in=%t/pp.params > %t/pp.txt
# RUN: %python_torch %S/Inputs/harness.py %t/torch-untied.txt %t/pp.txt 1e-10 | FileCheck %s --check-prefix=SAME

# The imported step: parameters named as in the state_dict (the tied
# weight once, as wte.weight), linear weights stored input-major, the
# position ids a constant, attention as one piper.attention, the tied head
# a transpose of the embedding table.
# CHECK-LABEL: func.func @step(
# CHECK-SAME:    %[[WTE:[^:]*]]: tensor<32x16xf64> {piper.param = #piper.param<"wte.weight", normal(
# CHECK-SAME:    tensor<8x16xf64> {piper.param = #piper.param<"wpe.weight",
# CHECK-SAME:    tensor<16x64xf64> {piper.param = #piper.param<"h.0.mlp.c_fc.weight",
# CHECK-NOT:     "lm_head.weight"
# CHECK-SAME:    %[[IDX:[^:]*]]: tensor<4x8xi64>, %[[TGT:[^:]*]]: tensor<32xi64>) -> tensor<f64>
# CHECK:         piper.annotate {PP = 0}
# CHECK:           piper.embedding %[[WTE]], %[[IDX]]
# CHECK:           %[[POS:.*]] = arith.constant dense<{{\[\[}}0, 1, 2, 3, 4, 5, 6, 7], [0, 1, 2, 3, 4, 5, 6, 7]
# CHECK:           piper.embedding %{{.*}}, %[[POS]]
# CHECK:           piper.layernorm {{.*}} {epsilon = 1.0{{[0-9]*}}e-05 : f64}
# CHECK:           piper.attention {{.*}} {num_heads = 2 : i64} : tensor<4x8x16xf64>, tensor<4x8x16xf64>, tensor<4x8x16xf64> -> tensor<4x8x16xf64>
# CHECK:           piper.gelu
# CHECK:         piper.annotate {PP = 1}
# CHECK:           %[[HEAD:.*]] = piper.transpose %[[WTE]] permutation = [1, 0] : tensor<32x16xf64> -> tensor<16x32xf64>
# CHECK:           piper.linear %{{.*}}, %[[HEAD]] : tensor<4x8x16xf64>, tensor<16x32xf64> -> tensor<4x8x32xf64>
# CHECK:           piper.cross_entropy {{.*}} : tensor<32x32xf64>, tensor<32xi64> -> tensor<f64>

# SAME-COUNT-5: step {{[1-5]}} torch
# SAME-NOT:     MISMATCH
# SAME:         OK: 5 steps
