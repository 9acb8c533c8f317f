//===- ElementwiseTest.cpp - Elementwise and activation kernels -----------===//
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

using BinaryFn = Status (*)(const Tensor &, const Tensor &, Tensor &);
using BinaryVjpFn = Status (*)(const Tensor &, const Tensor &, const Tensor &,
                               Tensor &, Tensor &);
using UnaryFn = Status (*)(const Tensor &, Tensor &);
using UnaryVjpFn = Status (*)(const Tensor &, const Tensor &, Tensor &);

void checkBinaryVjp(BinaryFn f, BinaryVjpFn vjp, uint64_t seed) {
  std::mt19937_64 rng(seed);
  Tensor a = randomTensor(rng, {2, 3, 4}), b = randomTensor(rng, {2, 3, 4});
  Tensor dy = randomTensor(rng, {2, 3, 4}), da, db;
  ASSERT_OK(vjp(a, b, dy, da, db));
  ForwardFn fwd = [f](const std::vector<Tensor> &in, Tensor &out) {
    return f(in[0], in[1], out);
  };
  EXPECT_TRUE(vjpMatchesFiniteDifferences(fwd, {a, b}, dy,
                                          {{0, "dLhs", da}, {1, "dRhs", db}}));
}

void checkUnaryVjp(UnaryFn f, UnaryVjpFn vjp, const Tensor &x, uint64_t seed) {
  std::mt19937_64 rng(seed);
  Tensor dy = randomTensor(rng, x.shape), dx;
  ASSERT_OK(vjp(x, dy, dx));
  ForwardFn fwd = [f](const std::vector<Tensor> &in, Tensor &out) {
    return f(in[0], out);
  };
  EXPECT_TRUE(vjpMatchesFiniteDifferences(fwd, {x}, dy, {{0, "dx", dx}}));
}

/// f applied to the single value v.
double apply(UnaryFn f, double v) {
  Tensor out;
  EXPECT_OK(f(Tensor::of({1}, {v}), out));
  return out.data.empty() ? NAN : out.data[0];
}

TEST(ElementwiseTest, AddSubMulForward) {
  Tensor a = Tensor::of({2}, {1.5, -2.0}), b = Tensor::of({2}, {0.5, 4.0});
  Tensor out;
  ASSERT_OK(add(a, b, out));
  EXPECT_EQ(out.data, (std::vector<double>{2.0, 2.0}));
  ASSERT_OK(sub(a, b, out));
  EXPECT_EQ(out.data, (std::vector<double>{1.0, -6.0}));
  ASSERT_OK(mul(a, b, out));
  EXPECT_EQ(out.data, (std::vector<double>{0.75, -8.0}));
  EXPECT_EQ(out.shape, Shape({2}));
}

TEST(ElementwiseTest, AddVjp) { checkBinaryVjp(add, addBackward, 10); }
TEST(ElementwiseTest, SubVjp) { checkBinaryVjp(sub, subBackward, 11); }
TEST(ElementwiseTest, MulVjp) { checkBinaryVjp(mul, mulBackward, 12); }

TEST(ElementwiseTest, ShapeMismatchIsReported) {
  Tensor a = Tensor::zeros({2, 3}), b = Tensor::zeros({3, 2}), out;
  EXPECT_EQ(errorOf(add(a, b, out)),
            "add: lhs has shape [2, 3] but rhs has shape [3, 2]");
  EXPECT_EQ(errorOf(swiglu(a, b, out)),
            "swiglu: gate has shape [2, 3] but up has shape [3, 2]");
  Tensor da, db;
  EXPECT_EQ(errorOf(mulBackward(a, a, Tensor::zeros({3}), da, db)),
            "mul VJP: dy has shape [3] but the output has shape [2, 3]");
  EXPECT_TRUE(out.data.empty()) << "outputs are untouched on failure";
}

TEST(ElementwiseTest, MalformedTensorIsReported) {
  Tensor bad = Tensor::of({2, 2}, {1.0, 2.0, 3.0}), out;
  EXPECT_EQ(errorOf(relu(bad, out)),
            "relu: x has shape [2, 2] (4 elements) but holds 3 values");
  EXPECT_EQ(errorOf(gelu(Tensor::of({-1}, {}), out)),
            "gelu: x has invalid shape [-1]");
}

TEST(ElementwiseTest, ReluBoundaries) {
  Tensor x = Tensor::of({4}, {-1.0, 0.0, 2.0, -1e-300}), y, dx;
  ASSERT_OK(relu(x, y));
  EXPECT_EQ(y.data, (std::vector<double>{0.0, 0.0, 2.0, 0.0}));
  // The derivative at exactly 0 is taken as 0 (PyTorch's convention).
  ASSERT_OK(reluBackward(x, Tensor::filled({4}, 3.0), dx));
  EXPECT_EQ(dx.data, (std::vector<double>{0.0, 0.0, 3.0, 0.0}));
}

TEST(ElementwiseTest, ReluVjp) {
  std::mt19937_64 rng(13);
  // Keep inputs 0.05 away from the kink; the check perturbs by at most 2e-3.
  checkUnaryVjp(relu, reluBackward, randomAwayFromZero(rng, {3, 5}, 0.05), 14);
}

TEST(ElementwiseTest, GeluForward) {
  // 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) evaluated in Python.
  EXPECT_NEAR(apply(gelu, 1.0), 0.8411919906082768, 1e-15);
  EXPECT_NEAR(apply(gelu, -1.0), -0.15880800939172324, 1e-15);
  EXPECT_NEAR(apply(gelu, 3.0), 2.996362607918227, 1e-14);
  EXPECT_EQ(apply(gelu, 0.0), 0.0);
}

TEST(ElementwiseTest, GeluVjp) {
  std::mt19937_64 rng(15);
  checkUnaryVjp(gelu, geluBackward, randomTensor(rng, {4, 5}, -3.0, 3.0), 16);
}

TEST(ElementwiseTest, SiluForward) {
  EXPECT_NEAR(apply(silu, 1.0), 0.7310585786300049, 1e-15); // 1/(1+e^-1)
  EXPECT_EQ(apply(silu, 0.0), 0.0);
  // Large magnitudes neither overflow nor produce NaN.
  EXPECT_EQ(apply(silu, 800.0), 800.0);
  EXPECT_EQ(apply(silu, -800.0), 0.0);
}

TEST(ElementwiseTest, SiluVjp) {
  std::mt19937_64 rng(17);
  checkUnaryVjp(silu, siluBackward, randomTensor(rng, {4, 5}, -4.0, 4.0), 18);
}

TEST(ElementwiseTest, SwigluForward) {
  Tensor out;
  ASSERT_OK(
      swiglu(Tensor::of({2}, {1.0, 0.0}), Tensor::of({2}, {2.0, 5.0}), out));
  EXPECT_NEAR(out.data[0], 2.0 * 0.7310585786300049, 1e-15);
  EXPECT_EQ(out.data[1], 0.0);
}

TEST(ElementwiseTest, SwigluVjp) { checkBinaryVjp(swiglu, swigluBackward, 19); }

TEST(ElementwiseTest, OutputMayAliasInput) {
  Tensor x = Tensor::of({3}, {-1.0, 2.0, 3.0});
  ASSERT_OK(relu(x, x));
  EXPECT_EQ(x.data, (std::vector<double>{0.0, 2.0, 3.0}));
  ASSERT_OK(add(x, x, x));
  EXPECT_EQ(x.data, (std::vector<double>{0.0, 4.0, 6.0}));
}

} // namespace
