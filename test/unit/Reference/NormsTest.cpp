//===- NormsTest.cpp - RMSNorm and LayerNorm kernels ----------------------===//
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

TEST(NormsTest, RmsnormForward) {
  // mean(x^2) = (9 + 16) / 2 = 12.5, so y = x / sqrt(12.5) * w.
  Tensor y;
  ASSERT_OK(
      rmsnorm(Tensor::of({1, 2}, {3, 4}), Tensor::of({2}, {1, 2}), 0.0, y));
  EXPECT_NEAR(y.data[0], 0.848528137423857, 1e-15);
  EXPECT_NEAR(y.data[1], 2.262741699796952, 1e-15);
  // eps keeps an all-zero row finite.
  ASSERT_OK(rmsnorm(Tensor::zeros({2}), Tensor::filled({2}, 1.0), 1e-6, y));
  EXPECT_EQ(y.data, (std::vector<double>{0.0, 0.0}));
}

TEST(NormsTest, RmsnormVjp) {
  std::mt19937_64 rng(30);
  Tensor x = randomTensor(rng, {2, 3, 5}), w = randomTensor(rng, {5});
  Tensor dy = randomTensor(rng, {2, 3, 5}), dx, dw;
  const double eps = 1e-5;
  ASSERT_OK(rmsnormBackwardInput(x, w, eps, dy, dx));
  ASSERT_OK(rmsnormBackwardWeight(x, w, eps, dy, dw));
  ForwardFn fwd = [eps](const std::vector<Tensor> &in, Tensor &out) {
    return rmsnorm(in[0], in[1], eps, out);
  };
  EXPECT_TRUE(vjpMatchesFiniteDifferences(fwd, {x, w}, dy,
                                          {{0, "dx", dx}, {1, "dw", dw}}));
}

TEST(NormsTest, LayernormForward) {
  // mean 2, biased variance 2/3, so xhat = (x - 2) * 1.224744871391589.
  Tensor x = Tensor::of({3}, {1, 2, 3}), y;
  ASSERT_OK(layernorm(x, Tensor::filled({3}, 1.0), Tensor::zeros({3}), 0.0, y));
  EXPECT_NEAR(y.data[0], -1.224744871391589, 1e-15);
  EXPECT_NEAR(y.data[1], 0.0, 1e-15);
  EXPECT_NEAR(y.data[2], 1.224744871391589, 1e-15);
  ASSERT_OK(
      layernorm(x, Tensor::filled({3}, 2.0), Tensor::filled({3}, 1.0), 0.0, y));
  EXPECT_NEAR(y.data[0], 1.0 - 2.449489742783178, 1e-15);
  EXPECT_NEAR(y.data[2], 1.0 + 2.449489742783178, 1e-15);
}

TEST(NormsTest, LayernormVjp) {
  std::mt19937_64 rng(31);
  Tensor x = randomTensor(rng, {3, 6}), w = randomTensor(rng, {6});
  Tensor b = randomTensor(rng, {6}), dy = randomTensor(rng, {3, 6});
  Tensor dx, dw, db;
  const double eps = 1e-5;
  ASSERT_OK(layernormBackwardInput(x, w, b, eps, dy, dx));
  ASSERT_OK(layernormBackwardWeight(x, w, b, eps, dy, dw, db));
  ForwardFn fwd = [eps](const std::vector<Tensor> &in, Tensor &out) {
    return layernorm(in[0], in[1], in[2], eps, out);
  };
  EXPECT_TRUE(vjpMatchesFiniteDifferences(
      fwd, {x, w, b}, dy, {{0, "dx", dx}, {1, "dw", dw}, {2, "db", db}}));
}

TEST(NormsTest, Errors) {
  Tensor y, dx;
  EXPECT_EQ(
      errorOf(rmsnorm(Tensor::zeros({2, 3}), Tensor::zeros({4}), 0.0, y)),
      "rmsnorm: w has shape [4] but x has shape [2, 3]; it must be [G] with "
      "G dividing 3");
  EXPECT_EQ(errorOf(layernorm(Tensor::zeros({2, 3}), Tensor::zeros({3}),
                              Tensor::zeros({3, 1}), 0.0, y)),
            "layernorm: b must have rank 1 but has shape [3, 1]");
  EXPECT_EQ(errorOf(layernorm(Tensor::zeros({2, 3}), Tensor::zeros({3}),
                              Tensor::zeros({3}), -1.0, y)),
            "layernorm: eps must be finite and non-negative, got -1");
  EXPECT_EQ(
      errorOf(rmsnormBackwardInput(Tensor::zeros({2, 3}), Tensor::zeros({3}),
                                   0.0, Tensor::zeros({3, 2}), dx)),
      "rmsnorm BI: dy has shape [3, 2] but the output has shape [2, 3]");
}

} // namespace
