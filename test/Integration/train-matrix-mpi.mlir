// The rest of the model x strategy matrix of issue 8 (the other cells are
// in train-pp-mpi.mlir, train-replicas-mpi.mlir, train-ep-mpi.mlir and
// train-tp-mpi.mlir): tiny MLP, GPT and MoE in f64, 5 AdamW steps under
// mpiexec, loss of every step and final parameters against the serial
// interpreter at the same global batch (%numdiff, 1e-9).
// REQUIRES: mpi
// RUN: rm -rf %t && mkdir -p %t
// RUN: for z in 0 3; do echo "{\"mesh\": \"mesh\", \"directives\": [{\"replicate\": {\"filter\": {}, \"devices\": [\"dp\"], \"zero\": $z}}]}" > %t/zero$z.json; done
// RUN: echo '{"mesh": "mesh", "directives": [{"split": {"filter": {}, "n": 2}}, {"place": {"filter": {"PP": 0}, "devices": {"pp": 0}, "stream": "pp"}}, {"place": {"filter": {"PP": 1}, "devices": {"pp": 1}, "stream": "pp"}}, {"replicate": {"filter": {}, "devices": ["dp"], "zero": 1}}, {"schedule": {"name": "zb-h1"}}]}' > %t/zbh1.json

// MoE over dp = 4: plain data parallelism and ZeRO-3.
// RUN: piper-gen --model=moe --config=tiny-moe --dtype=f64 --mesh=dp=1 --batch=4 -o %t/moe4.mlir
// RUN: piper-interp %t/moe4.mlir --steps=5 --optimizer=adamw --params-out=%t/moe4.params > %t/moe4.txt
// RUN: piper-gen --model=moe --config=tiny-moe --dtype=f64 --mesh=dp=4 --batch=1 -o %t/moe.dp.mlir
// RUN: for z in 0 3; do piper-compile %t/moe.dp.mlir --directives=%t/zero$z.json -o %t/moe.z$z.plan || exit 1; done
// RUN: for z in 0 3; do %mpiexec -np 4 piper-run %t/moe.z$z.plan --steps=5 --params-out=%t/moe.z$z.params > %t/moe.z$z.txt || exit 1; done
// RUN: for z in 0 3; do %numdiff %t/moe4.txt %t/moe.z$z.txt && %numdiff %t/moe4.params %t/moe.z$z.params || exit 1; done

// PP2 x DP2 ZB-H1 (ZeRO-1) for the MLP and the MoE: global batch 2 replicas
// x 2 microbatches x 1.
// RUN: piper-gen --model=mlp --config=tiny-mlp --dtype=f64 --mesh=dp=1 --batch=4 -o %t/mlp4.mlir
// RUN: piper-interp %t/mlp4.mlir --steps=5 --optimizer=adamw --params-out=%t/mlp4.params > %t/mlp4.txt
// RUN: piper-gen --model=mlp --config=tiny-mlp --dtype=f64 --pp=2 --mesh=pp=2,dp=2 --batch=1 -o %t/mlp.ppdp.mlir
// RUN: piper-compile %t/mlp.ppdp.mlir --directives=%t/zbh1.json -o %t/mlp.ppdp.plan
// RUN: %mpiexec -np 4 piper-run %t/mlp.ppdp.plan --steps=5 --params-out=%t/mlp.ppdp.params > %t/mlp.ppdp.txt
// RUN: %numdiff %t/mlp4.txt %t/mlp.ppdp.txt && %numdiff %t/mlp4.params %t/mlp.ppdp.params
// RUN: piper-gen --model=moe --config=tiny-moe --dtype=f64 --pp=2 --mesh=pp=2,dp=2 --batch=1 -o %t/moe.ppdp.mlir
// RUN: piper-compile %t/moe.ppdp.mlir --directives=%t/zbh1.json -o %t/moe.ppdp.plan
// RUN: %mpiexec -np 4 piper-run %t/moe.ppdp.plan --steps=5 --params-out=%t/moe.ppdp.params > %t/moe.ppdp.txt
// RUN: %numdiff %t/moe4.txt %t/moe.ppdp.txt && %numdiff %t/moe4.params %t/moe.ppdp.params

