// --piper-matmul-to-blas on bf16 GEMMs: bf16 A and B with an f32
// accumulator C (what buildMatmul/buildBatchMatmul emit for bf16) become
// piper_k_gemm_bf16 / piper_k_batch_gemm_bf16 (lib/Kernels/Gemm.cpp: the
// operands widened exactly, one sgemm). A bf16 result or mixed bf16/f32
// inputs have no BLAS kernel and stay for the loops.
// RUN: piper-opt %s --piper-matmul-to-blas | FileCheck %s --enable-var-scope

// CHECK-LABEL: func.func @bf16_gemms(
// CHECK-SAME:    %[[A:.*]]: memref<2x4xbf16>, %[[B:.*]]: memref<4x3xbf16>, %[[C:.*]]: memref<2x3xf32>,
// CHECK:         %[[UA:.*]] = memref.cast %[[A]] : memref<2x4xbf16> to memref<*xbf16>
// CHECK-NEXT:    %[[UB:.*]] = memref.cast %[[B]] : memref<4x3xbf16> to memref<*xbf16>
// CHECK-NEXT:    %[[UC:.*]] = memref.cast %[[C]] : memref<2x3xf32> to memref<*xf32>
// CHECK-NEXT:    call @piper_k_gemm_bf16(%[[UA]], %[[UB]], %[[UC]]) : (memref<*xbf16>, memref<*xbf16>, memref<*xf32>) -> ()
// CHECK:         call @piper_k_batch_gemm_bf16(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (memref<*xbf16>, memref<*xbf16>, memref<*xf32>, i64, i64) -> ()
// CHECK-NEXT:    linalg.matmul ins(%{{.*}}, %{{.*}} : memref<2x4xbf16>, memref<4x3xbf16>) outs(%{{.*}} : memref<2x3xbf16>)
// CHECK-NEXT:    linalg.matmul ins(%{{.*}}, %{{.*}} : memref<2x4xbf16>, memref<4x3xf32>) outs(%{{.*}} : memref<2x3xf32>)
// CHECK-NEXT:    return
func.func @bf16_gemms(%a: memref<2x4xbf16>, %b: memref<4x3xbf16>, %c: memref<2x3xf32>,
                      %ba: memref<5x2x4xbf16>, %bb: memref<5x3x4xbf16>, %bc: memref<5x2x3xf32>,
                      %c16: memref<2x3xbf16>, %b32: memref<4x3xf32>) {
  linalg.matmul ins(%a, %b : memref<2x4xbf16>, memref<4x3xbf16>) outs(%c : memref<2x3xf32>)
  linalg.batch_matmul indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>] ins(%ba, %bb : memref<5x2x4xbf16>, memref<5x3x4xbf16>) outs(%bc : memref<5x2x3xf32>)
  linalg.matmul ins(%a, %b : memref<2x4xbf16>, memref<4x3xbf16>) outs(%c16 : memref<2x3xbf16>)
  linalg.matmul ins(%a, %b32 : memref<2x4xbf16>, memref<4x3xf32>) outs(%c : memref<2x3xf32>)
  return
}
