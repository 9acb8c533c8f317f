// Every size a user can type on a command line or in a JSON file is bounded
// (docs/Limits.md) and checked before any work: one line, exit code 1.
// RUN: rm -rf %t && mkdir -p %t
// RUN: python3 -c "print('[' * 50000 + ']' * 50000)" > %t/deep.json
// RUN: not piper-directives %t/deep.json 2>&1 | FileCheck %s --check-prefix=DEEP
// RUN: echo '{"directives": [{"split": {"filter": {}, "n": 4294967296}}]}' > %t/n.json
// RUN: not piper-directives %t/n.json 2>&1 | FileCheck %s --check-prefix=NBIG
// RUN: echo '{"directives": [{"split": {"filter": {}, "n": 257}}]}' > %t/n257.json
// RUN: not piper-directives %t/n257.json 2>&1 | FileCheck %s --check-prefix=N257
// RUN: piper-gen --model=mlp --config=tiny-mlp --dtype=f64 --mesh=dp=1 -o %t/mlp.mlir
// RUN: not piper-compile %t/mlp.mlir --directives=%t/deep.json -o %t/p 2>&1 | FileCheck %s --check-prefix=DEEPC
// RUN: not piper-compile %t/mlp.mlir --directives=%t/n.json -o %t/p 2>&1 | FileCheck %s --check-prefix=NBIGC
// DEEP: piper-directives: error: {{.*}}deep.json: invalid JSON: [1:256, byte=256]: Nesting deeper than 256 levels
// DEEP-NOT: {{.}}
// NBIG: piper-directives: error: {{.*}}n.json: directives[0].split.n: expected at most 256 microbatches, got 4294967296
// N257: piper-directives: error: {{.*}}n257.json: directives[0].split.n: expected at most 256 microbatches, got 257
// DEEPC: {{.*}}deep.json: invalid JSON: [1:256, byte=256]: Nesting deeper than 256 levels
// DEEPC-NOT: {{.}}
// NBIGC: {{.*}}n.json: directives[0].split.n: expected at most 256 microbatches, got 4294967296
// NBIGC-NOT: {{.}}

// piper-gen: layers (building is quadratic in them), widths, mesh sizes.
// RUN: not piper-gen --model=gpt --layers=100000 2>&1 | FileCheck %s --check-prefix=LAYERS
// RUN: not piper-gen --model=mlp --hidden=99999999999 2>&1 | FileCheck %s --check-prefix=HIDDEN
// RUN: not piper-gen --model=moe --experts=16777217 2>&1 | FileCheck %s --check-prefix=EXPERTS
// RUN: not piper-gen --model=mlp --mesh=dp=4294967296 2>&1 | FileCheck %s --check-prefix=AXIS
// RUN: not piper-gen --model=mlp --mesh=dp=1048576,pp=2 2>&1 | FileCheck %s --check-prefix=MESH
// LAYERS: piper-gen: error: --layers must be <= 1024 (docs/Limits.md), got 100000
// HIDDEN: piper-gen: error: --hidden must be <= 16777216 (docs/Limits.md), got 99999999999
// EXPERTS: piper-gen: error: --experts must be <= 16777216 (docs/Limits.md), got 16777217
// AXIS: piper-gen: error: mesh axis 'dp' has size '4294967296' in --mesh=dp=4294967296; sizes are integers from 1 to 1048576
// MESH: piper-gen: error: --mesh=dp=1048576,pp=2 has more than 1048576 devices

// piper-interp: a model that cannot fit in memory is refused at its largest
// tensor before anything is allocated (it ended in "LLVM ERROR: out of
// memory"); a directory as --data is an error, not an uncaught
// std::ios_failure.
// RUN: piper-gen --model=mlp --config=tiny-mlp --batch=16000000 --hidden=16000 -o %t/big.mlir
// RUN: not piper-interp %t/big.mlir 2>&1 | FileCheck %s --check-prefix=BIG
// RUN: not piper-interp %t/mlp.mlir --data=%t 2>&1 | FileCheck %s --check-prefix=DATADIR
// RUN: not piper-interp %t/mlp.mlir --steps=0 2>&1 | FileCheck %s --check-prefix=ISTEPS
// BIG: big.mlir:4:19: error: piper-interp: the step's tensors need 8197251328080 bytes as f64 (the largest, here, 2048000000000), more than this machine's {{[0-9]+}} bytes of memory
// BIG-NOT: LLVM ERROR
// DATADIR: piper-interp: the corpus '{{.*}}' is not a regular file
// ISTEPS: piper-interp: --steps must be at least 1, got 0

