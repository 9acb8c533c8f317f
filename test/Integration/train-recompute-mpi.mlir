// Activation recomputation (transform.piper.recompute, JSON "recompute")
// end to end: tiny GPT and MoE in f64 with recompute on some chunks under
// serial (one rank), DP2 (ZeRO-0 and ZeRO-3) and PP2 1F1B, compiled by
// piper-compile (the R launches run the forward kernels again before the
// backward) and trained for 3 AdamW steps by piper-run; losses and final
// parameters match the serial interpreter at the same global batch
// (%numdiff, 1e-9). Then the memory plan and the measured peak bytes of a
// larger GPT under PP2 1F1B drop by about one microbatch of stage 0's
// stored activations, and the simulator's FLOPs and step time grow by the
// recomputed forwards (docs/Memory.md, "Recomputation").
// REQUIRES: mpi
// RUN: rm -rf %t && mkdir -p %t
// RUN: echo '{"mesh": "mesh", "directives": [{"recompute": {"filter": {"PP": 0}}}]}' > %t/serial.json
// RUN: echo '{"mesh": "mesh", "directives": [{"replicate": {"filter": {}, "devices": ["dp"]}}, {"recompute": {"filter": {"PP": 1}}}]}' > %t/dp.json
// RUN: echo '{"mesh": "mesh", "directives": [{"replicate": {"filter": {}, "devices": ["dp"], "zero": 3}}, {"recompute": {"filter": {}}}]}' > %t/dpz3.json
// RUN: echo '{"mesh": "mesh", "directives": [{"split": {"filter": {}, "n": 4}}, {"place": {"filter": {"PP": 0}, "devices": {"pp": 0}, "stream": "pp"}}, {"place": {"filter": {"PP": 1}, "devices": {"pp": 1}, "stream": "pp"}}, {"schedule": {"name": "1f1b"}}]}' > %t/pp.json
// RUN: echo '{"mesh": "mesh", "directives": [{"split": {"filter": {}, "n": 4}}, {"place": {"filter": {"PP": 0}, "devices": {"pp": 0}, "stream": "pp"}}, {"place": {"filter": {"PP": 1}, "devices": {"pp": 1}, "stream": "pp"}}, {"schedule": {"name": "1f1b"}}, {"recompute": {"filter": {"PP": 0}}}]}' > %t/ppr.json
// RUN: echo '{"mesh": "mesh", "directives": [{"split": {"filter": {}, "n": 4}}, {"place": {"filter": {"PP": 0}, "devices": {"pp": 0}, "stream": "pp"}}, {"place": {"filter": {"PP": 1}, "devices": {"pp": 1}, "stream": "pp"}}, {"schedule": {"name": "1f1b"}}, {"recompute": {"filter": {}, "ops": ["attention"]}}]}' > %t/ppattn.json

// GPT and MoE (two chunks, PP = 0 and 1), reference at global batch 4.
// RUN: for m in gpt moe; do piper-gen --model=$m --config=tiny-$m --dtype=f64 --pp=2 --mesh=dp=1 --batch=4 -o %t/$m.ref.mlir && piper-interp %t/$m.ref.mlir --steps=3 --optimizer=adamw --params-out=%t/$m.ref.params > %t/$m.ref.txt || exit 1; done
// Serial: one rank recomputes the first chunk.
// RUN: for m in gpt moe; do piper-compile %t/$m.ref.mlir --directives=%t/serial.json -o %t/$m.serial.plan && piper-run %t/$m.serial.plan --steps=3 --params-out=%t/$m.serial.params > %t/$m.serial.txt && %numdiff %t/$m.ref.txt %t/$m.serial.txt && %numdiff %t/$m.ref.params %t/$m.serial.params || exit 1; done
// RUN: piper-compile %t/gpt.ref.mlir --directives=%t/serial.json --emit=programs -o %t/gpt.serial.programs.mlir
// RUN: FileCheck %s --check-prefix=SERIAL --input-file=%t/gpt.serial.programs.mlir
// DP2 (ZeRO-0, the second chunk; ZeRO-3, every chunk).
// RUN: for m in gpt moe; do piper-gen --model=$m --config=tiny-$m --dtype=f64 --pp=2 --mesh=dp=2 --batch=2 -o %t/$m.dp.mlir || exit 1; for s in dp dpz3; do piper-compile %t/$m.dp.mlir --directives=%t/$s.json -o %t/$m.$s.plan && %mpiexec -np 2 piper-run %t/$m.$s.plan --steps=3 --params-out=%t/$m.$s.params > %t/$m.$s.txt && %numdiff %t/$m.ref.txt %t/$m.$s.txt && %numdiff %t/$m.ref.params %t/$m.$s.params || exit 1; done; done
// PP2 1F1B over 4 microbatches: stage 0 recomputed; every chunk's attention
// recomputed (selective).
// RUN: for m in gpt moe; do piper-gen --model=$m --config=tiny-$m --dtype=f64 --pp=2 --mesh=pp=2 --batch=1 -o %t/$m.pp.mlir || exit 1; for s in ppr ppattn; do piper-compile %t/$m.pp.mlir --directives=%t/$s.json -o %t/$m.$s.plan && %mpiexec -np 2 piper-run %t/$m.$s.plan --steps=3 --params-out=%t/$m.$s.params > %t/$m.$s.txt && %numdiff %t/$m.ref.txt %t/$m.$s.txt && %numdiff %t/$m.ref.params %t/$m.$s.params || exit 1; done; done

