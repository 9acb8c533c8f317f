// Issue 18: the learning-rate schedule and global gradient-norm clipping
// are strategy-invariant. Under DP4 ZeRO-3, TP2, PP2 DualPipeV and EP2, 5
// f64 AdamW steps with linear warmup (2 steps) then cosine decay to 1e-3,
// and clipping to 0.5 where the gradients' norm is about 1 (so every step
// clips), give the serial interpreter's losses and final parameters to
// 1e-10 (%numdiff --rel=1e-10). The plans are compiled with a different
// bound (1) and the default learning rate (1e-3): the run's flags set both
// per step, so nothing of the schedule is compiled in.
//
// The global norm is that of the serial gradients: each rank adds its
// gradients weighted by 1 / (devices holding the same elements) and one
// sum runs over all ranks (docs/Training.md). The JSONL log's grad_norm
// shows that clipping was active at every step (norm > 0.5).
// REQUIRES: mpi
// RUN: rm -rf %t && mkdir -p %t
// RUN: echo '{"mesh": "mesh", "directives": [{"replicate": {"filter": {}, "devices": ["dp"], "zero": 3}}]}' > %t/z3.json
// RUN: echo '{"mesh": "mesh", "directives": [{"shard": {"filter": {}, "kind": "tensor", "devices": ["tp"], "column": ["layers.*.attn.w[qkv]", "layers.*.mlp.w_{gate,up}"], "row": ["layers.*.attn.wo", "layers.*.mlp.w_down"]}}, {"replicate": {"filter": {}, "devices": ["dp"]}}]}' > %t/tp.json
// RUN: echo '{"mesh": "mesh", "directives": [{"split": {"filter": {}, "n": 4}}, {"place": {"filter": {"PP": 0}, "devices": {"pp": 0}}}, {"place": {"filter": {"PP": 1}, "devices": {"pp": 1}}}, {"place": {"filter": {"PP": 2}, "devices": {"pp": 1}}}, {"place": {"filter": {"PP": 3}, "devices": {"pp": 0}}}, {"schedule": {"name": "dualpipev"}}]}' > %t/dpv.json
// RUN: echo '{"mesh": "mesh", "directives": [{"shard": {"filter": {}, "kind": "expert", "devices": ["ep"], "stream": "ep"}}, {"replicate": {"filter": {}, "devices": ["dp", "ep"], "where": {"EP": "none"}}}, {"replicate": {"filter": {}, "devices": ["dp"], "where": {"EP": "*"}}}]}' > %t/ep.json
// RUN: echo "--lr=0.01 --warmup-steps=2 --lr-schedule=cosine --min-lr=0.001 --clip-grad-norm=0.5" > %t/hyper

// DP4 ZeRO-3 (GPT, global batch 4).
// RUN: piper-gen --model=gpt --config=tiny-gpt --dtype=f64 --mesh=dp=1 --batch=4 -o %t/gpt4.mlir
// RUN: piper-interp %t/gpt4.mlir --steps=5 $(cat %t/hyper) --params-out=%t/gpt4.params > %t/gpt4.txt
// RUN: piper-gen --model=gpt --config=tiny-gpt --dtype=f64 --mesh=dp=4 --batch=1 -o %t/z3.mlir
// RUN: piper-compile %t/z3.mlir --directives=%t/z3.json --clip-grad-norm=1 -o %t/z3.plan | FileCheck %s --check-prefix=BATCH
// RUN: FileCheck %s --check-prefix=PLAN --input-file=%t/z3.plan/plan.json
// RUN: %mpiexec -np 4 piper-run %t/z3.plan --steps=5 $(cat %t/hyper) --log=%t/z3.jsonl --params-out=%t/z3.params > %t/z3.txt
// RUN: %numdiff --rel=1e-10 %t/gpt4.txt %t/z3.txt && %numdiff --rel=1e-10 %t/gpt4.params %t/z3.params
// RUN: FileCheck %s --check-prefix=LOG --input-file=%t/z3.jsonl
// RUN: awk -F'"grad_norm": ' '{ split($2, a, ","); if (a[1] <= 0.5) exit 1 }' %t/z3.jsonl

// TP2 (GPT, global batch 2).
// RUN: piper-gen --model=gpt --config=tiny-gpt --dtype=f64 --mesh=dp=1 --batch=2 -o %t/gpt2.mlir
// RUN: piper-interp %t/gpt2.mlir --steps=5 $(cat %t/hyper) --params-out=%t/gpt2.params > %t/gpt2.txt
// RUN: piper-gen --model=gpt --config=tiny-gpt --dtype=f64 --mesh=dp=1,tp=2 --batch=2 -o %t/tp.mlir
// RUN: piper-compile %t/tp.mlir --directives=%t/tp.json --clip-grad-norm=1 -o %t/tp.plan
// RUN: %mpiexec -np 2 piper-run %t/tp.plan --steps=5 $(cat %t/hyper) --log=%t/tp.jsonl --params-out=%t/tp.params > %t/tp.txt
// RUN: %numdiff --rel=1e-10 %t/gpt2.txt %t/tp.txt && %numdiff --rel=1e-10 %t/gpt2.params %t/tp.params
// RUN: awk -F'"grad_norm": ' '{ split($2, a, ","); if (a[1] <= 0.5) exit 1 }' %t/tp.jsonl

