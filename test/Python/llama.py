# REQUIRES: torch, mpi
# A Llama-style module written in plain PyTorch (Inputs/llama_model.py:
# RMSNorm as a module, causal attention without biases masked by a boolean
# triu, SwiGLU MLP spelled down(silu(gate(x)) * up(x)), untied head)
# imported by piper.trace, compiled under three strategies and trained 5
# AdamW steps in f64 by piper-run from the module's weights: every loss
# equals torch.optim.AdamW on the same batches to 1e-10. Serial (batch 4);
# TP over 2 ranks (q, k, v, gate, up by column; wo, down by row); PP over 2
# stages, 1F1B over 2 microbatches of 2.
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

# RMSNorm modules become piper.rmsnorm with their eps, silu(g) * u one
# piper.swiglu, the permuted heads one piper.attention, the untied head an
# input-major weight.
# CHECK-LABEL: func.func @step(
# CHECK-SAME:    tensor<16xf64> {piper.param = #piper.param<"layers.0.attn_norm.weight",
# CHECK-SAME:    tensor<16x32xf64> {piper.param = #piper.param<"layers.0.ffn.gate.weight",
# CHECK-SAME:    tensor<16x32xf64> {piper.param = #piper.param<"output.weight",
# CHECK:         piper.rmsnorm {{.*}} {epsilon = 9.99999999999999955e-07 : f64}
# CHECK:         piper.attention {{.*}} {num_heads = 2 : i64}
# CHECK:         piper.swiglu {{.*}} : tensor<4x8x32xf64>
# CHECK-NOT:     piper.silu
# CHECK:         piper.cross_entropy

# SAME-COUNT-5: step {{[1-5]}} torch
# SAME-NOT:     MISMATCH
# SAME:         OK: 5 steps
