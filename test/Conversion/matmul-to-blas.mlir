// --piper-matmul-to-blas: a plain C += A B on f32/f64 buffers becomes one
// piper_k_gemm_<t>(A, B, C) call on unranked memrefs (declared once); a
// matmul on tensors, an integer one and a transposing one stay for
// convert-linalg-to-loops.
// RUN: piper-opt %s --piper-matmul-to-blas | FileCheck %s --enable-var-scope

// CHECK-LABEL: func.func @gemms(
// CHECK-SAME:   %[[A:.*]]: memref<2x4xf64>, %[[B:.*]]: memref<4x3xf64>, %[[C:.*]]: memref<2x3xf64>,
// CHECK-SAME:   %[[A32:.*]]: memref<2x4xf32>, %[[B32:.*]]: memref<4x3xf32>, %[[C32:.*]]: memref<2x3xf32>)
// CHECK-NEXT:   %[[UA:.*]] = memref.cast %[[A]] : memref<2x4xf64> to memref<*xf64>
// CHECK-NEXT:   %[[UB:.*]] = memref.cast %[[B]] : memref<4x3xf64> to memref<*xf64>
// CHECK-NEXT:   %[[UC:.*]] = memref.cast %[[C]] : memref<2x3xf64> to memref<*xf64>
// CHECK-NEXT:   call @piper_k_gemm_f64(%[[UA]], %[[UB]], %[[UC]]) : (memref<*xf64>, memref<*xf64>, memref<*xf64>) -> ()
// CHECK-NEXT:   %[[VA:.*]] = memref.cast %[[A]]
// CHECK-NEXT:   %[[VB:.*]] = memref.cast %[[B]]
// CHECK-NEXT:   %[[VC:.*]] = memref.cast %[[C]]
// CHECK-NEXT:   call @piper_k_gemm_f64(%[[VA]], %[[VB]], %[[VC]])
// CHECK-NEXT:   %[[WA:.*]] = memref.cast %[[A32]] : memref<2x4xf32> to memref<*xf32>
// CHECK-NEXT:   %[[WB:.*]] = memref.cast %[[B32]] : memref<4x3xf32> to memref<*xf32>
// CHECK-NEXT:   %[[WC:.*]] = memref.cast %[[C32]] : memref<2x3xf32> to memref<*xf32>
// CHECK-NEXT:   call @piper_k_gemm_f32(%[[WA]], %[[WB]], %[[WC]]) : (memref<*xf32>, memref<*xf32>, memref<*xf32>) -> ()
// CHECK-NEXT:   return
func.func @gemms(%a: memref<2x4xf64>, %b: memref<4x3xf64>, %c: memref<2x3xf64>,
                 %a32: memref<2x4xf32>, %b32: memref<4x3xf32>, %c32: memref<2x3xf32>) {
  linalg.matmul ins(%a, %b : memref<2x4xf64>, memref<4x3xf64>) outs(%c : memref<2x3xf64>)
  linalg.matmul ins(%a, %b : memref<2x4xf64>, memref<4x3xf64>) outs(%c : memref<2x3xf64>)
  linalg.matmul ins(%a32, %b32 : memref<2x4xf32>, memref<4x3xf32>) outs(%c32 : memref<2x3xf32>)
  return
}

// CHECK-LABEL: func.func @not_blas(
// CHECK-NOT:    call
// CHECK:        linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<2x4xf64>, tensor<4x3xf64>)
// CHECK:        linalg.matmul ins(%{{.*}}, %{{.*}} : memref<2x4xi64>, memref<4x3xi64>)
// CHECK:        linalg.matmul indexing_maps
// CHECK-NOT:    call
// CHECK:        return
func.func @not_blas(%a: tensor<2x4xf64>, %b: tensor<4x3xf64>, %c: tensor<2x3xf64>,
                    %ai: memref<2x4xi64>, %bi: memref<4x3xi64>, %ci: memref<2x3xi64>,
                    %at: memref<4x2xf64>, %bt: memref<4x3xf64>, %ct: memref<2x3xf64>) -> tensor<2x3xf64> {
  %r = linalg.matmul ins(%a, %b : tensor<2x4xf64>, tensor<4x3xf64>) outs(%c : tensor<2x3xf64>) -> tensor<2x3xf64>
  linalg.matmul ins(%ai, %bi : memref<2x4xi64>, memref<4x3xi64>) outs(%ci : memref<2x3xi64>)
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k, m)>,
                                 affine_map<(m, n, k) -> (k, n)>,
                                 affine_map<(m, n, k) -> (m, n)>]
      ins(%at, %bt : memref<4x2xf64>, memref<4x3xf64>) outs(%ct : memref<2x3xf64>)
  return %r : tensor<2x3xf64>
}

// Declared once per element type.
// CHECK-DAG:  func.func private @piper_k_gemm_f64(memref<*xf64>, memref<*xf64>, memref<*xf64>)
// CHECK-DAG:  func.func private @piper_k_gemm_f32(memref<*xf32>, memref<*xf32>, memref<*xf32>)
