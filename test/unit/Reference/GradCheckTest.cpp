//===- GradCheckTest.cpp - The finite-difference checker can fail ---------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Every VJP test relies on vjpMatchesFiniteDifferences; these tests show it
// rejects a gradient that is wrong by a little, a gradient of the wrong
// shape and a vacuous all-zero check.
//
//===----------------------------------------------------------------------===//

#include "piper/Reference/Kernels.h"

#include "TestUtil.h"

using namespace piper::ref;
using namespace piper::ref::test;

namespace {

ForwardFn mulFn() {
  return [](const std::vector<Tensor> &in, Tensor &out) {
    return mul(in[0], in[1], out);
  };
}

TEST(GradCheckTest, AcceptsTheCorrectGradient) {
  std::mt19937_64 rng(1);
  Tensor a = randomTensor(rng, {3, 4}), b = randomTensor(rng, {3, 4});
  Tensor dy = randomTensor(rng, {3, 4}), da, db;
  ASSERT_OK(mulBackward(a, b, dy, da, db));
  EXPECT_TRUE(vjpMatchesFiniteDifferences(mulFn(), {a, b}, dy,
                                          {{0, "da", da}, {1, "db", db}}));
}

TEST(GradCheckTest, RejectsAGradientOffByOnePartInAMillion) {
  std::mt19937_64 rng(2);
  Tensor a = randomTensor(rng, {3, 4}), b = randomTensor(rng, {3, 4});
  Tensor dy = randomTensor(rng, {3, 4}), da, db;
  ASSERT_OK(mulBackward(a, b, dy, da, db));
  db.data[5] *= 1.0 + 1e-5;
  ::testing::AssertionResult r = vjpMatchesFiniteDifferences(
      mulFn(), {a, b}, dy, {{0, "da", da}, {1, "db", db}});
  EXPECT_FALSE(r);
  EXPECT_NE(std::string(r.message()).find("db[1, 1]"), std::string::npos)
      << r.message();
}

TEST(GradCheckTest, RejectsAGradientOfTheWrongShape) {
  std::mt19937_64 rng(3);
  Tensor a = randomTensor(rng, {2, 3}), b = randomTensor(rng, {2, 3});
  Tensor dy = randomTensor(rng, {2, 3});
  EXPECT_FALSE(vjpMatchesFiniteDifferences(mulFn(), {a, b}, dy,
                                           {{0, "da", Tensor::zeros({3, 2})}}));
}

TEST(GradCheckTest, RejectsAVacuousCheck) {
  Tensor a = Tensor::zeros({2}), b = Tensor::zeros({2});
  Tensor dy = Tensor::filled({2}, 1.0);
  EXPECT_FALSE(vjpMatchesFiniteDifferences(mulFn(), {a, b}, dy,
                                           {{0, "da", Tensor::zeros({2})}}));
}

} // namespace
