// RUN: piper-opt %s | piper-opt | FileCheck %s
// RUN: piper-opt %s --mlir-print-op-generic | piper-opt | FileCheck %s
// Round trip of every piper NN op, in custom and generic form.

// Batched matmul: batch dims of lhs and rhs are equal.
// CHECK-LABEL: func.func @matmul_batched(
// CHECK-SAME:    %[[A:.*]]: tensor<2x4x16xf32>, %[[B:.*]]: tensor<2x16x8xf32>
// CHECK:         %[[C:.*]] = piper.matmul %[[A]], %[[B]] : tensor<2x4x16xf32>, tensor<2x16x8xf32> -> tensor<2x4x8xf32>
// CHECK:         return %[[C]]
func.func @matmul_batched(%a: tensor<2x4x16xf32>, %b: tensor<2x16x8xf32>) -> tensor<2x4x8xf32> {
  %c = piper.matmul %a, %b : tensor<2x4x16xf32>, tensor<2x16x8xf32> -> tensor<2x4x8xf32>
  return %c : tensor<2x4x8xf32>
}

// A rank-2 rhs is shared across the batch of lhs.
// CHECK-LABEL: func.func @matmul_shared_rhs(
// CHECK-SAME:    %[[A:.*]]: tensor<3x2x4x16xf64>, %[[W:.*]]: tensor<16x8xf64>
// CHECK:         piper.matmul %[[A]], %[[W]] : tensor<3x2x4x16xf64>, tensor<16x8xf64> -> tensor<3x2x4x8xf64>
func.func @matmul_shared_rhs(%a: tensor<3x2x4x16xf64>, %w: tensor<16x8xf64>) -> tensor<3x2x4x8xf64> {
  %c = piper.matmul %a, %w : tensor<3x2x4x16xf64>, tensor<16x8xf64> -> tensor<3x2x4x8xf64>
  return %c : tensor<3x2x4x8xf64>
}

// Plain 2-D matmul in bf16.
// CHECK-LABEL: func.func @matmul_2d_bf16(
// CHECK:         piper.matmul %{{.*}}, %{{.*}} : tensor<4x16xbf16>, tensor<16x8xbf16> -> tensor<4x8xbf16>
func.func @matmul_2d_bf16(%a: tensor<4x16xbf16>, %b: tensor<16x8xbf16>) -> tensor<4x8xbf16> {
  %c = piper.matmul %a, %b : tensor<4x16xbf16>, tensor<16x8xbf16> -> tensor<4x8xbf16>
  return %c : tensor<4x8xbf16>
}

// Dynamic dims: `?` matches any size, on operands and on the result.
// CHECK-LABEL: func.func @matmul_dynamic(
// CHECK:         piper.matmul %{{.*}}, %{{.*}} : tensor<?x4x?xf32>, tensor<2x16x?xf32> -> tensor<2x?x8xf32>
func.func @matmul_dynamic(%a: tensor<?x4x?xf32>, %b: tensor<2x16x?xf32>) -> tensor<2x?x8xf32> {
  %c = piper.matmul %a, %b : tensor<?x4x?xf32>, tensor<2x16x?xf32> -> tensor<2x?x8xf32>
  return %c : tensor<2x?x8xf32>
}

// Linear with and without bias, on a batch of sequences.
// CHECK-LABEL: func.func @linear(
// CHECK-SAME:    %[[X:.*]]: tensor<2x4x16xf32>, %[[W:.*]]: tensor<16x32xf32>, %[[B:.*]]: tensor<32xf32>
// CHECK:         %[[Y:.*]] = piper.linear %[[X]], %[[W]], %[[B]] : tensor<2x4x16xf32>, tensor<16x32xf32>, tensor<32xf32> -> tensor<2x4x32xf32>
// CHECK:         %[[Z:.*]] = piper.linear %[[X]], %[[W]] : tensor<2x4x16xf32>, tensor<16x32xf32> -> tensor<2x4x32xf32>
// CHECK:         return %[[Y]], %[[Z]]
func.func @linear(%x: tensor<2x4x16xf32>, %w: tensor<16x32xf32>, %b: tensor<32xf32>)
    -> (tensor<2x4x32xf32>, tensor<2x4x32xf32>) {
  %y = piper.linear %x, %w, %b : tensor<2x4x16xf32>, tensor<16x32xf32>, tensor<32xf32> -> tensor<2x4x32xf32>
  %z = piper.linear %x, %w : tensor<2x4x16xf32>, tensor<16x32xf32> -> tensor<2x4x32xf32>
  return %y, %z : tensor<2x4x32xf32>, tensor<2x4x32xf32>
}

