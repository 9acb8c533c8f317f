// Sampling from compiled plans (piper-run --sample, --prompt, --temperature):
// every role runs its sampling entry (plan.json's "sample"), the rank with
// sequence 0's logits picks each byte. From the same trained parameters
// (--params-in, --steps=0; and the seeded initial ones) serial, DP2 ZeRO-3,
// TP2 and PP2 1F1B plans write the serial interpreter's greedy text, and
// its text at temperature 0.8 with the same seed (f64); a second run
// writes the same bytes.
// REQUIRES: mpi
// RUN: rm -rf %t && mkdir -p %t
// RUN: head -c 2400 %piper_src_root/data/corpus/sonnets.txt > %t/train.txt
// RUN: piper-gen --model=gpt --config=tiny-gpt --vocab=256 --seq=16 --dtype=f64 --mesh=dp=1 --batch=4 -o %t/gpt.mlir
// RUN: piper-interp %t/gpt.mlir --steps=20 --optimizer=adamw --lr=0.01 --data=%t/train.txt --params-out=%t/trained.params > /dev/null
// RUN: piper-interp %t/gpt.mlir --steps=1 --lr=0 --params-in=%t/trained.params --sample=40 --prompt=Shall --temperature=0 | sed -n '/^sample/,$p' > %t/greedy.ref
// RUN: piper-interp %t/gpt.mlir --steps=1 --lr=0 --params-in=%t/trained.params --sample=40 --prompt=Shall --temperature=0.8 --seed=7 | sed -n '/^sample/,$p' > %t/warm.ref
// The seeded initial parameters (no --params-in): varied greedy bytes.
// RUN: piper-interp %t/gpt.mlir --steps=1 --lr=0 --sample=40 --prompt=Shall --temperature=0 | sed -n '/^sample/,$p' > %t/init.ref
// RUN: FileCheck %s --input-file=%t/greedy.ref
// CHECK: sample (40 bytes, greedy):
// CHECK-NEXT: Shall

// RUN: echo "--steps=0 --params-in=%t/trained.params --sample=40 --prompt=Shall" > %t/sample.flags
// RUN: piper-compile %t/gpt.mlir -o %t/serial.plan
// RUN: FileCheck %s --check-prefix=PLAN --input-file=%t/serial.plan/plan.json
// PLAN: "sample": {
// PLAN-NEXT: "entry": "piper_entry_step.all.sample",
// PLAN: "logits": {
// PLAN-NEXT: "dtype": "f64",
// PLAN-NEXT: "shape": [
// PLAN-NEXT: 64,
// PLAN-NEXT: 256
// RUN: %mpiexec -np 1 piper-run %t/serial.plan $(cat %t/sample.flags) --temperature=0 > %t/serial.greedy
// RUN: diff %t/greedy.ref %t/serial.greedy
// RUN: %mpiexec -np 1 piper-run %t/serial.plan --steps=0 --sample=40 --prompt=Shall --temperature=0 > %t/serial.init
// RUN: diff %t/init.ref %t/serial.init
// RUN: %mpiexec -np 1 piper-run %t/serial.plan $(cat %t/sample.flags) --temperature=0.8 --seed=7 > %t/serial.warm
// RUN: diff %t/warm.ref %t/serial.warm
// RUN: %mpiexec -np 1 piper-run %t/serial.plan $(cat %t/sample.flags) --temperature=0.8 --seed=7 > %t/serial.warm2
// RUN: diff %t/serial.warm %t/serial.warm2

// DP2 ZeRO-3: sequence 0 is replica 0's.
// RUN: echo '{"mesh": "mesh", "directives": [{"replicate": {"filter": {}, "devices": ["dp"], "zero": 3}}]}' > %t/zero3.json
// RUN: piper-gen --model=gpt --config=tiny-gpt --vocab=256 --seq=16 --dtype=f64 --mesh=dp=2 --batch=2 -o %t/dp.mlir
// RUN: piper-compile %t/dp.mlir --directives=%t/zero3.json -o %t/zero3.plan
// RUN: %mpiexec -np 2 piper-run %t/zero3.plan $(cat %t/sample.flags) --temperature=0 > %t/zero3.greedy
// RUN: diff %t/greedy.ref %t/zero3.greedy
// RUN: %mpiexec -np 2 piper-run %t/zero3.plan --steps=0 --sample=40 --prompt=Shall --temperature=0 > %t/zero3.init
// RUN: diff %t/init.ref %t/zero3.init
// RUN: %mpiexec -np 2 piper-run %t/zero3.plan $(cat %t/sample.flags) --temperature=0.8 --seed=7 > %t/zero3.warm
// RUN: diff %t/warm.ref %t/zero3.warm

