// Data-parallel replicas, ZeRO-1/2/3, pipeline x data parallelism and
// DualPipeV, compiled by piper-compile and trained for 5 AdamW steps by
// `mpiexec -np 4 piper-run`, against the single-process interpreter on the
// serial model at the same global batch: the loss of every step and every
// final parameter (--params-out) agree to 1e-9 (%numdiff).
//
// A model for data parallelism is written per replica: `--mesh=dp=4
// --batch=1` is a global batch of 4, replica q reading row q.
// REQUIRES: mpi
// RUN: rm -rf %t && mkdir -p %t
// RUN: for z in 0 1 2 3; do echo "{\"mesh\": \"mesh\", \"directives\": [{\"replicate\": {\"filter\": {}, \"devices\": [\"dp\"], \"zero\": $z}}]}" > %t/zero$z.json; done

// MLP over dp = 4 at every ZeRO stage.
// RUN: piper-gen --model=mlp --config=tiny-mlp --dtype=f64 --mesh=dp=1 --batch=4 -o %t/mlp.mlir
// RUN: piper-interp %t/mlp.mlir --steps=5 --optimizer=adamw --params-out=%t/mlp.params > %t/mlp.txt
// RUN: piper-gen --model=mlp --config=tiny-mlp --dtype=f64 --mesh=dp=4 --batch=1 -o %t/mlp.dp.mlir
// RUN: for z in 0 1 2 3; do piper-compile %t/mlp.dp.mlir --directives=%t/zero$z.json -o %t/mlp.z$z.plan || exit 1; done
// RUN: FileCheck %s --check-prefix=PLAN3 --input-file=%t/mlp.z3.plan/plan.json
// RUN: for z in 0 1 2 3; do %mpiexec -np 4 piper-run %t/mlp.z$z.plan --steps=5 --params-out=%t/mlp.z$z.params > %t/mlp.z$z.txt || exit 1; done
// RUN: for z in 0 1 2 3; do %numdiff %t/mlp.txt %t/mlp.z$z.txt && %numdiff %t/mlp.params %t/mlp.z$z.params || exit 1; done
// RUN: FileCheck %s --input-file=%t/mlp.z3.txt

// GPT over dp = 4: plain data parallelism and ZeRO-3.
// RUN: piper-gen --model=gpt --config=tiny-gpt --dtype=f64 --mesh=dp=1 --batch=4 -o %t/gpt.mlir
// RUN: piper-interp %t/gpt.mlir --steps=5 --optimizer=adamw --params-out=%t/gpt.params > %t/gpt.txt
// RUN: piper-gen --model=gpt --config=tiny-gpt --dtype=f64 --mesh=dp=4 --batch=1 -o %t/gpt.dp.mlir
// RUN: piper-compile %t/gpt.dp.mlir --directives=%t/zero0.json -o %t/gpt.z0.plan
// RUN: %mpiexec -np 4 piper-run %t/gpt.z0.plan --steps=5 --params-out=%t/gpt.z0.params > %t/gpt.z0.txt
// RUN: %numdiff %t/gpt.txt %t/gpt.z0.txt && %numdiff %t/gpt.params %t/gpt.z0.params
// RUN: piper-compile %t/gpt.dp.mlir --directives=%t/zero3.json -o %t/gpt.z3.plan
// RUN: %mpiexec -np 4 piper-run %t/gpt.z3.plan --steps=5 --params-out=%t/gpt.z3.params > %t/gpt.z3.txt
// RUN: %numdiff %t/gpt.txt %t/gpt.z3.txt && %numdiff %t/gpt.params %t/gpt.z3.params

// MoE over dp = 4 with ZeRO-2 (its expert updates nest in expert blocks).
// RUN: piper-gen --model=moe --config=tiny-moe --dtype=f64 --mesh=dp=1 --batch=4 -o %t/moe.mlir
// RUN: piper-interp %t/moe.mlir --steps=5 --optimizer=adamw --params-out=%t/moe.params > %t/moe.txt
// RUN: piper-gen --model=moe --config=tiny-moe --dtype=f64 --mesh=dp=4 --batch=1 -o %t/moe.dp.mlir
// RUN: piper-compile %t/moe.dp.mlir --directives=%t/zero2.json -o %t/moe.z2.plan
// RUN: %mpiexec -np 4 piper-run %t/moe.z2.plan --steps=5 --params-out=%t/moe.z2.params > %t/moe.z2.txt
// RUN: %numdiff %t/moe.txt %t/moe.z2.txt && %numdiff %t/moe.params %t/moe.z2.params

