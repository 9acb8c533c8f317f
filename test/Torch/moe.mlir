// REQUIRES: torch
// Cross-checks step 1 of the tiny Qwen3-style MoE GPT (the GPT with a top-2
// of 4 experts FFN: softmax router with renormalised top-k weights, dispatch,
// SwiGLU experts, combine; capacity T, so no token is dropped) in
// piper-interp against PyTorch f64, where compare_with_torch.py writes the
// expert block as a per-token weighted sum over the chosen experts.

// RUN: piper-gen --model=moe --config=tiny-moe --dtype=f64 --pp=2 -o %t.mlir
// RUN: piper-interp %t.mlir --seed=3 --dump=%t.json
// RUN: %python_torch %S/compare_with_torch.py %t.json --model=moe | FileCheck %s

// CHECK:      {{^}}loss piper={{[0-9.e+-]+}} torch={{[0-9.e+-]+}}{{$}}
// CHECK:      {{^}}max relative error over 9424 gradient entries: {{[0-9.e+-]+}} (
// CHECK-NOT:  MISMATCH
// CHECK:      {{^}}OK{{$}}
