// RUN: piper-opt %s -split-input-file -verify-diagnostics
// Every verifier rule of the piper NN ops, with its exact diagnostic.

//===----------------------------------------------------------------------===//
// Operand types
//===----------------------------------------------------------------------===//

// NN ops compute in f32, f64 or bf16 only.
func.func @f16_operand_is_rejected(%a: tensor<4x16xf16>, %b: tensor<16x8xf16>) {
  // expected-error@+1 {{'piper.matmul' op operand #0 must be ranked tensor of f32, f64 or bf16 values, but got 'tensor<4x16xf16>'}}
  %0 = piper.matmul %a, %b : tensor<4x16xf16>, tensor<16x8xf16> -> tensor<4x8xf16>
  return
}

// -----

// Integer tensors are not float tensors.
func.func @integer_operand_is_rejected(%x: tensor<4xi32>) {
  // expected-error@+1 {{'piper.relu' op operand #0 must be ranked tensor of f32, f64 or bf16 values, but got 'tensor<4xi32>'}}
  %0 = piper.relu %x : tensor<4xi32>
  return
}

// -----

// NN ops need ranked tensors (the custom form cannot even parse one).
func.func @unranked_operand_is_rejected(%x: tensor<*xf32>) {
  // expected-error@+1 {{'piper.gelu' op operand #0 must be ranked tensor of f32, f64 or bf16 values, but got 'tensor<*xf32>'}}
  %0 = "piper.gelu"(%x) : (tensor<*xf32>) -> tensor<*xf32>
  return
}

// -----

// Index tensors hold i64.
func.func @i32_ids_are_rejected(%table: tensor<100x16xf32>, %ids: tensor<8xi32>) {
  // expected-error@+1 {{'piper.embedding' op operand #1 must be ranked tensor of i64 values, but got 'tensor<8xi32>'}}
  %0 = piper.embedding %table, %ids : tensor<100x16xf32>, tensor<8xi32> -> tensor<8x16xf32>
  return
}

//===----------------------------------------------------------------------===//
// piper.matmul
//===----------------------------------------------------------------------===//

// -----

// Operands share one element type.
func.func @matmul_mixed_element_types_are_rejected(%a: tensor<4x16xf32>, %b: tensor<16x8xf64>) {
  // expected-error@+1 {{'piper.matmul' op element type of rhs (f64) does not match element type of lhs (f32)}}
  %0 = piper.matmul %a, %b : tensor<4x16xf32>, tensor<16x8xf64> -> tensor<4x8xf32>
  return
}

// -----

// The result has the operands' element type.
func.func @matmul_result_element_type_is_checked(%a: tensor<4x16xf32>, %b: tensor<16x8xf32>) {
  // expected-error@+1 {{'piper.matmul' op element type of result (bf16) does not match element type of lhs (f32)}}
  %0 = piper.matmul %a, %b : tensor<4x16xf32>, tensor<16x8xf32> -> tensor<4x8xbf16>
  return
}

// -----

// lhs is at least a matrix.
func.func @matmul_vector_lhs_is_rejected(%a: tensor<16xf32>, %b: tensor<16x8xf32>) {
  // expected-error@+1 {{'piper.matmul' op lhs must have rank >= 2, got tensor<16xf32>}}
  %0 = piper.matmul %a, %b : tensor<16xf32>, tensor<16x8xf32> -> tensor<8xf32>
  return
}

// -----

// A matrix lhs takes a matrix rhs.
func.func @matmul_batched_rhs_of_matrix_is_rejected(%a: tensor<4x16xf32>, %b: tensor<2x16x8xf32>) {
  // expected-error@+1 {{'piper.matmul' op rhs must have rank 2, got tensor<2x16x8xf32>}}
  %0 = piper.matmul %a, %b : tensor<4x16xf32>, tensor<2x16x8xf32> -> tensor<2x4x8xf32>
  return
}

// -----

// A batched rhs has all of lhs's batch dims; there is no partial broadcast.
func.func @matmul_rhs_rank_mismatch_is_rejected(%a: tensor<3x2x4x16xf32>, %b: tensor<2x16x8xf32>) {
  // expected-error@+1 {{'piper.matmul' op rhs must have rank 2 or the rank of lhs (4), got tensor<2x16x8xf32>}}
  %0 = piper.matmul %a, %b : tensor<3x2x4x16xf32>, tensor<2x16x8xf32> -> tensor<3x2x4x8xf32>
  return
}

// -----

// Batch dims of lhs and a batched rhs are equal.
func.func @matmul_batch_mismatch_is_rejected(%a: tensor<2x4x16xf32>, %b: tensor<3x16x8xf32>) {
  // expected-error@+1 {{'piper.matmul' op batch dim 0 of lhs (size 2) does not match batch dim 0 of rhs (size 3)}}
  %0 = piper.matmul %a, %b : tensor<2x4x16xf32>, tensor<3x16x8xf32> -> tensor<2x4x8xf32>
  return
}

// -----

// The contracting dims agree.
func.func @matmul_contracting_mismatch_is_rejected(%a: tensor<4x16xf32>, %b: tensor<8x32xf32>) {
  // expected-error@+1 {{'piper.matmul' op contracting dim of lhs (size 16) does not match dim 0 of rhs (size 8)}}
  %0 = piper.matmul %a, %b : tensor<4x16xf32>, tensor<8x32xf32> -> tensor<4x32xf32>
  return
}

// -----

// ... also in the batched form, where rhs contracts over its dim -2.
func.func @matmul_batched_contracting_mismatch_is_rejected(%a: tensor<2x4x16xf32>, %b: tensor<2x8x32xf32>) {
  // expected-error@+1 {{'piper.matmul' op contracting dim of lhs (size 16) does not match dim 1 of rhs (size 8)}}
  %0 = piper.matmul %a, %b : tensor<2x4x16xf32>, tensor<2x8x32xf32> -> tensor<2x4x32xf32>
  return
}

// -----

// The result shape is [batch, M, N].
func.func @matmul_result_shape_is_checked(%a: tensor<4x16xf32>, %b: tensor<16x32xf32>) {
  // expected-error@+1 {{'piper.matmul' op expected result type tensor<4x32xf32>, got tensor<4x31xf32>}}
  %0 = piper.matmul %a, %b : tensor<4x16xf32>, tensor<16x32xf32> -> tensor<4x31xf32>
  return
}

// -----

// A shared rhs keeps lhs's batch dims in the result.
func.func @matmul_shared_rhs_result_rank_is_checked(%a: tensor<2x4x16xf32>, %w: tensor<16x8xf32>) {
  // expected-error@+1 {{'piper.matmul' op expected result type tensor<2x4x8xf32>, got tensor<4x8xf32>}}
  %0 = piper.matmul %a, %w : tensor<2x4x16xf32>, tensor<16x8xf32> -> tensor<4x8xf32>
  return
}

// -----

// A `?` on an operand still fixes what it can: the printed expectation keeps it.
func.func @matmul_dynamic_result_mismatch_is_rejected(%a: tensor<?x16xf32>, %b: tensor<16x32xf32>) {
  // expected-error@+1 {{'piper.matmul' op expected result type tensor<?x32xf32>, got tensor<?x16xf32>}}
  %0 = piper.matmul %a, %b : tensor<?x16xf32>, tensor<16x32xf32> -> tensor<?x16xf32>
  return
}

//===----------------------------------------------------------------------===//
// piper.linear
//===----------------------------------------------------------------------===//

// -----

// The bias has the element type of x.
func.func @linear_bias_element_type_is_checked(%x: tensor<4x16xf32>, %w: tensor<16x32xf32>, %b: tensor<32xbf16>) {
  // expected-error@+1 {{'piper.linear' op element type of bias (bf16) does not match element type of x (f32)}}
  %0 = piper.linear %x, %w, %b : tensor<4x16xf32>, tensor<16x32xf32>, tensor<32xbf16> -> tensor<4x32xf32>
  return
}

