//===- TestUtil.h - Helpers for the reference kernel unit tests -*- C++ -*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Status assertions, random tensors and the finite-difference VJP check that
// every kernel test uses.
//
// The VJP check compares, for every element i of a differentiable input, the
// analytic VJP component with d/dx_i <cotangent, f(x)>, estimated by the
// fourth-order central difference
//   (8 (L(x + h e_i) - L(x - h e_i)) - (L(x + 2h e_i) - L(x - 2h e_i))) / 12h
// with h = 1e-3. Its truncation error is O(h^4) (about 1e-13 here) while the
// rounding error stays about 1e-13 too, which is what makes a 1e-6 relative
// tolerance meaningful even for small gradient components; the plain
// two-point difference would need h near 1e-5 and still lose about 1e-11.
// Differences L(a) - L(b) are summed per output element, so outputs the
// perturbation does not touch cancel exactly.
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_TEST_UNIT_REFERENCE_TESTUTIL_H
#define PIPER_TEST_UNIT_REFERENCE_TESTUTIL_H

#include "piper/Reference/Tensor.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace piper::ref::test {

inline ::testing::AssertionResult isOk(const Status &s) {
  if (s.ok())
    return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << s.message();
}

/// The error message of `s`, or "<ok>" so that a success never matches an
/// expected error text.
inline std::string errorOf(const Status &s) {
  return s.ok() ? std::string("<ok>") : s.message();
}

#define ASSERT_OK(expr) ASSERT_TRUE(::piper::ref::test::isOk(expr))
#define EXPECT_OK(expr) EXPECT_TRUE(::piper::ref::test::isOk(expr))

/// Uniform values in [lo, hi).
inline Tensor randomTensor(std::mt19937_64 &rng, Shape shape, double lo = -1.0,
                           double hi = 1.0) {
  std::uniform_real_distribution<double> dist(lo, hi);
  Tensor t = Tensor::zeros(std::move(shape));
  for (double &v : t.data)
    v = dist(rng);
  return t;
}

/// Values with |v| in [minAbs, 1] and a random sign, for kernels with a kink
/// at 0 (relu) that finite differences must not straddle.
inline Tensor randomAwayFromZero(std::mt19937_64 &rng, Shape shape,
                                 double minAbs) {
  std::uniform_real_distribution<double> mag(minAbs, 1.0);
  std::bernoulli_distribution sign(0.5);
  Tensor t = Tensor::zeros(std::move(shape));
  for (double &v : t.data)
    v = sign(rng) ? mag(rng) : -mag(rng);
  return t;
}

/// Computes the single differentiable output from all inputs.
using ForwardFn = std::function<Status(const std::vector<Tensor> &, Tensor &)>;

/// The analytic gradient of input `input` (named `name` in messages).
struct InputGrad {
  size_t input;
  const char *name;
  Tensor grad;
};

inline constexpr double kFiniteDifferenceStep = 1e-3;
inline constexpr double kVjpTolerance = 1e-6;

/// Checks every InputGrad against finite differences of
/// L(inputs) = <cotangent, f(inputs)>; relative error
/// |a - fd| / max(|a|, |fd|, 1e-8) must not exceed `tolerance`. Also fails
/// if every analytic and numeric component is 0 (the check proved nothing).
inline ::testing::AssertionResult vjpMatchesFiniteDifferences(
    const ForwardFn &f, std::vector<Tensor> inputs, const Tensor &cotangent,
    const std::vector<InputGrad> &grads, double tolerance = kVjpTolerance) {
  Tensor base;
  if (Status s = f(inputs, base); !s.ok())
    return ::testing::AssertionFailure() << "forward failed: " << s.message();
  if (base.shape != cotangent.shape || !cotangent.isWellFormed())
    return ::testing::AssertionFailure()
           << "cotangent has shape " << shapeToString(cotangent.shape)
           << " but the output has shape " << shapeToString(base.shape);

  // <cotangent, f(x + delta e_i) - f(x - delta e_i)> for the current input.
  auto centralDiff = [&](Tensor &x, size_t i, double delta, double &result,
                         std::string &error) {
    double x0 = x.data[i];
    Tensor plus, minus;
    x.data[i] = x0 + delta;
    Status sp = f(inputs, plus);
    x.data[i] = x0 - delta;
    Status sm = f(inputs, minus);
    x.data[i] = x0;
    if (!sp.ok() || !sm.ok()) {
      error = sp.ok() ? sm.message() : sp.message();
      return false;
    }
    result = 0.0;
    for (size_t o = 0; o < plus.data.size(); ++o)
      result += cotangent.data[o] * (plus.data[o] - minus.data[o]);
    return true;
  };

  const double h = kFiniteDifferenceStep;
  double worst = 0.0;
  std::string worstText;
  bool anyNonZero = false;
  for (const InputGrad &g : grads) {
    if (g.input >= inputs.size())
      return ::testing::AssertionFailure()
             << "no input " << g.input << " for gradient " << g.name;
    Tensor &x = inputs[g.input];
    if (g.grad.shape != x.shape || !g.grad.isWellFormed())
      return ::testing::AssertionFailure()
             << "gradient " << g.name << " has shape "
             << shapeToString(g.grad.shape) << " but the input has shape "
             << shapeToString(x.shape);
    for (size_t i = 0; i < x.data.size(); ++i) {
      double d1 = 0.0, d2 = 0.0;
      std::string error;
      if (!centralDiff(x, i, h, d1, error) ||
          !centralDiff(x, i, 2 * h, d2, error))
        return ::testing::AssertionFailure()
               << "forward failed while perturbing " << g.name << ": " << error;
      double numeric = (8.0 * d1 - d2) / (12.0 * h);
      double analytic = g.grad.data[i];
      anyNonZero |= analytic != 0.0 || numeric != 0.0;
      double denom = std::max({std::fabs(analytic), std::fabs(numeric), 1e-8});
      double rel = std::fabs(analytic - numeric) / denom;
      if (rel > worst || std::isnan(rel)) {
        worst = std::isnan(rel) ? std::numeric_limits<double>::infinity() : rel;
        std::ostringstream os;
        os.precision(17);
        os << g.name << shapeToString(unflattenIndex(x.shape, int64_t(i)))
           << ": analytic " << analytic << ", finite difference " << numeric;
        worstText = os.str();
      }
    }
  }
  if (!anyNonZero)
    return ::testing::AssertionFailure()
           << "every gradient component is 0; the check is vacuous";
  if (worst > tolerance)
    return ::testing::AssertionFailure()
           << "relative error " << worst << " exceeds " << tolerance << " at "
           << worstText;
  return ::testing::AssertionSuccess() << "max relative error " << worst;
}

} // namespace piper::ref::test

#endif // PIPER_TEST_UNIT_REFERENCE_TESTUTIL_H
