// Training on text under mpiexec: the bundled corpus (see train-corpus.mlir)
// with ZeRO-1 over dp = 2, each replica reading its rows of the global batch
// of 4 sequences, matches the interpreter's losses and final parameters.
// REQUIRES: mpi
// RUN: rm -rf %t && mkdir -p %t
// RUN: piper-gen --model=gpt --config=tiny-gpt --vocab=256 --seq=16 --dtype=f64 --mesh=dp=1 --batch=4 -o %t/gpt.mlir
// RUN: piper-interp %t/gpt.mlir --steps=8 --optimizer=adamw --lr=0.01 --data=%piper_src_root/data/corpus/sonnets.txt --params-out=%t/gpt.params > %t/gpt.txt
// RUN: echo '{"mesh": "mesh", "directives": [{"replicate": {"filter": {}, "devices": ["dp"], "zero": 1}}]}' > %t/zero1.json
// RUN: piper-gen --model=gpt --config=tiny-gpt --vocab=256 --seq=16 --dtype=f64 --mesh=dp=2 --batch=2 -o %t/dp.mlir
// RUN: piper-compile %t/dp.mlir --directives=%t/zero1.json --lr=0.01 -o %t/dp.plan
// RUN: %mpiexec -np 2 piper-run %t/dp.plan --steps=8 --data=%piper_src_root/data/corpus/sonnets.txt --params-out=%t/dp.params > %t/dp.txt
// RUN: %numdiff %t/gpt.txt %t/dp.txt && %numdiff %t/gpt.params %t/dp.params
