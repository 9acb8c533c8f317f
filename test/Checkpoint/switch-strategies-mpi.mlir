// A strategy switch in the middle of one mpiexec job (--switch-to): for
// four pairs of strategies (f64), 6 steps under the first equal 3 steps
// under the first and 3 more under the second, in every loss and every
// final parameter to 1e-12 (relative). The parameters and AdamW state move
// from the first plan's layout (ZeRO chunks, TP parts, pipeline stages) to
// the second's in memory, over the runtime; nothing touches the disk.
// REQUIRES: mpi
// RUN: rm -rf %t && mkdir -p %t
// RUN: echo '{"mesh": "mesh", "directives": [{"replicate": {"filter": {}, "devices": ["dp"], "zero": 3}}]}' > %t/dp-z3.json
// RUN: echo '{"mesh": "mesh", "directives": [{"replicate": {"filter": {}, "devices": ["dp"], "zero": 1}}]}' > %t/dp-z1.json
// RUN: echo '{"mesh": "mesh", "directives": [{"replicate": {"filter": {}, "devices": ["dp"]}}]}' > %t/dp.json
// RUN: echo '{"mesh": "mesh", "directives": [{"shard": {"filter": {}, "kind": "tensor", "devices": ["tp"], "column": ["layers.*.attn.w[qkv]", "layers.*.mlp.w_{gate,up}"], "row": ["layers.*.attn.wo", "layers.*.mlp.w_down"]}}, {"replicate": {"filter": {}, "devices": ["dp"]}}]}' > %t/tp.json
// RUN: echo '{"mesh": "mesh", "directives": [{"split": {"filter": {}, "n": 2}}, {"place": {"filter": {"PP": 0}, "devices": {"pp": 0}, "stream": "pp"}}, {"place": {"filter": {"PP": 1}, "devices": {"pp": 1}, "stream": "pp"}}, {"shard": {"filter": {}, "kind": "tensor", "devices": ["tp"], "column": ["layers.*.attn.w[qkv]", "layers.*.mlp.w_{gate,up}"], "row": ["layers.*.attn.wo", "layers.*.mlp.w_down"]}}, {"replicate": {"filter": {}, "devices": ["dp"]}}, {"schedule": {"name": "1f1b"}}]}' > %t/pptp.json
// RUN: echo '{"mesh": "mesh", "directives": [{"split": {"filter": {}, "n": 2}}, {"place": {"filter": {"PP": 0}, "devices": {"pp": 0}, "stream": "pp"}}, {"place": {"filter": {"PP": 1}, "devices": {"pp": 1}, "stream": "pp"}}, {"replicate": {"filter": {}, "devices": ["dp"], "zero": 2}}, {"schedule": {"name": "zb-h1"}}]}' > %t/ppdp-z2.json

// Pair 1, GPT: DP4 ZeRO-3 -> PP2 x TP2 (1F1B), global batch 4.
// RUN: piper-gen --model=gpt --config=tiny-gpt --dtype=f64 --mesh=dp=4 --batch=1 -o %t/gpt.dp4.mlir
// RUN: piper-compile %t/gpt.dp4.mlir --directives=%t/dp-z3.json -o %t/gpt.dp4z3.plan
// RUN: piper-gen --model=gpt --config=tiny-gpt --dtype=f64 --mesh=dp=1,pp=2,tp=2 --pp=2 --batch=2 -o %t/gpt.pptp.mlir
// RUN: piper-compile %t/gpt.pptp.mlir --directives=%t/pptp.json -o %t/gpt.pptp.plan
// RUN: %mpiexec -np 4 piper-run %t/gpt.dp4z3.plan --steps=6 --params-out=%t/p1.full.params > %t/p1.full.txt
// RUN: %mpiexec -np 4 piper-run %t/gpt.dp4z3.plan --steps=6 --switch-to=%t/gpt.pptp.plan --switch-after=3 --params-out=%t/p1.params > %t/p1.txt 2> %t/p1.err
// RUN: %numdiff --rel=1e-12 --abs=1e-14 %t/p1.full.txt %t/p1.txt
// RUN: %numdiff --rel=1e-12 --abs=1e-14 %t/p1.full.params %t/p1.params
// RUN: FileCheck %s --input-file=%t/p1.txt
// RUN: FileCheck %s --check-prefix=SWITCHED --input-file=%t/p1.err
// SWITCHED: piper-run: switched to {{.*}}gpt.pptp.plan after step 3

