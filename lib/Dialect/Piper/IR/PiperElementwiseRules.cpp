//===- PiperElementwiseRules.cpp - What elementwise ops compute -----------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// ElementwiseOpInterface of the activations: each op's scalar function and
// its partial derivatives, as f64 numbers (the interpreter) and as IR (the
// payload of the linalg.generic the native lowering emits for the op and
// its piper.vjp). The formulas are the reference kernels'
// (lib/Reference/Elementwise.cpp, Detail.cpp) and PyTorch's.
//
//===----------------------------------------------------------------------===//

#include "piper/Dialect/Piper/IR/PiperOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

#include <cmath>

using namespace mlir;
using namespace mlir::piper;

namespace {

// sqrt(2 / pi) and the cubic coefficient of GELU's tanh approximation
// (PyTorch's gelu(approximate="tanh")).
constexpr double kGeluScale = 0.7978845608028654;
constexpr double kGeluCubic = 0.044715;

double sigmoidValue(double x) {
  // exp of a non-positive argument never overflows.
  if (x >= 0.0)
    return 1.0 / (1.0 + std::exp(-x));
  double e = std::exp(x);
  return e / (1.0 + e);
}

double siluDerivativeValue(double x) {
  double s = sigmoidValue(x);
  return s * (1.0 + x * (1.0 - s));
}

/// IR helpers on scalars of one float type.
struct ScalarBuilder {
  OpBuilder &b;
  Location loc;
  Type type;

  Value constant(double v) {
    return arith::ConstantOp::create(b, loc, b.getFloatAttr(type, v));
  }
  Value add(Value x, Value y) { return arith::AddFOp::create(b, loc, x, y); }
  Value sub(Value x, Value y) { return arith::SubFOp::create(b, loc, x, y); }
  Value mul(Value x, Value y) { return arith::MulFOp::create(b, loc, x, y); }
  Value div(Value x, Value y) { return arith::DivFOp::create(b, loc, x, y); }
  Value positive(Value x) {
    return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, x,
                                 constant(0.0));
  }
  /// 1 / (1 + exp(-x)): exp overflows to +inf for very negative x, which
  /// gives 0, the limit.
  Value sigmoid(Value x) {
    Value one = constant(1.0);
    Value e = math::ExpOp::create(b, loc, arith::NegFOp::create(b, loc, x));
    return div(one, add(one, e));
  }
  Value silu(Value x) { return mul(x, sigmoid(x)); }
  /// s (1 + x (1 - s)), s = sigmoid(x).
  Value siluDerivative(Value x) {
    Value s = sigmoid(x);
    Value one = constant(1.0);
    return mul(s, add(one, mul(x, sub(one, s))));
  }
  /// tanh(sqrt(2/pi) (x + 0.044715 x^3)).
  Value geluTanh(Value x) {
    Value cube = mul(mul(x, x), x);
    Value inner =
        mul(constant(kGeluScale), add(x, mul(constant(kGeluCubic), cube)));
    return math::TanhOp::create(b, loc, inner);
  }
};

ScalarBuilder scalars(OpBuilder &b, Location loc, ValueRange x) {
  return ScalarBuilder{b, loc, x.front().getType()};
}

} // namespace

//===----------------------------------------------------------------------===//
// ReluOp: x > 0 ? x : 0 (the derivative is taken as 0 at 0).
//===----------------------------------------------------------------------===//

double ReluOp::evaluateScalar(ArrayRef<double> x) {
  return x[0] > 0.0 ? x[0] : 0.0;
}

double ReluOp::evaluatePartial(ArrayRef<double> x, unsigned) {
  return x[0] > 0.0 ? 1.0 : 0.0;
}

Value ReluOp::buildScalar(OpBuilder &b, Location loc, ValueRange x) {
  ScalarBuilder s = scalars(b, loc, x);
  return arith::SelectOp::create(b, loc, s.positive(x[0]), x[0],
                                 s.constant(0.0));
}