// PP2 DualPipeV (4-layer GPT in 4 stages on 2 ranks, 4 microbatches of 1).
// RUN: piper-gen --model=gpt --config=tiny-gpt --layers=4 --dtype=f64 --mesh=dp=1 --batch=4 -o %t/gptl4.mlir
// RUN: piper-interp %t/gptl4.mlir --steps=5 $(cat %t/hyper) --params-out=%t/gptl4.params > %t/gptl4.txt
// RUN: piper-gen --model=gpt --config=tiny-gpt --layers=4 --pp=4 --dtype=f64 --mesh=pp=2 --batch=1 -o %t/dpv.mlir
// RUN: piper-compile %t/dpv.mlir --directives=%t/dpv.json --clip-grad-norm=1 -o %t/dpv.plan | FileCheck %s --check-prefix=BATCHPP
// RUN: %mpiexec -np 2 piper-run %t/dpv.plan --steps=5 $(cat %t/hyper) --log=%t/dpv.jsonl --params-out=%t/dpv.params > %t/dpv.txt
// RUN: %numdiff --rel=1e-10 %t/gptl4.txt %t/dpv.txt && %numdiff --rel=1e-10 %t/gptl4.params %t/dpv.params
// RUN: awk -F'"grad_norm": ' '{ split($2, a, ","); if (a[1] <= 0.5) exit 1 }' %t/dpv.jsonl

// EP2 (MoE, global batch 2).
// RUN: piper-gen --model=moe --config=tiny-moe --dtype=f64 --mesh=dp=1 --batch=2 -o %t/moe2.mlir
// RUN: piper-interp %t/moe2.mlir --steps=5 $(cat %t/hyper) --params-out=%t/moe2.params > %t/moe2.txt
// RUN: piper-gen --model=moe --config=tiny-moe --dtype=f64 --mesh=dp=1,ep=2 --batch=1 -o %t/ep.mlir
// RUN: piper-compile %t/ep.mlir --directives=%t/ep.json --clip-grad-norm=1 -o %t/ep.plan
// RUN: %mpiexec -np 2 piper-run %t/ep.plan --steps=5 $(cat %t/hyper) --log=%t/ep.jsonl --params-out=%t/ep.params > %t/ep.txt
// RUN: %numdiff --rel=1e-10 %t/moe2.txt %t/ep.txt && %numdiff --rel=1e-10 %t/moe2.params %t/ep.params
// RUN: awk -F'"grad_norm": ' '{ split($2, a, ","); if (a[1] <= 0.5) exit 1 }' %t/ep.jsonl

// An update ordered before another stage's backward (an order directive,
// DP2 ZeRO-1): the norm still covers every gradient (the updates run after
// the last reduction, ClipGradNorm.h).
// RUN: echo '{"mesh": "mesh", "directives": [{"replicate": {"filter": {}, "devices": ["dp"], "zero": 1}}, {"order": [{"PP": 1, "PASS": "UPD"}, {"PP": 0, "PASS": "BW"}]}]}' > %t/ord.json
// RUN: piper-gen --model=mlp --config=tiny-mlp --dtype=f64 --mesh=dp=1 --batch=2 -o %t/mlp2.mlir
// RUN: piper-interp %t/mlp2.mlir --steps=5 $(cat %t/hyper) --params-out=%t/mlp2.params > %t/mlp2.txt
// RUN: piper-gen --model=mlp --config=tiny-mlp --dtype=f64 --pp=2 --mesh=dp=2 --batch=1 -o %t/ord.mlir
// RUN: piper-compile %t/ord.mlir --directives=%t/ord.json --clip-grad-norm=1 -o %t/ord.plan
// RUN: %mpiexec -np 2 piper-run %t/ord.plan --steps=5 $(cat %t/hyper) --log=%t/ord.jsonl --params-out=%t/ord.params > %t/ord.txt
// RUN: %numdiff --rel=1e-10 %t/mlp2.txt %t/ord.txt && %numdiff --rel=1e-10 %t/mlp2.params %t/ord.params
// RUN: awk -F'"grad_norm": ' '{ split($2, a, ","); if (a[1] <= 0.5) exit 1 }' %t/ord.jsonl

// The test can fail: without clipping the same plan's parameters differ.
// RUN: %mpiexec -np 4 piper-run %t/z3.plan --steps=5 --lr=0.01 --warmup-steps=2 --lr-schedule=cosine --min-lr=0.001 --clip-grad-norm=0 --params-out=%t/z3.noclip.params > /dev/null
// RUN: not %numdiff --rel=1e-10 %t/gpt4.params %t/z3.noclip.params > /dev/null

// BATCH: piper-compile: global batch 4 = 1 per replica x 4 replica(s) over [dp], 1 microbatch(es) of 1 per replica; 32 tokens per step
// BATCH-NEXT: piper-compile: per rank per microbatch: #{{[0-9]+}} [1, 8] #{{[0-9]+}} [8]
// BATCHPP: piper-compile: global batch 4 = 4 per replica x 1 replica(s) over [], 4 microbatch(es) of 1 per replica; 32 tokens per step
// BATCHPP-NEXT: piper-compile: per rank per microbatch: #{{[0-9]+}} [1, 8] #{{[0-9]+}} [8]

// plan.json records the compile-time defaults: the learning rate and bound.
// PLAN:      "optimizer": {
// PLAN-NEXT:   "clip_grad_norm": 1,
// PLAN-NEXT:   "kind": "adamw",
// PLAN-NEXT:   "lr": 0.001
// PLAN-NEXT: },

// The schedule per step: warmup 0.005, 0.01, then cosine to 0.001 at step 5.
// LOG: {"step": 1, "loss": {{.*}}, "lr": 0.0050000000000000001, "grad_norm": {{.*}}, "seconds"
// LOG: {"step": 2, "loss": {{.*}}, "lr": 0.01, "grad_norm":
// LOG: {"step": 5, "loss": {{.*}}, "lr": 0.001, "grad_norm":