// Pair 2, GPT: TP2 -> DP2 ZeRO-1, global batch 2.
// RUN: piper-gen --model=gpt --config=tiny-gpt --dtype=f64 --mesh=dp=1,tp=2 --batch=2 -o %t/gpt.tp.mlir
// RUN: piper-compile %t/gpt.tp.mlir --directives=%t/tp.json -o %t/gpt.tp.plan
// RUN: piper-gen --model=gpt --config=tiny-gpt --dtype=f64 --mesh=dp=2 --batch=1 -o %t/gpt.dp2.mlir
// RUN: piper-compile %t/gpt.dp2.mlir --directives=%t/dp-z1.json -o %t/gpt.dp2z1.plan
// RUN: %mpiexec -np 2 piper-run %t/gpt.tp.plan --steps=6 --params-out=%t/p2.full.params > %t/p2.full.txt
// RUN: %mpiexec -np 2 piper-run %t/gpt.tp.plan --steps=6 --switch-to=%t/gpt.dp2z1.plan --switch-after=3 --params-out=%t/p2.params > %t/p2.txt
// RUN: %numdiff --rel=1e-12 --abs=1e-14 %t/p2.full.txt %t/p2.txt
// RUN: %numdiff --rel=1e-12 --abs=1e-14 %t/p2.full.params %t/p2.params
// RUN: FileCheck %s --input-file=%t/p2.txt

// Pair 3, GPT: PP2 x DP2 ZB-H1 ZeRO-2 -> DP4, global batch 4; the switch
// after step 1 and then after step 5 (the last possible).
// RUN: piper-gen --model=gpt --config=tiny-gpt --dtype=f64 --mesh=pp=2,dp=2 --pp=2 --batch=1 -o %t/gpt.ppdp.mlir
// RUN: piper-compile %t/gpt.ppdp.mlir --directives=%t/ppdp-z2.json -o %t/gpt.ppdp.plan
// RUN: piper-compile %t/gpt.dp4.mlir --directives=%t/dp.json -o %t/gpt.dp4.plan
// RUN: %mpiexec -np 4 piper-run %t/gpt.ppdp.plan --steps=6 --params-out=%t/p3.full.params > %t/p3.full.txt
// RUN: %mpiexec -np 4 piper-run %t/gpt.ppdp.plan --steps=6 --switch-to=%t/gpt.dp4.plan --switch-after=1 --params-out=%t/p3.params > %t/p3.txt
// RUN: %numdiff --rel=1e-12 --abs=1e-14 %t/p3.full.txt %t/p3.txt
// RUN: %numdiff --rel=1e-12 --abs=1e-14 %t/p3.full.params %t/p3.params
// RUN: %mpiexec -np 4 piper-run %t/gpt.ppdp.plan --steps=6 --switch-to=%t/gpt.dp4.plan --switch-after=5 --params-out=%t/p3b.params > %t/p3b.txt
// RUN: %numdiff --rel=1e-12 --abs=1e-14 %t/p3.full.txt %t/p3b.txt
// RUN: %numdiff --rel=1e-12 --abs=1e-14 %t/p3.full.params %t/p3b.params