Value ReluOp::buildPartial(OpBuilder &b, Location loc, ValueRange x, unsigned) {
  ScalarBuilder s = scalars(b, loc, x);
  return arith::SelectOp::create(b, loc, s.positive(x[0]), s.constant(1.0),
                                 s.constant(0.0));
}

//===----------------------------------------------------------------------===//
// GeluOp: 0.5 x (1 + t), t = tanh(sqrt(2/pi) (x + 0.044715 x^3)).
//===----------------------------------------------------------------------===//

double GeluOp::evaluateScalar(ArrayRef<double> x) {
  double t = std::tanh(kGeluScale * (x[0] + kGeluCubic * x[0] * x[0] * x[0]));
  return 0.5 * x[0] * (1.0 + t);
}

double GeluOp::evaluatePartial(ArrayRef<double> x, unsigned) {
  double v = x[0];
  double t = std::tanh(kGeluScale * (v + kGeluCubic * v * v * v));
  double du = kGeluScale * (1.0 + 3.0 * kGeluCubic * v * v);
  return 0.5 * (1.0 + t) + 0.5 * v * (1.0 - t * t) * du;
}

Value GeluOp::buildScalar(OpBuilder &b, Location loc, ValueRange x) {
  ScalarBuilder s = scalars(b, loc, x);
  Value t = s.geluTanh(x[0]);
  return s.mul(s.mul(s.constant(0.5), x[0]), s.add(s.constant(1.0), t));
}

Value GeluOp::buildPartial(OpBuilder &b, Location loc, ValueRange x, unsigned) {
  // 0.5 (1 + t) + 0.5 x (1 - t^2) sqrt(2/pi) (1 + 3 * 0.044715 x^2)
  ScalarBuilder s = scalars(b, loc, x);
  Value v = x[0];
  Value t = s.geluTanh(v);
  Value half = s.constant(0.5), one = s.constant(1.0);
  Value du =
      s.mul(s.constant(kGeluScale),
            s.add(one, s.mul(s.constant(3.0 * kGeluCubic), s.mul(v, v))));
  Value left = s.mul(half, s.add(one, t));
  Value right = s.mul(s.mul(s.mul(half, v), s.sub(one, s.mul(t, t))), du);
  return s.add(left, right);
}

//===----------------------------------------------------------------------===//
// GeluErfOp: 0.5 x (1 + erf(x / sqrt 2)).
//===----------------------------------------------------------------------===//

double GeluErfOp::evaluateScalar(ArrayRef<double> x) {
  return 0.5 * x[0] * (1.0 + std::erf(x[0] * M_SQRT1_2));
}

double GeluErfOp::evaluatePartial(ArrayRef<double> x, unsigned) {
  // Phi(x) + x phi(x), phi the standard normal density.
  double v = x[0];
  double density = std::exp(-0.5 * v * v) * (M_2_SQRTPI * M_SQRT1_2 * 0.5);
  return 0.5 * (1.0 + std::erf(v * M_SQRT1_2)) + v * density;
}

Value GeluErfOp::buildScalar(OpBuilder &b, Location loc, ValueRange x) {
  ScalarBuilder s = scalars(b, loc, x);
  Value e = math::ErfOp::create(b, loc, s.mul(x[0], s.constant(M_SQRT1_2)));
  return s.mul(s.mul(s.constant(0.5), x[0]), s.add(s.constant(1.0), e));
}

Value GeluErfOp::buildPartial(OpBuilder &b, Location loc, ValueRange x,
                              unsigned) {
  ScalarBuilder s = scalars(b, loc, x);
  Value v = x[0];
  Value e = math::ErfOp::create(b, loc, s.mul(v, s.constant(M_SQRT1_2)));
  Value cdf = s.mul(s.constant(0.5), s.add(s.constant(1.0), e));
  Value square = s.mul(s.constant(-0.5), s.mul(v, v));
  Value density = s.mul(math::ExpOp::create(b, loc, square),
                        s.constant(M_2_SQRTPI * M_SQRT1_2 * 0.5));
  return s.add(cdf, s.mul(v, density));
}

