// Matmuls the linalg lowering cannot build get one located error from the
// fallback (no kernel library call exists for any matmul or linear forward).
// RUN: piper-opt %s -split-input-file --piper-convert-to-kernels -verify-diagnostics

// Shapes must be static to build the GEMM's init tensor.
func.func @dynamic_batched_matmul_is_rejected(%a: tensor<?x4x5xf64>, %b: tensor<?x5x3xf64>) -> tensor<?x4x3xf64> {
  // expected-error@+1 {{unsupported operation 'piper.matmul' in a chunk body: the native lowering has no kernel for it}}
  %c = piper.matmul %a, %b : tensor<?x4x5xf64>, tensor<?x5x3xf64> -> tensor<?x4x3xf64>
  return %c : tensor<?x4x3xf64>
}
