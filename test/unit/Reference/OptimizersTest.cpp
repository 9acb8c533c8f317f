//===- OptimizersTest.cpp - SGD-momentum and AdamW ------------------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "piper/Reference/Optimizers.h"

#include "TestUtil.h"

using namespace piper::ref;
using namespace piper::ref::test;

namespace {

TEST(OptimizersTest, SgdMomentumTwoSteps) {
  // lr 0.1, momentum 0.9, weight decay 0.01; two elements, gradients
  // [0.5, 0.0] then [-0.25, 1.0].
  // Element 0, p = 1:
  //   step 1: g = 0.5 + 0.01 * 1 = 0.51;  buf = 0.51;  p = 1 - 0.051 = 0.949
  //   step 2: g = -0.25 + 0.00949 = -0.24051;
  //           buf = 0.9 * 0.51 - 0.24051 = 0.21849;  p = 0.949 - 0.021849
  //           = 0.927151
  // Element 1, p = -2:
  //   step 1: g = 0 - 0.02 = -0.02;  buf = -0.02;  p = -2 + 0.002 = -1.998
  //   step 2: g = 1 - 0.01998 = 0.98002;  buf = -0.018 + 0.98002 = 0.96202;
  //           p = -1.998 - 0.096202 = -2.094202
  SgdConfig config;
  config.lr = 0.1;
  config.momentum = 0.9;
  config.weightDecay = 0.01;
  Tensor p = Tensor::of({2}, {1.0, -2.0}), buf = Tensor::zeros({2});
  ASSERT_OK(sgdStep(config, p, Tensor::of({2}, {0.5, 0.0}), buf));
  EXPECT_NEAR(p.data[0], 0.949, 1e-15);
  EXPECT_NEAR(p.data[1], -1.998, 1e-15);
  EXPECT_NEAR(buf.data[0], 0.51, 1e-15);
  ASSERT_OK(sgdStep(config, p, Tensor::of({2}, {-0.25, 1.0}), buf));
  EXPECT_NEAR(p.data[0], 0.927151, 1e-15);
  EXPECT_NEAR(p.data[1], -2.094202, 1e-15);
  EXPECT_NEAR(buf.data[0], 0.21849, 1e-15);
  EXPECT_NEAR(buf.data[1], 0.96202, 1e-15);
}

TEST(OptimizersTest, SgdWithoutMomentumNeedsNoBuffer) {
  SgdConfig config;
  config.lr = 0.5;
  double p[2] = {1.0, 2.0};
  const double g[2] = {0.25, -1.0};
  ASSERT_OK(sgdStep(config, 2, p, g, nullptr));
  EXPECT_EQ(p[0], 0.875);
  EXPECT_EQ(p[1], 2.5);
}

TEST(OptimizersTest, AdamWTwoSteps) {
  // lr 0.1, betas (0.9, 0.999), eps 1e-8, weight decay 0.01; gradients
  // [0.5, 0.0] then [-0.25, 1.0].
  // Element 0, p = 1:
  //   t = 1: p = 1 - 0.001 = 0.999;  m = 0.05;  v = 0.00025;
  //          mhat = 0.5;  vhat = 0.25;  p = 0.999 - 0.1 * 0.5 / (0.5 + 1e-8)
  //          = 0.899000002 (to 1e-16)
  //   t = 2: p = 0.899000002 * 0.999 = 0.898101001998;  m = 0.02;
  //          v = 0.00031225;  mhat = 0.02 / 0.19;  vhat = 0.00031225 /
  //          0.001999;  p -= 0.1 * mhat / (sqrt(vhat) + 1e-8), giving
  //          0.8714672987058463
  // Element 1, p = -2:
  //   t = 1: p = -1.998; m = v = 0, so the Adam term is 0
  //   t = 2: p = -1.996002;  m = 0.1;  v = 0.001;  mhat = 0.1 / 0.19;
  //          vhat = 0.001 / 0.001999, giving -2.070415681304593
  // (The 16-digit results come from a Python transcription of the formulas.)
  AdamWConfig config;
  config.lr = 0.1;
  config.weightDecay = 0.01;
  Tensor p = Tensor::of({2}, {1.0, -2.0});
  Tensor m = Tensor::zeros({2}), v = Tensor::zeros({2});
  ASSERT_OK(adamwStep(config, 1, p, Tensor::of({2}, {0.5, 0.0}), m, v));
  EXPECT_NEAR(p.data[0], 0.899000002, 1e-15);
  EXPECT_NEAR(p.data[1], -1.998, 1e-15);
  EXPECT_NEAR(m.data[0], 0.05, 1e-16);
  EXPECT_NEAR(v.data[0], 0.00025, 1e-18);
  ASSERT_OK(adamwStep(config, 2, p, Tensor::of({2}, {-0.25, 1.0}), m, v));
  EXPECT_NEAR(p.data[0], 0.8714672987058463, 1e-15);
  EXPECT_NEAR(p.data[1], -2.070415681304593, 1e-15);
  EXPECT_NEAR(m.data[0], 0.02, 1e-16);
  EXPECT_NEAR(v.data[0], 0.00031225, 1e-18);
  EXPECT_NEAR(m.data[1], 0.1, 1e-16);
  EXPECT_NEAR(v.data[1], 0.001, 1e-18);
}

TEST(OptimizersTest, ShardedUpdatesEqualTheFullUpdate) {
  // A ZeRO shard updates [0, split) and [split, n) separately; the result
  // must be bit-identical to updating the whole parameter.
  std::mt19937_64 rng(90);
  const int64_t n = 1000, split = 371;
  Tensor p0 = randomTensor(rng, {n});
  std::vector<Tensor> grads = {randomTensor(rng, {n}), randomTensor(rng, {n}),
                               randomTensor(rng, {n})};

  SgdConfig sgd;
  sgd.lr = 0.05;
  sgd.momentum = 0.9;
  sgd.weightDecay = 1e-4;
  Tensor pFull = p0, bufFull = Tensor::zeros({n});
  Tensor pShard = p0, bufShard = Tensor::zeros({n});
  for (const Tensor &g : grads) {
    ASSERT_OK(sgdStep(sgd, pFull, g, bufFull));
    ASSERT_OK(sgdStep(sgd, split, pShard.data.data(), g.data.data(),
                      bufShard.data.data()));
    ASSERT_OK(sgdStep(sgd, n - split, pShard.data.data() + split,
                      g.data.data() + split, bufShard.data.data() + split));
  }
  EXPECT_EQ(pShard.data, pFull.data);
  EXPECT_EQ(bufShard.data, bufFull.data);
  EXPECT_NE(pFull.data, p0.data);

  AdamWConfig adam;
  adam.lr = 1e-2;
  Tensor qFull = p0, mFull = Tensor::zeros({n}), vFull = Tensor::zeros({n});
  Tensor qShard = p0, mShard = Tensor::zeros({n}), vShard = Tensor::zeros({n});
  for (size_t s = 0; s < grads.size(); ++s) {
    int64_t step = static_cast<int64_t>(s) + 1;
    const double *g = grads[s].data.data();
    ASSERT_OK(adamwStep(adam, step, qFull, grads[s], mFull, vFull));
    ASSERT_OK(adamwStep(adam, step, split, qShard.data.data(), g,
                        mShard.data.data(), vShard.data.data()));
    ASSERT_OK(adamwStep(adam, step, n - split, qShard.data.data() + split,
                        g + split, mShard.data.data() + split,
                        vShard.data.data() + split));
  }
  EXPECT_EQ(qShard.data, qFull.data);
  EXPECT_EQ(mShard.data, mFull.data);
  EXPECT_EQ(vShard.data, vFull.data);
  EXPECT_NE(qFull.data, p0.data);
}

TEST(OptimizersTest, Errors) {
  AdamWConfig adam;
  Tensor p = Tensor::zeros({2}), g = Tensor::zeros({2}), m = Tensor::zeros({2});
  Tensor v = Tensor::zeros({3});
  EXPECT_EQ(errorOf(adamwStep(adam, 0, p, g, m, m)),
            "adamw: step must be >= 1 (the first update is step 1), got 0");
  EXPECT_EQ(errorOf(adamwStep(adam, 1, p, g, m, v)),
            "adamw: param has shape [2] but v has shape [3]");
  adam.beta2 = 1.0;
  EXPECT_EQ(errorOf(adamwStep(adam, 1, p, g, m, m)),
            "adamw: beta2 must be in [0, 1), got 1");
  SgdConfig sgd;
  sgd.momentum = 0.9;
  double param[1] = {0.0}, grad[1] = {0.0};
  EXPECT_EQ(errorOf(sgdStep(sgd, 1, param, grad, nullptr)),
            "sgd: a parameter, gradient or state buffer is null");
  EXPECT_EQ(errorOf(sgdStep(sgd, -1, param, grad, nullptr)),
            "sgd: element count must be >= 0, got -1");
}

} // namespace
