// Held-out evaluation (--eval-data, --eval-every, --eval-batches): the mean
// loss over the held-out text's first N global batches at the current
// parameters, printed as `eval step S loss L ppl P` every K steps and after
// the last. Compiled plans run the step program on the held-out batch and
// drop its updates; the interpreter runs the forward. Serial, ZeRO-1 DP2
// and PP2 1F1B plans print what the serial interpreter prints (f64), and
// evaluating changes no training loss.
// REQUIRES: mpi
// RUN: rm -rf %t && mkdir -p %t
// RUN: head -c 2400 %piper_src_root/data/corpus/sonnets.txt > %t/train.txt
// RUN: tail -c 700 %piper_src_root/data/corpus/sonnets.txt > %t/heldout.txt
// RUN: piper-gen --model=gpt --config=tiny-gpt --vocab=256 --seq=16 --dtype=f64 --mesh=dp=1 --batch=4 -o %t/gpt.mlir
// RUN: piper-interp %t/gpt.mlir --steps=6 --optimizer=adamw --lr=0.01 --data=%t/train.txt --eval-data=%t/heldout.txt --eval-every=3 --eval-batches=2 > %t/interp.txt
// RUN: FileCheck %s --input-file=%t/interp.txt

// The serial plan, with and without evaluation.
// RUN: piper-compile %t/gpt.mlir --lr=0.01 -o %t/serial.plan
// RUN: piper-run %t/serial.plan --steps=6 --data=%t/train.txt --eval-data=%t/heldout.txt --eval-every=3 --eval-batches=2 --log=%t/serial.jsonl --plot=%t/serial.svg > %t/serial.txt
// RUN: %numdiff %t/interp.txt %t/serial.txt
// RUN: piper-run %t/serial.plan --steps=6 --data=%t/train.txt > %t/noeval.txt
// RUN: grep -v '^eval' %t/serial.txt > %t/serial-train.txt
// RUN: diff %t/serial-train.txt %t/noeval.txt
// RUN: FileCheck %s --check-prefix=LOG --input-file=%t/serial.jsonl
// RUN: FileCheck %s --check-prefix=SVG --input-file=%t/serial.svg

// ZeRO-1 over dp=2 (2 sequences per replica).
// RUN: echo '{"mesh": "mesh", "directives": [{"replicate": {"filter": {}, "devices": ["dp"], "zero": 1}}]}' > %t/zero1.json
// RUN: piper-gen --model=gpt --config=tiny-gpt --vocab=256 --seq=16 --dtype=f64 --mesh=dp=2 --batch=2 -o %t/dp.mlir
// RUN: piper-compile %t/dp.mlir --directives=%t/zero1.json --lr=0.01 -o %t/dp.plan
// RUN: %mpiexec -np 2 piper-run %t/dp.plan --steps=6 --data=%t/train.txt --eval-data=%t/heldout.txt --eval-every=3 --eval-batches=2 > %t/dp.txt
// RUN: %numdiff %t/interp.txt %t/dp.txt

// Two pipeline stages, 1F1B over 2 microbatches of 2 sequences.
// RUN: echo '{"mesh": "mesh", "directives": [{"split": {"filter": {}, "n": 2}}, {"place": {"filter": {"PP": 0}, "devices": {"pp": 0}, "stream": "pp"}}, {"place": {"filter": {"PP": 1}, "devices": {"pp": 1}, "stream": "pp"}}, {"schedule": {"name": "1f1b"}}]}' > %t/pp2.json
// RUN: piper-gen --model=gpt --config=tiny-gpt --vocab=256 --seq=16 --dtype=f64 --pp=2 --mesh=pp=2 --batch=2 -o %t/pp.mlir
// RUN: piper-compile %t/pp.mlir --directives=%t/pp2.json --lr=0.01 -o %t/pp.plan
// RUN: %mpiexec -np 2 piper-run %t/pp.plan --steps=6 --data=%t/train.txt --eval-data=%t/heldout.txt --eval-every=3 --eval-batches=2 > %t/pp.txt
// RUN: %numdiff %t/interp.txt %t/pp.txt

// Flag errors.
// RUN: not piper-run %t/serial.plan --eval-every=2 2>&1 | FileCheck %s --check-prefix=NODATA
// RUN: not piper-interp %t/gpt.mlir --eval-batches=2 2>&1 | FileCheck %s --check-prefix=NODATA
// RUN: not piper-run %t/serial.plan --eval-data=%t/heldout.txt --eval-batches=0 2>&1 | FileCheck %s --check-prefix=RANGE
// RUN: not piper-run %t/serial.plan --eval-data=%t/missing.txt 2>&1 | FileCheck %s --check-prefix=MISSING

// CHECK: step 1 loss
// CHECK: step 3 loss
// CHECK-NEXT: eval step 3 loss {{[0-9.]+}} ppl {{[0-9.]+}}
// CHECK: step 6 loss
// CHECK-NEXT: eval step 6 loss {{[0-9.]+}} ppl {{[0-9.]+}}
// CHECK-NOT: eval

// LOG: {"step": 3, "eval_loss": {{[0-9.]+}}, "eval_seconds": {{[0-9.]+}}}
// SVG: >held-out loss</text>

// NODATA: --eval-every and --eval-batches need --eval-data
// RANGE: --eval-every must be >= 0 and --eval-batches in [1, 1000000], got 0 and 0
// MISSING: cannot read the corpus '{{.*}}missing.txt'
