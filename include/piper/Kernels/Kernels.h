//===- Kernels.h - C-ABI kernels called by lowered plans --------*- C++ -*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The kernel library that native code produced by `--piper-lower-to-llvm`
// calls for the piper ops whose semantics do not map cleanly onto linalg
// yet and for GEMMs (OpenBLAS): the GEMM and batched GEMM that
// --piper-matmul-to-blas calls (piper_k_gemm, piper_k_batch_gemm) and the
// VJPs of 2-D matmul and linear (BLAS with transposes). Every forward op and
// every other VJP lowers to linalg and tensor ops (lib/Conversion/
// *ToLinalg.cpp). Plain C++ with a C ABI and no MLIR or LLVM: plan objects
// link it statically, and so will the MPI runtime.
//
// ABI. Every tensor operand and result is an *unranked* memref as MLIR's
// default calling convention passes it: two arguments, `int64_t rank` and
// `void *descriptor`, where the descriptor is
//   { T *allocated; T *aligned; int64_t offset; int64_t sizes[rank];
//     int64_t strides[rank]; }.
// Kernels honour arbitrary strides and offsets (microbatch slices arrive as
// strided views). Operands come first, then results (pre-allocated by the
// caller with the result's static shape), then scalar attributes (`double`
// or `int64_t`). Names are
//   piper_k_<op>_<f32|f64>            forward of piper.<op>
//   piper_k_vjp_<op>_<wrt>_<f32|f64>  piper.vjp of piper.<op> w.r.t. operand
//   piper_k_gemm_<f32|f64>            C += A B on 2-D memrefs (BLAS)
//   piper_k_batch_gemm_<f32|f64>      C[n] += op(A[n]) op(B[n]) on 3-D
//                                     memrefs, then i64 transA, transB
//                                     (op transposes when 1; BLAS per n)
// where f32/f64 is the element type of the float tensors; integer tensors
// (ids, labels) are always i64. bf16 (bf16-mixed plans): piper_k_gemm_bf16
// and piper_k_batch_gemm_bf16 take bf16 A and B and an f32 C (the operands
// widened exactly, one sgemm: OpenBLAS has no sbgemm here), and
// piper_k_vjp_<op>_<wrt>_bf16 take and return bf16 (f32 arithmetic, one
// rounding to nearest even on the way out; BlasVjpBF16.cpp).
//
// Numerics: every NN kernel and VJP runs the f64 reference kernels
// (piper/Reference/Kernels.h) and rounds once on the way out, so f64 plans
// reproduce the interpreter and f32 plans its f32 mode (f32 storage, f64
// arithmetic inside a kernel). GEMMs are BLAS (sgemm/dgemm): the same
// products, summed in another order, and in f32 for f32 plans. That covers
// the forward GEMMs and the VJPs of linear (w.r.t. x and w) and 2-D matmul;
// linear's bias gradient sums in f64 and rounds once.
//
// Errors: a kernel whose reference function fails records the first error
// (op name and message) and leaves its results zero; the host checks
// piper_kernels_last_error() after each step, as the interpreter would have
// stopped at that op.
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_KERNELS_KERNELS_H
#define PIPER_KERNELS_KERNELS_H

#ifdef __cplusplus
extern "C" {
#endif

/// The first kernel error since the last clear, or null if none.
const char *piper_kernels_last_error(void);
/// Forgets the recorded error.
void piper_kernels_clear_error(void);
/// Threads of the calling thread's kernels: OpenBLAS's and the OpenMP team
/// of the generated parallel loops (Gemm.cpp).
void piper_k_set_threads(int threads);

#ifdef __cplusplus
}
#endif

#endif // PIPER_KERNELS_KERNELS_H
