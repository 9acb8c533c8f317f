// --piper-gpu-gemm reads operands in place, so their innermost stride must
// be 1 and a linear operand's leading dimensions contiguous.
// RUN: piper-opt %s --split-input-file --verify-diagnostics --piper-matmul-to-blas --piper-gpu-gemm

// A column of a wider matrix: stride 2 between the elements of a row.
func.func @strided_gemm_operand_is_rejected(%a: memref<4x8xf32, strided<[16, 2]>>, %b: memref<8x2xf32>, %c: memref<4x2xf32>) {
  %ua = memref.cast %a : memref<4x8xf32, strided<[16, 2]>> to memref<*xf32>
  %ub = memref.cast %b : memref<8x2xf32> to memref<*xf32>
  %uc = memref.cast %c : memref<4x2xf32> to memref<*xf32>
  // expected-error@+1 {{the GPU target needs unit innermost strides for GEMM operands, got 'memref<4x8xf32, strided<[16, 2]>>'}}
  call @piper_k_gemm_f32(%ua, %ub, %uc) : (memref<*xf32>, memref<*xf32>, memref<*xf32>) -> ()
  return
}
func.func private @piper_k_gemm_f32(memref<*xf32>, memref<*xf32>, memref<*xf32>)

// -----

// x's two leading dimensions are no contiguous run of rows.
func.func @gapped_linear_rows_are_rejected(%x: memref<2x3x4xf32, strided<[24, 4, 1]>>, %w: memref<4x5xf32>, %dy: memref<2x3x5xf32>, %dw: memref<4x5xf32>) {
  %ux = memref.cast %x : memref<2x3x4xf32, strided<[24, 4, 1]>> to memref<*xf32>
  %uw = memref.cast %w : memref<4x5xf32> to memref<*xf32>
  %udy = memref.cast %dy : memref<2x3x5xf32> to memref<*xf32>
  %udw = memref.cast %dw : memref<4x5xf32> to memref<*xf32>
  // expected-error@+1 {{the GPU target needs contiguous leading dimensions for a linear operand, got 'memref<2x3x4xf32, strided<[24, 4, 1]>>'}}
  call @piper_k_vjp_linear_1_f32(%ux, %uw, %udy, %udw) : (memref<*xf32>, memref<*xf32>, memref<*xf32>, memref<*xf32>) -> ()
  return
}
func.func private @piper_k_vjp_linear_1_f32(memref<*xf32>, memref<*xf32>, memref<*xf32>, memref<*xf32>)