// Pair 4, MoE (4 layers): DualPipeV PP2 x EP2 -> DP4, global batch 8.
// RUN: piper-gen --model=moe --config=tiny-moe --layers=4 --pp=4 --dtype=f64 --mesh=dp=1,pp=2,ep=2 --batch=1 -o %t/moe.dpv.mlir
// RUN: piper-compile %t/moe.dpv.mlir --directives=%S/../../examples/strategies/tiny-moe-dualpipev-pp2-ep2.json -o %t/moe.dpv.plan
// RUN: piper-gen --model=moe --config=tiny-moe --layers=4 --dtype=f64 --mesh=dp=4 --batch=2 -o %t/moe.dp4.mlir
// RUN: piper-compile %t/moe.dp4.mlir --directives=%t/dp.json -o %t/moe.dp4.plan
// RUN: %mpiexec -np 4 piper-run %t/moe.dpv.plan --steps=6 --params-out=%t/p4.full.params > %t/p4.full.txt
// RUN: %mpiexec -np 4 piper-run %t/moe.dpv.plan --steps=6 --switch-to=%t/moe.dp4.plan --switch-after=3 --params-out=%t/p4.params > %t/p4.txt
// RUN: %numdiff --rel=1e-12 --abs=1e-14 %t/p4.full.txt %t/p4.txt
// RUN: %numdiff --rel=1e-12 --abs=1e-14 %t/p4.full.params %t/p4.params
// RUN: FileCheck %s --input-file=%t/p4.txt

// CHECK: step 1 loss
// CHECK: step 3 loss
// CHECK-NEXT: step 4 loss
// CHECK: step 6 loss
// CHECK-NOT: step

// Refused before any step, one line each: plans on other device counts,
// of another model or another global batch, a step out of range, and
// --save (the saver writes the first plan's layout).
// RUN: piper-gen --model=gpt --config=tiny-gpt --dtype=f64 --layers=3 --mesh=dp=2 --batch=1 -o %t/gpt3.dp2.mlir
// RUN: piper-compile %t/gpt3.dp2.mlir --directives=%t/dp.json -o %t/gpt3.dp2.plan
// RUN: piper-gen --model=gpt --config=tiny-gpt --dtype=f64 --mesh=dp=2 --batch=2 -o %t/gpt.dp2b2.mlir
// RUN: piper-compile %t/gpt.dp2b2.mlir --directives=%t/dp.json -o %t/gpt.dp2b2.plan
// RUN: not %mpiexec -np 2 piper-run %t/gpt.tp.plan --steps=6 --switch-to=%t/gpt.dp4.plan --switch-after=3 2>&1 | FileCheck %s --check-prefix=RANKS
// RANKS: piper-run: --switch-to: {{.*}}gpt.dp4.plan runs on 4 devices, this plan on 2; a switch in memory keeps the ranks (save and --resume instead)
// RUN: not %mpiexec -np 2 piper-run %t/gpt.tp.plan --steps=6 --switch-to=%t/gpt3.dp2.plan --switch-after=3 2>&1 | FileCheck %s --check-prefix=MODEL
// MODEL: piper-run: --switch-to: {{.*}}gpt3.dp2.plan trains 'layers.2.attn_norm.weight', which this plan does not have; both plans must be of one model (and one optimizer)
// RUN: not %mpiexec -np 2 piper-run %t/gpt.tp.plan --steps=6 --switch-to=%t/gpt.dp2b2.plan --switch-after=3 2>&1 | FileCheck %s --check-prefix=BATCH
// BATCH: piper-run: --switch-to: {{.*}}gpt.dp2b2.plan trains on another global batch; the data order would not continue (give both plans the same global batch)
// RUN: not %mpiexec -np 2 piper-run %t/gpt.tp.plan --steps=6 --switch-to=%t/gpt.dp2z1.plan --switch-after=6 2>&1 | FileCheck %s --check-prefix=AFTER
// AFTER: piper-run: --switch-after=6 must be a step before the last (1 to 5 of --steps=6)
// RUN: not %mpiexec -np 2 piper-run %t/gpt.tp.plan --steps=6 --switch-after=3 2>&1 | FileCheck %s --check-prefix=NOPLAN
// NOPLAN: piper-run: --switch-after needs --switch-to=PLAN
// RUN: not %mpiexec -np 2 piper-run %t/gpt.tp.plan --steps=6 --switch-to=%t/nothing.plan --switch-after=3 2>&1 | FileCheck %s --check-prefix=MISSING
// MISSING: piper-run: --switch-to: {{.*}}nothing.plan
// RUN: not %mpiexec -np 2 piper-run %t/gpt.tp.plan --steps=6 --switch-to=%t/gpt.dp2z1.plan --switch-after=3 --save=%t/ck 2>&1 | FileCheck %s --check-prefix=SAVE
// SAVE: piper-run: --switch-to cannot be combined with --save yet