// A rank-1 x is a single vector.
// CHECK-LABEL: func.func @linear_vector_f64(
// CHECK:         piper.linear %{{.*}}, %{{.*}}, %{{.*}} : tensor<16xf64>, tensor<16x32xf64>, tensor<32xf64> -> tensor<32xf64>
func.func @linear_vector_f64(%x: tensor<16xf64>, %w: tensor<16x32xf64>, %b: tensor<32xf64>) -> tensor<32xf64> {
  %y = piper.linear %x, %w, %b : tensor<16xf64>, tensor<16x32xf64>, tensor<32xf64> -> tensor<32xf64>
  return %y : tensor<32xf64>
}

// Elementwise binary ops.
// CHECK-LABEL: func.func @elementwise(
// CHECK-SAME:    %[[A:.*]]: tensor<4x16xf32>, %[[B:.*]]: tensor<4x16xf32>
// CHECK:         %[[S:.*]] = piper.add %[[A]], %[[B]] : tensor<4x16xf32>
// CHECK:         %[[D:.*]] = piper.sub %[[S]], %[[B]] : tensor<4x16xf32>
// CHECK:         %[[P:.*]] = piper.mul %[[D]], %[[A]] : tensor<4x16xf32>
// CHECK:         return %[[P]]
func.func @elementwise(%a: tensor<4x16xf32>, %b: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %s = piper.add %a, %b : tensor<4x16xf32>
  %d = piper.sub %s, %b : tensor<4x16xf32>
  %p = piper.mul %d, %a : tensor<4x16xf32>
  return %p : tensor<4x16xf32>
}

// Elementwise ops accept rank-0 and dynamic tensors in every element type.
// CHECK-LABEL: func.func @elementwise_types(
// CHECK:         piper.add %{{.*}}, %{{.*}} : tensor<f64>
// CHECK:         piper.mul %{{.*}}, %{{.*}} : tensor<?x8xbf16>
func.func @elementwise_types(%a: tensor<f64>, %b: tensor<?x8xbf16>) -> (tensor<f64>, tensor<?x8xbf16>) {
  %s = piper.add %a, %a : tensor<f64>
  %p = piper.mul %b, %b : tensor<?x8xbf16>
  return %s, %p : tensor<f64>, tensor<?x8xbf16>
}

// Activations, SwiGLU and softmax keep the type.
// CHECK-LABEL: func.func @activations(
// CHECK-SAME:    %[[X:.*]]: tensor<4x64xbf16>, %[[U:.*]]: tensor<4x64xbf16>
// CHECK:         %[[R:.*]] = piper.relu %[[X]] : tensor<4x64xbf16>
// CHECK:         %[[G:.*]] = piper.gelu %[[R]] : tensor<4x64xbf16>
// CHECK:         %[[S:.*]] = piper.silu %[[G]] : tensor<4x64xbf16>
// CHECK:         %[[L:.*]] = piper.sigmoid %[[S]] : tensor<4x64xbf16>
// CHECK:         %[[T:.*]] = piper.tanh %[[L]] : tensor<4x64xbf16>
// CHECK:         %[[W:.*]] = piper.swiglu %[[T]], %[[U]] : tensor<4x64xbf16>
// CHECK:         %[[P:.*]] = piper.softmax %[[W]] : tensor<4x64xbf16>
// CHECK:         return %[[P]]
func.func @activations(%x: tensor<4x64xbf16>, %u: tensor<4x64xbf16>) -> tensor<4x64xbf16> {
  %r = piper.relu %x : tensor<4x64xbf16>
  %g = piper.gelu %r : tensor<4x64xbf16>
  %s = piper.silu %g : tensor<4x64xbf16>
  %l = piper.sigmoid %s : tensor<4x64xbf16>
  %t = piper.tanh %l : tensor<4x64xbf16>
  %w = piper.swiglu %t, %u : tensor<4x64xbf16>
  %p = piper.softmax %w : tensor<4x64xbf16>
  return %p : tensor<4x64xbf16>
}

