//===- Gemm.cpp - linalg.matmul as a BLAS call ----------------------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// piper_k_gemm_<t>(A, B, C): C += A B for 2-D memrefs, the semantics of
// linalg.matmul on buffers, as one OpenBLAS sgemm/dgemm. BLAS needs a unit
// stride in the minor dim; other layouts (never produced by the lowering
// today) fall back to a plain triple loop.
//
//===----------------------------------------------------------------------===//

#include "MemRef.h"

#include <cblas.h>
#include <omp.h>

using namespace piper::kernels;

namespace {

bool blasLayout(const MemRef &m) {
  return m.strides()[1] == 1 && m.strides()[0] >= m.sizes()[1] &&
         m.strides()[0] >= 1;
}

template <typename T> void gemmLoops(MemRef a, MemRef b, MemRef c) {
  const T *A = static_cast<const T *>(a.aligned()) + a.offset();
  const T *B = static_cast<const T *>(b.aligned()) + b.offset();
  T *C = static_cast<T *>(c.aligned()) + c.offset();
  int64_t m = a.sizes()[0], k = a.sizes()[1], n = b.sizes()[1];
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      T sum = C[i * c.strides()[0] + j * c.strides()[1]];
      for (int64_t p = 0; p < k; ++p)
        sum += A[i * a.strides()[0] + p * a.strides()[1]] *
               B[p * b.strides()[0] + j * b.strides()[1]];
      C[i * c.strides()[0] + j * c.strides()[1]] = sum;
    }
}

} // namespace

#define MR(n) int64_t n##R, void *n##D
#define M(n)                                                                   \
  MemRef { n##R, n##D }

extern "C" {

// OpenBLAS keeps one pool per process; omp_set_num_threads sets the team
// size of the parallel regions the calling thread starts (the thread that
// runs the plan's entry).
void piper_k_set_threads(int threads) {
  openblas_set_num_threads(threads);
  omp_set_num_threads(threads);
}

void piper_k_gemm_f64(MR(a), MR(b), MR(c)) {
  MemRef A = M(a), B = M(b), C = M(c);
  int64_t m = A.sizes()[0], k = A.sizes()[1], n = B.sizes()[1];
  if (m == 0 || n == 0 || k == 0)
    return;
  if (!blasLayout(A) || !blasLayout(B) || !blasLayout(C))
    return gemmLoops<double>(A, B, C);
  cblas_dgemm(
      CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0,
      static_cast<const double *>(A.aligned()) + A.offset(), A.strides()[0],
      static_cast<const double *>(B.aligned()) + B.offset(), B.strides()[0],
      1.0, static_cast<double *>(C.aligned()) + C.offset(), C.strides()[0]);
}

void piper_k_gemm_f32(MR(a), MR(b), MR(c)) {
  MemRef A = M(a), B = M(b), C = M(c);
  int64_t m = A.sizes()[0], k = A.sizes()[1], n = B.sizes()[1];
  if (m == 0 || n == 0 || k == 0)
    return;
  if (!blasLayout(A) || !blasLayout(B) || !blasLayout(C))
    return gemmLoops<float>(A, B, C);
  cblas_sgemm(
      CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f,
      static_cast<const float *>(A.aligned()) + A.offset(), A.strides()[0],
      static_cast<const float *>(B.aligned()) + B.offset(), B.strides()[0],
      1.0f, static_cast<float *>(C.aligned()) + C.offset(), C.strides()[0]);
}

} // extern "C"
