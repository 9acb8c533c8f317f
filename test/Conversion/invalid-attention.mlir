// What the attention lowering (lib/Conversion/AttentionToLinalg.cpp)
// rejects, each with one exact diagnostic.
// RUN: piper-opt %s -split-input-file --piper-convert-to-kernels -verify-diagnostics

// The head count comes from the VJP's forward_attrs, which nothing else
// checks against the primals.
func.func @vjp_heads_not_dividing_hidden_is_rejected(%q: tensor<1x2x6xf64>, %d: tensor<1x2x6xf64>) -> tensor<1x2x6xf64> {
  // expected-error@+1 {{num_heads 4 does not divide the hidden size 6}}
  %a = piper.vjp "piper.attention" wrt [0] (%q, %q, %q) cotangents (%d) forward_attrs {num_heads = 4 : i64} : (tensor<1x2x6xf64>, tensor<1x2x6xf64>, tensor<1x2x6xf64>), (tensor<1x2x6xf64>) -> tensor<1x2x6xf64>
  return %a : tensor<1x2x6xf64>
}

// -----

func.func @vjp_with_two_primals_is_rejected(%q: tensor<1x2x6xf64>, %d: tensor<1x2x6xf64>) -> tensor<1x2x6xf64> {
  // expected-error@+1 {{piper.vjp of piper.attention: expected 3 primals and 1 cotangent, got 2 and 1}}
  %a = piper.vjp "piper.attention" wrt [0] (%q, %q) cotangents (%d) forward_attrs {num_heads = 2 : i64} : (tensor<1x2x6xf64>, tensor<1x2x6xf64>), (tensor<1x2x6xf64>) -> tensor<1x2x6xf64>
  return %a : tensor<1x2x6xf64>
}

// -----

func.func @vjp_with_mismatched_cotangent_is_rejected(%q: tensor<1x2x6xf64>, %d: tensor<1x3x6xf64>) -> tensor<1x2x6xf64> {
  // expected-error@+1 {{piper.vjp of piper.attention: q, k, v and the cotangent must have one type}}
  %a = piper.vjp "piper.attention" wrt [0] (%q, %q, %q) cotangents (%d) forward_attrs {num_heads = 2 : i64} : (tensor<1x2x6xf64>, tensor<1x2x6xf64>, tensor<1x2x6xf64>), (tensor<1x3x6xf64>) -> tensor<1x2x6xf64>
  return %a : tensor<1x2x6xf64>
}

// -----

// The lowering builds static shapes (the split heads, the [B H, S, S]
// scores).
func.func @dynamic_attention_is_rejected(%q: tensor<?x2x6xf64>) -> tensor<?x2x6xf64> {
  // expected-error@+1 {{the native lowering of attention needs q of a static [B, S, D] tensor type, got 'tensor<?x2x6xf64>'}}
  %o = piper.attention %q, %q, %q {num_heads = 2 : i64} : tensor<?x2x6xf64>, tensor<?x2x6xf64>, tensor<?x2x6xf64> -> tensor<?x2x6xf64>
  return %o : tensor<?x2x6xf64>
}