// RMSNorm: the default epsilon (1e-6) is not printed; others are.
// CHECK-LABEL: func.func @rmsnorm(
// CHECK-SAME:    %[[X:.*]]: tensor<2x4x16xf32>, %[[W:.*]]: tensor<16xf32>
// CHECK:         piper.rmsnorm %[[X]], %[[W]] : tensor<2x4x16xf32>, tensor<16xf32> -> tensor<2x4x16xf32>
// CHECK:         piper.rmsnorm %[[X]], %[[W]] : tensor<2x4x16xf32>, tensor<16xf32> -> tensor<2x4x16xf32>
// CHECK:         piper.rmsnorm %[[X]], %[[W]] {epsilon = 1.000000e-05 : f64} : tensor<2x4x16xf32>, tensor<16xf32> -> tensor<2x4x16xf32>
func.func @rmsnorm(%x: tensor<2x4x16xf32>, %w: tensor<16xf32>) -> (tensor<2x4x16xf32>, tensor<2x4x16xf32>, tensor<2x4x16xf32>) {
  %a = piper.rmsnorm %x, %w : tensor<2x4x16xf32>, tensor<16xf32> -> tensor<2x4x16xf32>
  %b = piper.rmsnorm %x, %w {epsilon = 1.0e-06 : f64} : tensor<2x4x16xf32>, tensor<16xf32> -> tensor<2x4x16xf32>
  %c = piper.rmsnorm %x, %w {epsilon = 1.0e-05} : tensor<2x4x16xf32>, tensor<16xf32> -> tensor<2x4x16xf32>
  return %a, %b, %c : tensor<2x4x16xf32>, tensor<2x4x16xf32>, tensor<2x4x16xf32>
}

// LayerNorm in f64: the default epsilon (1e-5) is not printed.
// CHECK-LABEL: func.func @layernorm(
// CHECK-SAME:    %[[X:.*]]: tensor<4x16xf64>, %[[W:.*]]: tensor<16xf64>, %[[B:.*]]: tensor<16xf64>
// CHECK:         piper.layernorm %[[X]], %[[W]], %[[B]] : tensor<4x16xf64>, tensor<16xf64>, tensor<16xf64> -> tensor<4x16xf64>
// CHECK:         piper.layernorm %[[X]], %[[W]], %[[B]] {epsilon = 1.000000e-03 : f64} : tensor<4x16xf64>, tensor<16xf64>, tensor<16xf64> -> tensor<4x16xf64>
func.func @layernorm(%x: tensor<4x16xf64>, %w: tensor<16xf64>, %b: tensor<16xf64>) -> (tensor<4x16xf64>, tensor<4x16xf64>) {
  %y = piper.layernorm %x, %w, %b : tensor<4x16xf64>, tensor<16xf64>, tensor<16xf64> -> tensor<4x16xf64>
  %z = piper.layernorm %x, %w, %b {epsilon = 1.0e-03} : tensor<4x16xf64>, tensor<16xf64>, tensor<16xf64> -> tensor<4x16xf64>
  return %y, %z : tensor<4x16xf64>, tensor<4x16xf64>
}

// A norm over a dynamic hidden dim takes its size from the weight.
// CHECK-LABEL: func.func @rmsnorm_dynamic(
// CHECK:         piper.rmsnorm %{{.*}}, %{{.*}} : tensor<?x?xf32>, tensor<16xf32> -> tensor<?x16xf32>
func.func @rmsnorm_dynamic(%x: tensor<?x?xf32>, %w: tensor<16xf32>) -> tensor<?x16xf32> {
  %y = piper.rmsnorm %x, %w : tensor<?x?xf32>, tensor<16xf32> -> tensor<?x16xf32>
  return %y : tensor<?x16xf32>
}

