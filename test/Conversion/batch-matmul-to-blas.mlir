// --piper-matmul-to-blas: a linalg.batch_matmul on f32/f64 buffers with the
// default maps, or reading A or B transposed, becomes one
// piper_k_batch_gemm_<t>(A, B, C, transA, transB) call (declared once per
// element type); one on tensors, with mixed element types or with other
// maps (a broadcast operand) stays for convert-linalg-to-loops.
// RUN: piper-opt %s --piper-matmul-to-blas | FileCheck %s --enable-var-scope

// CHECK-LABEL: func.func @batch_gemms(
// CHECK-SAME:   %[[A:.*]]: memref<2x3x4xf64>, %[[B:.*]]: memref<2x4x5xf64>, %[[C:.*]]: memref<2x3x5xf64>,
// CHECK-SAME:   %[[AT:.*]]: memref<2x4x3xf32>, %[[BT:.*]]: memref<2x5x4xf32>, %[[C32:.*]]: memref<2x3x5xf32>,
// CHECK-NEXT:   %[[F:.*]] = arith.constant 0 : i64
// CHECK-NEXT:   %[[F2:.*]] = arith.constant 0 : i64
// CHECK-NEXT:   %[[UA:.*]] = memref.cast %[[A]] : memref<2x3x4xf64> to memref<*xf64>
// CHECK-NEXT:   %[[UB:.*]] = memref.cast %[[B]] : memref<2x4x5xf64> to memref<*xf64>
// CHECK-NEXT:   %[[UC:.*]] = memref.cast %[[C]] : memref<2x3x5xf64> to memref<*xf64>
// CHECK-NEXT:   call @piper_k_batch_gemm_f64(%[[UA]], %[[UB]], %[[UC]], %[[F]], %[[F2]]) : (memref<*xf64>, memref<*xf64>, memref<*xf64>, i64, i64) -> ()
// A transposed: transA = 1, transB = 0.
// CHECK-NEXT:   %[[T1:.*]] = arith.constant 1 : i64
// CHECK-NEXT:   %[[N1:.*]] = arith.constant 0 : i64
// CHECK-NEXT:   %[[VA:.*]] = memref.cast %[[AT]] : memref<2x4x3xf32> to memref<*xf32>
// CHECK-NEXT:   %[[VB:.*]] = memref.cast %[[B32:.*]] : memref<2x4x5xf32> to memref<*xf32>
// CHECK-NEXT:   %[[VC:.*]] = memref.cast %[[C32]] : memref<2x3x5xf32> to memref<*xf32>
// CHECK-NEXT:   call @piper_k_batch_gemm_f32(%[[VA]], %[[VB]], %[[VC]], %[[T1]], %[[N1]]) : (memref<*xf32>, memref<*xf32>, memref<*xf32>, i64, i64) -> ()
// B transposed: transA = 0, transB = 1.
// CHECK-NEXT:   %[[N2:.*]] = arith.constant 0 : i64
// CHECK-NEXT:   %[[T2:.*]] = arith.constant 1 : i64
// CHECK-NEXT:   memref.cast
// CHECK-NEXT:   memref.cast %[[BT]]
// CHECK-NEXT:   memref.cast
// CHECK-NEXT:   call @piper_k_batch_gemm_f32(%{{.*}}, %{{.*}}, %{{.*}}, %[[N2]], %[[T2]])
// CHECK-NEXT:   return
func.func @batch_gemms(%a: memref<2x3x4xf64>, %b: memref<2x4x5xf64>, %c: memref<2x3x5xf64>,
                       %at: memref<2x4x3xf32>, %bt: memref<2x5x4xf32>, %c32: memref<2x3x5xf32>,
                       %a32: memref<2x3x4xf32>, %b32: memref<2x4x5xf32>) {
  linalg.batch_matmul ins(%a, %b : memref<2x3x4xf64>, memref<2x4x5xf64>) outs(%c : memref<2x3x5xf64>)
  linalg.batch_matmul indexing_maps = [affine_map<(b, m, n, k) -> (b, k, m)>,
                                       affine_map<(b, m, n, k) -> (b, k, n)>,
                                       affine_map<(b, m, n, k) -> (b, m, n)>]
      ins(%at, %b32 : memref<2x4x3xf32>, memref<2x4x5xf32>) outs(%c32 : memref<2x3x5xf32>)
  linalg.batch_matmul indexing_maps = [affine_map<(b, m, n, k) -> (b, m, k)>,
                                       affine_map<(b, m, n, k) -> (b, n, k)>,
                                       affine_map<(b, m, n, k) -> (b, m, n)>]
      ins(%a32, %bt : memref<2x3x4xf32>, memref<2x5x4xf32>) outs(%c32 : memref<2x3x5xf32>)
  return
}

// CHECK-LABEL: func.func @not_blas(
// CHECK-NOT:    call
// CHECK:        linalg.batch_matmul ins(%{{.*}}, %{{.*}} : tensor<2x3x4xf64>, tensor<2x4x5xf64>)
// CHECK:        linalg.batch_matmul ins(%{{.*}}, %{{.*}} : memref<2x3x4xf32>, memref<2x4x5xf32>) outs(%{{.*}} : memref<2x3x5xf64>)
// CHECK:        linalg.batch_matmul indexing_maps
// CHECK-NOT:    call
// CHECK:        return
func.func @not_blas(%a: tensor<2x3x4xf64>, %b: tensor<2x4x5xf64>, %c: tensor<2x3x5xf64>,
                    %a32: memref<2x3x4xf32>, %b32: memref<2x4x5xf32>, %c64: memref<2x3x5xf64>,
                    %w: memref<4x5xf64>, %a64: memref<2x3x4xf64>) -> tensor<2x3x5xf64> {
  %r = linalg.batch_matmul ins(%a, %b : tensor<2x3x4xf64>, tensor<2x4x5xf64>) outs(%c : tensor<2x3x5xf64>) -> tensor<2x3x5xf64>
  linalg.batch_matmul ins(%a32, %b32 : memref<2x3x4xf32>, memref<2x4x5xf32>) outs(%c64 : memref<2x3x5xf64>)
  linalg.batch_matmul indexing_maps = [affine_map<(b, m, n, k) -> (b, m, k)>,
                                       affine_map<(b, m, n, k) -> (k, n)>,
                                       affine_map<(b, m, n, k) -> (b, m, n)>]
      ins(%a64, %w : memref<2x3x4xf64>, memref<4x5xf64>) outs(%c64 : memref<2x3x5xf64>)
  return %r : tensor<2x3x5xf64>
}

// CHECK-DAG:  func.func private @piper_k_batch_gemm_f64(memref<*xf64>, memref<*xf64>, memref<*xf64>, i64, i64)
// CHECK-DAG:  func.func private @piper_k_batch_gemm_f32(memref<*xf32>, memref<*xf32>, memref<*xf32>, i64, i64)