// -----

// x has a feature dim.
func.func @linear_scalar_x_is_rejected(%x: tensor<f32>, %w: tensor<16x32xf32>) {
  // expected-error@+1 {{'piper.linear' op x must have rank >= 1, got tensor<f32>}}
  %0 = piper.linear %x, %w : tensor<f32>, tensor<16x32xf32> -> tensor<32xf32>
  return
}

// -----

// The weight is a matrix.
func.func @linear_weight_rank_is_checked(%x: tensor<4x16xf32>, %w: tensor<2x16x32xf32>) {
  // expected-error@+1 {{'piper.linear' op w must have rank 2, got tensor<2x16x32xf32>}}
  %0 = piper.linear %x, %w : tensor<4x16xf32>, tensor<2x16x32xf32> -> tensor<4x32xf32>
  return
}

// -----

// The bias is a vector.
func.func @linear_bias_rank_is_checked(%x: tensor<4x16xf32>, %w: tensor<16x32xf32>, %b: tensor<1x32xf32>) {
  // expected-error@+1 {{'piper.linear' op bias must have rank 1, got tensor<1x32xf32>}}
  %0 = piper.linear %x, %w, %b : tensor<4x16xf32>, tensor<16x32xf32>, tensor<1x32xf32> -> tensor<4x32xf32>
  return
}

// -----

// The last dim of x meets dim 0 of the weight.
func.func @linear_input_mismatch_is_rejected(%x: tensor<4x16xf32>, %w: tensor<8x32xf32>) {
  // expected-error@+1 {{'piper.linear' op last dim of x (size 16) does not match dim 0 of w (size 8)}}
  %0 = piper.linear %x, %w : tensor<4x16xf32>, tensor<8x32xf32> -> tensor<4x32xf32>
  return
}

// -----

// The bias has one entry per output feature.
func.func @linear_bias_size_is_checked(%x: tensor<4x16xf32>, %w: tensor<16x32xf32>, %b: tensor<31xf32>) {
  // expected-error@+1 {{'piper.linear' op dim 1 of w (size 32) does not match dim 0 of bias (size 31)}}
  %0 = piper.linear %x, %w, %b : tensor<4x16xf32>, tensor<16x32xf32>, tensor<31xf32> -> tensor<4x32xf32>
  return
}

// -----

// The result replaces x's last dim by the output features.
func.func @linear_result_shape_is_checked(%x: tensor<2x4x16xf32>, %w: tensor<16x32xf32>) {
  // expected-error@+1 {{'piper.linear' op expected result type tensor<2x4x32xf32>, got tensor<2x4x16xf32>}}
  %0 = piper.linear %x, %w : tensor<2x4x16xf32>, tensor<16x32xf32> -> tensor<2x4x16xf32>
  return
}

// -----

// With a dynamic weight dim, the bias supplies the output size.
func.func @linear_output_size_from_bias_is_checked(%x: tensor<4x16xf32>, %w: tensor<16x?xf32>, %b: tensor<32xf32>) {
  // expected-error@+1 {{'piper.linear' op expected result type tensor<4x32xf32>, got tensor<4x31xf32>}}
  %0 = piper.linear %x, %w, %b : tensor<4x16xf32>, tensor<16x?xf32>, tensor<32xf32> -> tensor<4x31xf32>
  return
}

//===----------------------------------------------------------------------===//
// Elementwise ops and activations
//===----------------------------------------------------------------------===//

// -----