// Causal multi-head attention: 4 heads of 8 channels.
// CHECK-LABEL: func.func @attention(
// CHECK-SAME:    %[[Q:.*]]: tensor<2x8x32xf32>, %[[K:.*]]: tensor<2x8x32xf32>, %[[V:.*]]: tensor<2x8x32xf32>
// CHECK:         piper.attention %[[Q]], %[[K]], %[[V]] {num_heads = 4 : i64} : tensor<2x8x32xf32>, tensor<2x8x32xf32>, tensor<2x8x32xf32> -> tensor<2x8x32xf32>
func.func @attention(%q: tensor<2x8x32xf32>, %k: tensor<2x8x32xf32>, %v: tensor<2x8x32xf32>) -> tensor<2x8x32xf32> {
  %o = piper.attention %q, %k, %v {num_heads = 4} : tensor<2x8x32xf32>, tensor<2x8x32xf32>, tensor<2x8x32xf32> -> tensor<2x8x32xf32>
  return %o : tensor<2x8x32xf32>
}

// Attention with a dynamic sequence length, in f64.
// CHECK-LABEL: func.func @attention_dynamic_f64(
// CHECK:         piper.attention %{{.*}}, %{{.*}}, %{{.*}} {num_heads = 2 : i64} : tensor<1x?x16xf64>, tensor<1x?x16xf64>, tensor<1x?x16xf64> -> tensor<1x?x16xf64>
func.func @attention_dynamic_f64(%q: tensor<1x?x16xf64>, %k: tensor<1x?x16xf64>, %v: tensor<1x?x16xf64>) -> tensor<1x?x16xf64> {
  %o = piper.attention %q, %k, %v {num_heads = 2} : tensor<1x?x16xf64>, tensor<1x?x16xf64>, tensor<1x?x16xf64> -> tensor<1x?x16xf64>
  return %o : tensor<1x?x16xf64>
}

// Grouped-query attention: 4 query heads read 2 key/value heads of 8.
// CHECK-LABEL: func.func @attention_grouped(
// CHECK:         piper.attention %{{.*}}, %{{.*}}, %{{.*}} {num_heads = 4 : i64, num_kv_heads = 2 : i64} : tensor<2x8x32xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf32> -> tensor<2x8x32xf32>
func.func @attention_grouped(%q: tensor<2x8x32xf32>, %k: tensor<2x8x16xf32>, %v: tensor<2x8x16xf32>) -> tensor<2x8x32xf32> {
  %o = piper.attention %q, %k, %v {num_heads = 4, num_kv_heads = 2} : tensor<2x8x32xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf32> -> tensor<2x8x32xf32>
  return %o : tensor<2x8x32xf32>
}

// Multi-query attention over a dynamic sequence length.
// CHECK-LABEL: func.func @attention_multi_query(
// CHECK:         piper.attention %{{.*}}, %{{.*}}, %{{.*}} {num_heads = 4 : i64, num_kv_heads = 1 : i64} : tensor<2x?x32xf64>, tensor<2x?x8xf64>, tensor<2x?x8xf64> -> tensor<2x?x32xf64>
func.func @attention_multi_query(%q: tensor<2x?x32xf64>, %k: tensor<2x?x8xf64>, %v: tensor<2x?x8xf64>) -> tensor<2x?x32xf64> {
  %o = piper.attention %q, %k, %v {num_heads = 4, num_kv_heads = 1} : tensor<2x?x32xf64>, tensor<2x?x8xf64>, tensor<2x?x8xf64> -> tensor<2x?x32xf64>
  return %o : tensor<2x?x32xf64>
}

// Per-head q/k norm: one weight of the head dim over every head.
// CHECK-LABEL: func.func @rmsnorm_grouped(
// CHECK:         piper.rmsnorm %{{.*}}, %{{.*}} : tensor<2x8x32xf32>, tensor<8xf32> -> tensor<2x8x32xf32>
func.func @rmsnorm_grouped(%x: tensor<2x8x32xf32>, %w: tensor<8xf32>) -> tensor<2x8x32xf32> {
  %y = piper.rmsnorm %x, %w : tensor<2x8x32xf32>, tensor<8xf32> -> tensor<2x8x32xf32>
  return %y : tensor<2x8x32xf32>
}

