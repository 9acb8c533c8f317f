//===- BF16KernelsTest.cpp - The bf16 GEMM and VJP kernels ----------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// piper_k_gemm_bf16 and piper_k_batch_gemm_bf16 (bf16 A and B, f32 C: C +=
// op(A) op(B), Gemm.cpp) and piper_k_vjp_{linear,matmul}_<wrt>_bf16
// (BlasVjpBF16.cpp) through the C ABI, against double-precision loops:
//  - the GEMMs accumulate in f32: within the f32 summation bound of a dot
//    product, for every transpose combination, dense and with a strided C
//    (the loop fallback);
//  - the VJPs round once to bf16: within one bf16 rounding (2^-8 relative)
//    of the exact value plus the f32 summation bound, strided operands
//    included;
//  - the rounding is to nearest, ties to even (the bias gradient of exact
//    ties), as the interpreter's roundF32ToBF16.
//
//===----------------------------------------------------------------------===//

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#define MR(n) int64_t n##R, void *n##D
extern "C" {
void piper_k_gemm_bf16(MR(a), MR(b), MR(c));
void piper_k_batch_gemm_bf16(MR(a), MR(b), MR(c), int64_t, int64_t);
void piper_k_vjp_linear_0_bf16(MR(x), MR(w), MR(dy), MR(o));
void piper_k_vjp_linear_1_bf16(MR(x), MR(w), MR(dy), MR(o));
void piper_k_vjp_linear_2_bf16(MR(x), MR(w), MR(dy), MR(o));
void piper_k_vjp_matmul_0_bf16(MR(a), MR(b), MR(dy), MR(o));
void piper_k_vjp_matmul_1_bf16(MR(a), MR(b), MR(dy), MR(o));
}
#undef MR

