// What the layout and MoE linalg patterns reject, each with one exact
// diagnostic (the kernel-call pattern stays silent for the VJPs they own).
// RUN: piper-opt %s -split-input-file --piper-convert-to-kernels -verify-diagnostics

// A transpose VJP whose permutation does not fit the cotangent.
func.func @transpose_vjp_with_a_bad_permutation_is_rejected(%x: tensor<2x4xf64>, %d: tensor<4x2xf64>) -> tensor<2x4xf64> {
  // expected-error@+1 {{forward_attrs' permutation is not a permutation of the dims of the static cotangent 'tensor<4x2xf64>'}}
  %a = piper.vjp "piper.transpose" wrt [0] (%x) cotangents (%d) forward_attrs {permutation = array<i64: 0, 0>} : (tensor<2x4xf64>), (tensor<4x2xf64>) -> tensor<2x4xf64>
  return %a : tensor<2x4xf64>
}

// -----

// A transpose VJP whose cotangent, transposed back, is not the primal.
func.func @transpose_vjp_of_the_wrong_shape_is_rejected(%x: tensor<2x4xf64>, %d: tensor<2x4xf64>) -> tensor<2x4xf64> {
  // expected-error@+1 {{the cotangent 'tensor<2x4xf64>' transposed back is 'tensor<4x2xf64>', not the primal's 'tensor<2x4xf64>'}}
  %a = piper.vjp "piper.transpose" wrt [0] (%x) cotangents (%d) forward_attrs {permutation = array<i64: 1, 0>} : (tensor<2x4xf64>), (tensor<2x4xf64>) -> tensor<2x4xf64>
  return %a : tensor<2x4xf64>
}

// -----

// A reshape VJP whose cotangent has another element count.
func.func @reshape_vjp_of_another_size_is_rejected(%x: tensor<2x4xf64>, %d: tensor<6xf64>) -> tensor<2x4xf64> {
  // expected-error@+1 {{the native lowering needs static shapes of one element count}}
  %a = piper.vjp "piper.reshape" wrt [0] (%x) cotangents (%d) : (tensor<2x4xf64>), (tensor<6xf64>) -> tensor<2x4xf64>
  return %a : tensor<2x4xf64>
}

// -----

// The router VJP recomputes the routing: it needs the forward top_k.
func.func @router_vjp_without_top_k_is_rejected(%x: tensor<4x3xf64>, %w: tensor<3x2xf64>, %d: tensor<4x1xf64>) -> tensor<4x3xf64> {
  // expected-error@+1 {{forward_attrs lacks the integer 'top_k'}}
  %a = piper.vjp "piper.router" wrt [0] (%x, %w) cotangents (%d) : (tensor<4x3xf64>, tensor<3x2xf64>), (tensor<4x1xf64>) -> tensor<4x3xf64>
  return %a : tensor<4x3xf64>
}

// -----

// top_k cannot exceed the number of experts.
func.func @router_vjp_with_too_large_top_k_is_rejected(%x: tensor<4x3xf64>, %w: tensor<3x2xf64>, %d: tensor<4x3xf64>) -> tensor<4x3xf64> {
  // expected-error@+1 {{top_k = 3 must be in [1, 2] (the number of experts)}}
  %a = piper.vjp "piper.router" wrt [0] (%x, %w) cotangents (%d) forward_attrs {top_k = 3 : i64} : (tensor<4x3xf64>, tensor<3x2xf64>), (tensor<4x3xf64>) -> tensor<4x3xf64>
  return %a : tensor<4x3xf64>
}

// -----

// Expert indices have no gradient.
func.func @combine_vjp_for_indices_is_rejected(%y: tensor<2x2x3xf64>, %w: tensor<4x1xf64>, %i: tensor<4x1xi64>, %d: tensor<4x3xf64>) -> tensor<4x1xi64> {
  // expected-error@+1 {{piper.vjp of piper.combine has no gradient for operand 2}}
  %a = piper.vjp "piper.combine" wrt [2] (%y, %w, %i) cotangents (%d) : (tensor<2x2x3xf64>, tensor<4x1xf64>, tensor<4x1xi64>), (tensor<4x3xf64>) -> tensor<4x1xi64>
  return %a : tensor<4x1xi64>
}

// -----

// The linalg kernels need static shapes.
func.func @dynamic_combine_is_rejected(%y: tensor<2x2x3xf64>, %w: tensor<?x1xf64>, %i: tensor<?x1xi64>) -> tensor<?x3xf64> {
  // expected-error@+1 {{the native lowering needs static shapes}}
  %o = piper.combine %y, %w, %i : tensor<2x2x3xf64>, tensor<?x1xf64>, tensor<?x1xi64> -> tensor<?x3xf64>
  return %o : tensor<?x3xf64>
}
