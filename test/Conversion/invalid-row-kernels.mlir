// What the linalg lowerings of the norms, softmax, cross_entropy and
// embedding reject, each with one exact diagnostic: a piper.vjp's primals
// and cotangent are checked by the forward op's own verifier.
// RUN: piper-opt %s -split-input-file --piper-convert-to-kernels -verify-diagnostics

// The weight of a norm VJP must match x's last dim.
func.func @norm_vjp_with_a_mismatched_weight_is_rejected(%x: tensor<3x4xf64>, %w: tensor<5xf64>, %dy: tensor<3x4xf64>) -> tensor<3x4xf64> {
  // expected-error@+1 {{'piper.rmsnorm' op dim 0 of w (size 5) does not divide the last dim of x (size 4)}}
  %dx = piper.vjp "piper.rmsnorm" wrt [0] (%x, %w) cotangents (%dy) : (tensor<3x4xf64>, tensor<5xf64>), (tensor<3x4xf64>) -> tensor<3x4xf64>
  return %dx : tensor<3x4xf64>
}

// -----

// forward_attrs are the forward op's attributes, checked as such.
func.func @norm_vjp_with_a_negative_epsilon_is_rejected(%x: tensor<3x4xf64>, %w: tensor<4xf64>, %dy: tensor<3x4xf64>) -> tensor<3x4xf64> {
  // expected-error@+1 {{'piper.rmsnorm' op epsilon must be > 0, got -1}}
  %dx = piper.vjp "piper.rmsnorm" wrt [0] (%x, %w) cotangents (%dy) forward_attrs {epsilon = -1.0 : f64} : (tensor<3x4xf64>, tensor<4xf64>), (tensor<3x4xf64>) -> tensor<3x4xf64>
  return %dx : tensor<3x4xf64>
}

// -----

// A VJP needs every primal of the forward op.
func.func @layernorm_vjp_without_weights_is_rejected(%x: tensor<3x4xf64>, %dy: tensor<3x4xf64>) -> tensor<3x4xf64> {
  // expected-error@+1 {{'piper.layernorm' op expected 3 operands, but found 1}}
  %dx = piper.vjp "piper.layernorm" wrt [0] (%x) cotangents (%dy) : (tensor<3x4xf64>), (tensor<3x4xf64>) -> tensor<3x4xf64>
  return %dx : tensor<3x4xf64>
}

// -----

// The loss is a scalar, so is its cotangent.
func.func @loss_vjp_with_a_vector_cotangent_is_rejected(%l: tensor<3x5xf64>, %labels: tensor<3xi64>, %d: tensor<3xf64>) -> tensor<3x5xf64> {
  // expected-error@+1 {{'piper.cross_entropy' op expected result type tensor<f64>, got tensor<3xf64>}}
  %g = piper.vjp "piper.cross_entropy" wrt [0] (%l, %labels) cotangents (%d) : (tensor<3x5xf64>, tensor<3xi64>), (tensor<3xf64>) -> tensor<3x5xf64>
  return %g : tensor<3x5xf64>
}

// -----

// Token ids are not differentiable.
func.func @embedding_vjp_wrt_ids_is_rejected(%t: tensor<10x4xf32>, %ids: tensor<6xi64>, %dy: tensor<6x4xf32>) -> tensor<6xi64> {
  // expected-error@+1 {{there is no gradient with respect to operand #1 of piper.embedding}}
  %g = piper.vjp "piper.embedding" wrt [1] (%t, %ids) cotangents (%dy) : (tensor<10x4xf32>, tensor<6xi64>), (tensor<6x4xf32>) -> tensor<6xi64>
  return %g : tensor<6xi64>
}

// -----

// The kernels are built for static shapes.
func.func @dynamic_rows_are_rejected(%x: tensor<?x4xf64>, %w: tensor<4xf64>) -> tensor<?x4xf64> {
  // expected-error@+1 {{the native lowering needs static shapes, got 'tensor<?x4xf64>'}}
  %y = piper.rmsnorm %x, %w : tensor<?x4xf64>, tensor<4xf64> -> tensor<?x4xf64>
  return %y : tensor<?x4xf64>
}

// -----

// A softmax VJP takes one cotangent, as before.
func.func @softmax_vjp_with_two_cotangents_is_rejected(%x: tensor<2x3xf64>) -> tensor<2x3xf64> {
  // expected-error@+1 {{expected one cotangent, got 2}}
  %a = piper.vjp "piper.softmax" wrt [0] (%x) cotangents (%x, %x) : (tensor<2x3xf64>), (tensor<2x3xf64>, tensor<2x3xf64>) -> tensor<2x3xf64>
  return %a : tensor<2x3xf64>
}
