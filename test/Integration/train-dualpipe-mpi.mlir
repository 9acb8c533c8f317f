// Bidirectional DualPipe (DeepSeek) runs: two mirrored copies of the
// stages, rank r holding stage r for microbatches 0 .. m/2-1 (entering at
// rank 0) and stage p-1-r for m/2 .. m-1 (entering at rank p-1). Each
// stage's update is placed on its own rank; partitioning
// (tieSharedParameters) gives the mirror rank a copy of it, fed the
// accumulated gradient of both directions by a transfer, and both copies
// write the updated parameters, so both directions read the same value at
// every step. With dp, the copy also gets its own ZeRO reduce-scatter and
// all-gather. Compiled by piper-compile, run by piper-run under mpiexec for
// 5 AdamW steps in f64 against the serial interpreter at the same global
// batch: every loss and final parameter agree to 1e-9 (%numdiff).
// REQUIRES: mpi
// RUN: rm -rf %t && mkdir -p %t

// PP2 on 2 ranks, 4 microbatches (examples/strategies/tiny-gpt-dualpipe-pp2.json).
// RUN: piper-gen --model=gpt --config=tiny-gpt --dtype=f64 --mesh=dp=1 --batch=4 -o %t/gpt4.mlir
// RUN: piper-interp %t/gpt4.mlir --steps=5 --optimizer=adamw --params-out=%t/gpt4.params > %t/gpt4.txt
// RUN: piper-gen --model=gpt --config=tiny-gpt --dtype=f64 --pp=2 --mesh=pp=2 --batch=1 -o %t/pp2.mlir
// RUN: piper-compile %t/pp2.mlir --directives=%S/../../examples/strategies/tiny-gpt-dualpipe-pp2.json -o %t/pp2.plan
// RUN: %mpiexec -np 2 piper-run %t/pp2.plan --steps=5 --params-out=%t/pp2.params > %t/pp2.txt
// RUN: %numdiff %t/gpt4.txt %t/pp2.txt && %numdiff %t/gpt4.params %t/pp2.params
// RUN: FileCheck %s --input-file=%t/pp2.txt
// The programs: each rank updates its own stage and the mirror copy of the
// other, and writes both stages' parameters; the verifier accepts them.
// RUN: piper-compile %t/pp2.mlir --directives=%S/../../examples/strategies/tiny-gpt-dualpipe-pp2.json --emit=programs -o %t/pp2.programs.mlir
// RUN: piper-opt %t/pp2.programs.mlir --piper-verify-programs -o /dev/null
// RUN: FileCheck %s --check-prefix=PROGRAMS --input-file=%t/pp2.programs.mlir
// The order is DualPipe's, as piper-schedule builds it.
// RUN: piper-schedule --schedule=dualpipe --pp=2 --microbatches=4 --format=grid > %t/pp2.ref.grid
// RUN: piper-directives %S/../../examples/strategies/tiny-gpt-dualpipe-pp2.json -o %t/pp2.transform.mlir
// RUN: piper-opt %t/pp2.mlir --piper-autodiff --piper-optimizer --piper-build-dag --transform-preload-library="transform-library-paths=%t/pp2.transform.mlir" --transform-interpreter --piper-export-schedule=format=grid -o /dev/null > %t/pp2.grid
// RUN: diff %t/pp2.grid %t/pp2.ref.grid

// PP4 on 4 ranks: 4 layers, 8 microbatches.
// RUN: python3 -c "import json; p, m = 4, 8; d = [{'split': {'filter': {}, 'n': m}}] + [{'place': {'filter': {'PP': s, 'MB': b}, 'devices': {'pp': s if b < m // 2 else p - 1 - s}, 'stream': 'pp'}} for s in range(p) for b in range(m)] + [{'place': {'filter': {'PP': s, 'MB': 'none'}, 'devices': {'pp': s}, 'stream': 'pp'}} for s in range(p)] + [{'schedule': {'name': 'dualpipe'}}]; print(json.dumps({'mesh': 'mesh', 'directives': d}))" > %t/pp4.json
// RUN: piper-gen --model=gpt --config=tiny-gpt --layers=4 --dtype=f64 --mesh=dp=1 --batch=8 -o %t/gpt8.mlir
// RUN: piper-interp %t/gpt8.mlir --steps=5 --optimizer=adamw --params-out=%t/gpt8.params > %t/gpt8.txt
// RUN: piper-gen --model=gpt --config=tiny-gpt --layers=4 --dtype=f64 --pp=4 --mesh=pp=4 --batch=1 -o %t/pp4.mlir
// RUN: piper-compile %t/pp4.mlir --directives=%t/pp4.json -o %t/pp4.plan
// RUN: %mpiexec -np 4 piper-run %t/pp4.plan --steps=5 --params-out=%t/pp4.params > %t/pp4.txt
// RUN: %numdiff %t/gpt8.txt %t/pp4.txt && %numdiff %t/gpt8.params %t/pp4.params

