// Gradient-norm clipping counts a parameter tied across pipeline stages
// once. The tied embedding/LM-head table of a GPT (piper-gen
// --tie-embeddings) is updated on both stages that read it (a copy of its
// update per stage, TieParameters.cpp); both copies hold the same
// gradient, so only the original adds it to the global norm
// (ClipGradNorm.cpp skips launches marked `copy_of`). Under PP2 1F1B, PP2
// x DP2 ZeRO-1 and DualPipeV on 2 ranks, 5 f64 AdamW steps clipped to 0.5
// (the gradients' norm is about 1, so every step clips) give the serial
// interpreter's losses and final parameters to 1e-10; the logs show that
// every step clipped.
// REQUIRES: mpi
// RUN: rm -rf %t && mkdir -p %t
// RUN: echo "--lr=0.01 --warmup-steps=2 --lr-schedule=cosine --min-lr=0.001 --clip-grad-norm=0.5" > %t/hyper

// PP2, 1F1B, 2 microbatches.
// RUN: echo '{"mesh": "mesh", "directives": [{"split": {"filter": {}, "n": 2}}, {"place": {"filter": {"PP": 0}, "devices": {"pp": 0}, "stream": "pp"}}, {"place": {"filter": {"PP": 1}, "devices": {"pp": 1}, "stream": "pp"}}, {"schedule": {"name": "1f1b"}}]}' > %t/pp2.json
// RUN: piper-gen --model=gpt --config=tiny-gpt --tie-embeddings --dtype=f64 --mesh=dp=1 -o %t/gpt.mlir
// RUN: piper-interp %t/gpt.mlir --steps=5 $(cat %t/hyper) --params-out=%t/gpt.interp.params > %t/gpt.interp.txt
// RUN: piper-gen --model=gpt --config=tiny-gpt --tie-embeddings --dtype=f64 --pp=2 --mesh=pp=2 --batch=1 -o %t/gpt.pp.mlir
// RUN: piper-compile %t/gpt.pp.mlir --directives=%t/pp2.json --emit=programs -o %t/gpt.pp2.programs.mlir
// RUN: FileCheck %s --check-prefix=PROGRAMS --input-file=%t/gpt.pp2.programs.mlir
// RUN: piper-compile %t/gpt.pp.mlir --directives=%t/pp2.json --clip-grad-norm=1 -o %t/gpt.pp2.plan
// RUN: %mpiexec -np 2 piper-run %t/gpt.pp2.plan --steps=5 $(cat %t/hyper) --log=%t/gpt.pp2.jsonl --params-out=%t/gpt.pp2.params > %t/gpt.pp2.txt
// RUN: %numdiff --rel=1e-10 %t/gpt.interp.txt %t/gpt.pp2.txt
// RUN: %numdiff --rel=1e-10 %t/gpt.interp.params %t/gpt.pp2.params
// RUN: awk -F'"grad_norm": ' '{ split($2, a, ","); if (a[1] <= 0.5) exit 1 }' %t/gpt.pp2.jsonl

// PP2 x DP2 on 4 ranks, ZeRO-1: each stage's copy is reduce-scattered over
// dp; the original's shards alone cover the table once.
// RUN: echo '{"mesh": "mesh", "directives": [{"split": {"filter": {}, "n": 2}}, {"place": {"filter": {"PP": 0}, "devices": {"pp": 0}, "stream": "pp"}}, {"place": {"filter": {"PP": 1}, "devices": {"pp": 1}, "stream": "pp"}}, {"replicate": {"filter": {}, "devices": ["dp"], "zero": 1}}, {"schedule": {"name": "1f1b"}}]}' > %t/ppdp.json
// RUN: piper-gen --model=gpt --config=tiny-gpt --tie-embeddings --batch=4 --dtype=f64 --mesh=dp=1 -o %t/gptb4.mlir
// RUN: piper-interp %t/gptb4.mlir --steps=5 $(cat %t/hyper) --params-out=%t/gptb4.interp.params > %t/gptb4.interp.txt
// RUN: piper-gen --model=gpt --config=tiny-gpt --tie-embeddings --pp=2 --batch=1 --dtype=f64 --mesh=dp=2,pp=2 -o %t/gpt.ppdp.mlir
// RUN: piper-compile %t/gpt.ppdp.mlir --directives=%t/ppdp.json --clip-grad-norm=1 -o %t/gpt.ppdp.plan
// RUN: %mpiexec -np 4 piper-run %t/gpt.ppdp.plan --steps=5 $(cat %t/hyper) --log=%t/gpt.ppdp.jsonl --params-out=%t/gpt.ppdp.params > %t/gpt.ppdp.txt
// RUN: %numdiff --rel=1e-10 %t/gptb4.interp.txt %t/gpt.ppdp.txt
// RUN: %numdiff --rel=1e-10 %t/gptb4.interp.params %t/gpt.ppdp.params
// RUN: awk -F'"grad_norm": ' '{ split($2, a, ","); if (a[1] <= 0.5) exit 1 }' %t/gpt.ppdp.jsonl

// DualPipeV on 2 ranks: stages 0 and 3 (the table's two users) both on
// rank 0, so the copy is on the same rank as the original.
// RUN: echo '{"mesh": "mesh", "directives": [{"split": {"filter": {}, "n": 4}}, {"place": {"filter": {"PP": 0}, "devices": {"pp": 0}}}, {"place": {"filter": {"PP": 1}, "devices": {"pp": 1}}}, {"place": {"filter": {"PP": 2}, "devices": {"pp": 1}}}, {"place": {"filter": {"PP": 3}, "devices": {"pp": 0}}}, {"schedule": {"name": "dualpipev"}}]}' > %t/dpv.json
// RUN: piper-gen --model=gpt --config=tiny-gpt --tie-embeddings --layers=4 --batch=4 --dtype=f64 --mesh=dp=1 -o %t/gpt4.mlir
// RUN: piper-interp %t/gpt4.mlir --steps=5 $(cat %t/hyper) --params-out=%t/gpt4.interp.params > %t/gpt4.interp.txt
// RUN: piper-gen --model=gpt --config=tiny-gpt --tie-embeddings --layers=4 --pp=4 --batch=1 --dtype=f64 --mesh=pp=2 -o %t/gpt4.pp.mlir
// RUN: piper-compile %t/gpt4.pp.mlir --directives=%t/dpv.json --clip-grad-norm=1 -o %t/gpt4.dpv.plan
// RUN: %mpiexec -np 2 piper-run %t/gpt4.dpv.plan --steps=5 $(cat %t/hyper) --log=%t/gpt4.dpv.jsonl --params-out=%t/gpt4.dpv.params > %t/gpt4.dpv.txt
// RUN: %numdiff --rel=1e-10 %t/gpt4.interp.txt %t/gpt4.dpv.txt
// RUN: %numdiff --rel=1e-10 %t/gpt4.interp.params %t/gpt4.dpv.params
// RUN: awk -F'"grad_norm": ' '{ split($2, a, ","); if (a[1] <= 0.5) exit 1 }' %t/gpt4.dpv.jsonl

// The copy of the table's update carries the original's name.
// PROGRAMS-LABEL: piper.program @step.pp1
// PROGRAMS: piper.launch "UPD{}@{pp=1}" @step.UPD({{.*}}) on "compute" {copy_of = "UPD{}"}
