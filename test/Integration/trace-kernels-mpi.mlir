// piper-compile --trace-kernels: every op of a launched body gets a trace
// span named by its kind inside its launch's span. The tiny GPT under PP2
// 1F1B is compiled with and without the flag: plan.json lists the kinds only
// with it, the losses are the same, and the traced run's trace holds kernel
// spans (category "kernel"). piper-calibrate pairs every op the simulator
// counts in each launch with a kernel span inside that launch's span (no
// counted op without one: the spans nest in the chunk spans) and writes a
// calibration file that --piper-simulate reads.
// REQUIRES: mpi
// RUN: rm -rf %t && mkdir -p %t
// RUN: echo '{"mesh": "mesh", "directives": [{"split": {"filter": {}, "n": 2}}, {"place": {"filter": {"PP": 0}, "devices": {"pp": 0}, "stream": "pp"}}, {"place": {"filter": {"PP": 1}, "devices": {"pp": 1}, "stream": "pp"}}, {"schedule": {"name": "1f1b"}}]}' > %t/pp2.json
// RUN: piper-gen --model=gpt --config=tiny-gpt --dtype=f64 --pp=2 --mesh=pp=2 --batch=1 -o %t/gpt.mlir
// RUN: piper-compile %t/gpt.mlir --directives=%t/pp2.json -o %t/plain
// RUN: piper-compile %t/gpt.mlir --directives=%t/pp2.json --trace-kernels -o %t/traced
// RUN: FileCheck %s --check-prefix=PLAIN --input-file=%t/plain/plan.json
// RUN: FileCheck %s --check-prefix=KINDS --input-file=%t/traced/plan.json
// RUN: %mpiexec -np 2 piper-run %t/plain --steps=3 > %t/plain.txt
// RUN: %mpiexec -np 2 piper-run %t/traced --steps=3 --trace=%t/trace.json > %t/traced.txt
// RUN: diff %t/plain.txt %t/traced.txt
// RUN: FileCheck %s --check-prefix=TRACE --input-file=%t/trace.json
// RUN: piper-calibrate %t/gpt.mlir --directives=%t/pp2.json --plan=%t/traced --trace=%t/trace.json -o %t/cal.json | FileCheck %s --check-prefix=FIT
// RUN: FileCheck %s --check-prefix=FILE --input-file=%t/cal.json
// RUN: piper-compile %t/gpt.mlir --directives=%t/pp2.json --emit=programs -o %t/programs.mlir
// RUN: piper-opt %t/programs.mlir --piper-simulate="calibration=%t/cal.json" | FileCheck %s --check-prefix=SIM

// Misuse: the CUDA runtime records no kernel spans; a plan without kinds
// cannot be calibrated.
// RUN: not piper-compile %t/gpt.mlir --directives=%t/pp2.json --trace-kernels --target=cuda -o %t/cuda 2>&1 | FileCheck %s --check-prefix=CUDA
// RUN: not piper-calibrate %t/gpt.mlir --directives=%t/pp2.json --plan=%t/plain --trace=%t/trace.json -o %t/x.json 2>&1 | FileCheck %s --check-prefix=NOKINDS -DPLAN=%t/plain
// RUN: not piper-calibrate %t/gpt.mlir --directives=%t/pp2.json --plan=%t/traced --trace=%t/trace.json --statistic=mean -o %t/x.json 2>&1 | FileCheck %s --check-prefix=STAT

// PLAIN-NOT: kernel_kinds
// KINDS:      "kernel_kinds": [
// KINDS-DAG:    "adamw_update"
// KINDS-DAG:    "linear"
// KINDS-DAG:    "rmsnorm_vjp"
// KINDS-DAG:    "cross_entropy_vjp"

// TRACE-DAG: "name":"rmsnorm","cat":"kernel"
// TRACE-DAG: "name":"adamw_update","cat":"kernel"
// TRACE-DAG: "name":"F{PP=0,MB=0}","cat":"compute"

// FIT: piper-calibrate: {{[0-9]+}} launches, {{[1-9][0-9]*}} kernel spans paired ({{[0-9]+}} unpaired, 0 outside any launch, 0 counted ops without a span); launch overhead {{[0-9.]+}} us
// FIT: adamw_update
// FIT: linear {{.*}} GFLOP/s

// FILE: "kernels": {
// FILE: "parameters": {
// FILE-NEXT: "launch_overhead_us"

// SIM: step time {{[0-9.]+}} ms

// CUDA: piper-compile: --trace-kernels needs --target=cpu (the CUDA runtime records no kernel spans)
// STAT: piper-calibrate: unknown --statistic 'mean' (fastest or median)
// NOKINDS: piper-calibrate: [[PLAN]]/plan.json lists no kernel_kinds: compile the plan with piper-compile --trace-kernels
