//===- Gemm.cpp - linalg.matmul as a BLAS call ----------------------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// piper_k_gemm_<t>(A, B, C): C += A B for 2-D memrefs, the semantics of
// linalg.matmul on buffers, as one OpenBLAS sgemm/dgemm.
// piper_k_batch_gemm_<t>(A, B, C, transA, transB): C[n] += op(A[n]) op(B[n])
// for 3-D memrefs (op transposes when its flag is 1; A is [N, K, M] when
// transposed), linalg.batch_matmul with those indexing maps, as one BLAS call
// per batch element. BLAS needs a unit stride in the minor dim; other
// layouts (never produced by the lowering today) fall back to plain loops.
//
// piper_k_gemm_bf16 and piper_k_batch_gemm_bf16 take bf16 A and B and an f32
// C: linalg.matmul with f32 accumulation, which is how the lowering builds a
// bf16 GEMM (buildMatmul, buildBatchMatmul: the result is rounded to bf16
// once, by the elementwise truncf that follows). Debian's OpenBLAS has no
// sbgemm, so each batch element's A and B are widened (exactly) into dense
// f32 scratch and multiplied by sgemm: the same products and f32 sums as an
// f32 GEMM of the widened operands, at the cost of one pass over A and B
// (O(mk + kn) next to the GEMM's O(mnk)).
//
//===----------------------------------------------------------------------===//

#include "BF16.h"
#include "MemRef.h"

#include <cblas.h>
#include <omp.h>

#include <type_traits>
#include <vector>

using namespace piper::kernels;

namespace {

/// Whether BLAS can read dims `d`, `d + 1` of `m` as a row-major matrix:
/// unit stride in the minor dim, a leading stride of at least its size.
bool blasLayout(const MemRef &m, int d) {
  return m.strides()[d + 1] == 1 && m.strides()[d] >= m.sizes()[d + 1] &&
         m.strides()[d] >= 1;
}

/// One 2-D operand: base pointer and strides.
template <typename T> struct Matrix {
  T *base;
  int64_t rowStride, colStride;
  T &at(int64_t i, int64_t j) const {
    return base[i * rowStride + j * colStride];
  }
  /// Batch element `n` of the 3-D memref `m` (the whole of a 2-D one),
  /// transposed (dims swapped) when `trans`.
  static Matrix of(const MemRef &m, int64_t n, bool trans) {
    int64_t d = m.rank - 2;
    T *base = static_cast<T *>(m.aligned()) + m.offset() +
              (d ? n * m.strides()[0] : 0);
    int64_t rs = m.strides()[d], cs = m.strides()[d + 1];
    return trans ? Matrix{base, cs, rs} : Matrix{base, rs, cs};
  }
};

/// C += A B for one [m, k] x [k, n] product, by loops.
template <typename T>
void gemmLoops(Matrix<const T> A, Matrix<const T> B, Matrix<T> C, int64_t m,
               int64_t n, int64_t k) {
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      T sum = C.at(i, j);
      for (int64_t p = 0; p < k; ++p)
        sum += A.at(i, p) * B.at(p, j);
      C.at(i, j) = sum;
    }
}

/// Row-major C += op(A) op(B) as sgemm/dgemm.
template <typename T>
void blasGemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k,
              const T *a, int64_t lda, const T *b, int64_t ldb, T *c,
              int64_t ldc) {
  CBLAS_TRANSPOSE ta = transA ? CblasTrans : CblasNoTrans;
  CBLAS_TRANSPOSE tb = transB ? CblasTrans : CblasNoTrans;
  if constexpr (std::is_same_v<T, float>)
    cblas_sgemm(CblasRowMajor, ta, tb, m, n, k, 1.0f, a, lda, b, ldb, 1.0f, c,
                ldc);
  else
    cblas_dgemm(CblasRowMajor, ta, tb, m, n, k, 1.0, a, lda, b, ldb, 1.0, c,
                ldc);
}

