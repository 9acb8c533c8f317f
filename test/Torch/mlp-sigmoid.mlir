// REQUIRES: torch
// Cross-checks piper.sigmoid, which has no kernel or VJP rule of its own
// (only its ElementwiseOpInterface methods): the tiny MLP with its ReLUs
// replaced by sigmoids, step 1 in piper-interp against torch.sigmoid in
// PyTorch f64 (compare_with_torch.py --activation=sigmoid): the loss and
// every gradient entry.

// RUN: piper-gen --model=mlp --config=tiny-mlp --dtype=f64 --pp=2 -o %t.relu.mlir
// RUN: sed 's/piper\.relu/piper.sigmoid/' %t.relu.mlir > %t.mlir
// RUN: grep -c piper.sigmoid %t.mlir | FileCheck %s --check-prefix=COUNT
// RUN: piper-interp %t.mlir --seed=3 --dump=%t.json
// RUN: %python_torch %S/compare_with_torch.py %t.json --model=mlp --activation=sigmoid | FileCheck %s

// COUNT: 2
// CHECK:      {{^}}loss piper={{[0-9.e+-]+}} torch={{[0-9.e+-]+}}{{$}}
// CHECK:      {{^}}max relative error over 1864 gradient entries: {{[0-9.e+-]+}} (
// CHECK-NOT:  MISMATCH
// CHECK:      {{^}}OK{{$}}
