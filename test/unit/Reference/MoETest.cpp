//===- MoETest.cpp - Router, dispatch, expert FFN and combine kernels -----===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "piper/Reference/Kernels.h"

#include "TestUtil.h"

#include <algorithm>
#include <cmath>

using namespace piper::ref;
using namespace piper::ref::test;

namespace {

/// Three tokens, two choices each, three experts of capacity 2: pairs in order
/// (0,0)->e0 s0, (0,1)->e1 s0, (1,0)->e0 s1, (1,1)->e2 s0, (2,0)->e0 dropped
/// (third pair for e0), (2,1)->e1 s1.
IndexTensor smallIndices() {
  return IndexTensor::of({3, 2}, {0, 1, 0, 2, 0, 1});
}

TEST(MoETest, RouterRenormalisesTopK) {
  // softmax([0, ln 2, ln 3, ln 4]) = [1, 2, 3, 4] / 10; the top 2 are experts
  // 3 and 2 with 0.4 and 0.3, renormalised to 4/7 and 3/7.
  Tensor x = Tensor::of({1, 1}, {1.0});
  Tensor w =
      Tensor::of({1, 4}, {0.0, std::log(2.0), std::log(3.0), std::log(4.0)});
  Tensor weights;
  IndexTensor indices;
  ASSERT_OK(router(x, w, 2, weights, indices));
  EXPECT_EQ(indices.shape, Shape({1, 2}));
  EXPECT_EQ(indices.data, (std::vector<int64_t>{3, 2}));
  EXPECT_NEAR(weights.data[0], 4.0 / 7.0, 1e-15);
  EXPECT_NEAR(weights.data[1], 3.0 / 7.0, 1e-15);
}

TEST(MoETest, RouterBreaksTiesByLowerExpertIndex) {
  std::mt19937_64 rng(80);
  Tensor weights;
  IndexTensor indices;
  // x = 0 gives equal logits, hence equal probabilities, for every expert.
  ASSERT_OK(router(Tensor::zeros({2, 3}), randomTensor(rng, {3, 5}), 3, weights,
                   indices));
  EXPECT_EQ(indices.data, (std::vector<int64_t>{0, 1, 2, 0, 1, 2}));
  for (double v : weights.data)
    EXPECT_NEAR(v, 1.0 / 3.0, 1e-15);
  // Logits [0, 1, 1, 0.5]: experts 1 and 2 tie for first place.
  Tensor x = Tensor::of({1, 1}, {1.0});
  Tensor w = Tensor::of({1, 4}, {0.0, 1.0, 1.0, 0.5});
  ASSERT_OK(router(x, w, 1, weights, indices));
  EXPECT_EQ(indices.data, (std::vector<int64_t>{1}));
  EXPECT_EQ(weights.data, (std::vector<double>{1.0}));
  ASSERT_OK(router(x, w, 3, weights, indices));
  EXPECT_EQ(indices.data, (std::vector<int64_t>{1, 2, 3}));
  EXPECT_EQ(weights.data[0], weights.data[1]);
  // e^0.5 / (2 e + e^0.5).
  EXPECT_NEAR(weights.data[2],
              std::exp(0.5) / (2.0 * std::exp(1.0) + std::exp(0.5)), 1e-15);
}

TEST(MoETest, RouterVjp) {
  std::mt19937_64 rng(81);
  const int64_t k = 2;
  Tensor x = randomTensor(rng, {5, 4}), w = randomTensor(rng, {4, 6});
  // The selection must not flip under the check's perturbations (at most
  // 2e-3 on one entry of x or w, each in [-1, 1], so a logit moves by at most
  // 2e-3): require a gap of 0.02 between the k-th and (k+1)-th logit.
  Tensor logits;
  ASSERT_OK(matmul(x, w, logits));
  for (int64_t t = 0; t < 5; ++t) {
    std::vector<double> row(logits.data.begin() + t * 6,
                            logits.data.begin() + (t + 1) * 6);
    std::sort(row.rbegin(), row.rend());
    ASSERT_GT(row[k - 1] - row[k], 0.02) << "token " << t;
  }
  Tensor dWeights = randomTensor(rng, {5, k}), dx, dw;
  ASSERT_OK(routerBackwardInput(x, w, k, dWeights, dx));
  ASSERT_OK(routerBackwardWeight(x, w, k, dWeights, dw));
  ForwardFn fwd = [](const std::vector<Tensor> &in, Tensor &out) {
    IndexTensor indices;
    return router(in[0], in[1], k, out, indices);
  };
  EXPECT_TRUE(vjpMatchesFiniteDifferences(fwd, {x, w}, dWeights,
                                          {{0, "dx", dx}, {1, "dw", dw}}));
}

TEST(MoETest, RouterErrors) {
  Tensor weights, dx;
  IndexTensor indices;
  EXPECT_EQ(errorOf(router(Tensor::zeros({2, 3}), Tensor::zeros({3, 6}), 0,
                           weights, indices)),
            "router: k = 0 must be in [1, 6] (the number of experts)");
  EXPECT_EQ(errorOf(router(Tensor::zeros({2, 3}), Tensor::zeros({4, 6}), 2,
                           weights, indices)),
            "router: x has shape [2, 3] but w has shape [4, 6]; dim 1 of x "
            "must equal dim 0 of w");
  EXPECT_EQ(
      errorOf(routerBackwardInput(Tensor::zeros({2, 3}), Tensor::zeros({3, 6}),
                                  2, Tensor::zeros({2, 3}), dx)),
      "router BI: dWeights has shape [2, 3] but the output has shape "
      "[2, 2]");
}

TEST(MoETest, SlotAssignmentFollowsPairOrder) {
  std::vector<int64_t> slots;
  ASSERT_OK(assignExpertSlots(smallIndices(), 3, 2, slots));
  EXPECT_EQ(slots, (std::vector<int64_t>{0, 0, 1, 0, -1, 1}));
  // Capacity 0 drops everything; a large capacity drops nothing.
  ASSERT_OK(assignExpertSlots(smallIndices(), 3, 0, slots));
  EXPECT_EQ(slots, (std::vector<int64_t>(6, -1)));
  ASSERT_OK(assignExpertSlots(smallIndices(), 3, 6, slots));
  EXPECT_EQ(slots, (std::vector<int64_t>{0, 0, 1, 0, 2, 1}));
}

TEST(MoETest, DispatchForward) {
  Tensor x = Tensor::of({3, 2}, {1, 2, 3, 4, 5, 6}), buf;
  ASSERT_OK(dispatch(x, smallIndices(), 3, 2, buf));
  EXPECT_EQ(buf.shape, Shape({3, 2, 2}));
  // e0: [x0, x1]; e1: [x0, x2]; e2: [x1, unused].
  EXPECT_EQ(buf.data,
            (std::vector<double>{1, 2, 3, 4, 1, 2, 5, 6, 3, 4, 0, 0}));
}

TEST(MoETest, DispatchVjpWithDrops) {
  std::mt19937_64 rng(82);
  // 12 pairs into 3 experts of capacity 3: pairs (3,0), (4,1), (5,0) and
  // (5,1) are dropped, so token 5 loses both of its pairs.
  IndexTensor indices =
      IndexTensor::of({6, 2}, {0, 1, 1, 2, 0, 1, 1, 0, 2, 1, 0, 1});
  Tensor x = randomTensor(rng, {6, 3}), dOut = randomTensor(rng, {3, 3, 3});
  Tensor dx;
  ASSERT_OK(dispatchBackward(x, indices, 3, 3, dOut, dx));
  ForwardFn fwd = [&indices](const std::vector<Tensor> &in, Tensor &out) {
    return dispatch(in[0], indices, 3, 3, out);
  };
  EXPECT_TRUE(vjpMatchesFiniteDifferences(fwd, {x}, dOut, {{0, "dx", dx}}));
  for (int64_t c = 0; c < 3; ++c)
    EXPECT_EQ(dx.at({5, c}), 0.0);
}

TEST(MoETest, CombineVjpWithDrops) {
  std::mt19937_64 rng(83);
  IndexTensor indices =
      IndexTensor::of({6, 2}, {0, 1, 1, 2, 0, 1, 1, 0, 2, 1, 0, 1});
  Tensor y = randomTensor(rng, {3, 3, 4}), weights = randomTensor(rng, {6, 2});
  Tensor dOut = randomTensor(rng, {6, 4}), dY, dWeights;
  ASSERT_OK(combineBackward(y, weights, indices, 3, dOut, dY, dWeights));
  ForwardFn fwd = [&indices](const std::vector<Tensor> &in, Tensor &out) {
    return combine(in[0], in[1], indices, 3, out);
  };
  EXPECT_TRUE(vjpMatchesFiniteDifferences(
      fwd, {y, weights}, dOut, {{0, "dY", dY}, {1, "dWeights", dWeights}}));
  EXPECT_EQ(dWeights.at({5, 0}), 0.0);
  EXPECT_EQ(dWeights.at({5, 1}), 0.0);
}

TEST(MoETest, DispatchCombineRoundTripDropsExactly) {
  std::mt19937_64 rng(84);
  Tensor x = randomTensor(rng, {3, 4}), buf, out;
  Tensor weights = Tensor::of({3, 2}, {0.6, 0.4, 0.25, 0.75, 0.9, 0.1});
  ASSERT_OK(dispatch(x, smallIndices(), 3, 2, buf));
  // With identity experts, token t gets (sum of its kept weights) * x[t].
  ASSERT_OK(combine(buf, weights, smallIndices(), 2, out));
  for (int64_t c = 0; c < 4; ++c) {
    EXPECT_NEAR(out.at({0, c}), x.at({0, c}), 1e-15);
    EXPECT_NEAR(out.at({1, c}), x.at({1, c}), 1e-15);
    // Pair (2, 0) was dropped and contributes exactly nothing.
    EXPECT_EQ(out.at({2, c}), 0.1 * x.at({2, c}));
  }
}

TEST(MoETest, ExpertFfnForward) {
  // One expert, one slot, H = F = 1: silu(2 * 1) * (2 * 3) * 0.5 = 3 silu(2).
  Tensor y;
  ASSERT_OK(
      expertFfn(Tensor::of({1, 1, 1}, {2.0}), Tensor::of({1, 1, 1}, {1.0}),
                Tensor::of({1, 1, 1}, {3.0}), Tensor::of({1, 1, 1}, {0.5}), y));
  EXPECT_NEAR(y.data[0], 5.284782467867294, 1e-14);
  // Unused (zero) slots stay zero; experts do not mix.
  std::mt19937_64 rng(85);
  Tensor buf = randomTensor(rng, {2, 2, 3});
  for (int64_t c = 0; c < 3; ++c)
    buf.at({1, 1, c}) = 0.0;
  ASSERT_OK(expertFfn(buf, randomTensor(rng, {2, 3, 4}),
                      randomTensor(rng, {2, 3, 4}),
                      randomTensor(rng, {2, 4, 3}), y));
  for (int64_t c = 0; c < 3; ++c)
    EXPECT_EQ(y.at({1, 1, c}), 0.0);
}

TEST(MoETest, ExpertFfnVjp) {
  std::mt19937_64 rng(86);
  Tensor buf = randomTensor(rng, {2, 3, 4});
  Tensor wGate = randomTensor(rng, {2, 4, 5}),
         wUp = randomTensor(rng, {2, 4, 5});
  Tensor wDown = randomTensor(rng, {2, 5, 4}),
         dOut = randomTensor(rng, {2, 3, 4});
  Tensor dBuf, dGate, dUp, dDown;
  ASSERT_OK(expertFfnBackwardInput(buf, wGate, wUp, wDown, dOut, dBuf));
  ASSERT_OK(
      expertFfnBackwardWeight(buf, wGate, wUp, wDown, dOut, dGate, dUp, dDown));
  ForwardFn fwd = [](const std::vector<Tensor> &in, Tensor &out) {
    return expertFfn(in[0], in[1], in[2], in[3], out);
  };
  EXPECT_TRUE(vjpMatchesFiniteDifferences(fwd, {buf, wGate, wUp, wDown}, dOut,
                                          {{0, "dBuf", dBuf},
                                           {1, "dWGate", dGate},
                                           {2, "dWUp", dUp},
                                           {3, "dWDown", dDown}}));
}

TEST(MoETest, Errors) {
  Tensor buf, out, y;
  EXPECT_EQ(errorOf(dispatch(Tensor::zeros({1, 2}),
                             IndexTensor::of({1, 2}, {0, 3}), 3, 2, buf)),
            "dispatch: expert index 3 at (token 0, choice 1) is out of range "
            "for 3 experts");
  EXPECT_EQ(errorOf(dispatch(Tensor::zeros({2, 2}),
                             IndexTensor::of({1, 2}, {0, 1}), 3, 2, buf)),
            "dispatch: x has shape [2, 2] but indices has shape [1, 2]; both "
            "need the same number of tokens");
  EXPECT_EQ(errorOf(dispatch(Tensor::zeros({1, 2}),
                             IndexTensor::of({1, 2}, {0, 1}), 3, -1, buf)),
            "dispatch: capacity must be >= 0, got -1");
  EXPECT_EQ(errorOf(combine(Tensor::zeros({3, 4, 2}), Tensor::zeros({3, 2}),
                            smallIndices(), 3, out)),
            "combine: y has shape [3, 4, 2] but capacity is 3; dim 1 of y must "
            "equal it");
  EXPECT_EQ(errorOf(combine(Tensor::zeros({3, 2, 2}), Tensor::zeros({3, 1}),
                            smallIndices(), 2, out)),
            "combine: weights has shape [3, 1] but indices has shape [3, 2]");
  EXPECT_EQ(
      errorOf(expertFfn(Tensor::zeros({2, 3, 4}), Tensor::zeros({2, 4, 5}),
                        Tensor::zeros({2, 4, 5}), Tensor::zeros({2, 4, 5}), y)),
      "expert_ffn: w_down has shape [2, 4, 5] but must be [2, 5, 4] to "
      "match buf [2, 3, 4] and w_gate [2, 4, 5]");
  std::vector<int64_t> slots;
  EXPECT_EQ(
      errorOf(assignExpertSlots(IndexTensor::of({2}, {0, 1}), 3, 2, slots)),
      "assign_slots: indices must have rank 2 but has shape [2]");
}

} // namespace
