//===- BlasVjp.cpp - Linear and matmul VJPs as BLAS calls -----------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The input and weight gradients of linear and 2-D matmul are GEMMs with one
// operand transposed; they run as one OpenBLAS sgemm/dgemm on the memrefs'
// data in their own element type (f32 plans accumulate in f32, as their
// forward GEMMs do). A memref is viewed as a matrix (leading dims collapsed)
// with a row and a column stride; BLAS takes it as is when one of the two
// strides is 1 (row-major, or column-major as the transposed operand), and a
// contiguous copy is made only otherwise (or when the leading dims cannot be
// collapsed into one stride). The bias gradient sums dy's columns in f64,
// in the reference's order, and rounds once.
//
//===----------------------------------------------------------------------===//

#include "Blas.h"

#include <cblas.h>

#include <algorithm>
#include <climits>
#include <vector>

using namespace piper;
using namespace piper::kernels;

namespace {

/// A rows x cols matrix at p: element (i, j) is p[i * rs + j * cs].
template <typename T> struct View {
  T *p;
  int64_t rows, cols, rs, cs;
  View<T> transposed() const { return {p, cols, rows, cs, rs}; }
};

/// BLAS dimensions and leading dimensions are 32-bit ints.
bool fitsInt(int64_t v) { return v >= 0 && v <= INT_MAX; }

/// `v` is a row-major BLAS matrix (unit column stride); sets its lda.
template <typename T> bool rowMajor(const View<T> &v, int64_t &ld) {
  int64_t cols = std::max<int64_t>(v.cols, 1);
  if (v.cols > 1 && v.cs != 1)
    return false;
  ld = v.rows <= 1 ? cols : v.rs;
  return ld >= cols && fitsInt(ld);
}

/// `v` is a column-major BLAS matrix (unit row stride), i.e. the row-major
/// transpose of a matrix with leading dimension `ld`.
template <typename T> bool colMajor(const View<T> &v, int64_t &ld) {
  return rowMajor(v.transposed(), ld);
}

/// `m` (rank >= 1) as a matrix: its leading dims collapsed into rows with
/// one stride. False when they do not form one arithmetic progression.
template <typename T> bool collapse(MemRef m, View<T> &v) {
  int64_t r = m.rank;
  v.p = static_cast<T *>(m.aligned()) + m.offset();
  v.cols = m.sizes()[r - 1];
  v.cs = m.strides()[r - 1];
  v.rows = 1;
  for (int64_t d = 0; d + 1 < r; ++d)
    v.rows *= m.sizes()[d];
  v.rs = v.cols;
  if (v.rows == 0)
    return true; // empty: no element is ever addressed
  bool have = false;
  int64_t expect = 0;
  for (int64_t d = r - 2; d >= 0; --d) {
    int64_t size = m.sizes()[d], stride = m.strides()[d];
    if (size == 1)
      continue;
    if (have && stride != expect)
      return false;
    if (!have)
      v.rs = stride;
    have = true;
    expect = stride * size;
  }
  return true;
}

/// `m` as a matrix: a view of its data, or a dense copy in `buf`.
template <typename T> View<const T> input(MemRef m, std::vector<T> &buf) {
  View<const T> v;
  if (collapse(m, v))
    return v;
  int64_t n = m.numel();
  buf.resize(n);
  const T *base = static_cast<const T *>(m.aligned());
  for (int64_t i = 0; i < n; ++i)
    buf[i] = base[m.elementOffset(i)];
  return {buf.data(), v.rows, v.cols, v.cols, 1};
}

/// A dense row-major copy of `v` in `buf`.
template <typename T> View<const T> pack(View<const T> v, std::vector<T> &buf) {
  buf.resize(v.rows * v.cols);
  for (int64_t i = 0; i < v.rows; ++i)
    for (int64_t j = 0; j < v.cols; ++j)
      buf[i * v.cols + j] = v.p[i * v.rs + j * v.cs];
  return {buf.data(), v.rows, v.cols, v.cols, 1};
}

void blas(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int64_t m, int64_t n,
          int64_t k, const float *a, int64_t lda, const float *b, int64_t ldb,
          float *c, int64_t ldc) {
  cblas_sgemm(CblasRowMajor, ta, tb, m, n, k, 1.0f, a, lda, b, ldb, 0.0f, c,
              ldc);
}
void blas(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int64_t m, int64_t n,
          int64_t k, const double *a, int64_t lda, const double *b, int64_t ldb,
          double *c, int64_t ldc) {
  cblas_dgemm(CblasRowMajor, ta, tb, m, n, k, 1.0, a, lda, b, ldb, 0.0, c, ldc);
}

/// One operand as BLAS takes it: pointer, transpose flag, leading dim.
template <typename T> struct Operand {
  const T *p;
  CBLAS_TRANSPOSE trans;
  int64_t ld;
};
template <typename T> Operand<T> operand(View<const T> v, std::vector<T> &buf) {
  int64_t ld;
  if (rowMajor(v, ld))
    return {v.p, CblasNoTrans, ld};
  if (colMajor(v, ld))
    return {v.p, CblasTrans, ld};
  v = pack(v, buf);
  return {v.p, CblasNoTrans, std::max<int64_t>(v.cols, 1)};
}

/// c = a b (overwriting c). Dims are known to fit BLAS's ints.
template <typename T> void gemm(View<const T> a, View<const T> b, View<T> c) {
  int64_t m = a.rows, k = a.cols, n = b.cols;
  if (m == 0 || n == 0)
    return;
  if (k == 0) {
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j)
        c.p[i * c.rs + j * c.cs] = T(0);
    return;
  }
  int64_t ldc;
  if (!rowMajor(c, ldc)) {
    if (colMajor(c, ldc)) // c^T = b^T a^T, with c^T row-major.
      return gemm(b.transposed(), a.transposed(), c.transposed());
    std::vector<T> tmp(m * n);
    gemm(a, b, View<T>{tmp.data(), m, n, n, 1});
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j)
        c.p[i * c.rs + j * c.cs] = tmp[i * n + j];
    return;
  }
  std::vector<T> bufA, bufB;
  Operand<T> A = operand(a, bufA), B = operand(b, bufB);
  blas(A.trans, B.trans, m, n, k, A.p, A.ld, B.p, B.ld, c.p, ldc);
}