// Rotary embedding: theta at its default is not printed; inverse is the
// VJP's.
// CHECK-LABEL: func.func @rope(
// CHECK:         %[[R:.*]] = piper.rope %{{.*}} {head_dim = 8 : i64} : tensor<2x8x32xf32>
// CHECK:         piper.rope %[[R]] {head_dim = 8 : i64, inverse, theta = 1.000000e+06 : f64} : tensor<2x8x32xf32>
func.func @rope(%x: tensor<2x8x32xf32>) -> tensor<2x8x32xf32> {
  %r = piper.rope %x {head_dim = 8 : i64, theta = 10000.0 : f64} : tensor<2x8x32xf32>
  %b = piper.rope %r {head_dim = 8 : i64, theta = 1.0e6 : f64, inverse} : tensor<2x8x32xf32>
  return %b : tensor<2x8x32xf32>
}

// Rotary embedding at positions 16.. (offset) on the first 4 of each
// head's 8 channels (rotary_dim); offset 0 is the default and not printed.
// CHECK-LABEL: func.func @rope_offset_partial(
// CHECK:         %[[R:.*]] = piper.rope %{{.*}} {head_dim = 8 : i64, offset = 16 : i64, rotary_dim = 4 : i64} : tensor<2x8x32xf32>
// CHECK:         piper.rope %[[R]] {head_dim = 8 : i64, rotary_dim = 8 : i64} : tensor<2x8x32xf32>
func.func @rope_offset_partial(%x: tensor<2x8x32xf32>) -> tensor<2x8x32xf32> {
  %r = piper.rope %x {head_dim = 8 : i64, offset = 16 : i64, rotary_dim = 4 : i64} : tensor<2x8x32xf32>
  %b = piper.rope %r {head_dim = 8 : i64, offset = 0 : i64, rotary_dim = 8 : i64} : tensor<2x8x32xf32>
  return %b : tensor<2x8x32xf32>
}

// Exact GELU.
// CHECK-LABEL: func.func @gelu_erf(
// CHECK:         piper.gelu_erf %{{.*}} : tensor<4x16xbf16>
func.func @gelu_erf(%x: tensor<4x16xbf16>) -> tensor<4x16xbf16> {
  %y = piper.gelu_erf %x : tensor<4x16xbf16>
  return %y : tensor<4x16xbf16>
}

// Embedding lookup of a [B, S] batch of ids.
// CHECK-LABEL: func.func @embedding(
// CHECK-SAME:    %[[T:.*]]: tensor<100x16xbf16>, %[[IDS:.*]]: tensor<2x8xi64>
// CHECK:         piper.embedding %[[T]], %[[IDS]] : tensor<100x16xbf16>, tensor<2x8xi64> -> tensor<2x8x16xbf16>
func.func @embedding(%table: tensor<100x16xbf16>, %ids: tensor<2x8xi64>) -> tensor<2x8x16xbf16> {
  %e = piper.embedding %table, %ids : tensor<100x16xbf16>, tensor<2x8xi64> -> tensor<2x8x16xbf16>
  return %e : tensor<2x8x16xbf16>
}

// Mean cross-entropy over 16 rows gives a scalar tensor.
// CHECK-LABEL: func.func @cross_entropy(
// CHECK-SAME:    %[[L:.*]]: tensor<16x100xf32>, %[[Y:.*]]: tensor<16xi64>
// CHECK:         piper.cross_entropy %[[L]], %[[Y]] : tensor<16x100xf32>, tensor<16xi64> -> tensor<f32>
func.func @cross_entropy(%logits: tensor<16x100xf32>, %labels: tensor<16xi64>) -> tensor<f32> {
  %loss = piper.cross_entropy %logits, %labels : tensor<16x100xf32>, tensor<16xi64> -> tensor<f32>
  return %loss : tensor<f32>
}

// Reshape keeps the element count; transpose permutes dims.
// CHECK-LABEL: func.func @reshape_transpose(
// CHECK-SAME:    %[[X:.*]]: tensor<2x8x16xf64>
// CHECK:         %[[R:.*]] = piper.reshape %[[X]] : tensor<2x8x16xf64> -> tensor<16x16xf64>
// CHECK:         %[[T:.*]] = piper.transpose %[[R]] permutation = [1, 0] : tensor<16x16xf64> -> tensor<16x16xf64>
// CHECK:         piper.transpose %[[X]] permutation = [2, 0, 1] : tensor<2x8x16xf64> -> tensor<16x2x8xf64>
func.func @reshape_transpose(%x: tensor<2x8x16xf64>) -> (tensor<16x16xf64>, tensor<16x2x8xf64>) {
  %r = piper.reshape %x : tensor<2x8x16xf64> -> tensor<16x16xf64>
  %t = piper.transpose %r permutation = [1, 0] : tensor<16x16xf64> -> tensor<16x16xf64>
  %u = piper.transpose %x permutation = [2, 0, 1] : tensor<2x8x16xf64> -> tensor<16x2x8xf64>
  return %t, %u : tensor<16x16xf64>, tensor<16x2x8xf64>
}

