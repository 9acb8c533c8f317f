// Expert parallelism under mpiexec: the tiny MoE (4 experts, C = T: no token
// dropped, so splitting the batch routes the same tokens) with its experts
// split over ep = 2, compiled by piper-compile and trained for 5 AdamW steps
// by piper-run, against the single-process interpreter on the serial model
// at the same global batch: the loss of every step and every final
// parameter (--params-out) agree to 1e-9 (%numdiff).
//
// Dense layers are replicated over dp x ep and expert weights over dp
// (`where`), so every ep rank is a batch replica with its own tokens: the
// global batch is per-replica batch x dp x ep. Each rank holds 2 of the 4
// experts of each layer (plan.json's "split"); the expert all-to-alls run
// inside the bodies as piper_comm_all_to_all calls.
// REQUIRES: mpi
// RUN: rm -rf %t && mkdir -p %t
// RUN: echo '{"mesh": "mesh", "directives": [{"shard": {"filter": {}, "kind": "expert", "devices": ["ep"], "stream": "ep"}}, {"replicate": {"filter": {}, "devices": ["dp", "ep"], "where": {"EP": "none"}}}, {"replicate": {"filter": {}, "devices": ["dp"], "where": {"EP": "*"}}}]}' > %t/ep.json
// RUN: echo '{"mesh": "mesh", "directives": [{"split": {"filter": {}, "n": 2}}, {"place": {"filter": {"PP": 0}, "devices": {"pp": 0}, "stream": "pp"}}, {"place": {"filter": {"PP": 1}, "devices": {"pp": 1}, "stream": "pp"}}, {"shard": {"filter": {}, "kind": "expert", "devices": ["ep"], "stream": "ep"}}, {"replicate": {"filter": {}, "devices": ["dp", "ep"], "where": {"EP": "none"}}}, {"replicate": {"filter": {}, "devices": ["dp"], "where": {"EP": "*"}}}, {"schedule": {"name": "1f1b"}}]}' > %t/ppep.json

// EP2 on 2 ranks: global batch 2 (dp = 1 x ep = 2 x 1 sequence).
// RUN: piper-gen --model=moe --config=tiny-moe --dtype=f64 --mesh=dp=1 --batch=2 -o %t/moe2.mlir
// RUN: piper-interp %t/moe2.mlir --steps=5 --optimizer=adamw --params-out=%t/moe2.params > %t/moe2.txt
// RUN: piper-gen --model=moe --config=tiny-moe --dtype=f64 --mesh=dp=1,ep=2 --batch=1 -o %t/ep.mlir
// RUN: piper-compile %t/ep.mlir --directives=%t/ep.json -o %t/ep.plan
// RUN: FileCheck %s --check-prefix=PLAN --input-file=%t/ep.plan/plan.json
// RUN: %mpiexec -np 2 piper-run %t/ep.plan --steps=5 --params-out=%t/ep.params > %t/ep.txt
// RUN: %numdiff %t/moe2.txt %t/ep.txt && %numdiff %t/moe2.params %t/ep.params
// RUN: FileCheck %s --input-file=%t/ep.txt

// DP2 x EP2 on 4 ranks: global batch 4.
// RUN: piper-gen --model=moe --config=tiny-moe --dtype=f64 --mesh=dp=1 --batch=4 -o %t/moe4.mlir
// RUN: piper-interp %t/moe4.mlir --steps=5 --optimizer=adamw --params-out=%t/moe4.params > %t/moe4.txt
// RUN: piper-gen --model=moe --config=tiny-moe --dtype=f64 --mesh=dp=2,ep=2 --batch=1 -o %t/dpep.mlir
// RUN: piper-compile %t/dpep.mlir --directives=%t/ep.json -o %t/dpep.plan
// RUN: %mpiexec -np 4 piper-run %t/dpep.plan --steps=5 --params-out=%t/dpep.params > %t/dpep.txt
// RUN: %numdiff %t/moe4.txt %t/dpep.txt && %numdiff %t/moe4.params %t/dpep.params