namespace {

float fromBits(uint16_t h) {
  uint32_t bits = uint32_t(h) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}
/// Truncation is enough to make test inputs: any bf16 value will do.
uint16_t toBits(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  return uint16_t(bits >> 16);
}

/// A memref descriptor of any rank over its own storage of T, row-major with
/// the minor stride `step` (other strides follow) and an offset.
template <typename T> struct Buf {
  std::vector<T> data;
  std::vector<int64_t> desc; // allocated, aligned, offset, sizes, strides
  std::vector<int64_t> sizes, strides;
  int64_t offset;

  Buf(std::vector<int64_t> shape, int64_t step = 1, int64_t off = 0)
      : sizes(shape), strides(shape.size()), offset(off) {
    int64_t s = step;
    for (int64_t d = shape.size() - 1; d >= 0; --d) {
      strides[d] = s;
      s *= shape[d] + (step > 1 ? 1 : 0);
    }
    data.assign(off + s + 1, T{});
    desc.resize(3 + 2 * shape.size());
    auto p = reinterpret_cast<int64_t>(data.data());
    desc[0] = desc[1] = p;
    desc[2] = off;
    for (size_t d = 0; d < shape.size(); ++d) {
      desc[3 + d] = shape[d];
      desc[3 + shape.size() + d] = strides[d];
    }
  }
  int64_t rank() const { return sizes.size(); }
  void *d() { return desc.data(); }
  T &at(std::initializer_list<int64_t> idx) {
    int64_t o = offset, d = 0;
    for (int64_t i : idx)
      o += i * strides[d++];
    return data[o];
  }
};

using BF = Buf<uint16_t>;

/// Fills a bf16 buffer of rank 2 or 3 with random values in [-1, 1].
void fill(BF &b, std::mt19937 &rng) {
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  int64_t n0 = b.rank() == 3 ? b.sizes[0] : 1;
  int64_t r = b.sizes[b.rank() - 2], c = b.sizes[b.rank() - 1];
  for (int64_t n = 0; n < n0; ++n)
    for (int64_t i = 0; i < r; ++i)
      for (int64_t j = 0; j < c; ++j)
        (b.rank() == 3 ? b.at({n, i, j}) : b.at({i, j})) = toBits(u(rng));
}

TEST(BF16Kernels, BatchGemmAccumulatesInF32) {
  std::mt19937 rng(3);
  const int64_t n = 2, m = 3, p = 4, k = 37;
  for (int transA = 0; transA < 2; ++transA)
    for (int transB = 0; transB < 2; ++transB)
      for (int64_t step : {1, 2}) {
        BF a({n, transA ? k : m, transA ? m : k});
        BF b({n, transB ? p : k, transB ? k : p});
        Buf<float> c({n, m, p}, step, step == 1 ? 0 : 1);
        fill(a, rng);
        fill(b, rng);
        for (int64_t i = 0; i < n; ++i)
          for (int64_t x = 0; x < m; ++x)
            for (int64_t y = 0; y < p; ++y)
              c.at({i, x, y}) = 0.25f * (x - y);
        piper_k_batch_gemm_bf16(3, a.d(), 3, b.d(), 3, c.d(), transA, transB);
        for (int64_t i = 0; i < n; ++i)
          for (int64_t x = 0; x < m; ++x)
            for (int64_t y = 0; y < p; ++y) {
              double sum = 0.25 * (x - y), mag = std::fabs(sum);
              for (int64_t q = 0; q < k; ++q) {
                double av =
                    fromBits(transA ? a.at({i, q, x}) : a.at({i, x, q}));
                double bv =
                    fromBits(transB ? b.at({i, y, q}) : b.at({i, q, y}));
                sum += av * bv;
                mag += std::fabs(av * bv);
              }
              // f32 summation of k + 1 terms.
              EXPECT_NEAR(c.at({i, x, y}), sum, (k + 1) * 6e-8 * mag)
                  << "transA " << transA << " transB " << transB << " step "
                  << step;
            }
      }
}

TEST(BF16Kernels, GemmIsTheBatchOfOne) {
  std::mt19937 rng(5);
  BF a({5, 7}), b({7, 6});
  Buf<float> c({5, 6}), ref({1, 5, 6});
  fill(a, rng);
  fill(b, rng);
  piper_k_gemm_bf16(2, a.d(), 2, b.d(), 2, c.d());
  BF a3({1, 5, 7}), b3({1, 7, 6});
  std::copy(a.data.begin(), a.data.end(), a3.data.begin());
  std::copy(b.data.begin(), b.data.end(), b3.data.begin());
  piper_k_batch_gemm_bf16(3, a3.d(), 3, b3.d(), 3, ref.d(), 0, 0);
  for (int64_t i = 0; i < 5; ++i)
    for (int64_t j = 0; j < 6; ++j)
      EXPECT_EQ(c.at({i, j}), ref.at({0, i, j}));
}

/// |got - exact| within one bf16 rounding of the exact value plus the f32
/// summation error of `terms` products of total magnitude `mag`.
void expectBF16Near(uint16_t got, double exact, double mag, int64_t terms) {
  EXPECT_NEAR(fromBits(got), exact,
              std::ldexp(std::fabs(exact), -8) + terms * 6e-8 * mag + 1e-30);
}

TEST(BF16Kernels, LinearAndMatmulVJPsRoundOnce) {
  std::mt19937 rng(7);
  const int64_t rows = 9, in = 11, out = 5;
  // x and dy strided (step 2, offsets), w dense.
  BF x({rows, in}, 2, 3), w({in, out}), dy({rows, out}, 2, 1);
  fill(x, rng);
  fill(w, rng);
  fill(dy, rng);
  auto X = [&](int64_t i, int64_t j) { return double(fromBits(x.at({i, j}))); };
  auto W = [&](int64_t i, int64_t j) { return double(fromBits(w.at({i, j}))); };
  auto DY = [&](int64_t i, int64_t j) {
    return double(fromBits(dy.at({i, j})));
  };
  BF dx({rows, in}, 2, 1), dw({in, out}), db({out});
  piper_k_vjp_linear_0_bf16(2, x.d(), 2, w.d(), 2, dy.d(), 2, dx.d());
  piper_k_vjp_linear_1_bf16(2, x.d(), 2, w.d(), 2, dy.d(), 2, dw.d());
  piper_k_vjp_linear_2_bf16(2, x.d(), 2, w.d(), 2, dy.d(), 1, db.d());
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < in; ++j) {
      double s = 0, mag = 0;
      for (int64_t q = 0; q < out; ++q) {
        s += DY(i, q) * W(j, q);
        mag += std::fabs(DY(i, q) * W(j, q));
      }
      expectBF16Near(dx.at({i, j}), s, mag, out);
    }
  for (int64_t i = 0; i < in; ++i)
    for (int64_t j = 0; j < out; ++j) {
      double s = 0, mag = 0;
      for (int64_t q = 0; q < rows; ++q) {
        s += X(q, i) * DY(q, j);
        mag += std::fabs(X(q, i) * DY(q, j));
      }
      expectBF16Near(dw.at({i, j}), s, mag, rows);
    }
  for (int64_t j = 0; j < out; ++j) {
    double s = 0;
    for (int64_t q = 0; q < rows; ++q)
      s += DY(q, j);
    // Summed in f64, rounded to f32 and then bf16.
    expectBF16Near(db.at({j}), s, 0, 0);
  }
  // matmul: da = dy b^T, db = a^T dy, the same GEMMs.
  BF da({rows, in}), dbm({in, out});
  piper_k_vjp_matmul_0_bf16(2, x.d(), 2, w.d(), 2, dy.d(), 2, da.d());
  piper_k_vjp_matmul_1_bf16(2, x.d(), 2, w.d(), 2, dy.d(), 2, dbm.d());
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < in; ++j)
      EXPECT_EQ(da.at({i, j}), dx.at({i, j}));
  for (int64_t i = 0; i < in; ++i)
    for (int64_t j = 0; j < out; ++j)
      EXPECT_EQ(dbm.at({i, j}), dw.at({i, j}));
}

TEST(BF16Kernels, RoundsToNearestEven) {
  // Column sums of dy (the bias gradient, exact in f64 and f32) that fall
  // exactly between two bf16 values, and one just above a tie:
  // 1 + 2^-8 lies between 1 and 1 + 2^-7: ties to the even 1;
  // 1 + 2^-7 + 2^-8 between 1 + 2^-7 and 1 + 2^-6: to the even 1 + 2^-6;
  // 1 + 2^-8 + 2^-12 is past the tie: up to 1 + 2^-7.
  const float rows[3][3] = {{1.0f, 0x1p-8f, 0.0f},
                            {1.0f + 0x1p-7f, 0x1p-8f, 0.0f},
                            {1.0f, 0x1p-8f, 0x1p-12f}};
  const float expect[] = {1.0f, 1.0f + 0x1p-6f, 1.0f + 0x1p-7f};
  for (int c = 0; c < 3; ++c) {
    BF x({3, 1}), w({1, 1}), dy({3, 1}), db({1});
    for (int64_t i = 0; i < 3; ++i)
      dy.at({i, 0}) = toBits(rows[c][i]);
    piper_k_vjp_linear_2_bf16(2, x.d(), 2, w.d(), 2, dy.d(), 1, db.d());
    EXPECT_EQ(fromBits(db.at({0})), expect[c]) << "case " << c;
  }
}

} // namespace
