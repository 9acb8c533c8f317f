// Pipeline x ZeRO resharded per microbatch: tiny GPT and MoE in f64 on 4
// ranks, PP2 x DP2, 1F1B over 8 microbatches, ZeRO-1, 2 and 3, against the
// serial interpreter at the same global batch (2 replicas x 8 microbatches
// x 1 sequence): losses and final parameters agree to 1e-9. At ZeRO-2/3
// every microbatch's weight gradients are reduce-scattered into 1/N
// accumulators (docs/Memory.md#zero-stages), so the memory plan's gradient
// bytes halve at dp = 2 from ZeRO-1 to ZeRO-2.
// REQUIRES: mpi
// RUN: rm -rf %t && mkdir -p %t
// RUN: for z in 1 2 3; do echo "{\"mesh\": \"mesh\", \"directives\": [{\"split\": {\"filter\": {}, \"n\": 8}}, {\"place\": {\"filter\": {\"PP\": 0}, \"devices\": {\"pp\": 0}, \"stream\": \"pp\"}}, {\"place\": {\"filter\": {\"PP\": 1}, \"devices\": {\"pp\": 1}, \"stream\": \"pp\"}}, {\"replicate\": {\"filter\": {}, \"devices\": [\"dp\"], \"zero\": $z}}, {\"schedule\": {\"name\": \"1f1b\"}}]}" > %t/z$z.json; done

// RUN: for m in gpt moe; do piper-gen --model=$m --config=tiny-$m --dtype=f64 --mesh=dp=1 --batch=16 -o %t/$m.mlir && piper-interp %t/$m.mlir --steps=3 --optimizer=adamw --params-out=%t/$m.params > %t/$m.txt || exit 1; done
// RUN: for m in gpt moe; do piper-gen --model=$m --config=tiny-$m --dtype=f64 --pp=2 --mesh=pp=2,dp=2 --batch=1 -o %t/$m.pp.mlir || exit 1; done
// RUN: for m in gpt moe; do for z in 1 2 3; do piper-compile %t/$m.pp.mlir --directives=%t/z$z.json -o %t/$m.z$z.plan 2>/dev/null || exit 1; done; done
// RUN: for m in gpt moe; do for z in 1 2 3; do %mpiexec -np 4 piper-run %t/$m.z$z.plan --steps=3 --params-out=%t/$m.z$z.params > %t/$m.z$z.txt || exit 1; done; done
// RUN: for m in gpt moe; do for z in 1 2 3; do %numdiff %t/$m.txt %t/$m.z$z.txt && %numdiff %t/$m.params %t/$m.z$z.params || exit 1; done; done

// The programs: one reduce-scatter per microbatch and weight-gradient
// bucket at ZeRO-2 (8 microbatches x 10 GPT gradients on stage 0), one per
// gradient at ZeRO-1.
// RUN: for z in 1 2 3; do piper-compile %t/gpt.pp.mlir --directives=%t/z$z.json --emit=programs -o %t/gpt.z$z.programs.mlir 2>/dev/null || exit 1; done
// RUN: awk '/piper.program @step.pp0/,/^  }/' %t/gpt.z1.programs.mlir | grep -c 'reduce_scatter %' | FileCheck %s --check-prefix=RS1
// RUN: awk '/piper.program @step.pp0/,/^  }/' %t/gpt.z2.programs.mlir | grep -c 'reduce_scatter %' | FileCheck %s --check-prefix=RS2
// RS1: {{^}}10{{$}}
// RS2: {{^}}80{{$}}

// The memory plan: gradients 24832 -> 12416 bytes on stage 0 (P -> P/2).
// RUN: for z in 1 2 3; do piper-opt %t/gpt.z$z.programs.mlir --piper-memory-plan=driver-results -o /dev/null > %t/gpt.z$z.plan.txt || exit 1; done
// RUN: FileCheck %s --check-prefix=PLAN1 --input-file=%t/gpt.z1.plan.txt
// RUN: FileCheck %s --check-prefix=PLAN2 --input-file=%t/gpt.z2.plan.txt
// RUN: FileCheck %s --check-prefix=PLAN3 --input-file=%t/gpt.z3.plan.txt
// Measured peak bytes (piper-run --peak-bytes) per rank fall from ZeRO-1 to
// ZeRO-2 as the plan's do (322400 -> 228192 bytes on rank 0; ZeRO-3 234720,
// as the plan has it slightly above ZeRO-2 here). Against the plan with the
// driver's result buffers they are 1.5-2.1x, not within 10% as on the
// serial and PP2 runs of peak-bytes-mpi.mlir: over 8 microbatches the
// programs hold buffers the plan does not count (the bound below pins it).
// RUN: for z in 1 2 3; do %mpiexec -np 4 piper-run %t/gpt.z$z.plan --steps=1 --peak-bytes > %t/gpt.z$z.peak.txt || exit 1; done
// RUN: for z in 1 2 3; do python3 %S/../utils/peak-bytes.py %t/gpt.z$z.plan.txt %t/gpt.z$z.peak.txt --ranks-per-group=2 --max=2.2 || exit 1; done
// RUN: p1=$(awk '/^rank 0:/ {print $4}' %t/gpt.z1.peak.txt); p2=$(awk '/^rank 0:/ {print $4}' %t/gpt.z2.peak.txt); test "$p2" -lt "$p1"

// PLAN1: pp=0: peak 115664 at step {{[0-9]+}} of {{[0-9]+}} 'BI{PP=0,MB=1}'
// PLAN1-NEXT: params 24832 grads 24832 optimizer 24912
// PLAN2: pp=0: peak 103248 at step {{[0-9]+}} of {{[0-9]+}} 'BI{PP=0,MB=1}'
// PLAN2-NEXT: params 24832 grads 12416 optimizer 24912
// PLAN3: pp=0: peak 111568 at step {{[0-9]+}} of {{[0-9]+}} 'BI{PP=0,MB=1}'
// PLAN3-NEXT: params 33152 grads 12416 optimizer 24912

