// REQUIRES: torch
// Cross-checks piper.tanh, which like piper.sigmoid has no kernel or VJP
// rule of its own (only its ElementwiseOpInterface methods): the tiny MLP
// with its ReLUs replaced by tanh, step 1 in piper-interp against
// torch.tanh in PyTorch f64 (compare_with_torch.py --activation=tanh): the
// loss and every gradient entry.

// RUN: piper-gen --model=mlp --config=tiny-mlp --dtype=f64 --pp=2 -o %t.relu.mlir
// RUN: sed 's/piper\.relu/piper.tanh/' %t.relu.mlir > %t.mlir
// RUN: grep -c piper.tanh %t.mlir | FileCheck %s --check-prefix=COUNT
// RUN: piper-interp %t.mlir --seed=3 --dump=%t.json
// RUN: %python_torch %S/compare_with_torch.py %t.json --model=mlp --activation=tanh | FileCheck %s

// COUNT: 2
// CHECK:      {{^}}loss piper={{[0-9.e+-]+}} torch={{[0-9.e+-]+}}{{$}}
// CHECK:      {{^}}max relative error over 1864 gradient entries: {{[0-9.e+-]+}} (
// CHECK-NOT:  MISMATCH
// CHECK:      {{^}}OK{{$}}