// piper-run's flags.
// RUN: piper-compile %t/mlp.mlir -o %t/plan
// RUN: not piper-run %t/plan --steps=0 2>&1 | FileCheck %s --check-prefix=STEPS0
// RUN: not piper-run %t/plan --steps=-1 2>&1 | FileCheck %s --check-prefix=STEPSNEG
// RUN: not piper-run %t/plan --data=%t 2>&1 | FileCheck %s --check-prefix=RUNDATA
// RUN: not piper-run %t/plan --kill-rank=5 2>&1 | FileCheck %s --check-prefix=KILLRANK
// RUN: not piper-run %t/plan --steps=2 --kill-rank=0 --kill-at-step=3 2>&1 | FileCheck %s --check-prefix=KILLSTEP
// STEPS0: piper-run: --steps must be from 1 to 1000000000 (0 only with --params-out, to write the initial parameters, or --sample, to sample from them), got 0
// STEPSNEG: piper-run: --steps must be from 1 to 1000000000 (0 only with --params-out, to write the initial parameters, or --sample, to sample from them), got -1
// RUNDATA: piper-run: the corpus '{{.*}}' is not a regular file
// KILLRANK: piper-run: --kill-rank=5 is not a rank of this 1-rank job
// KILLSTEP: piper-run: --kill-at-step=3 is not a step of this run (1 to 2)

// piper-compile: a multi-device mesh without a strategy is said, once; a
// hand-written model without chunks is one located line, without IR.
// RUN: piper-gen --model=mlp --config=tiny-mlp --mesh=dp=2 -o %t/dp2.mlir
// RUN: piper-compile %t/dp2.mlir -o %t/dp2.plan 2>&1 | FileCheck %s --check-prefix=DP2
// DP2: dp2.mlir:2:3: warning: piper-compile: mesh @mesh has 2 devices but no --directives: every device runs the whole step on the whole batch (give a strategy, or a mesh of one device)
// RUN: not piper-compile %S/Inputs/no-chunks.model -o %t/nc 2>&1 | FileCheck %s --check-prefix=NOCHUNKS
// NOCHUNKS: no-chunks.model:3:1: error: piper-build-dag: no function has chunks (piper.annotate) to turn into DAG nodes
// NOCHUNKS-NOT: "func.func"
// NOCHUNKS-NOT: note: see current operation

// A model with no mesh printed 32-63 KB of IR after its error; now the
// located line and its source line only. A mesh removed from a model whose
// placements name it is one line too.
// RUN: piper-gen --model=mlp --config=tiny-mlp --dtype=f64 -o %t/nomesh.mlir
// RUN: not piper-compile %t/nomesh.mlir -o %t/nm 2>&1 | FileCheck %s --check-prefix=NOMESH
// NOMESH: nomesh.mlir:2:3: error: 'func.func' op needs exactly one piper.mesh in the module to partition its DAG, found 0
// NOMESH-NEXT: func.func @step(
// NOMESH-NOT: note: see current operation
// NOMESH-NOT: piper.dag
// RUN: grep -v 'piper.mesh' %t/mlp.mlir > %t/meshless.mlir
// RUN: not piper-compile %t/meshless.mlir -o %t/nm 2>&1 | FileCheck %s --check-prefix=MESHLESS
// MESHLESS: meshless.mlir:2:3: error: parameter 'layers.0.weight' (argument #0): unknown mesh @mesh
// MESHLESS-NEXT: func.func @step(
// MESHLESS-NOT: note: see current operation
