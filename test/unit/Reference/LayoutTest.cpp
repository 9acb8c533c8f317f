//===- LayoutTest.cpp - Transpose and reshape kernels ---------------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "piper/Reference/Kernels.h"

#include "TestUtil.h"

#include <numeric>

using namespace piper::ref;
using namespace piper::ref::test;

namespace {

Tensor iota(Shape shape) {
  Tensor t = Tensor::zeros(std::move(shape));
  std::iota(t.data.begin(), t.data.end(), 0.0);
  return t;
}

TEST(LayoutTest, Transpose2d) {
  Tensor y;
  ASSERT_OK(transpose(Tensor::of({2, 3}, {1, 2, 3, 4, 5, 6}), {1, 0}, y));
  EXPECT_EQ(y.shape, Shape({3, 2}));
  EXPECT_EQ(y.data, (std::vector<double>{1, 4, 2, 5, 3, 6}));
}

TEST(LayoutTest, Transpose3d) {
  Tensor x = iota({2, 3, 4}), y;
  ASSERT_OK(transpose(x, {2, 0, 1}, y));
  ASSERT_EQ(y.shape, Shape({4, 2, 3}));
  for (int64_t i = 0; i < 4; ++i)
    for (int64_t j = 0; j < 2; ++j)
      for (int64_t l = 0; l < 3; ++l)
        EXPECT_EQ(y.at({i, j, l}), x.at({j, l, i}));
}

TEST(LayoutTest, TransposeVjp) {
  std::mt19937_64 rng(70);
  Tensor x = randomTensor(rng, {2, 3, 4}), dy = randomTensor(rng, {3, 4, 2});
  std::vector<int64_t> perm = {1, 2, 0};
  Tensor dx;
  ASSERT_OK(transposeBackward(x, perm, dy, dx));
  ForwardFn fwd = [&perm](const std::vector<Tensor> &in, Tensor &out) {
    return transpose(in[0], perm, out);
  };
  EXPECT_TRUE(vjpMatchesFiniteDifferences(fwd, {x}, dy, {{0, "dx", dx}}));
}

TEST(LayoutTest, ReshapeForwardAndVjp) {
  std::mt19937_64 rng(71);
  Tensor x = randomTensor(rng, {2, 3, 2}), y;
  ASSERT_OK(reshape(x, {3, 4}, y));
  EXPECT_EQ(y.shape, Shape({3, 4}));
  EXPECT_EQ(y.data, x.data);
  Tensor dy = randomTensor(rng, {3, 4}), dx;
  ASSERT_OK(reshapeBackward(x, {3, 4}, dy, dx));
  ForwardFn fwd = [](const std::vector<Tensor> &in, Tensor &out) {
    return reshape(in[0], {3, 4}, out);
  };
  EXPECT_TRUE(vjpMatchesFiniteDifferences(fwd, {x}, dy, {{0, "dx", dx}}));
}

TEST(LayoutTest, Errors) {
  Tensor y;
  EXPECT_EQ(errorOf(transpose(Tensor::zeros({2, 3, 4}), {0, 0, 1}, y)),
            "transpose: perm [0, 0, 1] is not a permutation of the 3 dims of "
            "x [2, 3, 4]");
  EXPECT_EQ(errorOf(transpose(Tensor::zeros({2, 3}), {0, 1, 2}, y)),
            "transpose: perm [0, 1, 2] is not a permutation of the 2 dims of "
            "x [2, 3]");
  EXPECT_EQ(errorOf(reshape(Tensor::zeros({2, 3}), {4, 2}, y)),
            "reshape: cannot reshape x [2, 3] (6 elements) to [4, 2] (8 "
            "elements)");
  EXPECT_EQ(errorOf(reshape(Tensor::zeros({2, 3}), {-2, -3}, y)),
            "reshape: cannot reshape x [2, 3] (6 elements) to [-2, -3] (an "
            "invalid shape)");
}

} // namespace
