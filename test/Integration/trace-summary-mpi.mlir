// piper-run --trace-summary: after a traced run, rank 0 reads the merged
// trace back and prints per rank the milliseconds in each kind of node
// (F, BI, BW, UPD for a split backward), their sum, the waiting time (the
// run's span minus compute) and busy share, and the time each kind of
// communication was in flight. Needs one merged --trace file.
// REQUIRES: mpi
// RUN: rm -rf %t && mkdir -p %t
// RUN: echo '{"mesh": "mesh", "directives": [{"split": {"filter": {}, "n": 2}}, {"place": {"filter": {"PP": 0}, "devices": {"pp": 0}, "stream": "pp"}}, {"place": {"filter": {"PP": 1}, "devices": {"pp": 1}, "stream": "pp"}}, {"schedule": {"name": "1f1b"}}]}' > %t/pp2.json
// RUN: piper-gen --model=gpt --config=tiny-gpt --dtype=f64 --pp=2 --mesh=pp=2 --batch=1 -o %t/gpt.mlir
// RUN: piper-compile %t/gpt.mlir --directives=%t/pp2.json -o %t/plan
// RUN: %mpiexec -np 2 piper-run %t/plan --steps=2 --trace=%t/trace.json --trace-summary | FileCheck %s
// RUN: not piper-run %t/plan --trace-summary 2>&1 | FileCheck %s --check-prefix=NOTRACE
// RUN: not piper-run %t/plan --trace=%t/t.%%r.json --trace-summary 2>&1 | FileCheck %s --check-prefix=NOTRACE

// CHECK: step 2 loss
// CHECK-NEXT: trace summary, ms per rank: compute by node kind;
// CHECK-NEXT: rank BI BW F UPD compute waiting busy% recv send
// CHECK-NEXT: 0{{( [0-9]+\.[0-9]+%?){9}$}}
// CHECK-NEXT: 1{{( [0-9]+\.[0-9]+%?){9}$}}

// NOTRACE: piper-run: --trace-summary needs --trace=FILE (one merged file, no %r)
