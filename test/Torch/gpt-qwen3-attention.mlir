// REQUIRES: torch
// Cross-checks piper-gen's Qwen3-style attention against PyTorch: grouped-
// query attention (--kv-heads; 1 is multi-query), per-head q/k RMSNorm
// (--qk-norm) and rotary embeddings (--rope-theta) in the dense and the
// MoE decoder. Step 1 in piper-interp (the reference kernels, autodiff's
// VJPs) against compare_with_torch.py, which writes the same attention
// with torch ops (repeat_interleave, rotate_half): the loss and every
// gradient entry.

// RUN: piper-gen --config=tiny-gpt --dtype=f64 --heads=4 --kv-heads=2 --qk-norm --rope-theta=500 -o %t.gqa.mlir
// RUN: FileCheck %s --check-prefix=IR --input-file=%t.gqa.mlir
// RUN: piper-interp %t.gqa.mlir --seed=3 --dump=%t.gqa.json
// RUN: %python_torch %S/compare_with_torch.py %t.gqa.json --model=gpt --heads=4 --rope-theta=500 | FileCheck %s
// RUN: piper-gen --config=tiny-moe --dtype=f64 --kv-heads=1 --qk-norm --rope-theta=10000 -o %t.mqa.mlir
// RUN: piper-interp %t.mqa.mlir --seed=5 --dump=%t.mqa.json
// RUN: %python_torch %S/compare_with_torch.py %t.mqa.json --model=moe --rope-theta=10000 | FileCheck %s

// IR-LABEL: func.func @step(
// IR-SAME:    tensor<16x8xf64> {piper.param = #piper.param<"layers.0.attn.wk", normal(0.02)>}
// IR-SAME:    tensor<4xf64> {piper.param = #piper.param<"layers.0.attn.q_norm.weight", ones>}
// IR:         %[[Q:.*]] = piper.rmsnorm %{{.*}}, %layers.0.attn.q_norm.weight : tensor<2x8x16xf64>, tensor<4xf64> -> tensor<2x8x16xf64>
// IR:         %[[K:.*]] = piper.rmsnorm %{{.*}}, %layers.0.attn.k_norm.weight : tensor<2x8x8xf64>, tensor<4xf64> -> tensor<2x8x8xf64>
// IR:         %[[QR:.*]] = piper.rope %[[Q]] {head_dim = 4 : i64, theta = 5.000000e+02 : f64} : tensor<2x8x16xf64>
// IR:         %[[KR:.*]] = piper.rope %[[K]] {head_dim = 4 : i64, theta = 5.000000e+02 : f64} : tensor<2x8x8xf64>
// IR:         piper.attention %[[QR]], %[[KR]], %{{.*}} {num_heads = 4 : i64, num_kv_heads = 2 : i64} : tensor<2x8x16xf64>, tensor<2x8x8xf64>, tensor<2x8x8xf64> -> tensor<2x8x16xf64>

// CHECK:      {{^}}loss piper={{[0-9.e+-]+}} torch={{[0-9.e+-]+}}{{$}}
// CHECK:      {{^}}max relative error over {{[0-9]+}} gradient entries: {{[0-9.e+-]+}} (
// CHECK-NOT:  MISMATCH
// CHECK:      {{^}}OK{{$}}
