# REQUIRES: torch, mpi
# MoE routing from an ordinary PyTorch module (Inputs/moe_model.py: a
# Qwen3-MoE-style decoder whose FFN is a bias-free linear router, softmax,
# torch.topk, the top-k probabilities renormalised, and an Experts module
# with stacked SwiGLU weights computed the eager way, torch.where +
# index_add per expert, called inside piper.annotate("EP")) imported by
# piper.trace as piper-gen's MoE block: piper.router outside the expert
# chunk, then piper.dispatch (capacity = the tokens: none dropped),
# piper.expert_ffn and piper.combine in the {EP = l} chunk, the expert
# weights placed over ep on dim 0. Compiled under three strategies and
# trained 5 AdamW steps in f64 by piper-run from the module's weights: every
# loss equals torch.optim.AdamW on the same global batches to 1e-10.
# Serial (batch 4); EP over 2 ranks (each a batch replica of 2 sequences,
# 2 of the 4 experts per rank, the tokens exchanged by all-to-all); PP2 x
# EP2 on 4 ranks, 1F1B over 2 microbatches of 1 sequence per ep rank.
#
# RUN: rm -rf %t && mkdir -p %t
# RUN: %python_torch %S/Inputs/export.py moe %t
# RUN: piper-opt %t/serial.mlir -o /dev/null
# RUN: FileCheck %s --input-file=%t/ep.mlir
# RUN: piper-compile %t/serial.mlir --optimizer=adamw --lr=0.01 --beta1=0.9 --beta2=0.95 --eps=1e-8 --weight-decay=0.1 --no-decay=none -o %t/serial.plan
# RUN: piper-run %t/serial.plan --steps=5 --params-in=%t/serial.params > %t/serial.txt
# RUN: %python_torch %S/Inputs/harness.py %t/torch.txt %t/serial.txt 1e-10 | FileCheck %s --check-prefix=SAME
# RUN: piper-compile %t/ep.mlir --directives=%S/Inputs/moe-ep.json --optimizer=adamw --lr=0.01 --beta1=0.9 --beta2=0.95 --eps=1e-8 --weight-decay=0.1 --no-decay=none -o %t/ep.plan
# RUN: %mpiexec -np 2 piper-run %t/ep.plan --steps=5 --params-in=%t/ep.params > %t/ep.txt
# RUN: %python_torch %S/Inputs/harness.py %t/torch.txt %t/ep.txt 1e-10 | FileCheck %s --check-prefix=SAME
# RUN: piper-compile %t/ppep.mlir --directives=%S/Inputs/moe-ppep.json --optimizer=adamw --lr=0.01 --beta1=0.9 --beta2=0.95 --eps=1e-8 --weight-decay=0.1 --no-decay=none -o %t/ppep.plan
# RUN: %mpiexec -np 4 piper-run %t/ppep.plan --steps=5 --params-in=%t/ppep.params > %t/ppep.txt
# RUN: %python_torch %S/Inputs/harness.py %t/torch.txt %t/ppep.txt 1e-10 | FileCheck %s --check-prefix=SAME

# The router weight is stored [H, E] as piper.router reads it; the expert
# weights keep their [E, H, F] / [E, F, H] shapes, split over ep.
# CHECK-LABEL: func.func @step(
# CHECK-SAME:    tensor<16x4xf64> {piper.param = #piper.param<"layers.0.mlp.router.weight", normal({{[^)]*}}), placement = #piper.placement<@mesh, [{}, {}], replicated = {dp}>>}
# CHECK-SAME:    tensor<4x16x16xf64> {piper.param = #piper.param<"layers.0.mlp.experts.w_gate", normal({{[^)]*}}), placement = #piper.placement<@mesh, [{ep}, {}, {}], replicated = {dp}>>}
# CHECK-SAME:    tensor<4x16x16xf64> {piper.param = #piper.param<"layers.0.mlp.experts.w_down", normal({{[^)]*}}), placement = #piper.placement<@mesh, [{ep}, {}, {}], replicated = {dp}>>}
# CHECK:         piper.annotate {PP = 0}
# CHECK:         %[[W:.*]], %[[I:.*]] = piper.router %[[X:.*]], %layers.0.mlp.router.weight {top_k = 2 : i64} : tensor<16x16xf64>, tensor<16x4xf64> -> tensor<16x2xf64>, tensor<16x2xi64> loc({{.*}}moe_model.py":55:0)
# CHECK-NEXT:    piper.annotate {EP = 0} -> tensor<16x16xf64> {
# CHECK-NEXT:      %[[B:.*]] = piper.dispatch %[[X]], %[[I]] {capacity = 16 : i64} : tensor<16x16xf64>, tensor<16x2xi64> -> tensor<4x16x16xf64>
# CHECK-NEXT:      %[[Y:.*]] = piper.expert_ffn %[[B]], %layers.0.mlp.experts.w_gate, %layers.0.mlp.experts.w_up, %layers.0.mlp.experts.w_down
# CHECK-NEXT:      %[[C:.*]] = piper.combine %[[Y]], %[[W]], %[[I]] : tensor<4x16x16xf64>, tensor<16x2xf64>, tensor<16x2xi64> -> tensor<16x16xf64>
# CHECK-NEXT:      piper.yield %[[C]]
# CHECK:         piper.annotate {PP = 1}
# CHECK:         piper.router
# CHECK-NEXT:    piper.annotate {EP = 1}

# SAME-COUNT-5: step {{[1-5]}} torch
# SAME-NOT:     MISMATCH
# SAME:         OK: 5 steps
