// The first multi-rank runs: tiny MLP, GPT and MoE in f64 cut into two
// pipeline stages (--pp=2), one device each (mesh pp=2), 1F1B over 2
// microbatches (and a 4-layer MLP in 4 stages, 1F1B over 4 microbatches),
// compiled into one shared object per stage and trained for 5 AdamW steps
// by `mpiexec -np 2 piper-run`. Stage 0 sends activations forward and
// receives gradients back through the piper_rt_* runtime; the last stage's
// rank sends the loss to rank 0, which prints it. The losses match the
// serial interpreter on the unsplit model at the same global batch to 1e-9.
// A wrong rank count fails with the runtime's message.
// REQUIRES: mpi
// RUN: rm -rf %t && mkdir -p %t
// RUN: echo '{"mesh": "mesh", "directives": [{"split": {"filter": {}, "n": 2}}, {"place": {"filter": {"PP": 0}, "devices": {"pp": 0}, "stream": "pp"}}, {"place": {"filter": {"PP": 1}, "devices": {"pp": 1}, "stream": "pp"}}, {"schedule": {"name": "1f1b"}}]}' > %t/pp2.json

// MLP.
// RUN: piper-gen --model=mlp --config=tiny-mlp --dtype=f64 --mesh=dp=1 -o %t/mlp.mlir
// RUN: piper-interp %t/mlp.mlir --steps=5 --optimizer=adamw --params-out=%t/mlp.interp.params > %t/mlp.interp.txt
// RUN: piper-gen --model=mlp --config=tiny-mlp --dtype=f64 --pp=2 --mesh=pp=2 --batch=2 -o %t/mlp.pp.mlir
// RUN: piper-compile %t/mlp.pp.mlir --directives=%t/pp2.json -o %t/mlp.pp2.plan
// RUN: FileCheck %s --check-prefix=PLAN --input-file=%t/mlp.pp2.plan/plan.json
// RUN: %mpiexec -np 2 piper-run %t/mlp.pp2.plan --steps=5 --log=%t/mlp.jsonl --params-out=%t/mlp.pp2.params > %t/mlp.pp2.txt
// RUN: %numdiff %t/mlp.interp.txt %t/mlp.pp2.txt
// RUN: %numdiff %t/mlp.interp.params %t/mlp.pp2.params
// RUN: FileCheck %s --input-file=%t/mlp.pp2.txt
// RUN: FileCheck %s --check-prefix=LOG --input-file=%t/mlp.jsonl
// A rank that dies mid-job (SIGKILL as step 2 starts, on either rank)
// stops the whole job with a non-zero exit, at once: not by the timeout
// (124), and without printing later steps.
// RUN: sh -c '%mpiexec -np 2 piper-run %t/mlp.pp2.plan --steps=5 --kill-rank=1 --kill-at-step=2 > %t/kill1.txt 2>&1; rc=$?; echo "exit $rc" >> %t/kill1.txt; test $rc -ne 0 && test $rc -ne 124'
// RUN: FileCheck %s --check-prefix=KILL --input-file=%t/kill1.txt
// RUN: sh -c '%mpiexec -np 2 piper-run %t/mlp.pp2.plan --steps=5 --kill-rank=0 --kill-at-step=3 > %t/kill0.txt 2>&1; rc=$?; echo "exit $rc" >> %t/kill0.txt; test $rc -ne 0 && test $rc -ne 124'
// RUN: FileCheck %s --check-prefix=KILL0 --input-file=%t/kill0.txt

// The timeline: --trace writes one Chrome trace merged on rank 0, with a
// span per launch on each rank's "compute" row (the lowering's trace hooks)
// beside the runtime's communication spans; --progress prints the time per
// step and the ETA on stderr (stdout keeps the losses alone).
// RUN: %mpiexec -np 2 piper-run %t/mlp.pp2.plan --steps=2 --trace=%t/mlp.trace.json --progress > %t/trace.out 2> %t/trace.err
// RUN: FileCheck %s --check-prefix=TRACE --input-file=%t/mlp.trace.json
// RUN: FileCheck %s --check-prefix=PROGRESS --input-file=%t/trace.err
// RUN: FileCheck %s --check-prefix=TRACEOUT --input-file=%t/trace.out

// GPT.
// RUN: piper-gen --model=gpt --config=tiny-gpt --dtype=f64 --mesh=dp=1 -o %t/gpt.mlir
// RUN: piper-interp %t/gpt.mlir --steps=5 --optimizer=adamw --params-out=%t/gpt.interp.params > %t/gpt.interp.txt
// RUN: piper-gen --model=gpt --config=tiny-gpt --dtype=f64 --pp=2 --mesh=pp=2 --batch=1 -o %t/gpt.pp.mlir
// RUN: piper-compile %t/gpt.pp.mlir --directives=%t/pp2.json -o %t/gpt.pp2.plan
// RUN: %mpiexec -np 2 piper-run %t/gpt.pp2.plan --steps=5 --params-out=%t/gpt.pp2.params > %t/gpt.pp2.txt
// RUN: %numdiff %t/gpt.interp.txt %t/gpt.pp2.txt
// RUN: %numdiff %t/gpt.interp.params %t/gpt.pp2.params

