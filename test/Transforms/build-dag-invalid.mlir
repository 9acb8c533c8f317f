// RUN: not piper-opt %s --piper-build-dag 2>&1 | FileCheck %s
// A module without chunks has no DAG nodes to build.

// CHECK: error: piper-build-dag: no function has chunks (piper.annotate) to turn into DAG nodes
func.func @no_chunks(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
