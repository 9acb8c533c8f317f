// A checkpoint saved under one strategy resumes under another: for five
// pairs of strategies (f64), 6 training steps under the first equal 3 steps
// under the first, --save, then --resume under the second for 3 more, in
// every loss and every final parameter to 1e-12 (relative). The saved
// pieces are the first plan's layout (ZeRO chunks, TP/EP parts, pipeline
// stages); the resumed ranks read the byte ranges of the second's.
// REQUIRES: mpi
// RUN: rm -rf %t && mkdir -p %t
// RUN: echo '{"mesh": "mesh", "directives": [{"replicate": {"filter": {}, "devices": ["dp"], "zero": 3}}]}' > %t/dp-z3.json
// RUN: echo '{"mesh": "mesh", "directives": [{"replicate": {"filter": {}, "devices": ["dp"], "zero": 1}}]}' > %t/dp-z1.json
// RUN: echo '{"mesh": "mesh", "directives": [{"replicate": {"filter": {}, "devices": ["dp"]}}]}' > %t/dp.json
// RUN: echo '{"mesh": "mesh", "directives": [{"shard": {"filter": {}, "kind": "tensor", "devices": ["tp"], "column": ["layers.*.attn.w[qkv]", "layers.*.mlp.w_{gate,up}"], "row": ["layers.*.attn.wo", "layers.*.mlp.w_down"]}}, {"replicate": {"filter": {}, "devices": ["dp"]}}]}' > %t/tp.json
// RUN: echo '{"mesh": "mesh", "directives": [{"split": {"filter": {}, "n": 2}}, {"place": {"filter": {"PP": 0}, "devices": {"pp": 0}, "stream": "pp"}}, {"place": {"filter": {"PP": 1}, "devices": {"pp": 1}, "stream": "pp"}}, {"shard": {"filter": {}, "kind": "tensor", "devices": ["tp"], "column": ["layers.*.attn.w[qkv]", "layers.*.mlp.w_{gate,up}"], "row": ["layers.*.attn.wo", "layers.*.mlp.w_down"]}}, {"replicate": {"filter": {}, "devices": ["dp"]}}, {"schedule": {"name": "1f1b"}}]}' > %t/pptp.json
// RUN: echo '{"mesh": "mesh", "directives": [{"split": {"filter": {}, "n": 2}}, {"place": {"filter": {"PP": 0}, "devices": {"pp": 0}, "stream": "pp"}}, {"place": {"filter": {"PP": 1}, "devices": {"pp": 1}, "stream": "pp"}}, {"replicate": {"filter": {}, "devices": ["dp"], "zero": 2}}, {"schedule": {"name": "zb-h1"}}]}' > %t/ppdp-z2.json
// RUN: echo '{"mesh": "mesh", "directives": [{"split": {"filter": {}, "n": 4}}, {"place": {"filter": {"PP": 0}, "devices": {"pp": 0}}}, {"place": {"filter": {"PP": 1}, "devices": {"pp": 1}}}, {"place": {"filter": {"PP": 2}, "devices": {"pp": 2}}}, {"place": {"filter": {"PP": 3}, "devices": {"pp": 3}}}, {"schedule": {"name": "1f1b"}}]}' > %t/pp4.json

// Pair 1, GPT: DP4 ZeRO-3 -> PP2 x TP2 (1F1B), global batch 4.
// RUN: piper-gen --model=gpt --config=tiny-gpt --dtype=f64 --mesh=dp=4 --batch=1 -o %t/gpt.dp4.mlir
// RUN: piper-compile %t/gpt.dp4.mlir --directives=%t/dp-z3.json -o %t/gpt.dp4z3.plan
// RUN: piper-gen --model=gpt --config=tiny-gpt --dtype=f64 --mesh=dp=1,pp=2,tp=2 --pp=2 --batch=2 -o %t/gpt.pptp.mlir
// RUN: piper-compile %t/gpt.pptp.mlir --directives=%t/pptp.json -o %t/gpt.pptp.plan
// RUN: %mpiexec -np 4 piper-run %t/gpt.dp4z3.plan --steps=6 --params-out=%t/p1.full.params > %t/p1.full.txt
// RUN: %mpiexec -np 4 piper-run %t/gpt.dp4z3.plan --steps=3 --save=%t/p1.ckpt > %t/p1.txt
// RUN: %mpiexec -np 4 piper-run %t/gpt.pptp.plan --steps=6 --resume=%t/p1.ckpt --params-out=%t/p1.params >> %t/p1.txt
// RUN: %numdiff --rel=1e-12 --abs=1e-14 %t/p1.full.txt %t/p1.txt
// RUN: %numdiff --rel=1e-12 --abs=1e-14 %t/p1.full.params %t/p1.params
// RUN: FileCheck %s --input-file=%t/p1.txt