// MoE (its expert chunks stay on their stage: no expert parallelism yet).
// RUN: piper-gen --model=moe --config=tiny-moe --dtype=f64 --mesh=dp=1 -o %t/moe.mlir
// RUN: piper-interp %t/moe.mlir --steps=5 --optimizer=adamw --params-out=%t/moe.interp.params > %t/moe.interp.txt
// RUN: piper-gen --model=moe --config=tiny-moe --dtype=f64 --pp=2 --mesh=pp=2 --batch=1 -o %t/moe.pp.mlir
// RUN: piper-compile %t/moe.pp.mlir --directives=%t/pp2.json -o %t/moe.pp2.plan
// RUN: %mpiexec -np 2 piper-run %t/moe.pp2.plan --steps=5 --params-out=%t/moe.pp2.params > %t/moe.pp2.txt
// RUN: %numdiff %t/moe.interp.txt %t/moe.pp2.txt
// RUN: %numdiff %t/moe.interp.params %t/moe.pp2.params

// PP4 on 4 ranks: the loss travels from rank 3 to rank 0.
// RUN: echo '{"mesh": "mesh", "directives": [{"split": {"filter": {}, "n": 4}}, {"place": {"filter": {"PP": 0}, "devices": {"pp": 0}, "stream": "pp"}}, {"place": {"filter": {"PP": 1}, "devices": {"pp": 1}, "stream": "pp"}}, {"place": {"filter": {"PP": 2}, "devices": {"pp": 2}, "stream": "pp"}}, {"place": {"filter": {"PP": 3}, "devices": {"pp": 3}, "stream": "pp"}}, {"schedule": {"name": "1f1b"}}]}' > %t/pp4.json
// RUN: piper-gen --model=mlp --config=tiny-mlp --layers=4 --dtype=f64 --mesh=dp=1 -o %t/mlp4.mlir
// RUN: piper-interp %t/mlp4.mlir --steps=5 --optimizer=adamw --params-out=%t/mlp4.interp.params > %t/mlp4.interp.txt
// RUN: piper-gen --model=mlp --config=tiny-mlp --layers=4 --pp=4 --dtype=f64 --mesh=pp=4 --batch=1 -o %t/mlp4.pp.mlir
// RUN: piper-compile %t/mlp4.pp.mlir --directives=%t/pp4.json -o %t/mlp4.pp4.plan
// RUN: %mpiexec -np 4 piper-run %t/mlp4.pp4.plan --steps=5 --params-out=%t/mlp4.pp4.params > %t/mlp4.pp4.txt
// RUN: %numdiff %t/mlp4.interp.txt %t/mlp4.pp4.txt
// RUN: %numdiff %t/mlp4.interp.params %t/mlp4.pp4.params

// The rank count must be the mesh's device count.
// RUN: not %mpiexec -np 3 piper-run %t/mlp.pp2.plan --steps=1 > %t/np3.txt 2>&1
// RUN: FileCheck %s --check-prefix=NP --input-file=%t/np3.txt

// PLAN: "role": {
// PLAN-NEXT: "pp": 0
// PLAN: "role": {
// PLAN-NEXT: "pp": 1
// CHECK: step 1 loss
// CHECK-NOT: step 1 loss
// CHECK: step 5 loss
// CHECK-NOT: step
// LOG: {"step": 1, "loss": {{.*}}, "seconds": {{.*}}}
// LOG: {"step": 5, "loss":
// NP: piper-run: piper-rt: invalid argument: rank 0: the mesh (pp=2) has 2 devices but MPI started 3 ranks; run with 2 ranks (mpirun -np 2, or srun -n 2) (at {{.*}}Context.cpp:{{[0-9]+}})

// TRACE: {"displayTimeUnit":"ms","traceEvents":[
// TRACE-DAG: {"name":"thread_name","ph":"M","pid":0,"tid":{{[0-9]+}},"args":{"name":"compute"}}
// TRACE-DAG: {"name":"thread_name","ph":"M","pid":1,"tid":{{[0-9]+}},"args":{"name":"compute"}}
// TRACE-DAG: {"name":"F{PP=0,MB=0}","cat":"compute","ph":"X","pid":0,
// TRACE-DAG: {"name":"BW{PP=1,MB=1}","cat":"compute","ph":"X","pid":1,
// TRACE-DAG: {"name":"UPD{PP=0}","cat":"compute","ph":"X","pid":0,
// TRACE-DAG: "cat":"comm","ph":"X","pid":0,
// TRACE-DAG: "cat":"comm","ph":"X","pid":1,
// TRACEOUT: step 1 loss
// TRACEOUT-NEXT: step 2 loss
// TRACEOUT-NOT: piper-run
// PROGRESS: piper-run: step 1/2 {{.*}} s/step  ETA {{.*}} s
// PROGRESS-NEXT: piper-run: step 2/2 {{.*}} s/step  ETA 0 s

// KILL: killed at step 2 (--kill-rank)
// KILL-NOT: step 2 loss
// KILL: exited on signal 9
// KILL0-DAG: step 2 loss
// KILL0-DAG: killed at step 3 (--kill-rank)
// KILL0-NOT: step 3 loss
// KILL0: exited on signal 9
