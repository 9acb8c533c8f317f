//===- GroupedTest.cpp - GQA attention, grouped RMSNorm and RoPE ----------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The LLM features' reference kernels against independent constructions:
// grouped-query attention is multi-head attention on repeated key/value
// heads (its k/v gradients the sums over each group), a grouped RMSNorm is
// a plain one on rows of the group size, and RoPE is a rotation (its
// inverse undoes it, keeps every pair's norm and is its transpose).
//
//===----------------------------------------------------------------------===//

#include "piper/Reference/Kernels.h"

#include "TestUtil.h"

#include <cmath>

using namespace piper::ref;
using namespace piper::ref::test;

namespace {

/// k [B, S, Hkv * D] with each head repeated `n` times (repeat_interleave).
Tensor repeatHeads(const Tensor &k, int64_t headDim, int64_t n) {
  int64_t kv = k.shape[2] / headDim;
  Tensor r = Tensor::zeros({k.shape[0], k.shape[1], kv * n * headDim});
  for (int64_t b = 0; b < k.shape[0]; ++b)
    for (int64_t s = 0; s < k.shape[1]; ++s)
      for (int64_t h = 0; h < kv * n; ++h)
        for (int64_t c = 0; c < headDim; ++c)
          r.at({b, s, h * headDim + c}) = k.at({b, s, (h / n) * headDim + c});
  return r;
}

TEST(GroupedTest, GroupedQueryAttentionIsAttentionOnRepeatedHeads) {
  std::mt19937_64 rng(70);
  // 4 query heads of 3 channels, 2 key/value heads.
  Tensor q = randomTensor(rng, {2, 5, 12}), k = randomTensor(rng, {2, 5, 6});
  Tensor v = randomTensor(rng, {2, 5, 6}), dy = randomTensor(rng, {2, 5, 12});
  Tensor kr = repeatHeads(k, 3, 2), vr = repeatHeads(v, 3, 2);
  Tensor y, want;
  ASSERT_OK(attention(q, k, v, 4, y, /*numKvHeads=*/2));
  ASSERT_OK(attention(q, kr, vr, 4, want));
  for (size_t i = 0; i < y.data.size(); ++i)
    EXPECT_NEAR(y.data[i], want.data[i], 1e-14);

  Tensor dq, dk, dv, dqr, dkr, dvr;
  ASSERT_OK(attentionBackward(q, k, v, 4, dy, dq, dk, dv, 2));
  ASSERT_OK(attentionBackward(q, kr, vr, 4, dy, dqr, dkr, dvr));
  ASSERT_EQ(dk.shape, k.shape);
  for (size_t i = 0; i < dq.data.size(); ++i)
    EXPECT_NEAR(dq.data[i], dqr.data[i], 1e-14);
  // A key/value head's gradient sums those of its repeats.
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t s = 0; s < 5; ++s)
      for (int64_t c = 0; c < 6; ++c) {
        int64_t head = c / 3, ch = c % 3;
        double sk = 0, sv = 0;
        for (int64_t r = 0; r < 2; ++r) {
          sk += dkr.at({b, s, (head * 2 + r) * 3 + ch});
          sv += dvr.at({b, s, (head * 2 + r) * 3 + ch});
        }
        EXPECT_NEAR(dk.at({b, s, c}), sk, 1e-14);
        EXPECT_NEAR(dv.at({b, s, c}), sv, 1e-14);
      }
}

TEST(GroupedTest, GroupedQueryAttentionChecksShapes) {
  Tensor q = Tensor::zeros({1, 2, 8}), k = Tensor::zeros({1, 2, 8}), y;
  // 2 key/value heads of 2 channels are 4 channels, not 8.
  EXPECT_EQ(errorOf(attention(q, k, k, 4, y, 2)),
            "attention: k has shape [1, 2, 8] but q has shape [1, 2, 8]; with "
            "2 key/value heads it must be [1, 2, 4]");
  EXPECT_EQ(errorOf(attention(q, k, k, 4, y, 3)),
            "attention: num_kv_heads 3 must be >= 1 and divide num_heads 4");
}

