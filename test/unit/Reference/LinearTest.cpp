//===- LinearTest.cpp - Matmul and linear kernels -------------------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "piper/Reference/Kernels.h"

#include "TestUtil.h"

using namespace piper::ref;
using namespace piper::ref::test;

namespace {

void checkMatmulVjp(const Shape &aShape, const Shape &bShape, uint64_t seed) {
  std::mt19937_64 rng(seed);
  Tensor a = randomTensor(rng, aShape), b = randomTensor(rng, bShape), y;
  ASSERT_OK(matmul(a, b, y));
  Tensor dy = randomTensor(rng, y.shape), da, db;
  ASSERT_OK(matmulBackward(a, b, dy, da, db));
  ForwardFn fwd = [](const std::vector<Tensor> &in, Tensor &out) {
    return matmul(in[0], in[1], out);
  };
  EXPECT_TRUE(vjpMatchesFiniteDifferences(fwd, {a, b}, dy,
                                          {{0, "dA", da}, {1, "dB", db}}));
}

TEST(LinearTest, MatmulForward) {
  Tensor a = Tensor::of({2, 2}, {1, 2, 3, 4}),
         b = Tensor::of({2, 2}, {5, 6, 7, 8});
  Tensor y;
  ASSERT_OK(matmul(a, b, y));
  EXPECT_EQ(y.shape, Shape({2, 2}));
  EXPECT_EQ(y.data, (std::vector<double>{19, 22, 43, 50}));
}

TEST(LinearTest, MatmulSharedRightOperand) {
  // A rank-2 b multiplies every batch element of a.
  Tensor a = Tensor::of({2, 1, 2}, {1, 2, 3, 4});
  Tensor b = Tensor::of({2, 2}, {5, 6, 7, 8}), y;
  ASSERT_OK(matmul(a, b, y));
  EXPECT_EQ(y.shape, Shape({2, 1, 2}));
  EXPECT_EQ(y.data, (std::vector<double>{19, 22, 43, 50}));
}

TEST(LinearTest, MatmulVjp2d) { checkMatmulVjp({3, 4}, {4, 5}, 20); }
TEST(LinearTest, MatmulVjpBatched) {
  checkMatmulVjp({2, 3, 3, 4}, {2, 3, 4, 2}, 21);
}
TEST(LinearTest, MatmulVjpSharedRightOperand) {
  checkMatmulVjp({2, 3, 4}, {4, 5}, 22);
}

TEST(LinearTest, MatmulErrors) {
  Tensor y;
  EXPECT_EQ(errorOf(matmul(Tensor::zeros({2, 3}), Tensor::zeros({4, 5}), y)),
            "matmul: a has shape [2, 3] and b has shape [4, 5]; the "
            "contraction dims 3 and 4 differ");
  EXPECT_EQ(
      errorOf(matmul(Tensor::zeros({2, 3, 4}), Tensor::zeros({3, 4, 5}), y)),
      "matmul: batch dims of a [2, 3, 4] and b [3, 4, 5] differ");
  EXPECT_EQ(errorOf(matmul(Tensor::zeros({2, 3}), Tensor::zeros({1, 3, 4}), y)),
            "matmul: b must have rank 2 (shared across the batch) or the rank "
            "2 of a, but has shape [1, 3, 4]");
  EXPECT_EQ(errorOf(matmul(Tensor::zeros({3}), Tensor::zeros({3, 4}), y)),
            "matmul: a must have rank >= 2 but has shape [3]");
  Tensor da, db;
  EXPECT_EQ(errorOf(matmulBackward(Tensor::zeros({2, 3}), Tensor::zeros({3, 4}),
                                   Tensor::zeros({2, 3}), da, db)),
            "matmul VJP: dy has shape [2, 3] but the output has shape [2, 4]");
}

TEST(LinearTest, LinearForward) {
  Tensor x = Tensor::of({1, 2}, {1, 2});
  Tensor w = Tensor::of({2, 3}, {1, 0, 2, 0, 1, 3});
  Tensor bias = Tensor::of({3}, {0.5, 0, -1}), y;
  ASSERT_OK(linear(x, w, &bias, y));
  EXPECT_EQ(y.shape, Shape({1, 3}));
  EXPECT_EQ(y.data, (std::vector<double>{1.5, 2, 7}));
  ASSERT_OK(linear(x, w, nullptr, y));
  EXPECT_EQ(y.data, (std::vector<double>{1, 2, 8}));
}

TEST(LinearTest, LinearVjpWithBias) {
  std::mt19937_64 rng(23);
  Tensor x = randomTensor(rng, {2, 3, 4}), w = randomTensor(rng, {4, 5});
  Tensor bias = randomTensor(rng, {5}), dy = randomTensor(rng, {2, 3, 5});
  Tensor dx, dw, db;
  ASSERT_OK(linearBackwardInput(x, w, dy, dx));
  ASSERT_OK(linearBackwardWeight(x, w, dy, dw, &db));
  ForwardFn fwd = [](const std::vector<Tensor> &in, Tensor &out) {
    return linear(in[0], in[1], &in[2], out);
  };
  EXPECT_TRUE(vjpMatchesFiniteDifferences(
      fwd, {x, w, bias}, dy, {{0, "dx", dx}, {1, "dw", dw}, {2, "db", db}}));
}

TEST(LinearTest, LinearVjpWithoutBiasRank1) {
  std::mt19937_64 rng(24);
  Tensor x = randomTensor(rng, {4}), w = randomTensor(rng, {4, 3});
  Tensor dy = randomTensor(rng, {3}), dx, dw;
  ASSERT_OK(linearBackwardInput(x, w, dy, dx));
  ASSERT_OK(linearBackwardWeight(x, w, dy, dw, nullptr));
  ForwardFn fwd = [](const std::vector<Tensor> &in, Tensor &out) {
    return linear(in[0], in[1], nullptr, out);
  };
  EXPECT_TRUE(vjpMatchesFiniteDifferences(fwd, {x, w}, dy,
                                          {{0, "dx", dx}, {1, "dw", dw}}));
}

TEST(LinearTest, LinearErrors) {
  Tensor y, dx;
  EXPECT_EQ(
      errorOf(linear(Tensor::zeros({2, 3}), Tensor::zeros({4, 5}), nullptr, y)),
      "linear: x has shape [2, 3] but w has shape [4, 5]; the last dim "
      "of x must equal dim 0 of w");
  Tensor bias = Tensor::zeros({4});
  EXPECT_EQ(
      errorOf(linear(Tensor::zeros({2, 3}), Tensor::zeros({3, 5}), &bias, y)),
      "linear: bias has shape [4] but w has 5 output columns");
  EXPECT_EQ(
      errorOf(linearBackwardInput(Tensor::zeros({2, 3}), Tensor::zeros({3, 5}),
                                  Tensor::zeros({2, 4}), dx)),
      "linear BI: dy has shape [2, 4] but the output has shape [2, 5]");
}

} // namespace
