//===- Detail.h - Shared checks and loops of the kernels --------*- C++ -*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Private to lib/Reference: operand validation with uniform error messages,
// and the few numerical building blocks (GEMM, stable softmax, sigmoid) that
// several kernels share, so each formula is written once.
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_LIB_REFERENCE_DETAIL_H
#define PIPER_LIB_REFERENCE_DETAIL_H

#include "piper/Reference/Tensor.h"

#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

/// Returns the Status of `expr` from the enclosing function if it failed.
#define PIPER_REF_TRY(expr)                                                    \
  do {                                                                         \
    if (::piper::ref::Status pipeRefStatus_ = (expr); !pipeRefStatus_.ok())    \
      return pipeRefStatus_;                                                   \
  } while (false)

namespace piper::ref::detail {

/// Concatenates the streamed forms of `args`.
template <typename... Args> std::string concat(const Args &...args) {
  std::ostringstream os;
  (os << ... << args);
  return os.str();
}

/// An error "<op>: <args...>".
template <typename... Args>
Status fail(const std::string &op, const Args &...args) {
  return Status::error(concat(op, ": ", args...));
}

inline std::string str(const Shape &shape) { return shapeToString(shape); }

/// `t` is well formed: non-negative dims and data.size() == numel.
Status checkTensor(const std::string &op, const char *name, const Tensor &t);
Status checkTensor(const std::string &op, const char *name,
                   const IndexTensor &t);
/// `t` is well formed and has exactly `rank` dims.
Status checkRank(const std::string &op, const char *name, const Tensor &t,
                 int64_t rank);
Status checkRank(const std::string &op, const char *name, const IndexTensor &t,
                 int64_t rank);
/// `t` is well formed and has at least `rank` dims.
Status checkMinRank(const std::string &op, const char *name, const Tensor &t,
                    int64_t rank);
/// `b` is well formed and has the shape of (well-formed) `a`.
Status checkSameShape(const std::string &op, const char *nameA, const Tensor &a,
                      const char *nameB, const Tensor &b);
/// The cotangent `d` is well formed and has the op's output shape.
Status checkCotangent(const std::string &op, const char *name, const Tensor &d,
                      const Shape &outShape);
/// eps is finite and non-negative.
Status checkEps(const std::string &op, double eps);

/// Product of shape[0 .. shape.size() - 1): the number of rows when the last
/// dim is the feature dim. Assumes a valid shape of rank >= 1.
int64_t leadingNumel(const Shape &shape);

/// c[M, N] (+)= op(a) op(b) where op(a) is [M, K] and op(b) is [K, N]; with
/// transA, a is stored [K, M]; with transB, b is stored [N, K]. Overwrites c
/// unless `accumulate`.
void gemm(const double *a, const double *b, double *c, int64_t m, int64_t k,
          int64_t n, bool transA, bool transB, bool accumulate);

/// y[0 .. n) = softmax(x[0 .. n)), subtracting the maximum first so that no
/// exponent is positive. n >= 1. y may alias x.
void softmaxRow(const double *x, double *y, int64_t n);
/// log(sum(exp(x[0 .. n)))), stable. n >= 1.
double logSumExp(const double *x, int64_t n);

/// 1 / (1 + exp(-x)), evaluated without overflow for large |x|.
double sigmoid(double x);
/// x * sigmoid(x) and its derivative, shared by silu, swiglu and expert_ffn.
double siluValue(double x);
double siluDerivative(double x);

} // namespace piper::ref::detail

#endif // PIPER_LIB_REFERENCE_DETAIL_H
