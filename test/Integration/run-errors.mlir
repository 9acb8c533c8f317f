// piper-run's errors for a missing plan, a broken manifest and a plan of
// another format, each one line and exit code 1 (a multi-role plan under the
// wrong rank count: train-pp-mpi.mlir).
// RUN: rm -rf %t && mkdir -p %t/bad %t/other
// RUN: not piper-run %t/missing 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: echo '{"format": "piper-plan", "version": 1, "function": "step"' > %t/bad/plan.json
// RUN: not piper-run %t/bad 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: echo '{"format": "something", "version": 3}' > %t/other/plan.json
// RUN: not piper-run %t/other 2>&1 | FileCheck %s --check-prefix=OTHER
// RUN: echo '{"format": "piper-plan", "version": 1, "function": "step", "arguments": [{"index": 0, "kind": "data", "dtype": "q8", "shape": [2]}], "results": [], "roles": []}' > %t/bad/plan.json
// RUN: not piper-run %t/bad 2>&1 | FileCheck %s --check-prefix=DTYPE

// MISSING: piper-run: cannot read plan {{.*}}missing/plan.json: No such file or directory
// BAD: piper-run: {{.*}}bad/plan.json: [2:0, byte=58]: Expected , or } after object property
// OTHER: piper-run: {{.*}}other/plan.json: not a version 1 piper plan (format 'something', version 3)
// DTYPE: piper-run: {{.*}}bad/plan.json: bad manifest: unsupported dtype (f32, f64 or i64) at plan.arguments[0].dtype
