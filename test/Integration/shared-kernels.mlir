// The programs of a plan share their kernels: each distinct kernel is
// compiled once per piper-compile (lib/Compile/ShareKernels.cpp) and
// linked, hidden, into every role's object. A 4-layer GPT under PP2 holds
// the same kernels on both stages; both objects define the same
// `piper_shared_<hash>` functions, no per-program copy (`piper_kernel*`)
// and export none of them, the kernel objects do not stay in the plan
// directory, and the plan trains to the serial interpreter's losses.
// REQUIRES: mpi
// RUN: rm -rf %t && mkdir -p %t
// RUN: echo '{"mesh": "mesh", "directives": [{"split": {"filter": {}, "n": 2}}, {"place": {"filter": {"PP": 0}, "devices": {"pp": 0}, "stream": "pp"}}, {"place": {"filter": {"PP": 1}, "devices": {"pp": 1}, "stream": "pp"}}, {"schedule": {"name": "1f1b"}}]}' > %t/pp2.json
// RUN: piper-gen --model=gpt --config=tiny-gpt --dtype=f64 --layers=4 --pp=2 --mesh=pp=2 --batch=1 -o %t/gpt.mlir
// RUN: piper-compile %t/gpt.mlir --directives=%t/pp2.json -o %t/plan
// RUN: ls %t/plan | FileCheck %s --check-prefix=FILES
// RUN: nm %t/plan/step.pp0.so | grep -oE ' t piper_shared_[0-9a-f]{16}$' | sort > %t/pp0.shared
// RUN: nm %t/plan/step.pp1.so | grep -oE ' t piper_shared_[0-9a-f]{16}$' | sort > %t/pp1.shared
// RUN: test -s %t/pp0.shared && diff %t/pp0.shared %t/pp1.shared
// RUN: nm %t/plan/step.pp0.so %t/plan/step.pp1.so | not grep -E ' piper_kernel(_[0-9]+)?$'
// RUN: nm -D %t/plan/step.pp0.so %t/plan/step.pp1.so | not grep piper_shared_
// The lowered programs (before sharing) hold more kernel copies than there
// are distinct shared kernels.
// RUN: piper-compile %t/gpt.mlir --directives=%t/pp2.json --emit=lowered | grep -c 'llvm.func @piper_kernel' > %t/copies
// RUN: test $(cat %t/copies) -gt $(wc -l < %t/pp0.shared)
// RUN: piper-gen --model=gpt --config=tiny-gpt --dtype=f64 --layers=4 --batch=2 --mesh=dp=1 -o %t/serial.mlir
// RUN: piper-interp %t/serial.mlir --steps=3 --optimizer=adamw > %t/interp.txt
// RUN: %mpiexec -np 2 piper-run %t/plan --steps=3 > %t/run.txt
// RUN: %numdiff %t/interp.txt %t/run.txt

// FILES-NOT: .o
// FILES:     plan.json
// FILES-NOT: .o
// FILES:     step.pp0.so
// FILES-NOT: .o
// FILES:     step.pp1.so
// FILES-NOT: .o
