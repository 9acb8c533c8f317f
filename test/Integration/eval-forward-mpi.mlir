// The forward-only evaluation entry (plan.json's role "eval", derived by
// --piper-eval-programs): under serial, DP2 ZeRO-3, TP2, PP2 1F1B, PP2
// DualPipeV and EP2 plans, the held-out loss it prints equals (1e-12) the
// loss of the whole training step run on the same held-out batch before
// its update (--eval-program=step, the previous implementation), equals
// the serial interpreter's forward (1e-9), and evaluating leaves every
// training loss bitwise unchanged.
// REQUIRES: mpi
// RUN: rm -rf %t && mkdir -p %t
// RUN: head -c 2400 %piper_src_root/data/corpus/sonnets.txt > %t/train.txt
// RUN: tail -c 700 %piper_src_root/data/corpus/sonnets.txt > %t/heldout.txt
// RUN: echo "--steps=4 --data=%t/train.txt" > %t/train.flags
// RUN: echo "--eval-data=%t/heldout.txt --eval-every=2 --eval-batches=2" > %t/eval.flags

// The serial GPT: the reference, and the plan's manifest.
// RUN: piper-gen --model=gpt --config=tiny-gpt --vocab=256 --seq=16 --dtype=f64 --mesh=dp=1 --batch=4 -o %t/gpt.mlir
// RUN: piper-interp %t/gpt.mlir --optimizer=adamw $(cat %t/train.flags %t/eval.flags) > %t/gpt.ref
// RUN: piper-compile %t/gpt.mlir -o %t/serial.plan
// RUN: FileCheck %s --check-prefix=PLAN --input-file=%t/serial.plan/plan.json
// PLAN: "entry": "piper_entry_step.all",
// PLAN: "eval": {
// PLAN-NEXT: "entry": "piper_entry_step.all.eval",
// PLAN-NEXT: "inputs": [
// PLAN: "outputs": [
// PLAN-NEXT: 0
// PLAN-NEXT: ]

// Per plan: forward-only and full-step evaluation, and no evaluation.
// RUN: %mpiexec -np 1 piper-run %t/serial.plan $(cat %t/train.flags %t/eval.flags) > %t/serial.fwd
// RUN: %mpiexec -np 1 piper-run %t/serial.plan $(cat %t/train.flags %t/eval.flags) --eval-program=step > %t/serial.step
// RUN: %mpiexec -np 1 piper-run %t/serial.plan $(cat %t/train.flags) > %t/serial.none
// RUN: %numdiff --rel 1e-12 %t/serial.step %t/serial.fwd && %numdiff %t/gpt.ref %t/serial.fwd
// RUN: grep -v '^eval' %t/serial.fwd | diff - %t/serial.none
// RUN: FileCheck %s --input-file=%t/serial.fwd

// DP2 with ZeRO-3: the forward gathers the parameters it reads.
// RUN: echo '{"mesh": "mesh", "directives": [{"replicate": {"filter": {}, "devices": ["dp"], "zero": 3}}]}' > %t/zero3.json
// RUN: piper-gen --model=gpt --config=tiny-gpt --vocab=256 --seq=16 --dtype=f64 --mesh=dp=2 --batch=2 -o %t/dp.mlir
// RUN: piper-compile %t/dp.mlir --directives=%t/zero3.json -o %t/zero3.plan
// RUN: %mpiexec -np 2 piper-run %t/zero3.plan $(cat %t/train.flags %t/eval.flags) > %t/zero3.fwd
// RUN: %mpiexec -np 2 piper-run %t/zero3.plan $(cat %t/train.flags %t/eval.flags) --eval-program=step > %t/zero3.step
// RUN: %mpiexec -np 2 piper-run %t/zero3.plan $(cat %t/train.flags) > %t/zero3.none
// RUN: %numdiff --rel 1e-12 %t/zero3.step %t/zero3.fwd && %numdiff %t/gpt.ref %t/zero3.fwd
// RUN: grep -v '^eval' %t/zero3.fwd | diff - %t/zero3.none

// TP2: attention and MLP sharded, their all-reduces inside the forward.
// RUN: echo '{"mesh": "mesh", "directives": [{"shard": {"filter": {}, "kind": "tensor", "devices": ["tp"], "column": ["layers.*.attn.w[qkv]", "layers.*.mlp.w_{gate,up}"], "row": ["layers.*.attn.wo", "layers.*.mlp.w_down"]}}, {"replicate": {"filter": {}, "devices": ["dp"]}}]}' > %t/tp.json
// RUN: piper-gen --model=gpt --config=tiny-gpt --vocab=256 --seq=16 --dtype=f64 --mesh=dp=1,tp=2 --batch=4 -o %t/tp.mlir
// RUN: piper-compile %t/tp.mlir --directives=%t/tp.json -o %t/tp.plan
// RUN: %mpiexec -np 2 piper-run %t/tp.plan $(cat %t/train.flags %t/eval.flags) > %t/tp.fwd
// RUN: %mpiexec -np 2 piper-run %t/tp.plan $(cat %t/train.flags %t/eval.flags) --eval-program=step > %t/tp.step
// RUN: %mpiexec -np 2 piper-run %t/tp.plan $(cat %t/train.flags) > %t/tp.none
// RUN: %numdiff --rel 1e-12 %t/tp.step %t/tp.fwd && %numdiff %t/gpt.ref %t/tp.fwd
// RUN: grep -v '^eval' %t/tp.fwd | diff - %t/tp.none

