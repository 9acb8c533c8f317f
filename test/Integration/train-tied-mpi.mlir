// A GPT whose LM head reads the embedding table (piper-gen
// --tie-embeddings): embed.weight is used by the first and the last
// pipeline stage. Partitioning gives each stage a copy of the sum of the
// two gradient contributions (exchanged by transfers), of its accumulation
// over microbatches and of the AdamW update, and both write the updated
// table, so neither stage reads a stale value. Under PP2 1F1B (the two
// users on two ranks) and DualPipeV on 2 ranks (stages 0 and 3 folded onto
// rank 0), and PP2 x DP2 with ZeRO-1, 5 f64 steps match the serial
// interpreter on the unsplit model, losses and every parameter.
// REQUIRES: mpi
// RUN: rm -rf %t && mkdir -p %t

// PP2, 1F1B, 2 microbatches.
// RUN: echo '{"mesh": "mesh", "directives": [{"split": {"filter": {}, "n": 2}}, {"place": {"filter": {"PP": 0}, "devices": {"pp": 0}, "stream": "pp"}}, {"place": {"filter": {"PP": 1}, "devices": {"pp": 1}, "stream": "pp"}}, {"schedule": {"name": "1f1b"}}]}' > %t/pp2.json
// RUN: piper-gen --model=gpt --config=tiny-gpt --tie-embeddings --dtype=f64 --mesh=dp=1 -o %t/gpt.mlir
// RUN: piper-interp %t/gpt.mlir --steps=5 --optimizer=adamw --params-out=%t/gpt.interp.params > %t/gpt.interp.txt
// RUN: piper-gen --model=gpt --config=tiny-gpt --tie-embeddings --dtype=f64 --pp=2 --mesh=pp=2 --batch=1 -o %t/gpt.pp.mlir
// RUN: piper-compile %t/gpt.pp.mlir --directives=%t/pp2.json --emit=programs -o %t/gpt.pp2.programs.mlir
// RUN: FileCheck %s --check-prefix=PROGRAMS --input-file=%t/gpt.pp2.programs.mlir
// RUN: piper-compile %t/gpt.pp.mlir --directives=%t/pp2.json -o %t/gpt.pp2.plan
// RUN: %mpiexec -np 2 piper-run %t/gpt.pp2.plan --steps=5 --params-out=%t/gpt.pp2.params > %t/gpt.pp2.txt
// RUN: %numdiff %t/gpt.interp.txt %t/gpt.pp2.txt
// RUN: %numdiff %t/gpt.interp.params %t/gpt.pp2.params
// RUN: FileCheck %s --input-file=%t/gpt.pp2.txt

// DualPipeV on 2 ranks: 4 layers in 4 stages folded into a V (rank r holds
// stages r and 3 - r), 4 microbatches.
// RUN: echo '{"mesh": "mesh", "directives": [{"split": {"filter": {}, "n": 4}}, {"place": {"filter": {"PP": 0}, "devices": {"pp": 0}}}, {"place": {"filter": {"PP": 1}, "devices": {"pp": 1}}}, {"place": {"filter": {"PP": 2}, "devices": {"pp": 1}}}, {"place": {"filter": {"PP": 3}, "devices": {"pp": 0}}}, {"schedule": {"name": "dualpipev"}}]}' > %t/dpv.json
// RUN: piper-gen --model=gpt --config=tiny-gpt --tie-embeddings --layers=4 --batch=4 --dtype=f64 --mesh=dp=1 -o %t/gpt4.mlir
// RUN: piper-interp %t/gpt4.mlir --steps=5 --optimizer=adamw --params-out=%t/gpt4.interp.params > %t/gpt4.interp.txt
// RUN: piper-gen --model=gpt --config=tiny-gpt --tie-embeddings --layers=4 --pp=4 --batch=1 --dtype=f64 --mesh=pp=2 -o %t/gpt4.pp.mlir
// RUN: piper-compile %t/gpt4.pp.mlir --directives=%t/dpv.json -o %t/gpt4.dpv.plan
// RUN: %mpiexec -np 2 piper-run %t/gpt4.dpv.plan --steps=5 --params-out=%t/gpt4.dpv.params > %t/gpt4.dpv.txt
// RUN: %numdiff %t/gpt4.interp.txt %t/gpt4.dpv.txt
// RUN: %numdiff %t/gpt4.interp.params %t/gpt4.dpv.params