/// C[n] += op(A[n]) op(B[n]) over the batch of 3-D memrefs (one product of
/// 2-D memrefs when the rank is 2).
template <typename T>
void batchGemm(MemRef a, MemRef b, MemRef c, bool transA, bool transB) {
  int d = c.rank - 2;
  int64_t batch = d ? c.sizes()[0] : 1;
  int64_t m = c.sizes()[d], n = c.sizes()[d + 1];
  int64_t k = a.sizes()[d + (transA ? 0 : 1)];
  if (batch == 0 || m == 0 || n == 0 || k == 0)
    return;
  bool blas = blasLayout(a, d) && blasLayout(b, d) && blasLayout(c, d);
  for (int64_t i = 0; i < batch; ++i) {
    auto C = Matrix<T>::of(c, i, false);
    if (!blas) {
      gemmLoops<T>(Matrix<const T>::of(a, i, transA),
                   Matrix<const T>::of(b, i, transB), C, m, n, k);
      continue;
    }
    auto A = Matrix<const T>::of(a, i, false);
    auto B = Matrix<const T>::of(b, i, false);
    blasGemm<T>(transA, transB, m, n, k, A.base, A.rowStride, B.base,
                B.rowStride, C.base, C.rowStride);
  }
}

/// Batch element `n` of the 3-D bf16 memref `m` (the whole of a 2-D one),
/// dims as stored, widened into the dense row-major f32 `out`.
void widen(const MemRef &m, int64_t n, std::vector<float> &out) {
  int64_t d = m.rank - 2;
  int64_t rows = m.sizes()[d], cols = m.sizes()[d + 1];
  const BF16 *base = static_cast<const BF16 *>(m.aligned()) + m.offset() +
                     (d ? n * m.strides()[0] : 0);
  int64_t rs = m.strides()[d], cs = m.strides()[d + 1];
  out.resize(rows * cols);
  for (int64_t i = 0; i < rows; ++i) {
    float *row = out.data() + i * cols;
    const BF16 *in = base + i * rs;
    if (cs == 1) // the lowering's layout: a loop the compiler vectorises
      for (int64_t j = 0; j < cols; ++j)
        row[j] = toFloat(in[j]);
    else
      for (int64_t j = 0; j < cols; ++j)
        row[j] = toFloat(in[j * cs]);
  }
}

/// C[n] += op(A[n]) op(B[n]) with bf16 A and B and an f32 C: sgemm on
/// widened copies of A[n] and B[n].
void batchGemmBF16(MemRef a, MemRef b, MemRef c, bool transA, bool transB) {
  int d = c.rank - 2;
  int64_t batch = d ? c.sizes()[0] : 1;
  int64_t m = c.sizes()[d], n = c.sizes()[d + 1];
  int64_t k = a.sizes()[d + (transA ? 0 : 1)];
  if (batch == 0 || m == 0 || n == 0 || k == 0)
    return;
  std::vector<float> wa, wb;
  int64_t lda = a.sizes()[d + 1], ldb = b.sizes()[d + 1];
  for (int64_t i = 0; i < batch; ++i) {
    widen(a, i, wa);
    widen(b, i, wb);
    auto C = Matrix<float>::of(c, i, false);
    if (blasLayout(c, d)) {
      blasGemm<float>(transA, transB, m, n, k, wa.data(), lda, wb.data(), ldb,
                      C.base, C.rowStride);
      continue;
    }
    Matrix<const float> A{wa.data(), lda, 1}, B{wb.data(), ldb, 1};
    if (transA)
      A = {wa.data(), 1, lda};
    if (transB)
      B = {wb.data(), 1, ldb};
    gemmLoops<float>(A, B, C, m, n, k);
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
  batchGemm<double>(M(a), M(b), M(c), false, false);
}

void piper_k_gemm_f32(MR(a), MR(b), MR(c)) {
  batchGemm<float>(M(a), M(b), M(c), false, false);
}

void piper_k_gemm_bf16(MR(a), MR(b), MR(c)) {
  batchGemmBF16(M(a), M(b), M(c), false, false);
}

void piper_k_batch_gemm_bf16(MR(a), MR(b), MR(c), int64_t transA,
                             int64_t transB) {
  batchGemmBF16(M(a), M(b), M(c), transA, transB);
}

void piper_k_batch_gemm_f64(MR(a), MR(b), MR(c), int64_t transA,
                            int64_t transB) {
  batchGemm<double>(M(a), M(b), M(c), transA, transB);
}

void piper_k_batch_gemm_f32(MR(a), MR(b), MR(c), int64_t transA,
                            int64_t transB) {
  batchGemm<float>(M(a), M(b), M(c), transA, transB);
}

} // extern "C"
