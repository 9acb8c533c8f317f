//===- SoftmaxLossTest.cpp - Softmax and cross-entropy kernels ------------===//
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

TEST(SoftmaxLossTest, SoftmaxForward) {
  // softmax([0, ln 2]) = [1, 2] / 3; shifting by 1000 must not overflow.
  Tensor x = Tensor::of({2, 2},
                        {0.0, std::log(2.0), 1000.0, 1000.0 + std::log(2.0)}),
         y;
  ASSERT_OK(softmax(x, y));
  for (int64_t r = 0; r < 2; ++r) {
    EXPECT_NEAR(y.at({r, 0}), 1.0 / 3.0, 1e-13);
    EXPECT_NEAR(y.at({r, 1}), 2.0 / 3.0, 1e-13);
  }
}

TEST(SoftmaxLossTest, SoftmaxVjp) {
  std::mt19937_64 rng(40);
  Tensor x = randomTensor(rng, {2, 3, 4}, -2.0, 2.0);
  Tensor dy = randomTensor(rng, {2, 3, 4}), dx;
  ASSERT_OK(softmaxBackward(x, dy, dx));
  ForwardFn fwd = [](const std::vector<Tensor> &in, Tensor &out) {
    return softmax(in[0], out);
  };
  EXPECT_TRUE(vjpMatchesFiniteDifferences(fwd, {x}, dy, {{0, "dx", dx}}));
}

TEST(SoftmaxLossTest, CrossEntropyOfUniformLogitsIsLogV) {
  Tensor loss;
  ASSERT_OK(crossEntropy(Tensor::filled({3, 7}, 0.25),
                         IndexTensor::of({3}, {0, 6, 3}), loss));
  EXPECT_EQ(loss.shape, Shape({}));
  EXPECT_NEAR(loss.data[0], std::log(7.0), 1e-15);
}

TEST(SoftmaxLossTest, CrossEntropyHandComputed) {
  // Row 0: logsumexp(0, ln 2) - ln 2 = ln 3 - ln 2; row 1: ln 2 - 0.
  // The mean is (ln 3 - ln 2 + ln 2) / 2 = ln(3) / 2.
  Tensor loss;
  ASSERT_OK(crossEntropy(Tensor::of({2, 2}, {0.0, std::log(2.0), 0.0, 0.0}),
                         IndexTensor::of({2}, {1, 0}), loss));
  EXPECT_NEAR(loss.data[0], std::log(3.0) / 2.0, 1e-15);
}

TEST(SoftmaxLossTest, CrossEntropyVjp) {
  std::mt19937_64 rng(41);
  Tensor logits = randomTensor(rng, {4, 5}, -2.0, 2.0);
  IndexTensor labels = IndexTensor::of({4}, {3, 0, 4, 3});
  Tensor dLoss = Tensor::filled({}, 0.7), dLogits;
  ASSERT_OK(crossEntropyBackward(logits, labels, dLoss, dLogits));
  ForwardFn fwd = [&labels](const std::vector<Tensor> &in, Tensor &out) {
    return crossEntropy(in[0], labels, out);
  };
  EXPECT_TRUE(vjpMatchesFiniteDifferences(fwd, {logits}, dLoss,
                                          {{0, "dLogits", dLogits}}));
}

TEST(SoftmaxLossTest, CrossEntropyErrors) {
  Tensor logits = Tensor::zeros({3, 5}), loss, g;
  EXPECT_EQ(
      errorOf(crossEntropy(logits, IndexTensor::of({3}, {1, 7, 0}), loss)),
      "cross_entropy: label 7 at position 1 is out of range for 5 "
      "classes");
  EXPECT_EQ(
      errorOf(crossEntropy(logits, IndexTensor::of({3}, {1, 2, -1}), loss)),
      "cross_entropy: label -1 at position 2 is out of range for 5 "
      "classes");
  EXPECT_EQ(errorOf(crossEntropy(logits, IndexTensor::of({2}, {1, 2}), loss)),
            "cross_entropy: labels has shape [2] but logits has shape [3, 5]; "
            "it must be [3]");
  EXPECT_EQ(
      errorOf(crossEntropyBackward(logits, IndexTensor::of({3}, {1, 2, 3}),
                                   Tensor::zeros({2}), g)),
      "cross_entropy VJP: dLoss must hold one value but has shape [2]");
}

} // namespace