// TP2.
// RUN: echo '{"mesh": "mesh", "directives": [{"shard": {"filter": {}, "kind": "tensor", "devices": ["tp"], "column": ["layers.*.attn.w[qkv]", "layers.*.mlp.w_{gate,up}"], "row": ["layers.*.attn.wo", "layers.*.mlp.w_down"]}}, {"replicate": {"filter": {}, "devices": ["dp"]}}]}' > %t/tp.json
// RUN: piper-gen --model=gpt --config=tiny-gpt --vocab=256 --seq=16 --dtype=f64 --mesh=dp=1,tp=2 --batch=4 -o %t/tp.mlir
// RUN: piper-compile %t/tp.mlir --directives=%t/tp.json -o %t/tp.plan
// RUN: %mpiexec -np 2 piper-run %t/tp.plan $(cat %t/sample.flags) --temperature=0 > %t/tp.greedy
// RUN: diff %t/greedy.ref %t/tp.greedy
// RUN: %mpiexec -np 2 piper-run %t/tp.plan --steps=0 --sample=40 --prompt=Shall --temperature=0 > %t/tp.init
// RUN: diff %t/init.ref %t/tp.init

// PP2 1F1B: the logits are on rank 1, which sends each byte to rank 0.
// RUN: echo '{"mesh": "mesh", "directives": [{"split": {"filter": {}, "n": 2}}, {"place": {"filter": {"PP": 0}, "devices": {"pp": 0}, "stream": "pp"}}, {"place": {"filter": {"PP": 1}, "devices": {"pp": 1}, "stream": "pp"}}, {"schedule": {"name": "1f1b"}}]}' > %t/1f1b.json
// RUN: piper-gen --model=gpt --config=tiny-gpt --vocab=256 --seq=16 --dtype=f64 --pp=2 --mesh=pp=2 --batch=2 -o %t/pp.mlir
// RUN: piper-compile %t/pp.mlir --directives=%t/1f1b.json -o %t/1f1b.plan
// RUN: %mpiexec -np 2 piper-run %t/1f1b.plan $(cat %t/sample.flags) --temperature=0 > %t/1f1b.greedy
// RUN: diff %t/greedy.ref %t/1f1b.greedy
// RUN: %mpiexec -np 2 piper-run %t/1f1b.plan --steps=0 --sample=40 --prompt=Shall --temperature=0 > %t/1f1b.init
// RUN: diff %t/init.ref %t/1f1b.init
// RUN: %mpiexec -np 2 piper-run %t/1f1b.plan $(cat %t/sample.flags) --temperature=0.8 --seed=7 > %t/1f1b.warm
// RUN: diff %t/warm.ref %t/1f1b.warm

// Bidirectional DualPipe: microbatch 0's last stage, and the logits, on
// rank 1 (rank 0 computes microbatches 2 and 3's).
// RUN: piper-gen --model=gpt --config=tiny-gpt --vocab=256 --seq=16 --dtype=f64 --pp=2 --mesh=pp=2 --batch=1 -o %t/dualpipe.mlir
// RUN: piper-compile %t/dualpipe.mlir --directives=%S/../../examples/strategies/tiny-gpt-dualpipe-pp2.json -o %t/dualpipe.plan
// RUN: %mpiexec -np 2 piper-run %t/dualpipe.plan --steps=0 --sample=40 --prompt=Shall --temperature=0 > %t/dualpipe.init
// RUN: diff %t/init.ref %t/dualpipe.init

// Flag errors, a model without byte logits, and a plan without a sampling
// entry (a recomputed forward returns no logits).
// RUN: not piper-run %t/serial.plan --prompt=x 2>&1 | FileCheck %s --check-prefix=NOSAMPLE
// NOSAMPLE: piper-run: --prompt and --temperature need --sample
// RUN: not piper-run %t/serial.plan --steps=0 --sample=4 --temperature=-1 2>&1 | FileCheck %s --check-prefix=RANGE
// RANGE: piper-run: --sample must be in [0, 1000000] and --temperature finite and >= 0
// RUN: piper-gen --model=gpt --config=tiny-gpt --vocab=64 --seq=16 --dtype=f64 --mesh=dp=1 --batch=4 -o %t/gpt64.mlir
// RUN: piper-compile %t/gpt64.mlir -o %t/gpt64.plan
// RUN: not piper-run %t/gpt64.plan --steps=0 --sample=4 2>&1 | FileCheck %s --check-prefix=VOCAB
// VOCAB: piper-run: --sample needs byte tokens [B, S] and logits [rows, 256] (a model generated with --vocab=256); the plan's logits are [64, 64]
// RUN: echo '{"mesh": "mesh", "directives": [{"recompute": {"filter": {}}}]}' > %t/recompute.json
// RUN: piper-compile %t/gpt.mlir --directives=%t/recompute.json -o %t/recompute.plan
// RUN: not piper-run %t/recompute.plan --steps=0 --sample=4 2>&1 | FileCheck %s --check-prefix=NOENTRY
// NOENTRY: piper-run: --sample: the plan has no sampling entry (its loss is no piper.cross_entropy of logits that the forward returns, or it was compiled before sampling entries existed; docs/TrainAnLM.md)