// DualPipeV on 4 ranks for the GPT: 8 layers in 8 stages folded into a V
// (rank r holds stages r and 7 - r), 8 microbatches.
// RUN: echo '{"mesh": "mesh", "directives": [{"split": {"filter": {}, "n": 8}}, {"place": {"filter": {"PP": 0}, "devices": {"pp": 0}}}, {"place": {"filter": {"PP": 1}, "devices": {"pp": 1}}}, {"place": {"filter": {"PP": 2}, "devices": {"pp": 2}}}, {"place": {"filter": {"PP": 3}, "devices": {"pp": 3}}}, {"place": {"filter": {"PP": 4}, "devices": {"pp": 3}}}, {"place": {"filter": {"PP": 5}, "devices": {"pp": 2}}}, {"place": {"filter": {"PP": 6}, "devices": {"pp": 1}}}, {"place": {"filter": {"PP": 7}, "devices": {"pp": 0}}}, {"schedule": {"name": "dualpipev"}}]}' > %t/dpv.json
// RUN: piper-gen --model=gpt --config=tiny-gpt --layers=8 --dtype=f64 --mesh=dp=1 --batch=8 -o %t/gpt8.mlir
// RUN: piper-interp %t/gpt8.mlir --steps=5 --optimizer=adamw --params-out=%t/gpt8.params > %t/gpt8.txt
// RUN: piper-gen --model=gpt --config=tiny-gpt --layers=8 --pp=8 --dtype=f64 --mesh=pp=4 --batch=1 -o %t/gpt8.pp.mlir
// RUN: piper-compile %t/gpt8.pp.mlir --directives=%t/dpv.json -o %t/gpt8.dpv.plan
// RUN: %mpiexec -np 4 piper-run %t/gpt8.dpv.plan --steps=5 --params-out=%t/gpt8.dpv.params > %t/gpt8.dpv.txt
// RUN: %numdiff %t/gpt8.txt %t/gpt8.dpv.txt && %numdiff %t/gpt8.params %t/gpt8.dpv.params

// TP2 for the MoE's attention (its experts stay whole on each rank).
// RUN: echo '{"mesh": "mesh", "directives": [{"shard": {"filter": {}, "kind": "tensor", "devices": ["tp"], "column": ["layers.*.attn.w[qkv]"], "row": ["layers.*.attn.wo"]}}, {"replicate": {"filter": {}, "devices": ["dp"]}}]}' > %t/tp.json
// RUN: piper-gen --model=moe --config=tiny-moe --dtype=f64 --mesh=dp=1 --batch=2 -o %t/moe2.mlir
// RUN: piper-interp %t/moe2.mlir --steps=5 --optimizer=adamw --params-out=%t/moe2.params > %t/moe2.txt
// RUN: piper-gen --model=moe --config=tiny-moe --dtype=f64 --mesh=dp=1,tp=2 --batch=2 -o %t/moe.tp.mlir
// RUN: piper-compile %t/moe.tp.mlir --directives=%t/tp.json -o %t/moe.tp.plan
// RUN: %mpiexec -np 2 piper-run %t/moe.tp.plan --steps=5 --params-out=%t/moe.tp.params > %t/moe.tp.txt
// RUN: %numdiff %t/moe2.txt %t/moe.tp.txt && %numdiff %t/moe2.params %t/moe.tp.params

// The plans call nothing but the plan ABI (runtime/include/piper-rt/
// plan_abi.h), all of it defined by the runtime and exported by piper-run.
// RUN: nm -D --undefined-only %t/*.plan/*.so | grep -oE '\b(piper|_mlir)_[a-z0-9_]+' | sort -u > %t/abi-used.txt
// RUN: nm -D --defined-only piper-run | grep -oE '\b(piper|_mlir)_[a-z0-9_]+' | sort -u > %t/abi-defined.txt
// RUN: comm -23 %t/abi-used.txt %t/abi-defined.txt | count 0
// RUN: FileCheck %s --check-prefix=ABI --input-file=%t/abi-used.txt
// ABI: _mlir_memref_to_llvm_alloc
// ABI: piper_comm_all_reduce_f64
// ABI: piper_comm_iall_gather_f64
// ABI: piper_comm_irecv_f64
// ABI: piper_comm_ireduce_scatter_f64
// ABI: piper_comm_send_f64
// ABI: piper_comm_shard_f64
// ABI: piper_comm_sync_all
// ABI: piper_comm_wait
// ABI: piper_trace_begin