// PP2 1F1B over 2 microbatches of 2: activations cross the stage boundary.
// RUN: echo '{"mesh": "mesh", "directives": [{"split": {"filter": {}, "n": 2}}, {"place": {"filter": {"PP": 0}, "devices": {"pp": 0}, "stream": "pp"}}, {"place": {"filter": {"PP": 1}, "devices": {"pp": 1}, "stream": "pp"}}, {"schedule": {"name": "1f1b"}}]}' > %t/1f1b.json
// RUN: piper-gen --model=gpt --config=tiny-gpt --vocab=256 --seq=16 --dtype=f64 --pp=2 --mesh=pp=2 --batch=2 -o %t/pp.mlir
// RUN: piper-compile %t/pp.mlir --directives=%t/1f1b.json -o %t/1f1b.plan
// RUN: %mpiexec -np 2 piper-run %t/1f1b.plan $(cat %t/train.flags %t/eval.flags) > %t/1f1b.fwd
// RUN: %mpiexec -np 2 piper-run %t/1f1b.plan $(cat %t/train.flags %t/eval.flags) --eval-program=step > %t/1f1b.step
// RUN: %mpiexec -np 2 piper-run %t/1f1b.plan $(cat %t/train.flags) > %t/1f1b.none
// RUN: %numdiff --rel 1e-12 %t/1f1b.step %t/1f1b.fwd && %numdiff %t/gpt.ref %t/1f1b.fwd
// RUN: grep -v '^eval' %t/1f1b.fwd | diff - %t/1f1b.none

// PP2 DualPipeV: 4 layers in 4 stages folded into a V (rank 0 holds
// stages 0 and 3, so the last stage and the loss), 4 microbatches of 1.
// RUN: piper-gen --model=gpt --config=tiny-gpt --layers=4 --vocab=256 --seq=16 --dtype=f64 --mesh=dp=1 --batch=4 -o %t/gpt4.mlir
// RUN: piper-interp %t/gpt4.mlir --optimizer=adamw $(cat %t/train.flags %t/eval.flags) > %t/gpt4.ref
// RUN: echo '{"mesh": "mesh", "directives": [{"split": {"filter": {}, "n": 4}}, {"place": {"filter": {"PP": 0}, "devices": {"pp": 0}}}, {"place": {"filter": {"PP": 1}, "devices": {"pp": 1}}}, {"place": {"filter": {"PP": 2}, "devices": {"pp": 1}}}, {"place": {"filter": {"PP": 3}, "devices": {"pp": 0}}}, {"schedule": {"name": "dualpipev"}}]}' > %t/dpv.json
// RUN: piper-gen --model=gpt --config=tiny-gpt --layers=4 --pp=4 --vocab=256 --seq=16 --dtype=f64 --mesh=pp=2 --batch=1 -o %t/dpv.mlir
// RUN: piper-compile %t/dpv.mlir --directives=%t/dpv.json -o %t/dpv.plan
// RUN: %mpiexec -np 2 piper-run %t/dpv.plan $(cat %t/train.flags %t/eval.flags) > %t/dpv.fwd
// RUN: %mpiexec -np 2 piper-run %t/dpv.plan $(cat %t/train.flags %t/eval.flags) --eval-program=step > %t/dpv.step
// RUN: %mpiexec -np 2 piper-run %t/dpv.plan $(cat %t/train.flags) > %t/dpv.none
// RUN: %numdiff --rel 1e-12 %t/dpv.step %t/dpv.fwd && %numdiff %t/gpt4.ref %t/dpv.fwd
// RUN: grep -v '^eval' %t/dpv.fwd | diff - %t/dpv.none

// EP2 for the MoE: the expert all-to-alls run inside the forward.
// RUN: piper-gen --model=moe --config=tiny-moe --vocab=256 --seq=16 --dtype=f64 --mesh=dp=1 --batch=2 -o %t/moe.mlir
// RUN: piper-interp %t/moe.mlir --optimizer=adamw $(cat %t/train.flags %t/eval.flags) > %t/moe.ref
// RUN: echo '{"mesh": "mesh", "directives": [{"shard": {"filter": {}, "kind": "expert", "devices": ["ep"], "stream": "ep"}}, {"replicate": {"filter": {}, "devices": ["dp", "ep"], "where": {"EP": "none"}}}, {"replicate": {"filter": {}, "devices": ["dp"], "where": {"EP": "*"}}}]}' > %t/ep.json
// RUN: piper-gen --model=moe --config=tiny-moe --vocab=256 --seq=16 --dtype=f64 --mesh=dp=1,ep=2 --batch=1 -o %t/ep.mlir
// RUN: piper-compile %t/ep.mlir --directives=%t/ep.json -o %t/ep.plan
// RUN: %mpiexec -np 2 piper-run %t/ep.plan $(cat %t/train.flags %t/eval.flags) > %t/ep.fwd
// RUN: %mpiexec -np 2 piper-run %t/ep.plan $(cat %t/train.flags %t/eval.flags) --eval-program=step > %t/ep.step
// RUN: %mpiexec -np 2 piper-run %t/ep.plan $(cat %t/train.flags) > %t/ep.none
// RUN: %numdiff --rel 1e-12 %t/ep.step %t/ep.fwd && %numdiff %t/moe.ref %t/ep.fwd
// RUN: grep -v '^eval' %t/ep.fwd | diff - %t/ep.none

// An unknown --eval-program.
// RUN: not piper-run %t/serial.plan --eval-program=backward 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: piper-run: --eval-program must be 'forward' or 'step', got 'backward'

// CHECK: step 2 loss
// CHECK-NEXT: eval step 2 loss {{[0-9.]+}} ppl {{[0-9.]+}}
// CHECK: step 4 loss
// CHECK-NEXT: eval step 4 loss {{[0-9.]+}} ppl {{[0-9.]+}}