// SERIAL:      piper.launch "F{PP=0}" @step.F.PP0.kept
// SERIAL:      piper.launch "F{PP=1}" @step.F.PP1
// SERIAL:      piper.launch "R{PP=0}" @step.F.PP0.R
// SERIAL-NEXT: piper.launch "BI{PP=1}" @step.BI.PP1
// SERIAL:      piper.launch "BI{PP=0}" @step.BI.PP0

// Memory: a 4-layer GPT, sequence 32, 8 sequences per microbatch, PP2 1F1B
// over 4 microbatches. Rank 0 holds two microbatches' activations at its
// peak (BI of microbatch 1); recomputing stage 0 keeps one: the plan's
// peak drops by 917504 bytes (one microbatch of stage 0's stored
// activations, 2775192 -> 1857688) and the measured peak by about as much.
// Rank 1 is unchanged.
// RUN: piper-gen --model=gpt --config=tiny-gpt --dtype=f64 --layers=4 --seq=32 --pp=2 --mesh=pp=2 --batch=8 -o %t/big.mlir
// RUN: for s in pp ppr; do piper-compile %t/big.mlir --directives=%t/$s.json -o %t/big.$s.plan && piper-compile %t/big.mlir --directives=%t/$s.json --emit=programs -o %t/big.$s.programs.mlir && piper-opt %t/big.$s.programs.mlir --piper-memory-plan -o /dev/null > %t/big.$s.mem.txt && %mpiexec -np 2 piper-run %t/big.$s.plan --steps=2 --peak-bytes > %t/big.$s.run.txt || exit 1; done
// RUN: FileCheck %s --check-prefix=MEM --input-file=%t/big.pp.mem.txt
// RUN: FileCheck %s --check-prefix=MEMR --input-file=%t/big.ppr.mem.txt
// RUN: python3 %S/../utils/peak-drop.py %t/big.pp.mem.txt %t/big.pp.run.txt %t/big.ppr.mem.txt %t/big.ppr.run.txt --group=pp=0 --rank=0 --tolerance=0.1 --min-drop=900000 | FileCheck %s --check-prefix=DROP
// RUN: python3 %S/../utils/peak-drop.py %t/big.pp.mem.txt %t/big.pp.run.txt %t/big.ppr.mem.txt %t/big.ppr.run.txt --group=pp=1 --rank=1 --tolerance=0.1 --min-drop=0 | FileCheck %s --check-prefix=DROP1
// MEM:  pp=0: peak 2775192 at step 14 of 44 'BI{PP=0,MB=1}'
// MEM:  activations 1835008 (2 microbatches)
// MEMR: pp=0: peak 1857688 at step 16 of 48 'BI{PP=0,MB=1}'
// MEMR: activations 917504 (1 microbatches)
// DROP: pp=0 (rank 0): predicted drop 917504 measured drop {{[0-9]+}} ratio {{0\.9[0-9]*|1\.0[0-9]*}} ok
// DROP1: pp=1 (rank 1): predicted drop 0 measured drop 0 ratio 0.000 ok

// The simulator: stage 0 runs its forward twice per microbatch, 8.903e+07
// -> 1.014e+08 FLOP per step; recomputing both stages also lengthens the
// step (0.051 -> 0.057 ms on the default A100 model).
// RUN: echo '{"mesh": "mesh", "directives": [{"split": {"filter": {}, "n": 4}}, {"place": {"filter": {"PP": 0}, "devices": {"pp": 0}, "stream": "pp"}}, {"place": {"filter": {"PP": 1}, "devices": {"pp": 1}, "stream": "pp"}}, {"schedule": {"name": "1f1b"}}, {"recompute": {"filter": {}}}]}' > %t/ppall.json
// RUN: piper-compile %t/big.mlir --directives=%t/ppall.json --emit=programs -o %t/big.ppall.programs.mlir
// RUN: for s in pp ppr ppall; do piper-opt %t/big.$s.programs.mlir --piper-simulate -o /dev/null || exit 1; done > %t/sim.txt
// RUN: FileCheck %s --check-prefix=SIM --input-file=%t/sim.txt
// SIM: step time 0.051 ms
// SIM: 8.903e+07 FLOP/step
// SIM: step time 0.051 ms
// SIM: 1.014e+08 FLOP/step
// SIM: step time 0.057 ms
// SIM: 1.159e+08 FLOP/step
