// Tensor parallelism (Megatron) under mpiexec: the tiny GPT with q, k, v,
// gate and up split by columns and wo, down by rows over tp = 2, compiled by
// piper-compile and trained for 5 AdamW steps by piper-run, against the
// single-process interpreter on the serial model at the same global batch:
// the loss of every step and every final parameter (--params-out, which
// reassembles the split weights) agree to 1e-9 (%numdiff).
//
// Each rank holds half of every split weight and runs its bodies on local
// types: half the channels after a column-split linear, 1 of the 2
// attention heads, and the row-split linear's partial sum all-reduced
// inside the body (piper_comm_all_reduce, no 1/R: tp ranks share their
// rows, tp is not a batch axis).
// REQUIRES: mpi
// RUN: rm -rf %t && mkdir -p %t
// RUN: echo '{"mesh": "mesh", "directives": [{"shard": {"filter": {}, "kind": "tensor", "devices": ["tp"], "column": ["layers.*.attn.w[qkv]", "layers.*.mlp.w_{gate,up}"], "row": ["layers.*.attn.wo", "layers.*.mlp.w_down"]}}, {"replicate": {"filter": {}, "devices": ["dp"]}}]}' > %t/tp.json
// RUN: echo '{"mesh": "mesh", "directives": [{"split": {"filter": {}, "n": 2}}, {"place": {"filter": {"PP": 0}, "devices": {"pp": 0}, "stream": "pp"}}, {"place": {"filter": {"PP": 1}, "devices": {"pp": 1}, "stream": "pp"}}, {"shard": {"filter": {}, "kind": "tensor", "devices": ["tp"], "column": ["layers.*.attn.w[qkv]", "layers.*.mlp.w_{gate,up}"], "row": ["layers.*.attn.wo", "layers.*.mlp.w_down"]}}, {"replicate": {"filter": {}, "devices": ["dp"]}}, {"schedule": {"name": "1f1b"}}]}' > %t/pptp.json
// RUN: piper-gen --model=gpt --config=tiny-gpt --dtype=f64 --mesh=dp=1 --batch=2 -o %t/gpt.mlir
// RUN: piper-interp %t/gpt.mlir --steps=5 --optimizer=adamw --params-out=%t/gpt.params > %t/gpt.txt

// TP2 on 2 ranks (the batch is not split: global batch 2).
// RUN: piper-gen --model=gpt --config=tiny-gpt --dtype=f64 --mesh=dp=1,tp=2 --batch=2 -o %t/tp.mlir
// RUN: piper-compile %t/tp.mlir --directives=%t/tp.json -o %t/tp.plan
// RUN: FileCheck %s --check-prefix=PLAN --input-file=%t/tp.plan/plan.json
// RUN: %mpiexec -np 2 piper-run %t/tp.plan --steps=5 --params-out=%t/tp.params > %t/tp.txt
// RUN: %numdiff %t/gpt.txt %t/tp.txt && %numdiff %t/gpt.params %t/tp.params
// RUN: FileCheck %s --input-file=%t/tp.txt
// The lowered body: attention over one local head of 8 channels and the
// in-body all-reduce.
// RUN: piper-compile %t/tp.mlir --directives=%t/tp.json --emit=kernels | FileCheck %s --check-prefix=BODY

// DP2 x TP2 on 4 ranks: 2 batch replicas of 1 sequence.
// RUN: piper-gen --model=gpt --config=tiny-gpt --dtype=f64 --mesh=dp=2,tp=2 --batch=1 -o %t/dptp.mlir
// RUN: piper-compile %t/dptp.mlir --directives=%t/tp.json -o %t/dptp.plan
// RUN: %mpiexec -np 4 piper-run %t/dptp.plan --steps=5 --params-out=%t/dptp.params > %t/dptp.txt
// RUN: %numdiff %t/gpt.txt %t/dptp.txt && %numdiff %t/gpt.params %t/dptp.params

// PP2 x TP2 on 4 ranks, 1F1B over 2 microbatches of 1 sequence.
// RUN: piper-gen --model=gpt --config=tiny-gpt --dtype=f64 --mesh=dp=1,pp=2,tp=2 --pp=2 --batch=1 -o %t/pptp.mlir
// RUN: piper-compile %t/pptp.mlir --directives=%t/pptp.json -o %t/pptp.plan
// RUN: %mpiexec -np 4 piper-run %t/pptp.plan --steps=5 --params-out=%t/pptp.params > %t/pptp.txt
// RUN: %numdiff %t/gpt.txt %t/pptp.txt && %numdiff %t/gpt.params %t/pptp.params

// CHECK: step 1 loss
// CHECK-NOT: step 1 loss
// CHECK: step 5 loss
// CHECK-NOT: step

// Column weights split on dim 1, row weights on dim 0, 2 parts each.
// PLAN: "name": "layers.0.attn.wq",
// PLAN-NEXT: "shape": [
// PLAN-NEXT: 16,
// PLAN-NEXT: 16
// PLAN-NEXT: ],
// PLAN-NEXT: "split": [
// PLAN-NEXT: {
// PLAN-NEXT: "axes": [
// PLAN-NEXT: "tp"
// PLAN-NEXT: ],
// PLAN-NEXT: "dim": 1,
// PLAN-NEXT: "parts": 2
// PLAN: "name": "layers.0.attn.wo",
// PLAN-NEXT: "shape": [
// PLAN-NEXT: 16,
// PLAN-NEXT: 16
// PLAN-NEXT: ],
// PLAN-NEXT: "split": [
// PLAN-NEXT: {
// PLAN-NEXT: "axes": [
// PLAN-NEXT: "tp"
// PLAN-NEXT: ],
// PLAN-NEXT: "dim": 0,
// PLAN-NEXT: "parts": 2

// BODY-LABEL: func.func private @step.F.PP0.local(
// BODY:         call @piper_attention_2x8x8_h1_f64(
// BODY:         call @piper_comm_all_reduce_f64(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (memref<*xf64>, memref<*xf64>, i64, f64) -> ()
