// RUN: piper-opt %s -split-input-file -verify-diagnostics

// A cast keeps the shape.
func.func @cast_changes_shape_is_rejected(%x: tensor<4x8xf32>) -> tensor<8x4xbf16> {
  // expected-error@+1 {{'piper.cast' op x (tensor<4x8xf32>) and the result (tensor<8x4xbf16>) must have the same shape}}
  %r = piper.cast %x : tensor<4x8xf32> -> tensor<8x4xbf16>
  return %r : tensor<8x4xbf16>
}

// -----

// A cast that changes nothing is not a cast.
func.func @cast_to_same_type_is_rejected(%x: tensor<4xbf16>) -> tensor<4xbf16> {
  // expected-error@+1 {{'piper.cast' op x and the result have the same element type ('bf16'); a cast must change it}}
  %r = piper.cast %x : tensor<4xbf16> -> tensor<4xbf16>
  return %r : tensor<4xbf16>
}

// -----

// Only the float element types of the NN ops.
func.func @cast_to_integer_is_rejected(%x: tensor<4xf32>) -> tensor<4xi32> {
  // expected-error@+1 {{'piper.cast' op result #0 must be ranked tensor of f32, f64 or bf16 values, but got 'tensor<4xi32>'}}
  %r = piper.cast %x : tensor<4xf32> -> tensor<4xi32>
  return %r : tensor<4xi32>
}
