// What --piper-convert-to-kernels rejects, with exact diagnostics.
// RUN: piper-opt %s -split-input-file --piper-convert-to-kernels -verify-diagnostics

// Kernels are picked by the element type of a float tensor.
func.func @integer_only_vjp_is_rejected(%x: tensor<4xi64>) -> tensor<4xi64> {
  // expected-error@+1 {{has no float tensor to pick a kernel by}}
  %d = piper.vjp "piper.reshape" wrt [0] (%x) cotangents (%x) : (tensor<4xi64>), (tensor<4xi64>) -> tensor<4xi64>
  return %d : tensor<4xi64>
}

// -----

// A cast's kernel is a loop over a static shape.
func.func @dynamic_cast_is_rejected(%x: tensor<?x4xf32>) -> tensor<?x4xbf16> {
  // expected-error@+1 {{the native lowering of a cast needs a static shape, not 'tensor<?x4xf32>'}}
  %y = piper.cast %x : tensor<?x4xf32> -> tensor<?x4xbf16>
  return %y : tensor<?x4xbf16>
}

// -----

// The attention VJP kernels need the head count of the forward op.
func.func @vjp_without_forward_attrs_is_rejected(%q: tensor<1x2x4xf64>, %d: tensor<1x2x4xf64>) -> tensor<1x2x4xf64> {
  // expected-error@+1 {{forward_attrs lacks the integer 'num_heads'}}
  %a = piper.vjp "piper.attention" wrt [0] (%q, %q, %q) cotangents (%d) : (tensor<1x2x4xf64>, tensor<1x2x4xf64>, tensor<1x2x4xf64>), (tensor<1x2x4xf64>) -> tensor<1x2x4xf64>
  return %a : tensor<1x2x4xf64>
}

// -----

// The transpose VJP kernels need the forward permutation.
func.func @transpose_vjp_without_permutation_is_rejected(%x: tensor<2x4xf64>, %d: tensor<4x2xf64>) -> tensor<2x4xf64> {
  // expected-error@+1 {{forward_attrs lacks the array 'permutation'}}
  %a = piper.vjp "piper.transpose" wrt [0] (%x) cotangents (%d) : (tensor<2x4xf64>), (tensor<4x2xf64>) -> tensor<2x4xf64>
  return %a : tensor<2x4xf64>
}

// -----

// A VJP of an op the kernel library has no backward kernel for.
func.func @vjp_of_unknown_op_is_rejected(%x: tensor<2xf64>, %d: tensor<2xf64>) -> tensor<2xf64> {
  // expected-error@+1 {{no kernel for the VJP of 'piper.microbatch'}}
  %a = piper.vjp "piper.microbatch" wrt [0] (%x) cotangents (%d) : (tensor<2xf64>), (tensor<2xf64>) -> tensor<2xf64>
  return %a : tensor<2xf64>
}

// -----

// A collective left in a body has no kernel: only a launch's local clone of
// the body lowers it (--piper-program-to-func).
piper.mesh @mesh axes = [tp = 2]
func.func @collective_in_body_is_rejected(%x: tensor<4xf64>) -> tensor<4xf64> {
  // expected-error@+1 {{unsupported operation 'piper.collective' in a chunk body: the native lowering has no kernel for it}}
  %c = piper.collective "c" all_reduce %x over ["tp"] of @mesh stream "s" : tensor<4xf64>
  return %c : tensor<4xf64>
}

// -----

// Only func, arith, math, tensor, linalg, bufferization and memref ops pass
// through.
func.func @other_dialect_is_rejected(%x: f64) -> f64 {
  // expected-error@+1 {{unsupported operation 'scf.execute_region' in a chunk body: the native lowering handles piper NN ops, piper.vjp, optimizer updates, arith, math, tensor and func ops}}
  %y = scf.execute_region -> f64 {
    scf.yield %x : f64
  }
  return %y : f64
}

// -----

// Every kernel VJP takes one cotangent (of the forward op's one result).
func.func @two_cotangents_are_rejected(%x: tensor<2xf64>) -> tensor<2xf64> {
  // expected-error@+1 {{expected one cotangent, got 2}}
  %a = piper.vjp "piper.softmax" wrt [0] (%x) cotangents (%x, %x) : (tensor<2xf64>), (tensor<2xf64>, tensor<2xf64>) -> tensor<2xf64>
  return %a : tensor<2xf64>
}
