//===- Elementwise.cpp - Elementwise and activation reference kernels -----===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// add, sub, mul, relu, gelu, silu and swiglu. None broadcasts: Piper's model
// IR makes broadcasts explicit, so a shape mismatch here is always a bug.
//
//===----------------------------------------------------------------------===//

#include "piper/Reference/Kernels.h"

#include "Detail.h"

#include <cmath>

using namespace piper::ref;
using namespace piper::ref::detail;

namespace {

/// Validates two same-shaped operands named `nameA` and `nameB`.
Status checkBinary(const char *op, const char *nameA, const Tensor &a,
                   const char *nameB, const Tensor &b) {
  PIPER_REF_TRY(checkTensor(op, nameA, a));
  return checkSameShape(op, nameA, a, nameB, b);
}

/// out = f(a, b) elementwise.
template <typename F>
Status binaryForward(const char *op, const char *nameA, const Tensor &a,
                     const char *nameB, const Tensor &b, Tensor &out, F f) {
  PIPER_REF_TRY(checkBinary(op, nameA, a, nameB, b));
  Tensor y = Tensor::zeros(a.shape);
  for (size_t i = 0; i < y.data.size(); ++i)
    y.data[i] = f(a.data[i], b.data[i]);
  out = std::move(y);
  return Status::success();
}

/// dA, dB = f(a, b, dy) elementwise, where f returns the pair of partial
/// cotangents.
template <typename F>
Status binaryBackward(const char *op, const char *nameA, const Tensor &a,
                      const char *nameB, const Tensor &b, const Tensor &dy,
                      Tensor &dA, Tensor &dB, F f) {
  std::string vjp = std::string(op) + " VJP";
  PIPER_REF_TRY(checkBinary(vjp.c_str(), nameA, a, nameB, b));
  PIPER_REF_TRY(checkCotangent(vjp, "dy", dy, a.shape));
  Tensor ga = Tensor::zeros(a.shape), gb = Tensor::zeros(a.shape);
  for (size_t i = 0; i < dy.data.size(); ++i) {
    auto [da, db] = f(a.data[i], b.data[i], dy.data[i]);
    ga.data[i] = da;
    gb.data[i] = db;
  }
  dA = std::move(ga);
  dB = std::move(gb);
  return Status::success();
}

/// out = f(x) elementwise.
template <typename F>
Status unaryForward(const char *op, const Tensor &x, Tensor &out, F f) {
  PIPER_REF_TRY(checkTensor(op, "x", x));
  Tensor y = Tensor::zeros(x.shape);
  for (size_t i = 0; i < y.data.size(); ++i)
    y.data[i] = f(x.data[i]);
  out = std::move(y);
  return Status::success();
}

/// dx = dy * fPrime(x) elementwise.
template <typename F>
Status unaryBackward(const char *op, const Tensor &x, const Tensor &dy,
                     Tensor &dx, F fPrime) {
  std::string vjp = std::string(op) + " VJP";
  PIPER_REF_TRY(checkTensor(vjp, "x", x));
  PIPER_REF_TRY(checkCotangent(vjp, "dy", dy, x.shape));
  Tensor g = Tensor::zeros(x.shape);
  for (size_t i = 0; i < g.data.size(); ++i)
    g.data[i] = dy.data[i] * fPrime(x.data[i]);
  dx = std::move(g);
  return Status::success();
}

// sqrt(2 / pi) and the cubic coefficient of the tanh approximation, as in
// PyTorch's gelu(approximate="tanh").
constexpr double kGeluScale = 0.7978845608028654;
constexpr double kGeluCubic = 0.044715;

double geluValue(double x) {
  double t = std::tanh(kGeluScale * (x + kGeluCubic * x * x * x));
  return 0.5 * x * (1.0 + t);
}

double geluDerivative(double x) {
  double t = std::tanh(kGeluScale * (x + kGeluCubic * x * x * x));
  double du = kGeluScale * (1.0 + 3.0 * kGeluCubic * x * x);
  return 0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * du;
}

} // namespace

Status piper::ref::add(const Tensor &lhs, const Tensor &rhs, Tensor &out) {
  return binaryForward("add", "lhs", lhs, "rhs", rhs, out,
                       [](double a, double b) { return a + b; });
}

Status piper::ref::addBackward(const Tensor &lhs, const Tensor &rhs,
                               const Tensor &dy, Tensor &dLhs, Tensor &dRhs) {
  return binaryBackward(
      "add", "lhs", lhs, "rhs", rhs, dy, dLhs, dRhs,
      [](double, double, double g) { return std::pair(g, g); });
}

Status piper::ref::sub(const Tensor &lhs, const Tensor &rhs, Tensor &out) {
  return binaryForward("sub", "lhs", lhs, "rhs", rhs, out,
                       [](double a, double b) { return a - b; });
}

Status piper::ref::subBackward(const Tensor &lhs, const Tensor &rhs,
                               const Tensor &dy, Tensor &dLhs, Tensor &dRhs) {
  return binaryBackward(
      "sub", "lhs", lhs, "rhs", rhs, dy, dLhs, dRhs,
      [](double, double, double g) { return std::pair(g, -g); });
}

Status piper::ref::mul(const Tensor &lhs, const Tensor &rhs, Tensor &out) {
  return binaryForward("mul", "lhs", lhs, "rhs", rhs, out,
                       [](double a, double b) { return a * b; });
}

Status piper::ref::mulBackward(const Tensor &lhs, const Tensor &rhs,
                               const Tensor &dy, Tensor &dLhs, Tensor &dRhs) {
  return binaryBackward(
      "mul", "lhs", lhs, "rhs", rhs, dy, dLhs, dRhs,
      [](double a, double b, double g) { return std::pair(g * b, g * a); });
}

Status piper::ref::relu(const Tensor &x, Tensor &out) {
  return unaryForward("relu", x, out,
                      [](double v) { return v > 0.0 ? v : 0.0; });
}

Status piper::ref::reluBackward(const Tensor &x, const Tensor &dy, Tensor &dx) {
  return unaryBackward("relu", x, dy, dx,
                       [](double v) { return v > 0.0 ? 1.0 : 0.0; });
}

Status piper::ref::gelu(const Tensor &x, Tensor &out) {
  return unaryForward("gelu", x, out, geluValue);
}

Status piper::ref::geluBackward(const Tensor &x, const Tensor &dy, Tensor &dx) {
  return unaryBackward("gelu", x, dy, dx, geluDerivative);
}

Status piper::ref::silu(const Tensor &x, Tensor &out) {
  return unaryForward("silu", x, out, siluValue);
}

Status piper::ref::siluBackward(const Tensor &x, const Tensor &dy, Tensor &dx) {
  return unaryBackward("silu", x, dy, dx, siluDerivative);
}

Status piper::ref::swiglu(const Tensor &gate, const Tensor &up, Tensor &out) {
  return binaryForward("swiglu", "gate", gate, "up", up, out,
                       [](double g, double u) { return siluValue(g) * u; });
}

Status piper::ref::swigluBackward(const Tensor &gate, const Tensor &up,
                                  const Tensor &dy, Tensor &dGate,
                                  Tensor &dUp) {
  return binaryBackward("swiglu", "gate", gate, "up", up, dy, dGate, dUp,
                        [](double g, double u, double d) {
                          return std::pair(d * u * siluDerivative(g),
                                           d * siluValue(g));
                        });
}