// Transposes of rank 0 and of dynamic dims.
// CHECK-LABEL: func.func @transpose_edge_cases(
// CHECK:         piper.transpose %{{.*}} permutation = [] : tensor<f32> -> tensor<f32>
// CHECK:         piper.transpose %{{.*}} permutation = [1, 0] : tensor<?x4xf32> -> tensor<4x?xf32>
func.func @transpose_edge_cases(%s: tensor<f32>, %x: tensor<?x4xf32>) -> (tensor<f32>, tensor<4x?xf32>) {
  %a = piper.transpose %s permutation = [] : tensor<f32> -> tensor<f32>
  %b = piper.transpose %x permutation = [1, 0] : tensor<?x4xf32> -> tensor<4x?xf32>
  return %a, %b : tensor<f32>, tensor<4x?xf32>
}

// A Qwen3-style MoE block: route, dispatch, expert FFNs, combine.
// CHECK-LABEL: func.func @moe(
// CHECK-SAME:    %[[X:[^:]*]]: tensor<16x64xf32>, %[[WR:[^:]*]]: tensor<64x8xf32>,
// CHECK-SAME:    %[[WG:[^:]*]]: tensor<8x64x128xf32>, %[[WU:[^:]*]]: tensor<8x64x128xf32>, %[[WD:[^:]*]]: tensor<8x128x64xf32>
// CHECK:         %[[WTS:.*]], %[[IDX:.*]] = piper.router %[[X]], %[[WR]] {top_k = 2 : i64} : tensor<16x64xf32>, tensor<64x8xf32> -> tensor<16x2xf32>, tensor<16x2xi64>
// CHECK:         %[[BUF:.*]] = piper.dispatch %[[X]], %[[IDX]] {capacity = 6 : i64} : tensor<16x64xf32>, tensor<16x2xi64> -> tensor<8x6x64xf32>
// CHECK:         %[[Y:.*]] = piper.expert_ffn %[[BUF]], %[[WG]], %[[WU]], %[[WD]] : tensor<8x6x64xf32>, tensor<8x64x128xf32>, tensor<8x64x128xf32>, tensor<8x128x64xf32> -> tensor<8x6x64xf32>
// CHECK:         %[[OUT:.*]] = piper.combine %[[Y]], %[[WTS]], %[[IDX]] : tensor<8x6x64xf32>, tensor<16x2xf32>, tensor<16x2xi64> -> tensor<16x64xf32>
// CHECK:         return %[[OUT]]
func.func @moe(%x: tensor<16x64xf32>, %wr: tensor<64x8xf32>,
               %wg: tensor<8x64x128xf32>, %wu: tensor<8x64x128xf32>, %wd: tensor<8x128x64xf32>) -> tensor<16x64xf32> {
  %wts, %idx = piper.router %x, %wr {top_k = 2} : tensor<16x64xf32>, tensor<64x8xf32> -> tensor<16x2xf32>, tensor<16x2xi64>
  %buf = piper.dispatch %x, %idx {capacity = 6} : tensor<16x64xf32>, tensor<16x2xi64> -> tensor<8x6x64xf32>
  %y = piper.expert_ffn %buf, %wg, %wu, %wd : tensor<8x6x64xf32>, tensor<8x64x128xf32>, tensor<8x64x128xf32>, tensor<8x128x64xf32> -> tensor<8x6x64xf32>
  %out = piper.combine %y, %wts, %idx : tensor<8x6x64xf32>, tensor<16x2xf32>, tensor<16x2xi64> -> tensor<16x64xf32>
  return %out : tensor<16x64xf32>
}

