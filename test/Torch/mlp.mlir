// REQUIRES: torch
// Cross-checks step 1 of the tiny MLP (two ReLU layers with biases, a linear
// head, mean cross-entropy) in piper-interp against the same model written
// in PyTorch f64 by compare_with_torch.py: the loss and every gradient entry.

// RUN: piper-gen --model=mlp --config=tiny-mlp --dtype=f64 --pp=2 -o %t.mlir
// RUN: piper-interp %t.mlir --seed=3 --dump=%t.json
// RUN: %python_torch %S/compare_with_torch.py %t.json --model=mlp | FileCheck %s

// CHECK:      {{^}}loss piper={{[0-9.e+-]+}} torch={{[0-9.e+-]+}}{{$}}
// CHECK:      {{^}}max relative error over 1864 gradient entries: {{[0-9.e+-]+}} (
// CHECK-NOT:  MISMATCH
// CHECK:      {{^}}OK{{$}}
