// --piper-gpu-gemm: the CPU pipeline's BLAS calls (--piper-matmul-to-blas
// and the kernel library's VJPs) become piper_gpu_gemm(a_dtype, c_dtype,
// trans_a, trans_b, batch, m, n, k, alpha, a, lda, stride_a, b, ldb,
// stride_b, beta, c, ldc, stride_c), operands read in place. Canonicalized
// so that the static sizes and strides read from the buffers' metadata show
// as constants.
// RUN: piper-opt %s --piper-matmul-to-blas --piper-gpu-gemm --canonicalize | FileCheck %s

// A plain C += A B: f32 (dtype 0) in and out, batch 1, m = 16, n = 8,
// k = 32, lda = 32, ldb = ldc = 8, alpha = beta = 1.
// CHECK-LABEL: func.func @matmul(
// CHECK-SAME:    %[[A:.*]]: memref<16x32xf32>, %[[B:.*]]: memref<32x8xf32>, %[[C:.*]]: memref<16x8xf32>)
// CHECK-DAG:     %[[ONE:.*]] = arith.constant 1.000000e+00 : f64
// CHECK:         %[[IA:.*]] = memref.extract_aligned_pointer_as_index %[[A]]
// CHECK-NEXT:    %[[IA64:.*]] = arith.index_cast %[[IA]] : index to i64
// CHECK-NEXT:    %[[PA:.*]] = llvm.inttoptr %[[IA64]] : i64 to !llvm.ptr
// CHECK:         %[[PB:.*]] = llvm.inttoptr
// CHECK:         %[[PC:.*]] = llvm.inttoptr
// CHECK-NEXT:    call @piper_gpu_gemm(%c0_i32, %c0_i32, %c0_i32, %c0_i32, %c1_i64, %c16_i64, %c8_i64, %c32_i64, %[[ONE]], %[[PA]], %c32_i64, %c0_i64, %[[PB]], %c8_i64, %c0_i64, %[[ONE]], %[[PC]], %c8_i64, %c0_i64)
// CHECK-SAME:      : (i32, i32, i32, i32, i64, i64, i64, i64, f64, !llvm.ptr, i64, i64, !llvm.ptr, i64, i64, f64, !llvm.ptr, i64, i64) -> ()
// CHECK-NEXT:    return
func.func @matmul(%a: memref<16x32xf32>, %b: memref<32x8xf32>, %c: memref<16x8xf32>) {
  linalg.matmul ins(%a, %b : memref<16x32xf32>, memref<32x8xf32>) outs(%c : memref<16x8xf32>)
  return
}

// Q K^T as attention emits it: f64 (dtype 1), B read transposed
// (trans_b = 1) in place, batch 4, m = n = 8, k = 16, batch strides 128,
// 128 and 64 elements.
// CHECK-LABEL: func.func @batch_transposed(
// CHECK:         call @piper_gpu_gemm(%c1_i32, %c1_i32, %c0_i32, %c1_i32, %c4_i64, %c8_i64, %c8_i64, %c16_i64, %{{.*}}, %{{.*}}, %c16_i64, %c128_i64, %{{.*}}, %c16_i64, %c128_i64, %{{.*}}, %{{.*}}, %c8_i64, %c64_i64)
func.func @batch_transposed(%q: memref<4x8x16xf64>, %k: memref<4x8x16xf64>, %s: memref<4x8x8xf64>) {
  linalg.batch_matmul indexing_maps = [
      affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>,
      affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>,
      affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>]
    ins(%q, %k : memref<4x8x16xf64>, memref<4x8x16xf64>) outs(%s : memref<4x8x8xf64>)
  return
}

// bf16 A and B into an f32 C: a_dtype 3 (bf16), c_dtype 0 (f32).
// CHECK-LABEL: func.func @bf16_inputs(
// CHECK:         call @piper_gpu_gemm(%c3_i32, %c0_i32, %c0_i32, %c0_i32, %c1_i64, %c4_i64, %c2_i64, %c8_i64,
func.func @bf16_inputs(%a: memref<4x8xbf16>, %b: memref<8x2xbf16>, %c: memref<4x2xf32>) {
  linalg.matmul ins(%a, %b : memref<4x8xbf16>, memref<8x2xbf16>) outs(%c : memref<4x2xf32>)
  return
}

