//===- BatchGemmTest.cpp - piper_k_batch_gemm against plain loops ---------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// piper_k_batch_gemm_<t>(A, B, C, transA, transB) is what
// --piper-matmul-to-blas calls for linalg.batch_matmul (attention's GEMMs):
// C[n] += op(A[n]) op(B[n]). These tests call it through the C ABI for every
// transpose combination, f32 and f64, on dense buffers (the BLAS path) and
// on buffers with a non-unit minor stride and an offset (the loop
// fallback), and compare with a double-precision triple loop. C starts
// non-zero: the kernel accumulates, as linalg does.
//
//===----------------------------------------------------------------------===//

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <type_traits>
#include <vector>

#define MR(n) int64_t n##R, void *n##D
extern "C" {
void piper_k_batch_gemm_f32(MR(a), MR(b), MR(c), int64_t, int64_t);
void piper_k_batch_gemm_f64(MR(a), MR(b), MR(c), int64_t, int64_t);
}
#undef MR

namespace {

/// A rank-3 memref descriptor over its own storage: row-major with the
/// minor stride `step` and `offset` leading elements.
template <typename T> struct Buf3 {
  struct Desc {
    T *allocated, *aligned;
    int64_t offset, sizes[3], strides[3];
  } desc;
  std::vector<T> data;

  Buf3(int64_t d0, int64_t d1, int64_t d2, int64_t step, int64_t offset) {
    data.assign(offset + d0 * d1 * d2 * step + 1, T(0));
    desc = {data.data(),
            data.data(),
            offset,
            {d0, d1, d2},
            {d1 * d2 * step, d2 * step, step}};
  }
  T &at(int64_t i, int64_t j, int64_t k) {
    return data[desc.offset + i * desc.strides[0] + j * desc.strides[1] +
                k * desc.strides[2]];
  }
};

template <typename T>
void check(bool transA, bool transB, int64_t step, std::mt19937 &rng) {
  const int64_t n = 3, m = 4, p = 5, k = 6;
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  Buf3<T> a(n, transA ? k : m, transA ? m : k, step, step == 1 ? 0 : 3);
  Buf3<T> b(n, transB ? p : k, transB ? k : p, step, step == 1 ? 0 : 2);
  Buf3<T> c(n, m, p, step, step == 1 ? 0 : 1);
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t x = 0; x < a.desc.sizes[1]; ++x)
      for (int64_t y = 0; y < a.desc.sizes[2]; ++y)
        a.at(i, x, y) = T(u(rng));
    for (int64_t x = 0; x < b.desc.sizes[1]; ++x)
      for (int64_t y = 0; y < b.desc.sizes[2]; ++y)
        b.at(i, x, y) = T(u(rng));
    for (int64_t x = 0; x < m; ++x)
      for (int64_t y = 0; y < p; ++y)
        c.at(i, x, y) = T(u(rng));
  }
  std::vector<double> expect;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t x = 0; x < m; ++x)
      for (int64_t y = 0; y < p; ++y) {
        double sum = c.at(i, x, y);
        for (int64_t z = 0; z < k; ++z)
          sum += double(transA ? a.at(i, z, x) : a.at(i, x, z)) *
                 double(transB ? b.at(i, y, z) : b.at(i, z, y));
        expect.push_back(sum);
      }
  if constexpr (std::is_same_v<T, float>)
    piper_k_batch_gemm_f32(3, &a.desc, 3, &b.desc, 3, &c.desc, transA, transB);
  else
    piper_k_batch_gemm_f64(3, &a.desc, 3, &b.desc, 3, &c.desc, transA, transB);
  // k products of terms below 1 and a start below 1: the summation-order
  // bound of (k + 1) eps, with margin.
  double tol = 4.0 * (k + 1) * std::numeric_limits<T>::epsilon();
  size_t at = 0;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t x = 0; x < m; ++x)
      for (int64_t y = 0; y < p; ++y)
        EXPECT_NEAR(double(c.at(i, x, y)), expect[at++], tol)
            << "transA " << transA << " transB " << transB << " step " << step
            << " at " << i << "," << x << "," << y;
}

template <typename T> void checkAll() {
  std::mt19937 rng(11);
  for (int64_t step : {1, 2})
    for (bool transA : {false, true})
      for (bool transB : {false, true})
        check<T>(transA, transB, step, rng);
}

TEST(BatchGemmTest, MatchesLoopsF64) { checkAll<double>(); }
TEST(BatchGemmTest, MatchesLoopsF32) { checkAll<float>(); }

} // namespace
