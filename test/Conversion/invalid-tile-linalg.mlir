// Bad --piper-tile-linalg options get one located error and fail the pass.
// RUN: not piper-opt %s --pass-pipeline='builtin.module(func.func(piper-tile-linalg{vector-bytes=24}))' 2>&1 | FileCheck %s --check-prefix=BYTES
// RUN: not piper-opt %s --pass-pipeline='builtin.module(func.func(piper-tile-linalg{parallel-grain=-1}))' 2>&1 | FileCheck %s --check-prefix=GRAIN

// BYTES: invalid-tile-linalg.mlir:[[@LINE+3]]:1: error: piper-tile-linalg: parallel-grain must be >= 0 and vector-bytes 0 or a power of two, got parallel-grain=0 vector-bytes=24
// GRAIN: invalid-tile-linalg.mlir:[[@LINE+2]]:1: error: piper-tile-linalg: parallel-grain must be >= 0 and vector-bytes 0 or a power of two, got parallel-grain=-1 vector-bytes=0
// BYTES-NOT: error
func.func @f(%a: memref<4xf32>) {
  return
}