// add does not broadcast.
func.func @add_shape_mismatch_is_rejected(%a: tensor<4x16xf32>, %b: tensor<16xf32>) {
  // expected-error@+1 {{'piper.add' op failed to verify that all of {lhs, rhs, result} have same type}}
  %0 = "piper.add"(%a, %b) : (tensor<4x16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
  return
}

// -----

// sub's operands share one element type.
func.func @sub_mixed_element_types_are_rejected(%a: tensor<4xf32>, %b: tensor<4xf64>) {
  // expected-error@+1 {{'piper.sub' op failed to verify that all of {lhs, rhs, result} have same type}}
  %0 = "piper.sub"(%a, %b) : (tensor<4xf32>, tensor<4xf64>) -> tensor<4xf32>
  return
}

// -----

// mul's result has the operands' type; `?` is not the same type as 4.
func.func @mul_result_type_is_checked(%a: tensor<4xf32>, %b: tensor<4xf32>) {
  // expected-error@+1 {{'piper.mul' op failed to verify that all of {lhs, rhs, result} have same type}}
  %0 = "piper.mul"(%a, %b) : (tensor<4xf32>, tensor<4xf32>) -> tensor<?xf32>
  return
}

// -----

// mul computes on floats only.
func.func @mul_integer_is_rejected(%a: tensor<4xi64>) {
  // expected-error@+1 {{'piper.mul' op operand #0 must be ranked tensor of f32, f64 or bf16 values, but got 'tensor<4xi64>'}}
  %0 = piper.mul %a, %a : tensor<4xi64>
  return
}

// -----

// relu keeps the type.
func.func @relu_result_type_is_checked(%x: tensor<4xf32>) {
  // expected-error@+1 {{'piper.relu' op failed to verify that all of {x, result} have same type}}
  %0 = "piper.relu"(%x) : (tensor<4xf32>) -> tensor<4xf64>
  return
}

// -----

// gelu keeps the type.
func.func @gelu_result_type_is_checked(%x: tensor<4xf32>) {
  // expected-error@+1 {{'piper.gelu' op failed to verify that all of {x, result} have same type}}
  %0 = "piper.gelu"(%x) : (tensor<4xf32>) -> tensor<8xf32>
  return
}

// -----

// silu keeps the type.
func.func @silu_result_type_is_checked(%x: tensor<4xbf16>) {
  // expected-error@+1 {{'piper.silu' op failed to verify that all of {x, result} have same type}}
  %0 = "piper.silu"(%x) : (tensor<4xbf16>) -> tensor<4xf32>
  return
}

// -----

// sigmoid keeps the type.
func.func @sigmoid_result_type_is_checked(%x: tensor<4xf32>) {
  // expected-error@+1 {{'piper.sigmoid' op failed to verify that all of {x, result} have same type}}
  %0 = "piper.sigmoid"(%x) : (tensor<4xf32>) -> tensor<4xf64>
  return
}

// -----

// tanh keeps the type.
func.func @tanh_result_type_is_checked(%x: tensor<4xf32>) {
  // expected-error@+1 {{'piper.tanh' op failed to verify that all of {x, result} have same type}}
  %0 = "piper.tanh"(%x) : (tensor<4xf32>) -> tensor<2xf32>
  return
}

// -----

// sigmoid takes float tensors only.
func.func @sigmoid_of_integers_is_rejected(%x: tensor<4xi64>) {
  // expected-error@+1 {{'piper.sigmoid' op operand #0 must be ranked tensor of f32, f64 or bf16 values, but got 'tensor<4xi64>'}}
  %0 = "piper.sigmoid"(%x) : (tensor<4xi64>) -> tensor<4xi64>
  return
}

// -----

// swiglu's gate and up have one type.
func.func @swiglu_shape_mismatch_is_rejected(%g: tensor<4x64xf32>, %u: tensor<4x32xf32>) {
  // expected-error@+1 {{'piper.swiglu' op failed to verify that all of {gate, up, result} have same type}}
  %0 = "piper.swiglu"(%g, %u) : (tensor<4x64xf32>, tensor<4x32xf32>) -> tensor<4x64xf32>
  return
}

// -----

// swiglu computes on floats only.
func.func @swiglu_integer_is_rejected(%g: tensor<4xi64>) {
  // expected-error@+1 {{'piper.swiglu' op operand #0 must be ranked tensor of f32, f64 or bf16 values, but got 'tensor<4xi64>'}}
  %0 = piper.swiglu %g, %g : tensor<4xi64>
  return
}

//===----------------------------------------------------------------------===//
// piper.softmax
//===----------------------------------------------------------------------===//

// -----

// softmax normalises over the last dim, so there must be one.
func.func @softmax_of_scalar_is_rejected(%x: tensor<f32>) {
  // expected-error@+1 {{'piper.softmax' op x must have rank >= 1, got tensor<f32>}}
  %0 = piper.softmax %x : tensor<f32>
  return
}

// -----

// softmax keeps the type.
func.func @softmax_result_type_is_checked(%x: tensor<4x8xf32>) {
  // expected-error@+1 {{'piper.softmax' op failed to verify that all of {x, result} have same type}}
  %0 = "piper.softmax"(%x) : (tensor<4x8xf32>) -> tensor<4xf32>
  return
}

//===----------------------------------------------------------------------===//
// piper.rmsnorm
//===----------------------------------------------------------------------===//

// -----

// The weight has x's element type.
func.func @rmsnorm_weight_element_type_is_checked(%x: tensor<4x16xf32>, %w: tensor<16xf64>) {
  // expected-error@+1 {{'piper.rmsnorm' op element type of w (f64) does not match element type of x (f32)}}
  %0 = piper.rmsnorm %x, %w : tensor<4x16xf32>, tensor<16xf64> -> tensor<4x16xf32>
  return
}

// -----

// x has a dim to normalise over.
func.func @rmsnorm_scalar_x_is_rejected(%x: tensor<f32>, %w: tensor<1xf32>) {
  // expected-error@+1 {{'piper.rmsnorm' op x must have rank >= 1, got tensor<f32>}}
  %0 = piper.rmsnorm %x, %w : tensor<f32>, tensor<1xf32> -> tensor<f32>
  return
}

// -----

// The weight is a vector.
func.func @rmsnorm_weight_rank_is_checked(%x: tensor<4x16xf32>, %w: tensor<4x16xf32>) {
  // expected-error@+1 {{'piper.rmsnorm' op w must have rank 1, got tensor<4x16xf32>}}
  %0 = piper.rmsnorm %x, %w : tensor<4x16xf32>, tensor<4x16xf32> -> tensor<4x16xf32>
  return
}

// -----

// The weight has one entry per channel of a group, and groups tile the
// channels.
func.func @rmsnorm_weight_size_is_checked(%x: tensor<4x16xf32>, %w: tensor<6xf32>) {
  // expected-error@+1 {{'piper.rmsnorm' op dim 0 of w (size 6) does not divide the last dim of x (size 16)}}
  %0 = piper.rmsnorm %x, %w : tensor<4x16xf32>, tensor<6xf32> -> tensor<4x16xf32>
  return
}

// -----

// A grouped norm keeps x's type.
func.func @grouped_rmsnorm_result_type_is_checked(%x: tensor<4x16xf32>, %w: tensor<4xf32>) {
  // expected-error@+1 {{'piper.rmsnorm' op expected result type tensor<4x16xf32>, got tensor<4x4xf32>}}
  %0 = piper.rmsnorm %x, %w : tensor<4x16xf32>, tensor<4xf32> -> tensor<4x4xf32>
  return
}

// -----

// epsilon keeps the denominator away from 0.
func.func @rmsnorm_zero_epsilon_is_rejected(%x: tensor<4x16xf32>, %w: tensor<16xf32>) {
  // expected-error@+1 {{'piper.rmsnorm' op epsilon must be > 0, got 0}}
  %0 = piper.rmsnorm %x, %w {epsilon = 0.0} : tensor<4x16xf32>, tensor<16xf32> -> tensor<4x16xf32>
  return
}

// -----

// Negative epsilon is rejected too.
func.func @rmsnorm_negative_epsilon_is_rejected(%x: tensor<4x16xf32>, %w: tensor<16xf32>) {
  // expected-error@+1 {{'piper.rmsnorm' op epsilon must be > 0, got -1e-06}}
  %0 = piper.rmsnorm %x, %w {epsilon = -1.0e-06} : tensor<4x16xf32>, tensor<16xf32> -> tensor<4x16xf32>
  return
}

// -----

// epsilon is an f64.
func.func @rmsnorm_f32_epsilon_is_rejected(%x: tensor<4x16xf32>, %w: tensor<16xf32>) {
  // expected-error@+1 {{'piper.rmsnorm' op attribute 'epsilon' failed to satisfy constraint: 64-bit float attribute}}
  %0 = piper.rmsnorm %x, %w {epsilon = 1.0e-06 : f32} : tensor<4x16xf32>, tensor<16xf32> -> tensor<4x16xf32>
  return
}

// -----

// The result has x's type.
func.func @rmsnorm_result_type_is_checked(%x: tensor<4x16xf32>, %w: tensor<16xf32>) {
  // expected-error@+1 {{'piper.rmsnorm' op expected result type tensor<4x16xf32>, got tensor<16x4xf32>}}
  %0 = piper.rmsnorm %x, %w : tensor<4x16xf32>, tensor<16xf32> -> tensor<16x4xf32>
  return
}

//===----------------------------------------------------------------------===//
// piper.layernorm
//===----------------------------------------------------------------------===//

// -----

// The bias has x's element type.
func.func @layernorm_bias_element_type_is_checked(%x: tensor<4x16xf32>, %w: tensor<16xf32>, %b: tensor<16xbf16>) {
  // expected-error@+1 {{'piper.layernorm' op element type of b (bf16) does not match element type of x (f32)}}
  %0 = piper.layernorm %x, %w, %b : tensor<4x16xf32>, tensor<16xf32>, tensor<16xbf16> -> tensor<4x16xf32>
  return
}

// -----

// x has a dim to normalise over.
func.func @layernorm_scalar_x_is_rejected(%x: tensor<f32>, %w: tensor<1xf32>, %b: tensor<1xf32>) {
  // expected-error@+1 {{'piper.layernorm' op x must have rank >= 1, got tensor<f32>}}
  %0 = piper.layernorm %x, %w, %b : tensor<f32>, tensor<1xf32>, tensor<1xf32> -> tensor<f32>
  return
}

// -----

// The weight is a vector.
func.func @layernorm_weight_rank_is_checked(%x: tensor<4x16xf32>, %w: tensor<1x16xf32>, %b: tensor<16xf32>) {
  // expected-error@+1 {{'piper.layernorm' op w must have rank 1, got tensor<1x16xf32>}}
  %0 = piper.layernorm %x, %w, %b : tensor<4x16xf32>, tensor<1x16xf32>, tensor<16xf32> -> tensor<4x16xf32>
  return
}

// -----

// The bias is a vector.
func.func @layernorm_bias_rank_is_checked(%x: tensor<4x16xf32>, %w: tensor<16xf32>, %b: tensor<f32>) {
  // expected-error@+1 {{'piper.layernorm' op b must have rank 1, got tensor<f32>}}
  %0 = piper.layernorm %x, %w, %b : tensor<4x16xf32>, tensor<16xf32>, tensor<f32> -> tensor<4x16xf32>
  return
}

// -----

// The weight has one entry per channel.
func.func @layernorm_weight_size_is_checked(%x: tensor<4x16xf32>, %w: tensor<15xf32>, %b: tensor<16xf32>) {
  // expected-error@+1 {{'piper.layernorm' op last dim of x (size 16) does not match dim 0 of w (size 15)}}
  %0 = piper.layernorm %x, %w, %b : tensor<4x16xf32>, tensor<15xf32>, tensor<16xf32> -> tensor<4x16xf32>
  return
}

// -----

// The bias has one entry per channel, checked against w when x's is `?`.
func.func @layernorm_bias_size_is_checked(%x: tensor<4x?xf32>, %w: tensor<16xf32>, %b: tensor<12xf32>) {
  // expected-error@+1 {{'piper.layernorm' op dim 0 of w (size 16) does not match dim 0 of b (size 12)}}
  %0 = piper.layernorm %x, %w, %b : tensor<4x?xf32>, tensor<16xf32>, tensor<12xf32> -> tensor<4x?xf32>
  return
}

// -----

// epsilon must be positive.
func.func @layernorm_zero_epsilon_is_rejected(%x: tensor<4x16xf32>, %w: tensor<16xf32>, %b: tensor<16xf32>) {
  // expected-error@+1 {{'piper.layernorm' op epsilon must be > 0, got 0}}
  %0 = piper.layernorm %x, %w, %b {epsilon = 0.0} : tensor<4x16xf32>, tensor<16xf32>, tensor<16xf32> -> tensor<4x16xf32>
  return
}

// -----

// The result has x's type.
func.func @layernorm_result_type_is_checked(%x: tensor<4x16xf32>, %w: tensor<16xf32>, %b: tensor<16xf32>) {
  // expected-error@+1 {{'piper.layernorm' op expected result type tensor<4x16xf32>, got tensor<4x8xf32>}}
  %0 = piper.layernorm %x, %w, %b : tensor<4x16xf32>, tensor<16xf32>, tensor<16xf32> -> tensor<4x8xf32>
  return
}

//===----------------------------------------------------------------------===//
// piper.attention
//===----------------------------------------------------------------------===//

// -----

// q, k and v share one element type.
func.func @attention_mixed_element_types_are_rejected(%q: tensor<2x8x32xf32>, %v: tensor<2x8x32xbf16>) {
  // expected-error@+1 {{'piper.attention' op element type of v (bf16) does not match element type of q (f32)}}
  %0 = piper.attention %q, %q, %v {num_heads = 4} : tensor<2x8x32xf32>, tensor<2x8x32xf32>, tensor<2x8x32xbf16> -> tensor<2x8x32xf32>
  return
}

// -----

// q, k and v are [B, S, D].
func.func @attention_rank_is_checked(%q: tensor<2x8x32xf32>, %k: tensor<8x32xf32>) {
  // expected-error@+1 {{'piper.attention' op k must have rank 3, got tensor<8x32xf32>}}
  %0 = piper.attention %q, %k, %q {num_heads = 4} : tensor<2x8x32xf32>, tensor<8x32xf32>, tensor<2x8x32xf32> -> tensor<2x8x32xf32>
  return
}

// -----

// Self-attention: k has q's sequence length.
func.func @attention_sequence_mismatch_is_rejected(%q: tensor<2x8x32xf32>, %k: tensor<2x16x32xf32>) {
  // expected-error@+1 {{'piper.attention' op dim 1 of q (size 8) does not match dim 1 of k (size 16)}}
  %0 = piper.attention %q, %k, %k {num_heads = 4} : tensor<2x8x32xf32>, tensor<2x16x32xf32>, tensor<2x16x32xf32> -> tensor<2x8x32xf32>
  return
}

// -----

// A `?` in q does not hide a mismatch between k and v.
func.func @attention_mismatch_behind_dynamic_dim_is_rejected(%q: tensor<2x8x?xf32>, %k: tensor<2x8x32xf32>, %v: tensor<2x8x16xf32>) {
  // expected-error@+1 {{'piper.attention' op dim 2 of k (size 32) does not match dim 2 of v (size 16)}}
  %0 = piper.attention %q, %k, %v {num_heads = 4} : tensor<2x8x?xf32>, tensor<2x8x32xf32>, tensor<2x8x16xf32> -> tensor<2x8x32xf32>
  return
}

// -----

// There is at least one head.
func.func @attention_zero_heads_are_rejected(%q: tensor<2x8x32xf32>) {
  // expected-error@+1 {{'piper.attention' op num_heads must be >= 1, got 0}}
  %0 = piper.attention %q, %q, %q {num_heads = 0} : tensor<2x8x32xf32>, tensor<2x8x32xf32>, tensor<2x8x32xf32> -> tensor<2x8x32xf32>
  return
}

// -----

// Negative head counts are rejected the same way.
func.func @attention_negative_heads_are_rejected(%q: tensor<2x8x32xf32>) {
  // expected-error@+1 {{'piper.attention' op num_heads must be >= 1, got -2}}
  %0 = piper.attention %q, %q, %q {num_heads = -2} : tensor<2x8x32xf32>, tensor<2x8x32xf32>, tensor<2x8x32xf32> -> tensor<2x8x32xf32>
  return
}

// -----

// The heads split the model dim evenly.
func.func @attention_heads_not_dividing_model_dim_are_rejected(%q: tensor<2x8x32xf32>) {
  // expected-error@+1 {{'piper.attention' op dim 2 of q (size 32) is not divisible by num_heads (3)}}
  %0 = piper.attention %q, %q, %q {num_heads = 3} : tensor<2x8x32xf32>, tensor<2x8x32xf32>, tensor<2x8x32xf32> -> tensor<2x8x32xf32>
  return
}

// -----

// num_heads is required.
func.func @attention_without_heads_is_rejected(%q: tensor<2x8x32xf32>) {
  // expected-error@+1 {{'piper.attention' op requires attribute 'num_heads'}}
  %0 = piper.attention %q, %q, %q : tensor<2x8x32xf32>, tensor<2x8x32xf32>, tensor<2x8x32xf32> -> tensor<2x8x32xf32>
  return
}

// -----

// The result has q's type.
func.func @attention_result_type_is_checked(%q: tensor<2x8x32xf32>) {
  // expected-error@+1 {{'piper.attention' op expected result type tensor<2x8x32xf32>, got tensor<2x8x8xf32>}}
  %0 = piper.attention %q, %q, %q {num_heads = 4} : tensor<2x8x32xf32>, tensor<2x8x32xf32>, tensor<2x8x32xf32> -> tensor<2x8x8xf32>
  return
}

//===----------------------------------------------------------------------===//
// piper.embedding
//===----------------------------------------------------------------------===//

// -----

// The result has the table's element type.
func.func @embedding_element_type_is_checked(%table: tensor<100x16xf32>, %ids: tensor<8xi64>) {
  // expected-error@+1 {{'piper.embedding' op element type of result (f64) does not match element type of table (f32)}}
  %0 = piper.embedding %table, %ids : tensor<100x16xf32>, tensor<8xi64> -> tensor<8x16xf64>
  return
}

// -----

// The table is [V, H].
func.func @embedding_table_rank_is_checked(%table: tensor<100xf32>, %ids: tensor<8xi64>) {
  // expected-error@+1 {{'piper.embedding' op table must have rank 2, got tensor<100xf32>}}
  %0 = piper.embedding %table, %ids : tensor<100xf32>, tensor<8xi64> -> tensor<8xf32>
  return
}

// -----

// The result is ids' shape followed by H.
func.func @embedding_result_shape_is_checked(%table: tensor<100x16xf32>, %ids: tensor<2x8xi64>) {
  // expected-error@+1 {{'piper.embedding' op expected result type tensor<2x8x16xf32>, got tensor<16x16xf32>}}
  %0 = piper.embedding %table, %ids : tensor<100x16xf32>, tensor<2x8xi64> -> tensor<16x16xf32>
  return
}

//===----------------------------------------------------------------------===//
// piper.cross_entropy
//===----------------------------------------------------------------------===//

// -----

// The loss has the logits' element type.
func.func @cross_entropy_element_type_is_checked(%logits: tensor<16x100xbf16>, %labels: tensor<16xi64>) {
  // expected-error@+1 {{'piper.cross_entropy' op element type of result (f32) does not match element type of logits (bf16)}}
  %0 = piper.cross_entropy %logits, %labels : tensor<16x100xbf16>, tensor<16xi64> -> tensor<f32>
  return
}

// -----

// Logits are [N, V].
func.func @cross_entropy_logits_rank_is_checked(%logits: tensor<2x8x100xf32>, %labels: tensor<16xi64>) {
  // expected-error@+1 {{'piper.cross_entropy' op logits must have rank 2, got tensor<2x8x100xf32>}}
  %0 = piper.cross_entropy %logits, %labels : tensor<2x8x100xf32>, tensor<16xi64> -> tensor<f32>
  return
}

// -----

// Labels are [N].
func.func @cross_entropy_labels_rank_is_checked(%logits: tensor<16x100xf32>, %labels: tensor<16x1xi64>) {
  // expected-error@+1 {{'piper.cross_entropy' op labels must have rank 1, got tensor<16x1xi64>}}
  %0 = piper.cross_entropy %logits, %labels : tensor<16x100xf32>, tensor<16x1xi64> -> tensor<f32>
  return
}

// -----

// One label per row of logits.
func.func @cross_entropy_label_count_is_checked(%logits: tensor<16x100xf32>, %labels: tensor<12xi64>) {
  // expected-error@+1 {{'piper.cross_entropy' op dim 0 of logits (size 16) does not match dim 0 of labels (size 12)}}
  %0 = piper.cross_entropy %logits, %labels : tensor<16x100xf32>, tensor<12xi64> -> tensor<f32>
  return
}

// -----

// The loss is a mean: a rank-0 tensor.
func.func @cross_entropy_result_rank_is_checked(%logits: tensor<16x100xf32>, %labels: tensor<16xi64>) {
  // expected-error@+1 {{'piper.cross_entropy' op expected result type tensor<f32>, got tensor<16xf32>}}
  %0 = piper.cross_entropy %logits, %labels : tensor<16x100xf32>, tensor<16xi64> -> tensor<16xf32>
  return
}

//===----------------------------------------------------------------------===//
// piper.reshape
//===----------------------------------------------------------------------===//

// -----

// reshape keeps the element type.
func.func @reshape_element_type_is_checked(%x: tensor<2x8xf32>) {
  // expected-error@+1 {{'piper.reshape' op element type of result (f64) does not match element type of x (f32)}}
  %0 = piper.reshape %x : tensor<2x8xf32> -> tensor<16xf64>
  return
}

// -----

// reshape needs a static source shape.
func.func @reshape_dynamic_source_is_rejected(%x: tensor<?x8xf32>) {
  // expected-error@+1 {{'piper.reshape' op x must have a static shape, got tensor<?x8xf32>}}
  %0 = piper.reshape %x : tensor<?x8xf32> -> tensor<16xf32>
  return
}

// -----

// reshape needs a static result shape.
func.func @reshape_dynamic_result_is_rejected(%x: tensor<2x8xf32>) {
  // expected-error@+1 {{'piper.reshape' op result must have a static shape, got tensor<?xf32>}}
  %0 = piper.reshape %x : tensor<2x8xf32> -> tensor<?xf32>
  return
}

// -----

// reshape keeps the element count.
func.func @reshape_element_count_is_checked(%x: tensor<3x4xf32>) {
  // expected-error@+1 {{'piper.reshape' op x (tensor<3x4xf32>) has 12 elements but the result (tensor<5x3xf32>) has 15}}
  %0 = piper.reshape %x : tensor<3x4xf32> -> tensor<5x3xf32>
  return
}

//===----------------------------------------------------------------------===//
// piper.transpose
//===----------------------------------------------------------------------===//

// -----

// transpose keeps the element type.
func.func @transpose_element_type_is_checked(%x: tensor<2x8xf32>) {
  // expected-error@+1 {{'piper.transpose' op element type of result (bf16) does not match element type of x (f32)}}
  %0 = piper.transpose %x permutation = [1, 0] : tensor<2x8xf32> -> tensor<8x2xbf16>
  return
}

// -----

// The permutation has one entry per dim.
func.func @transpose_permutation_length_is_checked(%x: tensor<2x8xf32>) {
  // expected-error@+1 {{'piper.transpose' op permutation has 3 entries but x has rank 2}}
  %0 = piper.transpose %x permutation = [1, 0, 2] : tensor<2x8xf32> -> tensor<8x2xf32>
  return
}

// -----

// Entries name dims of x.
func.func @transpose_entry_out_of_range_is_rejected(%x: tensor<2x8xf32>) {
  // expected-error@+1 {{'piper.transpose' op permutation entry 2 is out of range for rank 2}}
  %0 = piper.transpose %x permutation = [2, 0] : tensor<2x8xf32> -> tensor<8x2xf32>
  return
}

// -----

// Negative entries are out of range too.
func.func @transpose_negative_entry_is_rejected(%x: tensor<2x8xf32>) {
  // expected-error@+1 {{'piper.transpose' op permutation entry -1 is out of range for rank 2}}
  %0 = piper.transpose %x permutation = [-1, 0] : tensor<2x8xf32> -> tensor<8x2xf32>
  return
}

// -----

// Each dim appears once.
func.func @transpose_repeated_entry_is_rejected(%x: tensor<2x8x4xf32>) {
  // expected-error@+1 {{'piper.transpose' op permutation lists 0 twice}}
  %0 = piper.transpose %x permutation = [0, 2, 0] : tensor<2x8x4xf32> -> tensor<2x4x2xf32>
  return
}

// -----

// The result's dim d is dim permutation[d] of x.
func.func @transpose_result_shape_is_checked(%x: tensor<2x8x4xf32>) {
  // expected-error@+1 {{'piper.transpose' op expected result type tensor<4x2x8xf32>, got tensor<8x4x2xf32>}}
  %0 = piper.transpose %x permutation = [2, 0, 1] : tensor<2x8x4xf32> -> tensor<8x4x2xf32>
  return
}

//===----------------------------------------------------------------------===//
// piper.router
//===----------------------------------------------------------------------===//

// -----

// The router weight has x's element type.
func.func @router_element_type_is_checked(%x: tensor<16x64xf32>, %w: tensor<64x8xf64>) {
  // expected-error@+1 {{'piper.router' op element type of w (f64) does not match element type of x (f32)}}
  %0:2 = piper.router %x, %w {top_k = 2} : tensor<16x64xf32>, tensor<64x8xf64> -> tensor<16x2xf32>, tensor<16x2xi64>
  return
}

// -----

// The routing weights have x's element type.
func.func @router_weights_element_type_is_checked(%x: tensor<16x64xf32>, %w: tensor<64x8xf32>) {
  // expected-error@+1 {{'piper.router' op element type of weights (bf16) does not match element type of x (f32)}}
  %0:2 = piper.router %x, %w {top_k = 2} : tensor<16x64xf32>, tensor<64x8xf32> -> tensor<16x2xbf16>, tensor<16x2xi64>
  return
}

// -----

// Tokens are [T, H].
func.func @router_x_rank_is_checked(%x: tensor<2x8x64xf32>, %w: tensor<64x8xf32>) {
  // expected-error@+1 {{'piper.router' op x must have rank 2, got tensor<2x8x64xf32>}}
  %0:2 = piper.router %x, %w {top_k = 2} : tensor<2x8x64xf32>, tensor<64x8xf32> -> tensor<16x2xf32>, tensor<16x2xi64>
  return
}

// -----

// The router weight is [H, E].
func.func @router_weight_rank_is_checked(%x: tensor<16x64xf32>, %w: tensor<64xf32>) {
  // expected-error@+1 {{'piper.router' op w must have rank 2, got tensor<64xf32>}}
  %0:2 = piper.router %x, %w {top_k = 2} : tensor<16x64xf32>, tensor<64xf32> -> tensor<16x2xf32>, tensor<16x2xi64>
  return
}

// -----

// The hidden dims agree.
func.func @router_hidden_mismatch_is_rejected(%x: tensor<16x64xf32>, %w: tensor<32x8xf32>) {
  // expected-error@+1 {{'piper.router' op dim 1 of x (size 64) does not match dim 0 of w (size 32)}}
  %0:2 = piper.router %x, %w {top_k = 2} : tensor<16x64xf32>, tensor<32x8xf32> -> tensor<16x2xf32>, tensor<16x2xi64>
  return
}

// -----

// Each token picks at least one expert.
func.func @router_zero_top_k_is_rejected(%x: tensor<16x64xf32>, %w: tensor<64x8xf32>) {
  // expected-error@+1 {{'piper.router' op top_k must be >= 1, got 0}}
  %0:2 = piper.router %x, %w {top_k = 0} : tensor<16x64xf32>, tensor<64x8xf32> -> tensor<16x0xf32>, tensor<16x0xi64>
  return
}

// -----

// A token cannot pick more experts than there are.
func.func @router_top_k_above_expert_count_is_rejected(%x: tensor<16x64xf32>, %w: tensor<64x8xf32>) {
  // expected-error@+1 {{'piper.router' op top_k (9) exceeds the number of experts (dim 1 of w, size 8)}}
  %0:2 = piper.router %x, %w {top_k = 9} : tensor<16x64xf32>, tensor<64x8xf32> -> tensor<16x9xf32>, tensor<16x9xi64>
  return
}

// -----

// The routing weights are [T, top_k].
func.func @router_weights_shape_is_checked(%x: tensor<16x64xf32>, %w: tensor<64x8xf32>) {
  // expected-error@+1 {{'piper.router' op expected weights type tensor<16x2xf32>, got tensor<16x8xf32>}}
  %0:2 = piper.router %x, %w {top_k = 2} : tensor<16x64xf32>, tensor<64x8xf32> -> tensor<16x8xf32>, tensor<16x2xi64>
  return
}

// -----

// The expert indices are [T, top_k].
func.func @router_indices_shape_is_checked(%x: tensor<16x64xf32>, %w: tensor<64x8xf32>) {
  // expected-error@+1 {{'piper.router' op expected indices type tensor<16x2xi64>, got tensor<8x2xi64>}}
  %0:2 = piper.router %x, %w {top_k = 2} : tensor<16x64xf32>, tensor<64x8xf32> -> tensor<16x2xf32>, tensor<8x2xi64>
  return
}

// -----

// The expert indices are i64.
func.func @router_i32_indices_are_rejected(%x: tensor<16x64xf32>, %w: tensor<64x8xf32>) {
  // expected-error@+1 {{'piper.router' op result #1 must be ranked tensor of i64 values, but got 'tensor<16x2xi32>'}}
  %0:2 = piper.router %x, %w {top_k = 2} : tensor<16x64xf32>, tensor<64x8xf32> -> tensor<16x2xf32>, tensor<16x2xi32>
  return
}

//===----------------------------------------------------------------------===//
// piper.dispatch
//===----------------------------------------------------------------------===//

// -----

// The buffer has x's element type.
func.func @dispatch_element_type_is_checked(%x: tensor<16x64xf32>, %idx: tensor<16x2xi64>) {
  // expected-error@+1 {{'piper.dispatch' op element type of result (f64) does not match element type of x (f32)}}
  %0 = piper.dispatch %x, %idx {capacity = 6} : tensor<16x64xf32>, tensor<16x2xi64> -> tensor<8x6x64xf64>
  return
}

// -----

// Tokens are [T, H].
func.func @dispatch_x_rank_is_checked(%x: tensor<64xf32>, %idx: tensor<16x2xi64>) {
  // expected-error@+1 {{'piper.dispatch' op x must have rank 2, got tensor<64xf32>}}
  %0 = piper.dispatch %x, %idx {capacity = 6} : tensor<64xf32>, tensor<16x2xi64> -> tensor<8x6x64xf32>
  return
}

// -----

// Indices are [T, k].
func.func @dispatch_indices_rank_is_checked(%x: tensor<16x64xf32>, %idx: tensor<16xi64>) {
  // expected-error@+1 {{'piper.dispatch' op indices must have rank 2, got tensor<16xi64>}}
  %0 = piper.dispatch %x, %idx {capacity = 6} : tensor<16x64xf32>, tensor<16xi64> -> tensor<8x6x64xf32>
  return
}

// -----

// The buffer is [E, C, H].
func.func @dispatch_result_rank_is_checked(%x: tensor<16x64xf32>, %idx: tensor<16x2xi64>) {
  // expected-error@+1 {{'piper.dispatch' op result must have rank 3, got tensor<48x64xf32>}}
  %0 = piper.dispatch %x, %idx {capacity = 6} : tensor<16x64xf32>, tensor<16x2xi64> -> tensor<48x64xf32>
  return
}

// -----

// x and indices describe the same tokens.
func.func @dispatch_token_mismatch_is_rejected(%x: tensor<16x64xf32>, %idx: tensor<8x2xi64>) {
  // expected-error@+1 {{'piper.dispatch' op dim 0 of x (size 16) does not match dim 0 of indices (size 8)}}
  %0 = piper.dispatch %x, %idx {capacity = 6} : tensor<16x64xf32>, tensor<8x2xi64> -> tensor<8x6x64xf32>
  return
}

// -----

// Every expert has at least one slot.
func.func @dispatch_zero_capacity_is_rejected(%x: tensor<16x64xf32>, %idx: tensor<16x2xi64>) {
  // expected-error@+1 {{'piper.dispatch' op capacity must be >= 1, got 0}}
  %0 = piper.dispatch %x, %idx {capacity = 0} : tensor<16x64xf32>, tensor<16x2xi64> -> tensor<8x0x64xf32>
  return
}

// -----

// capacity is the buffer's dim 1.
func.func @dispatch_capacity_mismatch_is_rejected(%x: tensor<16x64xf32>, %idx: tensor<16x2xi64>) {
  // expected-error@+1 {{'piper.dispatch' op capacity (4) does not match dim 1 of the result (size 6)}}
  %0 = piper.dispatch %x, %idx {capacity = 4} : tensor<16x64xf32>, tensor<16x2xi64> -> tensor<8x6x64xf32>
  return
}

// -----

// The buffer's dim 2 is x's hidden size.
func.func @dispatch_hidden_mismatch_is_rejected(%x: tensor<16x64xf32>, %idx: tensor<16x2xi64>) {
  // expected-error@+1 {{'piper.dispatch' op expected result type tensor<8x6x64xf32>, got tensor<8x6x32xf32>}}
  %0 = piper.dispatch %x, %idx {capacity = 6} : tensor<16x64xf32>, tensor<16x2xi64> -> tensor<8x6x32xf32>
  return
}

// -----

// capacity is required.
func.func @dispatch_without_capacity_is_rejected(%x: tensor<16x64xf32>, %idx: tensor<16x2xi64>) {
  // expected-error@+1 {{'piper.dispatch' op requires attribute 'capacity'}}
  %0 = piper.dispatch %x, %idx : tensor<16x64xf32>, tensor<16x2xi64> -> tensor<8x6x64xf32>
  return
}

//===----------------------------------------------------------------------===//
// piper.expert_ffn
//===----------------------------------------------------------------------===//

// -----

// Expert weights have the buffer's element type.
func.func @expert_ffn_element_type_is_checked(%buf: tensor<8x6x64xf32>, %wg: tensor<8x64x128xf32>, %wu: tensor<8x64x128xf32>, %wd: tensor<8x128x64xbf16>) {
  // expected-error@+1 {{'piper.expert_ffn' op element type of w_down (bf16) does not match element type of buf (f32)}}
  %0 = piper.expert_ffn %buf, %wg, %wu, %wd : tensor<8x6x64xf32>, tensor<8x64x128xf32>, tensor<8x64x128xf32>, tensor<8x128x64xbf16> -> tensor<8x6x64xf32>
  return
}

// -----

// Expert weights are stacked per expert: rank 3.
func.func @expert_ffn_weight_rank_is_checked(%buf: tensor<8x6x64xf32>, %wg: tensor<64x128xf32>, %wu: tensor<8x64x128xf32>, %wd: tensor<8x128x64xf32>) {
  // expected-error@+1 {{'piper.expert_ffn' op w_gate must have rank 3, got tensor<64x128xf32>}}
  %0 = piper.expert_ffn %buf, %wg, %wu, %wd : tensor<8x6x64xf32>, tensor<64x128xf32>, tensor<8x64x128xf32>, tensor<8x128x64xf32> -> tensor<8x6x64xf32>
  return
}

// -----

// The buffer is [E, C, H].
func.func @expert_ffn_buffer_rank_is_checked(%buf: tensor<48x64xf32>, %wg: tensor<8x64x128xf32>, %wu: tensor<8x64x128xf32>, %wd: tensor<8x128x64xf32>) {
  // expected-error@+1 {{'piper.expert_ffn' op buf must have rank 3, got tensor<48x64xf32>}}
  %0 = piper.expert_ffn %buf, %wg, %wu, %wd : tensor<48x64xf32>, tensor<8x64x128xf32>, tensor<8x64x128xf32>, tensor<8x128x64xf32> -> tensor<48x64xf32>
  return
}

// -----

// Every weight has one slice per expert.
func.func @expert_ffn_expert_count_is_checked(%buf: tensor<8x6x64xf32>, %wg: tensor<8x64x128xf32>, %wu: tensor<4x64x128xf32>, %wd: tensor<8x128x64xf32>) {
  // expected-error@+1 {{'piper.expert_ffn' op dim 0 of buf (size 8) does not match dim 0 of w_up (size 4)}}
  %0 = piper.expert_ffn %buf, %wg, %wu, %wd : tensor<8x6x64xf32>, tensor<8x64x128xf32>, tensor<4x64x128xf32>, tensor<8x128x64xf32> -> tensor<8x6x64xf32>
  return
}

// -----

// The gate projection reads the hidden size.
func.func @expert_ffn_gate_hidden_mismatch_is_rejected(%buf: tensor<8x6x64xf32>, %wg: tensor<8x32x128xf32>, %wu: tensor<8x64x128xf32>, %wd: tensor<8x128x64xf32>) {
  // expected-error@+1 {{'piper.expert_ffn' op dim 2 of buf (size 64) does not match dim 1 of w_gate (size 32)}}
  %0 = piper.expert_ffn %buf, %wg, %wu, %wd : tensor<8x6x64xf32>, tensor<8x32x128xf32>, tensor<8x64x128xf32>, tensor<8x128x64xf32> -> tensor<8x6x64xf32>
  return
}

// -----

// The down projection writes the hidden size.
func.func @expert_ffn_down_hidden_mismatch_is_rejected(%buf: tensor<8x6x64xf32>, %wg: tensor<8x64x128xf32>, %wu: tensor<8x64x128xf32>, %wd: tensor<8x128x32xf32>) {
  // expected-error@+1 {{'piper.expert_ffn' op dim 2 of buf (size 64) does not match dim 2 of w_down (size 32)}}
  %0 = piper.expert_ffn %buf, %wg, %wu, %wd : tensor<8x6x64xf32>, tensor<8x64x128xf32>, tensor<8x64x128xf32>, tensor<8x128x32xf32> -> tensor<8x6x64xf32>
  return
}

// -----

// Gate and up projections have one FFN size.
func.func @expert_ffn_up_size_mismatch_is_rejected(%buf: tensor<8x6x64xf32>, %wg: tensor<8x64x128xf32>, %wu: tensor<8x64x96xf32>, %wd: tensor<8x128x64xf32>) {
  // expected-error@+1 {{'piper.expert_ffn' op dim 2 of w_gate (size 128) does not match dim 2 of w_up (size 96)}}
  %0 = piper.expert_ffn %buf, %wg, %wu, %wd : tensor<8x6x64xf32>, tensor<8x64x128xf32>, tensor<8x64x96xf32>, tensor<8x128x64xf32> -> tensor<8x6x64xf32>
  return
}

// -----

// The down projection reads the FFN size.
func.func @expert_ffn_down_size_mismatch_is_rejected(%buf: tensor<8x6x64xf32>, %wg: tensor<8x64x128xf32>, %wu: tensor<8x64x128xf32>, %wd: tensor<8x96x64xf32>) {
  // expected-error@+1 {{'piper.expert_ffn' op dim 2 of w_gate (size 128) does not match dim 1 of w_down (size 96)}}
  %0 = piper.expert_ffn %buf, %wg, %wu, %wd : tensor<8x6x64xf32>, tensor<8x64x128xf32>, tensor<8x64x128xf32>, tensor<8x96x64xf32> -> tensor<8x6x64xf32>
  return
}

// -----

// The result has the buffer's type.
func.func @expert_ffn_result_type_is_checked(%buf: tensor<8x6x64xf32>, %wg: tensor<8x64x128xf32>, %wu: tensor<8x64x128xf32>, %wd: tensor<8x128x64xf32>) {
  // expected-error@+1 {{'piper.expert_ffn' op expected result type tensor<8x6x64xf32>, got tensor<8x6x128xf32>}}
  %0 = piper.expert_ffn %buf, %wg, %wu, %wd : tensor<8x6x64xf32>, tensor<8x64x128xf32>, tensor<8x64x128xf32>, tensor<8x128x64xf32> -> tensor<8x6x128xf32>
  return
}

//===----------------------------------------------------------------------===//
// piper.combine
//===----------------------------------------------------------------------===//

// -----

// The routing weights have the expert outputs' element type.
func.func @combine_element_type_is_checked(%y: tensor<8x6x64xf32>, %wts: tensor<16x2xf64>, %idx: tensor<16x2xi64>) {
  // expected-error@+1 {{'piper.combine' op element type of weights (f64) does not match element type of y (f32)}}
  %0 = piper.combine %y, %wts, %idx : tensor<8x6x64xf32>, tensor<16x2xf64>, tensor<16x2xi64> -> tensor<16x64xf32>
  return
}

// -----

// Expert outputs are [E, C, H].
func.func @combine_y_rank_is_checked(%y: tensor<48x64xf32>, %wts: tensor<16x2xf32>, %idx: tensor<16x2xi64>) {
  // expected-error@+1 {{'piper.combine' op y must have rank 3, got tensor<48x64xf32>}}
  %0 = piper.combine %y, %wts, %idx : tensor<48x64xf32>, tensor<16x2xf32>, tensor<16x2xi64> -> tensor<16x64xf32>
  return
}

// -----

// Routing weights are [T, k].
func.func @combine_weights_rank_is_checked(%y: tensor<8x6x64xf32>, %wts: tensor<32xf32>, %idx: tensor<16x2xi64>) {
  // expected-error@+1 {{'piper.combine' op weights must have rank 2, got tensor<32xf32>}}
  %0 = piper.combine %y, %wts, %idx : tensor<8x6x64xf32>, tensor<32xf32>, tensor<16x2xi64> -> tensor<16x64xf32>
  return
}

// -----

// Indices are [T, k].
func.func @combine_indices_rank_is_checked(%y: tensor<8x6x64xf32>, %wts: tensor<16x2xf32>, %idx: tensor<32xi64>) {
  // expected-error@+1 {{'piper.combine' op indices must have rank 2, got tensor<32xi64>}}
  %0 = piper.combine %y, %wts, %idx : tensor<8x6x64xf32>, tensor<16x2xf32>, tensor<32xi64> -> tensor<16x64xf32>
  return
}

// -----

// Weights and indices describe the same tokens.
func.func @combine_token_mismatch_is_rejected(%y: tensor<8x6x64xf32>, %wts: tensor<16x2xf32>, %idx: tensor<12x2xi64>) {
  // expected-error@+1 {{'piper.combine' op dim 0 of weights (size 16) does not match dim 0 of indices (size 12)}}
  %0 = piper.combine %y, %wts, %idx : tensor<8x6x64xf32>, tensor<16x2xf32>, tensor<12x2xi64> -> tensor<16x64xf32>
  return
}

// -----

// Weights and indices have the same top_k.
func.func @combine_top_k_mismatch_is_rejected(%y: tensor<8x6x64xf32>, %wts: tensor<16x2xf32>, %idx: tensor<16x3xi64>) {
  // expected-error@+1 {{'piper.combine' op dim 1 of weights (size 2) does not match dim 1 of indices (size 3)}}
  %0 = piper.combine %y, %wts, %idx : tensor<8x6x64xf32>, tensor<16x2xf32>, tensor<16x3xi64> -> tensor<16x64xf32>
  return
}

// -----

// The result is [T, H].
func.func @combine_result_shape_is_checked(%y: tensor<8x6x64xf32>, %wts: tensor<16x2xf32>, %idx: tensor<16x2xi64>) {
  // expected-error@+1 {{'piper.combine' op expected result type tensor<16x64xf32>, got tensor<8x64xf32>}}
  %0 = piper.combine %y, %wts, %idx : tensor<8x6x64xf32>, tensor<16x2xf32>, tensor<16x2xi64> -> tensor<8x64xf32>
  return
}

// -----

// Indices are i64.
func.func @combine_i32_indices_are_rejected(%y: tensor<8x6x64xf32>, %wts: tensor<16x2xf32>, %idx: tensor<16x2xi32>) {
  // expected-error@+1 {{'piper.combine' op operand #2 must be ranked tensor of i64 values, but got 'tensor<16x2xi32>'}}
  %0 = piper.combine %y, %wts, %idx : tensor<8x6x64xf32>, tensor<16x2xf32>, tensor<16x2xi32> -> tensor<16x64xf32>
  return
}

// -----

// Key/value heads divide the query heads.
func.func @attention_kv_heads_divide_heads(%q: tensor<2x8x32xf32>, %kv: tensor<2x8x24xf32>) {
  // expected-error@+1 {{'piper.attention' op num_kv_heads (3) must be >= 1 and divide num_heads (4)}}
  %0 = piper.attention %q, %kv, %kv {num_heads = 4 : i64, num_kv_heads = 3 : i64} : tensor<2x8x32xf32>, tensor<2x8x24xf32>, tensor<2x8x24xf32> -> tensor<2x8x32xf32>
  return
}

// -----

// k and v hold num_kv_heads heads of q's head dim.
func.func @attention_kv_channels_are_checked(%q: tensor<2x8x32xf32>, %kv: tensor<2x8x8xf32>) {
  // expected-error@+1 {{'piper.attention' op dim 2 of k and v (size 8) must be num_kv_heads * head dim = 2 * 8}}
  %0 = piper.attention %q, %kv, %kv {num_heads = 4 : i64, num_kv_heads = 2 : i64} : tensor<2x8x32xf32>, tensor<2x8x8xf32>, tensor<2x8x8xf32> -> tensor<2x8x32xf32>
  return
}

// -----

// Without num_kv_heads every query head has its own key/value head.
func.func @attention_without_kv_heads_needs_equal_channels(%q: tensor<2x8x32xf32>, %kv: tensor<2x8x16xf32>) {
  // expected-error@+1 {{'piper.attention' op dim 2 of k and v (size 16) must be num_kv_heads * head dim = 4 * 8}}
  %0 = piper.attention %q, %kv, %kv {num_heads = 4 : i64} : tensor<2x8x32xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf32> -> tensor<2x8x32xf32>
  return
}

// -----

// The rotated pairs are the halves of a head: head_dim is even.
func.func @rope_head_dim_is_even(%x: tensor<2x8x30xf32>) {
  // expected-error@+1 {{'piper.rope' op head_dim must be even and >= 2, got 5}}
  %0 = piper.rope %x {head_dim = 5 : i64} : tensor<2x8x30xf32>
  return
}

// -----

// Heads tile the channels.
func.func @rope_head_dim_divides_channels(%x: tensor<2x8x30xf32>) {
  // expected-error@+1 {{'piper.rope' op head_dim (4) does not divide dim 2 of x (size 30)}}
  %0 = piper.rope %x {head_dim = 4 : i64} : tensor<2x8x30xf32>
  return
}

// -----

// Positions are dim 1 of [B, S, D].
func.func @rope_x_has_rank_3(%x: tensor<8x32xf32>) {
  // expected-error@+1 {{'piper.rope' op x must have rank 3, got tensor<8x32xf32>}}
  %0 = piper.rope %x {head_dim = 8 : i64} : tensor<8x32xf32>
  return
}

// -----

// The frequency base is positive.
func.func @rope_theta_is_positive(%x: tensor<2x8x32xf32>) {
  // expected-error@+1 {{'piper.rope' op theta must be > 0, got -1}}
  %0 = piper.rope %x {head_dim = 8 : i64, theta = -1.0 : f64} : tensor<2x8x32xf32>
  return
}

// -----

// Positions start at the offset: it is not negative.
func.func @rope_offset_is_not_negative(%x: tensor<2x8x32xf32>) {
  // expected-error@+1 {{'piper.rope' op offset must be >= 0, got -3}}
  %0 = piper.rope %x {head_dim = 8 : i64, offset = -3 : i64} : tensor<2x8x32xf32>
  return
}

// -----

// Partial rotary pairs halves of the rotated channels: rotary_dim is even.
func.func @rope_rotary_dim_is_even(%x: tensor<2x8x32xf32>) {
  // expected-error@+1 {{'piper.rope' op rotary_dim must be even, >= 2 and <= head_dim (8), got 3}}
  %0 = piper.rope %x {head_dim = 8 : i64, rotary_dim = 3 : i64} : tensor<2x8x32xf32>
  return
}

// -----

// The rotated channels are within a head.
func.func @rope_rotary_dim_fits_the_head(%x: tensor<2x8x32xf32>) {
  // expected-error@+1 {{'piper.rope' op rotary_dim must be even, >= 2 and <= head_dim (8), got 10}}
  %0 = piper.rope %x {head_dim = 8 : i64, rotary_dim = 10 : i64} : tensor<2x8x32xf32>
  return
}

// -----

// At least one pair rotates.
func.func @rope_rotary_dim_is_positive(%x: tensor<2x8x32xf32>) {
  // expected-error@+1 {{'piper.rope' op rotary_dim must be even, >= 2 and <= head_dim (8), got 0}}
  %0 = piper.rope %x {head_dim = 8 : i64, rotary_dim = 0 : i64} : tensor<2x8x32xf32>
  return
}

// -----

// The exact GELU keeps the type.
func.func @gelu_erf_keeps_the_type(%x: tensor<4x16xf32>) {
  // expected-error@+1 {{'piper.gelu_erf' op failed to verify that all of {x, result} have same type}}
  %0 = "piper.gelu_erf"(%x) : (tensor<4x16xf32>) -> tensor<4x16xf64>
  return
}