// Pair 2, MoE (4 layers): DualPipeV PP2 x EP2 -> serial, global batch 8.
// RUN: piper-gen --model=moe --config=tiny-moe --layers=4 --pp=4 --dtype=f64 --mesh=dp=1,pp=2,ep=2 --batch=1 -o %t/moe.dpv.mlir
// RUN: piper-compile %t/moe.dpv.mlir --directives=%S/../../examples/strategies/tiny-moe-dualpipev-pp2-ep2.json -o %t/moe.dpv.plan
// RUN: piper-gen --model=moe --config=tiny-moe --layers=4 --dtype=f64 --mesh=dp=1 --batch=8 -o %t/moe.mlir
// RUN: piper-compile %t/moe.mlir -o %t/moe.serial.plan
// RUN: %mpiexec -np 4 piper-run %t/moe.dpv.plan --steps=6 --params-out=%t/p2.full.params > %t/p2.full.txt
// RUN: %mpiexec -np 4 piper-run %t/moe.dpv.plan --steps=3 --save=%t/p2.ckpt > %t/p2.txt
// RUN: piper-run %t/moe.serial.plan --steps=6 --resume=%t/p2.ckpt --params-out=%t/p2.params >> %t/p2.txt
// RUN: %numdiff --rel=1e-12 --abs=1e-14 %t/p2.full.txt %t/p2.txt
// RUN: %numdiff --rel=1e-12 --abs=1e-14 %t/p2.full.params %t/p2.params
// RUN: FileCheck %s --input-file=%t/p2.txt

// Pair 3, GPT: TP2 -> DP2 ZeRO-1, global batch 2.
// RUN: piper-gen --model=gpt --config=tiny-gpt --dtype=f64 --mesh=dp=1,tp=2 --batch=2 -o %t/gpt.tp.mlir
// RUN: piper-compile %t/gpt.tp.mlir --directives=%t/tp.json -o %t/gpt.tp.plan
// RUN: piper-gen --model=gpt --config=tiny-gpt --dtype=f64 --mesh=dp=2 --batch=1 -o %t/gpt.dp2.mlir
// RUN: piper-compile %t/gpt.dp2.mlir --directives=%t/dp-z1.json -o %t/gpt.dp2z1.plan
// RUN: %mpiexec -np 2 piper-run %t/gpt.tp.plan --steps=6 --params-out=%t/p3.full.params > %t/p3.full.txt
// RUN: %mpiexec -np 2 piper-run %t/gpt.tp.plan --steps=3 --save=%t/p3.ckpt > %t/p3.txt
// RUN: %mpiexec -np 2 piper-run %t/gpt.dp2z1.plan --steps=6 --resume=%t/p3.ckpt --params-out=%t/p3.params >> %t/p3.txt
// RUN: %numdiff --rel=1e-12 --abs=1e-14 %t/p3.full.txt %t/p3.txt
// RUN: %numdiff --rel=1e-12 --abs=1e-14 %t/p3.full.params %t/p3.params
// RUN: FileCheck %s --input-file=%t/p3.txt

// Pair 4, MLP (4 layers): serial -> PP4 1F1B, global batch 4.
// RUN: piper-gen --model=mlp --config=tiny-mlp --layers=4 --dtype=f64 --mesh=dp=1 --batch=4 -o %t/mlp.mlir
// RUN: piper-compile %t/mlp.mlir -o %t/mlp.serial.plan
// RUN: piper-gen --model=mlp --config=tiny-mlp --layers=4 --pp=4 --dtype=f64 --mesh=pp=4 --batch=1 -o %t/mlp.pp4.mlir
// RUN: piper-compile %t/mlp.pp4.mlir --directives=%t/pp4.json -o %t/mlp.pp4.plan
// RUN: piper-run %t/mlp.serial.plan --steps=6 --params-out=%t/p4.full.params > %t/p4.full.txt
// RUN: piper-run %t/mlp.serial.plan --steps=3 --save=%t/p4.ckpt > %t/p4.txt
// RUN: %mpiexec -np 4 piper-run %t/mlp.pp4.plan --steps=6 --resume=%t/p4.ckpt --params-out=%t/p4.params >> %t/p4.txt
// RUN: %numdiff --rel=1e-12 --abs=1e-14 %t/p4.full.txt %t/p4.txt
// RUN: %numdiff --rel=1e-12 --abs=1e-14 %t/p4.full.params %t/p4.params
// RUN: FileCheck %s --input-file=%t/p4.txt