// The linear VJPs of x [2, 3, 4] (6 rows) and w [4, 5], overwriting
// (beta 0): dx = dy w^T (trans_b; m = 6, n = 4, k = 5; A = dy, B = w) and
// dw = x^T dy (trans_a; m = 4, n = 5, k = 6; A = x, B = dy).
// CHECK-LABEL: func.func @vjp_linear(
// CHECK-SAME:    %[[X:.*]]: memref<2x3x4xf32>, %[[W:.*]]: memref<4x5xf32>, %[[DY:.*]]: memref<2x3x5xf32>, %[[DX:.*]]: memref<2x3x4xf32>, %[[DW:.*]]: memref<4x5xf32>)
// CHECK-DAG:     %[[ZERO:.*]] = arith.constant 0.000000e+00 : f64
// CHECK-DAG:     %[[ONE:.*]] = arith.constant 1.000000e+00 : f64
// CHECK:         %[[IW:.*]] = memref.extract_aligned_pointer_as_index %[[W]]
// CHECK-NEXT:    %[[IW64:.*]] = arith.index_cast %[[IW]]
// CHECK-NEXT:    %[[PW:.*]] = llvm.inttoptr %[[IW64]]
// CHECK-NEXT:    %[[IDY:.*]] = memref.extract_aligned_pointer_as_index %[[DY]]
// CHECK-NEXT:    %[[IDY64:.*]] = arith.index_cast %[[IDY]]
// CHECK-NEXT:    %[[PDY:.*]] = llvm.inttoptr %[[IDY64]]
// CHECK-NEXT:    %[[IDX:.*]] = memref.extract_aligned_pointer_as_index %[[DX]]
// CHECK-NEXT:    %[[IDX64:.*]] = arith.index_cast %[[IDX]]
// CHECK-NEXT:    %[[PDX:.*]] = llvm.inttoptr %[[IDX64]]
// CHECK-NEXT:    call @piper_gpu_gemm(%c0_i32, %c0_i32, %c0_i32, %c1_i32, %c1_i64, %c6_i64, %c4_i64, %c5_i64, %[[ONE]], %[[PDY]], %c5_i64, %c0_i64, %[[PW]], %c5_i64, %c0_i64, %[[ZERO]], %[[PDX]], %c4_i64, %c0_i64)
// CHECK-NEXT:    %[[IX:.*]] = memref.extract_aligned_pointer_as_index %[[X]]
// CHECK-NEXT:    %[[IX64:.*]] = arith.index_cast %[[IX]]
// CHECK-NEXT:    %[[PX:.*]] = llvm.inttoptr %[[IX64]]
// CHECK-NEXT:    %[[IDY2:.*]] = memref.extract_aligned_pointer_as_index %[[DY]]
// CHECK-NEXT:    %[[IDY264:.*]] = arith.index_cast %[[IDY2]]
// CHECK-NEXT:    %[[PDY2:.*]] = llvm.inttoptr %[[IDY264]]
// CHECK-NEXT:    %[[IDW:.*]] = memref.extract_aligned_pointer_as_index %[[DW]]
// CHECK-NEXT:    %[[IDW64:.*]] = arith.index_cast %[[IDW]]
// CHECK-NEXT:    %[[PDW:.*]] = llvm.inttoptr %[[IDW64]]
// CHECK-NEXT:    call @piper_gpu_gemm(%c0_i32, %c0_i32, %c1_i32, %c0_i32, %c1_i64, %c4_i64, %c5_i64, %c6_i64, %[[ONE]], %[[PX]], %c4_i64, %c0_i64, %[[PDY2]], %c5_i64, %c0_i64, %[[ZERO]], %[[PDW]], %c5_i64, %c0_i64)
// CHECK-NEXT:    return
func.func @vjp_linear(%x: memref<2x3x4xf32>, %w: memref<4x5xf32>, %dy: memref<2x3x5xf32>,
                      %dx: memref<2x3x4xf32>, %dw: memref<4x5xf32>) {
  %ux = memref.cast %x : memref<2x3x4xf32> to memref<*xf32>
  %uw = memref.cast %w : memref<4x5xf32> to memref<*xf32>
  %udy = memref.cast %dy : memref<2x3x5xf32> to memref<*xf32>
  %udx = memref.cast %dx : memref<2x3x4xf32> to memref<*xf32>
  %udw = memref.cast %dw : memref<4x5xf32> to memref<*xf32>
  call @piper_k_vjp_linear_0_f32(%ux, %uw, %udy, %udx) : (memref<*xf32>, memref<*xf32>, memref<*xf32>, memref<*xf32>) -> ()
  call @piper_k_vjp_linear_1_f32(%ux, %uw, %udy, %udw) : (memref<*xf32>, memref<*xf32>, memref<*xf32>, memref<*xf32>) -> ()
  return
}
// The library declarations go; piper_gpu_gemm is declared once.
// CHECK-NOT:   func.func private @piper_k_
// CHECK:       func.func private @piper_gpu_gemm(i32, i32, i32, i32, i64, i64, i64, i64, f64, !llvm.ptr, i64, i64, !llvm.ptr, i64, i64, f64, !llvm.ptr, i64, i64)
// CHECK-NOT:   func.func private @piper_k_
func.func private @piper_k_vjp_linear_0_f32(memref<*xf32>, memref<*xf32>, memref<*xf32>, memref<*xf32>)
func.func private @piper_k_vjp_linear_1_f32(memref<*xf32>, memref<*xf32>, memref<*xf32>, memref<*xf32>)