/// c = a b into the memref `o` (shape [a.rows, b.cols] after collapsing).
template <typename T>
void gemmInto(View<const T> a, View<const T> b, MemRef o) {
  View<T> c;
  if (collapse(o, c))
    return gemm(a, b, c);
  int64_t n = o.numel();
  std::vector<T> tmp(n);
  gemm(a, b, View<T>{tmp.data(), a.rows, b.cols, b.cols, 1});
  T *base = static_cast<T *>(o.aligned());
  for (int64_t i = 0; i < n; ++i)
    base[o.elementOffset(i)] = tmp[i];
}

bool sameSizes(MemRef m, std::initializer_list<int64_t> sizes) {
  if (m.rank != static_cast<int64_t>(sizes.size()))
    return false;
  return std::equal(sizes.begin(), sizes.end(), m.sizes());
}

} // namespace

template <typename T>
bool piper::kernels::blasVjpLinear(int wrt, MemRef x, MemRef w, MemRef dy,
                                   MemRef o) {
  if (x.rank < 1 || w.rank != 2 || dy.rank != x.rank)
    return false;
  int64_t r = x.rank, in = w.sizes()[0], out = w.sizes()[1];
  if (x.sizes()[r - 1] != in || dy.sizes()[r - 1] != out ||
      !std::equal(x.sizes(), x.sizes() + r - 1, dy.sizes()))
    return false;
  int64_t rows = 1;
  for (int64_t d = 0; d + 1 < r; ++d)
    rows *= x.sizes()[d];
  switch (wrt) {
  case 0:
    if (o.rank != r || !std::equal(x.sizes(), x.sizes() + r, o.sizes()))
      return false;
    break;
  case 1:
    if (!sameSizes(o, {in, out}))
      return false;
    break;
  case 2:
    if (!sameSizes(o, {out}))
      return false;
    break;
  default:
    return false;
  }
  if (!fitsInt(rows) || !fitsInt(in) || !fitsInt(out))
    return false;

  std::vector<T> bufX, bufW, bufDy;
  View<const T> DY = input<T>(dy, bufDy);
  if (wrt == 2) {
    std::vector<double> sum(out, 0.0);
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < out; ++j)
        sum[j] += static_cast<double>(DY.p[i * DY.rs + j * DY.cs]);
    T *base = static_cast<T *>(o.aligned()) + o.offset();
    for (int64_t j = 0; j < out; ++j)
      base[j * o.strides()[0]] = static_cast<T>(sum[j]);
    return true;
  }
  if (wrt == 0) // dx [rows, in] = dy [rows, out] w^T [out, in]
    gemmInto<T>(DY, input<T>(w, bufW).transposed(), o);
  else // dw [in, out] = x^T [in, rows] dy [rows, out]
    gemmInto<T>(input<T>(x, bufX).transposed(), DY, o);
  return true;
}

template <typename T>
bool piper::kernels::blasVjpMatmul(int wrt, MemRef a, MemRef b, MemRef dy,
                                   MemRef o) {
  if (a.rank != 2 || b.rank != 2 || dy.rank != 2)
    return false;
  int64_t m = a.sizes()[0], k = a.sizes()[1], n = b.sizes()[1];
  if (b.sizes()[0] != k || !sameSizes(dy, {m, n}))
    return false;
  if (!(wrt == 0 ? sameSizes(o, {m, k}) : wrt == 1 && sameSizes(o, {k, n})))
    return false;
  if (!fitsInt(m) || !fitsInt(k) || !fitsInt(n))
    return false;
  std::vector<T> bufA, bufB, bufDy;
  View<const T> DY = input<T>(dy, bufDy);
  if (wrt == 0) // da [m, k] = dy [m, n] b^T [n, k]
    gemmInto<T>(DY, input<T>(b, bufB).transposed(), o);
  else // db [k, n] = a^T [k, m] dy [m, n]
    gemmInto<T>(input<T>(a, bufA).transposed(), DY, o);
  return true;
}

template bool piper::kernels::blasVjpLinear<float>(int, MemRef, MemRef, MemRef,
                                                   MemRef);
template bool piper::kernels::blasVjpLinear<double>(int, MemRef, MemRef, MemRef,
                                                    MemRef);
template bool piper::kernels::blasVjpMatmul<float>(int, MemRef, MemRef, MemRef,
                                                   MemRef);
template bool piper::kernels::blasVjpMatmul<double>(int, MemRef, MemRef, MemRef,
                                                    MemRef);
