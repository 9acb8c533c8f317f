// The strategy piper-search chooses for a tiny model on a tiny mesh
// compiles with piper-compile as written (its JSON directives and its
// model) and trains under `mpiexec -np 4 piper-run` exactly as the serial
// interpreter does at the same global batch: the loss of every step and
// every final parameter agree to 1e-9 (%numdiff). Three searches:
// tiny-gpt on 2 nodes x 2 devices (PP2 x TP2, the tensor-parallel pairs
// inside the nodes), tiny-moe on 4 nodes of one device (PP2 x DP2), and
// tiny-gpt on 4 nodes under a 120 KiB budget that ZeRO-0 exceeds (PP2 x
// DP2 with ZeRO-1).
// REQUIRES: mpi
// RUN: rm -rf %t && mkdir -p %t

// RUN: piper-search --config=tiny-gpt --mesh=2x2 --dtype=f64 --global-batch=4 -o %t/gpt.json --model-out=%t/gpt.mlir | FileCheck %s --check-prefix=GPT
// RUN: piper-compile %t/gpt.mlir --directives=%t/gpt.json -o %t/gpt.plan
// RUN: %mpiexec -np 4 piper-run %t/gpt.plan --steps=3 --params-out=%t/gpt.params > %t/gpt.txt
// RUN: piper-gen --model=gpt --config=tiny-gpt --dtype=f64 --batch=4 -o %t/gpt.serial.mlir
// RUN: piper-interp %t/gpt.serial.mlir --steps=3 --optimizer=adamw --params-out=%t/gpt.serial.params > %t/gpt.serial.txt
// RUN: %numdiff %t/gpt.serial.txt %t/gpt.txt
// RUN: %numdiff %t/gpt.serial.params %t/gpt.params
// RUN: FileCheck %s --check-prefix=LOSS --input-file=%t/gpt.txt

// RUN: piper-search --config=tiny-moe --mesh=4x1 --dtype=f64 --global-batch=4 -o %t/moe.json --model-out=%t/moe.mlir | FileCheck %s --check-prefix=MOE
// RUN: piper-compile %t/moe.mlir --directives=%t/moe.json -o %t/moe.plan
// RUN: %mpiexec -np 4 piper-run %t/moe.plan --steps=3 --params-out=%t/moe.params > %t/moe.txt
// RUN: piper-gen --model=moe --config=tiny-moe --dtype=f64 --batch=4 -o %t/moe.serial.mlir
// RUN: piper-interp %t/moe.serial.mlir --steps=3 --optimizer=adamw --params-out=%t/moe.serial.params > %t/moe.serial.txt
// RUN: %numdiff %t/moe.serial.txt %t/moe.txt
// RUN: %numdiff %t/moe.serial.params %t/moe.params
// RUN: FileCheck %s --check-prefix=LOSS --input-file=%t/moe.txt

// RUN: piper-search --config=tiny-gpt --mesh=4x1 --dtype=f64 --global-batch=4 --memory-budget=120KiB -o %t/zero.json --model-out=%t/zero.mlir | FileCheck %s --check-prefix=ZERO
// RUN: piper-compile %t/zero.mlir --directives=%t/zero.json -o %t/zero.plan
// RUN: %mpiexec -np 4 piper-run %t/zero.plan --steps=3 --params-out=%t/zero.params > %t/zero.txt
// RUN: %numdiff %t/gpt.serial.txt %t/zero.txt
// RUN: %numdiff %t/gpt.serial.params %t/zero.params

// GPT: best: tp2 ep1 pp2 dp1 pp-in gpipe m1x4 z0
// MOE: best: tp1 ep1 pp2 dp2 pp-in gpipe m1x2 z0
// ZERO: rejected {{[0-9]+}} memory (planned peak)
// ZERO: best: tp1 ep1 pp2 dp2 pp-in gpipe m1x2 z1
// LOSS: step 1 loss
// LOSS: step 3 loss

// With --recompute every candidate is also tried with whole-chunk
// activation recomputation (after the schedule). Under a 650 KiB budget at
// global batch 32 on two ranks, 1F1B over 2 microbatches of 16 fits only
// with recompute and beats the 4-microbatch 1F1B that fits without it; the
// chosen strategy compiles and runs to the serial interpreter's losses.
// RUN: piper-search --config=tiny-gpt --mesh=1x2 --dtype=f64 --global-batch=32 --memory-budget=650KiB | FileCheck %s --check-prefix=NORC
// RUN: piper-search --config=tiny-gpt --mesh=1x2 --dtype=f64 --global-batch=32 --memory-budget=650KiB --recompute -o %t/rc.json --model-out=%t/rc.mlir | FileCheck %s --check-prefix=RC
// RUN: FileCheck %s --check-prefix=RCJSON --input-file=%t/rc.json
// RUN: piper-compile %t/rc.mlir --directives=%t/rc.json -o %t/rc.plan
// RUN: %mpiexec -np 2 piper-run %t/rc.plan --steps=3 --params-out=%t/rc.params > %t/rc.txt
// RUN: piper-gen --model=gpt --config=tiny-gpt --dtype=f64 --batch=32 -o %t/rc.serial.mlir
// RUN: piper-interp %t/rc.serial.mlir --steps=3 --optimizer=adamw --params-out=%t/rc.serial.params > %t/rc.serial.txt
// RUN: %numdiff %t/rc.serial.txt %t/rc.txt
// RUN: %numdiff %t/rc.serial.params %t/rc.params
// NORC: best: tp1 ep1 pp2 dp1 pp-in 1f1b m4x8 z0,
// RC: best: tp1 ep1 pp2 dp1 pp-in 1f1b m2x16 z0 recompute=full,
// RCJSON: {"schedule":{"name":"1f1b"}},
// RCJSON-NEXT: {"recompute":{}}