//===----------------------------------------------------------------------===//
// SiluOp: x sigmoid(x).
//===----------------------------------------------------------------------===//

double SiluOp::evaluateScalar(ArrayRef<double> x) {
  return x[0] * sigmoidValue(x[0]);
}

double SiluOp::evaluatePartial(ArrayRef<double> x, unsigned) {
  return siluDerivativeValue(x[0]);
}

Value SiluOp::buildScalar(OpBuilder &b, Location loc, ValueRange x) {
  return scalars(b, loc, x).silu(x[0]);
}

Value SiluOp::buildPartial(OpBuilder &b, Location loc, ValueRange x, unsigned) {
  return scalars(b, loc, x).siluDerivative(x[0]);
}

//===----------------------------------------------------------------------===//
// SwigluOp: silu(gate) up.
//===----------------------------------------------------------------------===//

double SwigluOp::evaluateScalar(ArrayRef<double> x) {
  return x[0] * sigmoidValue(x[0]) * x[1];
}

double SwigluOp::evaluatePartial(ArrayRef<double> x, unsigned wrt) {
  return wrt == 0 ? x[1] * siluDerivativeValue(x[0])
                  : x[0] * sigmoidValue(x[0]);
}

Value SwigluOp::buildScalar(OpBuilder &b, Location loc, ValueRange x) {
  ScalarBuilder s = scalars(b, loc, x);
  return s.mul(s.silu(x[0]), x[1]);
}

Value SwigluOp::buildPartial(OpBuilder &b, Location loc, ValueRange x,
                             unsigned wrt) {
  ScalarBuilder s = scalars(b, loc, x);
  return wrt == 0 ? s.mul(x[1], s.siluDerivative(x[0])) : s.silu(x[0]);
}

//===----------------------------------------------------------------------===//
// SigmoidOp: 1 / (1 + exp(-x)).
//===----------------------------------------------------------------------===//

double SigmoidOp::evaluateScalar(ArrayRef<double> x) {
  return sigmoidValue(x[0]);
}

double SigmoidOp::evaluatePartial(ArrayRef<double> x, unsigned) {
  double s = sigmoidValue(x[0]);
  return s * (1.0 - s);
}

Value SigmoidOp::buildScalar(OpBuilder &b, Location loc, ValueRange x) {
  return scalars(b, loc, x).sigmoid(x[0]);
}

Value SigmoidOp::buildPartial(OpBuilder &b, Location loc, ValueRange x,
                              unsigned) {
  ScalarBuilder s = scalars(b, loc, x);
  Value sig = s.sigmoid(x[0]);
  return s.mul(sig, s.sub(s.constant(1.0), sig));
}

// exp, add, divide, negate: the count OpCounts gives silu's sigmoid part.
double SigmoidOp::getFlopsPerElement() { return 4.0; }

//===----------------------------------------------------------------------===//
// TanhOp
//===----------------------------------------------------------------------===//

double TanhOp::evaluateScalar(ArrayRef<double> x) { return std::tanh(x[0]); }

double TanhOp::evaluatePartial(ArrayRef<double> x, unsigned) {
  double t = std::tanh(x[0]);
  return 1.0 - t * t;
}

Value TanhOp::buildScalar(OpBuilder &b, Location loc, ValueRange x) {
  // math.tanh lowers to llvm.intr.tanh (libm's tanh on CPUs), the function
  // the interpreter's std::tanh calls.
  return math::TanhOp::create(b, loc, x[0]);
}

Value TanhOp::buildPartial(OpBuilder &b, Location loc, ValueRange x, unsigned) {
  ScalarBuilder s = scalars(b, loc, x);
  Value t = buildScalar(b, loc, x);
  return s.sub(s.constant(1.0), s.mul(t, t));
}

// As sigmoid: one transcendental (counted as an exp, 2 FLOPs) and two more.
double TanhOp::getFlopsPerElement() { return 4.0; }