// Pair 5, GPT: PP2 x DP2 ZB-H1 ZeRO-2 -> DP4, global batch 4.
// RUN: piper-gen --model=gpt --config=tiny-gpt --dtype=f64 --mesh=pp=2,dp=2 --pp=2 --batch=1 -o %t/gpt.ppdp.mlir
// RUN: piper-compile %t/gpt.ppdp.mlir --directives=%t/ppdp-z2.json -o %t/gpt.ppdp.plan
// RUN: piper-compile %t/gpt.dp4.mlir --directives=%t/dp.json -o %t/gpt.dp4.plan
// RUN: %mpiexec -np 4 piper-run %t/gpt.ppdp.plan --steps=6 --params-out=%t/p5.full.params > %t/p5.full.txt
// RUN: %mpiexec -np 4 piper-run %t/gpt.ppdp.plan --steps=3 --save=%t/p5.ckpt > %t/p5.txt
// RUN: %mpiexec -np 4 piper-run %t/gpt.dp4.plan --steps=6 --resume=%t/p5.ckpt --params-out=%t/p5.params >> %t/p5.txt
// RUN: %numdiff --rel=1e-12 --abs=1e-14 %t/p5.full.txt %t/p5.txt
// RUN: %numdiff --rel=1e-12 --abs=1e-14 %t/p5.full.params %t/p5.params
// RUN: FileCheck %s --input-file=%t/p5.txt

// Pair 6, GPT on a text (--data): serial -> DP2 ZeRO-2, global batch 4;
// the corpus windows continue at step 4. Without --data the resume refuses.
// RUN: echo '{"mesh": "mesh", "directives": [{"replicate": {"filter": {}, "devices": ["dp"], "zero": 2}}]}' > %t/dp-z2.json
// RUN: piper-gen --model=gpt --config=tiny-gpt --vocab=256 --seq=16 --dtype=f64 --mesh=dp=1 --batch=4 -o %t/text.mlir
// RUN: piper-compile %t/text.mlir -o %t/text.serial.plan
// RUN: piper-gen --model=gpt --config=tiny-gpt --vocab=256 --seq=16 --dtype=f64 --mesh=dp=2 --batch=2 -o %t/text.dp2.mlir
// RUN: piper-compile %t/text.dp2.mlir --directives=%t/dp-z2.json -o %t/text.dp2.plan
// RUN: piper-run %t/text.serial.plan --steps=6 --data=%piper_src_root/data/corpus/sonnets.txt --params-out=%t/p6.full.params > %t/p6.full.txt
// RUN: piper-run %t/text.serial.plan --steps=3 --data=%piper_src_root/data/corpus/sonnets.txt --save=%t/p6.ckpt > %t/p6.txt
// RUN: %mpiexec -np 2 piper-run %t/text.dp2.plan --steps=6 --data=%piper_src_root/data/corpus/sonnets.txt --resume=%t/p6.ckpt --params-out=%t/p6.params >> %t/p6.txt
// RUN: %numdiff --rel=1e-12 --abs=1e-14 %t/p6.full.txt %t/p6.txt
// RUN: %numdiff --rel=1e-12 --abs=1e-14 %t/p6.full.params %t/p6.params
// RUN: FileCheck %s --input-file=%t/p6.txt
// RUN: not piper-run %t/text.serial.plan --steps=6 --resume=%t/p6.ckpt 2>&1 | FileCheck %s --check-prefix=DATA
// DATA: piper-run: --resume: the checkpoint was trained on --data=sonnets.txt; pass it again

// Steps 1-3 come from the first run, 4-6 from the resumed one.
// CHECK: step 1 loss
// CHECK: step 3 loss
// CHECK-NEXT: step 4 loss
// CHECK: step 6 loss
// CHECK-NOT: step