// The MoE ops in bf16 with a dynamic token count; top_k may equal E.
// CHECK-LABEL: func.func @moe_dynamic_bf16(
// CHECK:         piper.router %{{.*}}, %{{.*}} {top_k = 4 : i64} : tensor<?x32xbf16>, tensor<32x4xbf16> -> tensor<?x4xbf16>, tensor<?x4xi64>
// CHECK:         piper.dispatch %{{.*}}, %{{.*}} {capacity = 3 : i64} : tensor<?x32xbf16>, tensor<?x4xi64> -> tensor<4x3x32xbf16>
// CHECK:         piper.expert_ffn %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : tensor<4x3x32xbf16>, tensor<4x32x48xbf16>, tensor<4x32x48xbf16>, tensor<4x48x32xbf16> -> tensor<4x3x32xbf16>
// CHECK:         piper.combine %{{.*}}, %{{.*}}, %{{.*}} : tensor<4x3x32xbf16>, tensor<?x4xbf16>, tensor<?x4xi64> -> tensor<?x32xbf16>
func.func @moe_dynamic_bf16(%x: tensor<?x32xbf16>, %wr: tensor<32x4xbf16>,
                            %wg: tensor<4x32x48xbf16>, %wu: tensor<4x32x48xbf16>, %wd: tensor<4x48x32xbf16>) -> tensor<?x32xbf16> {
  %wts, %idx = piper.router %x, %wr {top_k = 4} : tensor<?x32xbf16>, tensor<32x4xbf16> -> tensor<?x4xbf16>, tensor<?x4xi64>
  %buf = piper.dispatch %x, %idx {capacity = 3} : tensor<?x32xbf16>, tensor<?x4xi64> -> tensor<4x3x32xbf16>
  %y = piper.expert_ffn %buf, %wg, %wu, %wd : tensor<4x3x32xbf16>, tensor<4x32x48xbf16>, tensor<4x32x48xbf16>, tensor<4x48x32xbf16> -> tensor<4x3x32xbf16>
  %out = piper.combine %y, %wts, %idx : tensor<4x3x32xbf16>, tensor<?x4xbf16>, tensor<?x4xi64> -> tensor<?x32xbf16>
  return %out : tensor<?x32xbf16>
}

// An f64 MoE block, as the reference tests run it.
// CHECK-LABEL: func.func @moe_f64(
// CHECK:         piper.router %{{.*}}, %{{.*}} {top_k = 1 : i64} : tensor<4x8xf64>, tensor<8x2xf64> -> tensor<4x1xf64>, tensor<4x1xi64>
// CHECK:         piper.dispatch %{{.*}}, %{{.*}} {capacity = 4 : i64} : tensor<4x8xf64>, tensor<4x1xi64> -> tensor<2x4x8xf64>
// CHECK:         piper.expert_ffn %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : tensor<2x4x8xf64>, tensor<2x8x16xf64>, tensor<2x8x16xf64>, tensor<2x16x8xf64> -> tensor<2x4x8xf64>
// CHECK:         piper.combine %{{.*}}, %{{.*}}, %{{.*}} : tensor<2x4x8xf64>, tensor<4x1xf64>, tensor<4x1xi64> -> tensor<4x8xf64>
func.func @moe_f64(%x: tensor<4x8xf64>, %wr: tensor<8x2xf64>,
                   %wg: tensor<2x8x16xf64>, %wu: tensor<2x8x16xf64>, %wd: tensor<2x16x8xf64>) -> tensor<4x8xf64> {
  %wts, %idx = piper.router %x, %wr {top_k = 1} : tensor<4x8xf64>, tensor<8x2xf64> -> tensor<4x1xf64>, tensor<4x1xi64>
  %buf = piper.dispatch %x, %idx {capacity = 4} : tensor<4x8xf64>, tensor<4x1xi64> -> tensor<2x4x8xf64>
  %y = piper.expert_ffn %buf, %wg, %wu, %wd : tensor<2x4x8xf64>, tensor<2x8x16xf64>, tensor<2x8x16xf64>, tensor<2x16x8xf64> -> tensor<2x4x8xf64>
  %out = piper.combine %y, %wts, %idx : tensor<2x4x8xf64>, tensor<4x1xf64>, tensor<4x1xi64> -> tensor<4x8xf64>
  return %out : tensor<4x8xf64>
}