// PP2 x EP2 on 4 ranks, 1F1B over 2 microbatches of 1 sequence per
// replica: global batch 2 ep replicas x 2 microbatches = 4.
// RUN: piper-gen --model=moe --config=tiny-moe --dtype=f64 --mesh=dp=1,pp=2,ep=2 --pp=2 --batch=1 -o %t/ppep.mlir
// RUN: piper-compile %t/ppep.mlir --directives=%t/ppep.json -o %t/ppep.plan
// RUN: %mpiexec -np 4 piper-run %t/ppep.plan --steps=5 --params-out=%t/ppep.params > %t/ppep.txt
// RUN: %numdiff %t/moe4.txt %t/ppep.txt && %numdiff %t/moe4.params %t/ppep.params

// DualPipeV x EP2 on 4 ranks (the quickstart's run): a 4-layer MoE in 4
// stages folded into a V over pp = 2, experts over ep = 2, dense layers
// ZeRO-1 over dp x ep (2 chunks; the experts' ZeRO-1 over dp = 1 is a
// plain reduction), 4 microbatches: global batch 2 x 4 = 8.
// RUN: piper-gen --model=moe --config=tiny-moe --layers=4 --dtype=f64 --mesh=dp=1 --batch=8 -o %t/moe8.mlir
// RUN: piper-interp %t/moe8.mlir --steps=5 --optimizer=adamw --params-out=%t/moe8.params > %t/moe8.txt
// RUN: piper-gen --model=moe --config=tiny-moe --layers=4 --pp=4 --dtype=f64 --mesh=dp=1,pp=2,ep=2 --batch=1 -o %t/dpvep.mlir
// RUN: piper-compile %t/dpvep.mlir --directives=%S/../../examples/strategies/tiny-moe-dualpipev-pp2-ep2.json -o %t/dpvep.plan
// RUN: %mpiexec -np 4 piper-run %t/dpvep.plan --steps=5 --params-out=%t/dpvep.params > %t/dpvep.txt
// RUN: %numdiff %t/moe8.txt %t/dpvep.txt && %numdiff %t/moe8.params %t/dpvep.params

// CHECK: step 1 loss
// CHECK-NOT: step 1 loss
// CHECK: step 5 loss
// CHECK-NOT: step

// Expert weights and their moments are held as 2 of 4 experts per rank.
// PLAN: "name": "layers.0.mlp.experts.w_gate",
// PLAN-NEXT: "shape": [
// PLAN-NEXT: 4,
// PLAN-NEXT: 16,
// PLAN-NEXT: 16
// PLAN-NEXT: ],
// PLAN-NEXT: "split": [
// PLAN-NEXT: {
// PLAN-NEXT: "axes": [
// PLAN-NEXT: "ep"
// PLAN-NEXT: ],
// PLAN-NEXT: "dim": 0,
// PLAN-NEXT: "parts": 2
// PLAN: "batch_axes": [
// PLAN-NEXT: "dp",
// PLAN-NEXT: "ep"
// PLAN: "stream": "ep"

// The expert exchange is a plan ABI call that piper-run exports
// (train-matrix-mpi.mlir checks the rest of the ABI).
// RUN: nm -D --undefined-only %t/*.plan/*.so | grep -oE '\b(piper|_mlir)_[a-z0-9_]+' | sort -u > %t/abi-used.txt
// RUN: nm -D --defined-only piper-run | grep -oE '\b(piper|_mlir)_[a-z0-9_]+' | sort -u > %t/abi-defined.txt
// RUN: comm -23 %t/abi-used.txt %t/abi-defined.txt | count 0
// RUN: FileCheck %s --check-prefix=ABI --input-file=%t/abi-used.txt
// ABI: piper_comm_all_to_all_f64
