//===- AttentionTest.cpp - Causal multi-head attention kernel -------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "piper/Reference/Kernels.h"

#include "TestUtil.h"

#include <cmath>

using namespace piper::ref;
using namespace piper::ref::test;

namespace {

TEST(AttentionTest, FirstPositionEqualsItsValue) {
  // Position 0 attends only to itself, with probability exactly 1.
  std::mt19937_64 rng(50);
  Tensor q = randomTensor(rng, {2, 4, 6}), k = randomTensor(rng, {2, 4, 6});
  Tensor v = randomTensor(rng, {2, 4, 6}), y;
  ASSERT_OK(attention(q, k, v, 3, y));
  ASSERT_EQ(y.shape, Shape({2, 4, 6}));
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t c = 0; c < 6; ++c)
      EXPECT_EQ(y.at({b, 0, c}), v.at({b, 0, c}));
}

TEST(AttentionTest, LaterPositionsDoNotLeakIntoEarlierOnes) {
  std::mt19937_64 rng(51);
  Tensor q = randomTensor(rng, {1, 4, 4}), k = randomTensor(rng, {1, 4, 4});
  Tensor v = randomTensor(rng, {1, 4, 4}), y0, y1;
  ASSERT_OK(attention(q, k, v, 2, y0));
  for (int64_t c = 0; c < 4; ++c) {
    q.at({0, 3, c}) += 1.0;
    k.at({0, 3, c}) -= 2.0;
    v.at({0, 3, c}) += 5.0;
  }
  ASSERT_OK(attention(q, k, v, 2, y1));
  for (int64_t s = 0; s < 3; ++s)
    for (int64_t c = 0; c < 4; ++c)
      EXPECT_EQ(y0.at({0, s, c}), y1.at({0, s, c})) << "position " << s;
}

TEST(AttentionTest, HandComputed) {
  // One head of size 1: at position 1, scores = 1 * [0, ln 2], so
  // p = [1/3, 2/3] and out = 3/3 + 2 * 6/3 = 5. Position 0 copies v_0 = 3.
  Tensor q = Tensor::of({1, 2, 1}, {0.0, 1.0});
  Tensor k = Tensor::of({1, 2, 1}, {0.0, std::log(2.0)});
  Tensor v = Tensor::of({1, 2, 1}, {3.0, 6.0}), y;
  ASSERT_OK(attention(q, k, v, 1, y));
  EXPECT_EQ(y.data[0], 3.0);
  EXPECT_NEAR(y.data[1], 5.0, 1e-14);
  // Two heads of size 4 scale scores by 1/sqrt(4): q . k = 4 ln 2 per head
  // gives a score of 2 ln 2, so p = [1, 4] / 5 at position 1.
  Tensor q2 = Tensor::filled({1, 2, 8}, 1.0);
  Tensor k2 = Tensor::of({1, 2, 8}, std::vector<double>(16, 0.0));
  for (int64_t c = 0; c < 8; ++c)
    k2.at({0, 1, c}) = std::log(2.0);
  Tensor v2 = Tensor::zeros({1, 2, 8});
  for (int64_t c = 0; c < 8; ++c)
    v2.at({0, 1, c}) = 10.0;
  ASSERT_OK(attention(q2, k2, v2, 2, y));
  for (int64_t c = 0; c < 8; ++c)
    EXPECT_NEAR(y.at({0, 1, c}), 8.0, 1e-13);
}

TEST(AttentionTest, Vjp) {
  std::mt19937_64 rng(52);
  Tensor q = randomTensor(rng, {2, 4, 6}), k = randomTensor(rng, {2, 4, 6});
  Tensor v = randomTensor(rng, {2, 4, 6}), dy = randomTensor(rng, {2, 4, 6});
  Tensor dq, dk, dv;
  ASSERT_OK(attentionBackward(q, k, v, 2, dy, dq, dk, dv));
  ForwardFn fwd = [](const std::vector<Tensor> &in, Tensor &out) {
    return attention(in[0], in[1], in[2], 2, out);
  };
  EXPECT_TRUE(vjpMatchesFiniteDifferences(
      fwd, {q, k, v}, dy, {{0, "dq", dq}, {1, "dk", dk}, {2, "dv", dv}}));
}

TEST(AttentionTest, Errors) {
  Tensor y;
  Tensor x = Tensor::zeros({1, 2, 10});
  EXPECT_EQ(errorOf(attention(x, x, x, 4, y)),
            "attention: hidden size 10 is not divisible by num_heads 4");
  EXPECT_EQ(errorOf(attention(x, x, x, 0, y)),
            "attention: num_heads must be >= 1, got 0");
  EXPECT_EQ(
      errorOf(attention(Tensor::zeros({1, 2, 4}), Tensor::zeros({1, 3, 4}),
                        Tensor::zeros({1, 2, 4}), 1, y)),
      "attention: q has shape [1, 2, 4] but k has shape [1, 3, 4]");
  EXPECT_EQ(errorOf(attention(Tensor::zeros({2, 4}), Tensor::zeros({2, 4}),
                              Tensor::zeros({2, 4}), 1, y)),
            "attention: q must have rank 3 but has shape [2, 4]");
}

} // namespace
