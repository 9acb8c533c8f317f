// piper-run --threads: the plan's OpenMP loops and BLAS calls run on N
// threads, the count is in --log, and the losses do not depend on it (only
// parallel loops are split across threads; every element is computed by one
// thread in one order). An MLP of 256 x 256 activations is large enough
// for the relu and its VJP to be split (--piper-tile-linalg's grain), and its
// f64 plan still matches the interpreter. Bad counts: one line, exit 1.
// RUN: rm -rf %t && mkdir -p %t
// RUN: piper-gen --model=mlp --layers=1 --hidden=256 --in-features=64 --vocab=32 --batch=256 --dtype=f64 --mesh=dp=1 -o %t/mlp.mlir
// RUN: piper-compile %t/mlp.mlir -o %t/plan
// RUN: nm -D %t/plan/step.all.so | FileCheck %s --check-prefix=SYMBOLS
// RUN: piper-run %t/plan --steps=3 --threads=1 > %t/one.txt
// RUN: piper-run %t/plan --steps=3 --threads=2 --log=%t/log.jsonl > %t/two.txt
// RUN: diff %t/one.txt %t/two.txt
// RUN: FileCheck %s --check-prefix=LOG --input-file=%t/log.jsonl
// RUN: OMP_NUM_THREADS=3 piper-run %t/plan --log=%t/env.jsonl > /dev/null
// RUN: FileCheck %s --check-prefix=ENV --input-file=%t/env.jsonl
// RUN: piper-interp %t/mlp.mlir --steps=3 --optimizer=adamw > %t/interp.txt
// RUN: %numdiff --rel 1e-12 %t/interp.txt %t/two.txt
// RUN: not piper-run %t/plan --threads=0 2>&1 | FileCheck %s --check-prefix=ZERO
// RUN: not piper-run %t/plan --threads=abc 2>&1 | FileCheck %s --check-prefix=ABC
// RUN: not piper-run %t/plan --threads 2>&1 | FileCheck %s --check-prefix=EMPTY

// SYMBOLS: U __kmpc_fork_call
// SYMBOLS: U omp_set_num_threads
// LOG: {"step": 1, "loss": {{.*}}, "seconds": {{.*}}, "threads": 2}
// LOG: {"step": 3, "loss": {{.*}}, "threads": 2}
// ENV: "threads": 3}
// ZERO: piper-run: --threads must be a positive integer (at most 4096), got '0'
// ABC: piper-run: --threads must be a positive integer (at most 4096), got 'abc'
// EMPTY: piper-run: --threads must be a positive integer (at most 4096), got ''
