// REQUIRES: torch
// Cross-checks piper.gelu_erf (exact GELU, only its ElementwiseOpInterface
// methods): the tiny MLP with its ReLUs replaced by the exact GELU, step 1
// in piper-interp against F.gelu (approximate='none') in PyTorch f64
// (compare_with_torch.py --activation=gelu_erf): the loss and every
// gradient entry. The native plan lowers math.erf to libm's erf (the only
// math op that convert-math-to-llvm leaves) and trains 3 steps to the
// interpreter's losses.

// RUN: piper-gen --model=mlp --config=tiny-mlp --dtype=f64 --mesh=dp=1 -o %t.relu.mlir
// RUN: sed 's/piper\.relu/piper.gelu_erf/' %t.relu.mlir > %t.mlir
// RUN: grep -c piper.gelu_erf %t.mlir | FileCheck %s --check-prefix=COUNT
// RUN: piper-interp %t.mlir --seed=3 --dump=%t.json
// RUN: %python_torch %S/compare_with_torch.py %t.json --model=mlp --activation=gelu_erf | FileCheck %s
// RUN: piper-compile %t.mlir --emit=lowered | FileCheck %s --check-prefix=LLVM
// RUN: piper-compile %t.mlir -o %t.plan
// RUN: piper-run %t.plan --steps=3 --seed=3 > %t.run.txt
// RUN: piper-interp %t.mlir --steps=3 --seed=3 > %t.interp.txt
// RUN: %python_torch %S/../Python/Inputs/harness.py %t.interp.txt %t.run.txt 1e-12 | FileCheck %s --check-prefix=SAME

// COUNT: 2
// CHECK:      {{^}}loss piper={{[0-9.e+-]+}} torch={{[0-9.e+-]+}}{{$}}
// CHECK:      {{^}}max relative error over {{[0-9]+}} gradient entries: {{[0-9.e+-]+}} (
// CHECK-NOT:  MISMATCH
// CHECK:      {{^}}OK{{$}}

// LLVM: llvm.func @erf(f64) -> f64
// LLVM: llvm.call @erf(%{{.*}}) : (f64) -> f64

// SAME: OK: 3 steps