// PP2 x DP2 on 4 ranks, ZeRO-1: each stage's copy of the tied gradient is
// reduce-scattered over dp, updated in shards and all-gathered, on both
// stages; global batch 2 replicas x 2 microbatches x 1.
// RUN: echo '{"mesh": "mesh", "directives": [{"split": {"filter": {}, "n": 2}}, {"place": {"filter": {"PP": 0}, "devices": {"pp": 0}, "stream": "pp"}}, {"place": {"filter": {"PP": 1}, "devices": {"pp": 1}, "stream": "pp"}}, {"replicate": {"filter": {}, "devices": ["dp"], "zero": 1}}, {"schedule": {"name": "1f1b"}}]}' > %t/ppdp.json
// RUN: piper-gen --model=gpt --config=tiny-gpt --tie-embeddings --batch=4 --dtype=f64 --mesh=dp=1 -o %t/gptb4.mlir
// RUN: piper-interp %t/gptb4.mlir --steps=5 --optimizer=adamw --params-out=%t/gptb4.interp.params > %t/gptb4.interp.txt
// RUN: piper-gen --model=gpt --config=tiny-gpt --tie-embeddings --pp=2 --batch=1 --dtype=f64 --mesh=dp=2,pp=2 -o %t/gpt.ppdp.mlir
// RUN: piper-compile %t/gpt.ppdp.mlir --directives=%t/ppdp.json -o %t/gpt.ppdp.plan
// RUN: %mpiexec -np 4 piper-run %t/gpt.ppdp.plan --steps=5 --params-out=%t/gpt.ppdp.params > %t/gpt.ppdp.txt
// RUN: %numdiff %t/gptb4.interp.txt %t/gpt.ppdp.txt
// RUN: %numdiff %t/gptb4.interp.params %t/gpt.ppdp.params

// The tied table's update runs on both stages, each summing the two
// contributions in the same order, and both write it (result 1).
// PROGRAMS-LABEL: piper.program @step.pp0
// PROGRAMS: %[[IN0:.*]] = piper.input 0 : tensor<32x16xf64>
// PROGRAMS: piper.recv "BW{PP=1,MB=0}#0->{pp=0}" from @step.pp1
// PROGRAMS: piper.send "BW{PP=0,MB=0}#9->{pp=1}"
// PROGRAMS: piper.launch "BW{MB=0}@{pp=0}" @step.BW(
// PROGRAMS: piper.sum "accumulate(BW{}#0)@{pp=0}"
// PROGRAMS: %[[UPD0:.*]]:4 = piper.launch "UPD{}" @step.UPD(%{{.*}}, %[[IN0]],
// PROGRAMS: piper.output 1 %[[UPD0]]#1 : tensor<32x16xf64>
// PROGRAMS-LABEL: piper.program @step.pp1
// PROGRAMS: %[[IN1:.*]] = piper.input 0 : tensor<32x16xf64>
// PROGRAMS: piper.send "BW{PP=1,MB=0}#0->{pp=0}"
// PROGRAMS: piper.recv "BW{PP=0,MB=0}#9->{pp=1}" from @step.pp0
// PROGRAMS: piper.launch "BW{MB=0}" @step.BW(
// PROGRAMS: piper.sum "accumulate(BW{}#0)"
// PROGRAMS: %[[UPD1:.*]]:4 = piper.launch "UPD{}@{pp=1}" @step.UPD(%{{.*}}, %[[IN1]],
// PROGRAMS: piper.output 1 %[[UPD1]]#1 : tensor<32x16xf64>

// CHECK: step 1 loss
// CHECK: step 5 loss
