// REQUIRES: torch
// Cross-checks step 1 of the tiny dense GPT (embedding; per layer RMSNorm,
// causal 2-head attention, residual, RMSNorm, SwiGLU FFN, residual; final
// norm, LM head, mean cross-entropy) in piper-interp against the same model
// written in PyTorch f64 by compare_with_torch.py: the loss and every
// gradient entry.

// RUN: piper-gen --model=gpt --config=tiny-gpt --dtype=f64 --pp=2 -o %t.mlir
// RUN: piper-interp %t.mlir --seed=3 --dump=%t.json
// RUN: %python_torch %S/compare_with_torch.py %t.json --model=gpt | FileCheck %s

// CHECK:      {{^}}loss piper={{[0-9.e+-]+}} torch={{[0-9.e+-]+}}{{$}}
// CHECK:      {{^}}max relative error over 6224 gradient entries: {{[0-9.e+-]+}} (
// CHECK-NOT:  MISMATCH
// CHECK:      {{^}}OK{{$}}