TEST(GroupedTest, GroupedRmsNormIsRmsNormOfGroupRows) {
  std::mt19937_64 rng(71);
  Tensor x = randomTensor(rng, {3, 8}), w = randomTensor(rng, {4});
  Tensor dy = randomTensor(rng, {3, 8});
  Tensor rows = x, drows = dy;
  rows.shape = {6, 4};
  drows.shape = {6, 4};
  Tensor y, want, dx, dxWant, dw, dwWant;
  ASSERT_OK(rmsnorm(x, w, 1e-6, y));
  ASSERT_OK(rmsnorm(rows, w, 1e-6, want));
  ASSERT_OK(rmsnormBackwardInput(x, w, 1e-6, dy, dx));
  ASSERT_OK(rmsnormBackwardInput(rows, w, 1e-6, drows, dxWant));
  ASSERT_OK(rmsnormBackwardWeight(x, w, 1e-6, dy, dw));
  ASSERT_OK(rmsnormBackwardWeight(rows, w, 1e-6, drows, dwWant));
  EXPECT_EQ(y.shape, x.shape);
  EXPECT_EQ(y.data, want.data);
  EXPECT_EQ(dx.data, dxWant.data);
  EXPECT_EQ(dw.data, dwWant.data);
  Tensor bad = Tensor::zeros({3});
  EXPECT_EQ(errorOf(rmsnorm(x, bad, 1e-6, y)),
            "rmsnorm: w has shape [3] but x has shape [3, 8]; it must be [G] "
            "with G dividing 8");
}

TEST(GroupedTest, RopeIsARotation) {
  std::mt19937_64 rng(72);
  Tensor x = randomTensor(rng, {2, 6, 8}), y, back;
  ASSERT_OK(rope(x, 4, 100.0, false, y));
  ASSERT_OK(rope(y, 4, 100.0, true, back));
  for (size_t i = 0; i < x.data.size(); ++i)
    EXPECT_NEAR(back.data[i], x.data[i], 1e-14);
  // Position 0 is not rotated; every pair keeps its norm.
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t s = 0; s < 6; ++s)
      for (int64_t n = 0; n < 2; ++n)
        for (int64_t c = 0; c < 2; ++c) {
          int64_t lo = n * 4 + c, hi = lo + 2;
          double before = std::hypot(x.at({b, s, lo}), x.at({b, s, hi}));
          double after = std::hypot(y.at({b, s, lo}), y.at({b, s, hi}));
          EXPECT_NEAR(before, after, 1e-14);
          if (s == 0)
            EXPECT_EQ(y.at({b, 0, lo}), x.at({b, 0, lo}));
        }
  // The inverse is the transpose: <rope(x), z> = <x, rope^-1(z)>.
  Tensor z = randomTensor(rng, {2, 6, 8}), zi;
  ASSERT_OK(rope(z, 4, 100.0, true, zi));
  double lhs = 0, rhs = 0;
  for (size_t i = 0; i < x.data.size(); ++i) {
    lhs += y.data[i] * z.data[i];
    rhs += x.data[i] * zi.data[i];
  }
  EXPECT_NEAR(lhs, rhs, 1e-12);
}

TEST(GroupedTest, RopeHandComputed) {
  // One head of 2 channels at position 1 with theta 1: angle 1.
  Tensor x = Tensor::of({1, 2, 2}, {1.0, 2.0, 1.0, 2.0}), y;
  ASSERT_OK(rope(x, 2, 1.0, false, y));
  EXPECT_EQ(y.data[0], 1.0);
  EXPECT_EQ(y.data[1], 2.0);
  EXPECT_NEAR(y.data[2], std::cos(1.0) - 2.0 * std::sin(1.0), 1e-15);
  EXPECT_NEAR(y.data[3], 2.0 * std::cos(1.0) + std::sin(1.0), 1e-15);
  EXPECT_EQ(errorOf(rope(x, 3, 1.0, false, y)),
            "rope: head_dim 3 must be even and divide the channels 2");
}

} // namespace