// GPT in PP2 x DP2, ZB-H1 over 2 microbatches per replica, ZeRO-1: global
// batch 2 replicas x 2 microbatches x 1 sequence.
// RUN: echo '{"mesh": "mesh", "directives": [{"split": {"filter": {}, "n": 2}}, {"place": {"filter": {"PP": 0}, "devices": {"pp": 0}, "stream": "pp"}}, {"place": {"filter": {"PP": 1}, "devices": {"pp": 1}, "stream": "pp"}}, {"replicate": {"filter": {}, "devices": ["dp"], "zero": 1}}, {"schedule": {"name": "zb-h1"}}]}' > %t/ppdp.json
// RUN: piper-gen --model=gpt --config=tiny-gpt --dtype=f64 --mesh=pp=2,dp=2 --pp=2 --batch=1 -o %t/gpt.ppdp.mlir
// RUN: piper-compile %t/gpt.ppdp.mlir --directives=%t/ppdp.json -o %t/gpt.ppdp.plan
// RUN: FileCheck %s --check-prefix=PPDP --input-file=%t/gpt.ppdp.plan/plan.json
// RUN: %mpiexec -np 4 piper-run %t/gpt.ppdp.plan --steps=5 --params-out=%t/gpt.ppdp.params > %t/gpt.ppdp.txt
// RUN: %numdiff %t/gpt.txt %t/gpt.ppdp.txt && %numdiff %t/gpt.params %t/gpt.ppdp.params

// DualPipeV on 4 ranks: 8 stages of an 8-layer MLP folded into a V (rank r
// holds stages r and 7 - r), 8 microbatches.
// RUN: echo '{"mesh": "mesh", "directives": [{"split": {"filter": {}, "n": 8}}, {"place": {"filter": {"PP": 0}, "devices": {"pp": 0}}}, {"place": {"filter": {"PP": 1}, "devices": {"pp": 1}}}, {"place": {"filter": {"PP": 2}, "devices": {"pp": 2}}}, {"place": {"filter": {"PP": 3}, "devices": {"pp": 3}}}, {"place": {"filter": {"PP": 4}, "devices": {"pp": 3}}}, {"place": {"filter": {"PP": 5}, "devices": {"pp": 2}}}, {"place": {"filter": {"PP": 6}, "devices": {"pp": 1}}}, {"place": {"filter": {"PP": 7}, "devices": {"pp": 0}}}, {"schedule": {"name": "dualpipev"}}]}' > %t/dpv.json
// RUN: piper-gen --model=mlp --config=tiny-mlp --layers=8 --dtype=f64 --mesh=dp=1 --batch=8 -o %t/mlp8.mlir
// RUN: piper-interp %t/mlp8.mlir --steps=5 --optimizer=adamw --params-out=%t/mlp8.params > %t/mlp8.txt
// RUN: piper-gen --model=mlp --config=tiny-mlp --layers=8 --pp=8 --dtype=f64 --mesh=pp=4 --batch=1 -o %t/mlp8.pp.mlir
// RUN: piper-compile %t/mlp8.pp.mlir --directives=%t/dpv.json -o %t/mlp8.dpv.plan
// RUN: %mpiexec -np 4 piper-run %t/mlp8.dpv.plan --steps=5 --params-out=%t/mlp8.dpv.params > %t/mlp8.dpv.txt
// RUN: %numdiff %t/mlp8.txt %t/mlp8.dpv.txt && %numdiff %t/mlp8.params %t/mlp8.dpv.params

// A rank that dies during a collective stops every rank: not by timeout.
// RUN: sh -c '%mpiexec -np 4 piper-run %t/mlp.z3.plan --steps=5 --kill-rank=2 --kill-at-step=3 > %t/kill.txt 2>&1; rc=$?; echo "exit $rc" >> %t/kill.txt; test $rc -ne 0 && test $rc -ne 124'
// RUN: FileCheck %s --check-prefix=KILL --input-file=%t/kill.txt

// CHECK: step 1 loss
// CHECK-NOT: step 1 loss
// CHECK: step 5 loss
// CHECK-NOT: step

// ZeRO-3: parameters and moments are flat chunks (16x32 over 4: 128 each).
// PLAN3: "name": "layers.0.weight",
// PLAN3-NEXT: "shape": [
// PLAN3-NEXT: 16,
// PLAN3-NEXT: 32
// PLAN3-NEXT: ],
// PLAN3-NEXT: "shard": {
// PLAN3-NEXT: "axes": [
// PLAN3-NEXT: "dp"
// PLAN3-NEXT: ],
// PLAN3-NEXT: "chunk": 128,
// PLAN3-NEXT: "members": 4
// PLAN3: "batch_axes": [
// PLAN3-NEXT: "dp"
// PLAN3: "communicators": [
// PLAN3-NEXT: {
// PLAN3-NEXT: "axes": [
// PLAN3-NEXT: "dp"
// PLAN3-NEXT: ],
// PLAN3-NEXT: "stream": "dp_grad"

// PPDP: "batch_axes": [
// PPDP-NEXT: "dp"
// PPDP: "role": {
// PPDP-NEXT: "pp": 0
// PPDP: "role": {
// PPDP-NEXT: "pp": 1

// KILL: killed at step 3 (--kill-rank)
// KILL-NOT: step 3 loss
// KILL: exit