// PP2 x DP2 on 4 ranks with ZeRO-1 and ZeRO-3 over dp.
// RUN: python3 -c "import json, sys; d = json.load(open(sys.argv[1])); d['directives'].insert(-1, {'replicate': {'filter': {}, 'devices': ['dp'], 'zero': int(sys.argv[2])}}); print(json.dumps(d))" %S/../../examples/strategies/tiny-gpt-dualpipe-pp2.json 1 > %t/dp-z1.json
// RUN: python3 -c "import json, sys; d = json.load(open(sys.argv[1])); d['directives'].insert(-1, {'replicate': {'filter': {}, 'devices': ['dp'], 'zero': int(sys.argv[2])}}); print(json.dumps(d))" %S/../../examples/strategies/tiny-gpt-dualpipe-pp2.json 3 > %t/dp-z3.json
// RUN: piper-gen --model=gpt --config=tiny-gpt --dtype=f64 --mesh=dp=1 --batch=8 -o %t/gpt8l2.mlir
// RUN: piper-interp %t/gpt8l2.mlir --steps=5 --optimizer=adamw --params-out=%t/gpt8l2.params > %t/gpt8l2.txt
// RUN: piper-gen --model=gpt --config=tiny-gpt --dtype=f64 --pp=2 --mesh=dp=2,pp=2 --batch=1 -o %t/dppp.mlir
// RUN: piper-compile %t/dppp.mlir --directives=%t/dp-z1.json -o %t/z1.plan
// RUN: %mpiexec -np 4 piper-run %t/z1.plan --steps=5 --params-out=%t/z1.params > %t/z1.txt
// RUN: %numdiff %t/gpt8l2.txt %t/z1.txt && %numdiff %t/gpt8l2.params %t/z1.params
// RUN: piper-compile %t/dppp.mlir --directives=%t/dp-z1.json --emit=programs -o %t/z1.programs.mlir
// RUN: FileCheck %s --check-prefix=ZERO --input-file=%t/z1.programs.mlir
// RUN: piper-compile %t/dppp.mlir --directives=%t/dp-z3.json -o %t/z3.plan
// RUN: %mpiexec -np 4 piper-run %t/z3.plan --steps=5 --params-out=%t/z3.params > %t/z3.txt
// RUN: %numdiff %t/gpt8l2.txt %t/z3.txt && %numdiff %t/gpt8l2.params %t/z3.params

// CHECK: step 1 loss
// CHECK: step 5 loss
// CHECK-NOT: step

// PROGRAMS-LABEL: piper.program @step.pp0 role {pp = 0 : i64}
// PROGRAMS: piper.launch "UPD{PP=0}" @step.UPD.PP0(
// PROGRAMS: piper.launch "UPD{PP=1}@{pp=0}" @step.UPD.PP1(
// PROGRAMS-LABEL: piper.program @step.pp1 role {pp = 1 : i64}
// PROGRAMS: piper.launch "UPD{PP=0}@{pp=1}" @step.UPD.PP0(
// PROGRAMS: piper.launch "UPD{PP=1}" @step.UPD.PP1(

// The mirror copy of stage 1's update on rank 0 reduce-scatters the
// transferred gradient and all-gathers its update over dp itself.
// ZERO-LABEL: piper.program @step.pp0
// ZERO: piper.comm "reduce_scatter(accumulate(BW{PP=1}#0)#0)@{pp=0}" reduce_scatter
// ZERO: piper.launch "UPD{PP=1}@{pp=0}"
// ZERO: piper.comm "all_gather(UPD{PP=1}#1)@{pp=0}" all_gather
