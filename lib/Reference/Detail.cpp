//===- Detail.cpp - Shared checks and loops of the reference kernels ------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "Detail.h"

#include <algorithm>
#include <cmath>

namespace piper::ref::detail {

template <typename T>
static Status checkArray(const std::string &op, const char *name, const T &t) {
  int64_t n = t.numel();
  if (n < 0)
    return fail(op, name, " has invalid shape ", str(t.shape));
  if (static_cast<uint64_t>(n) != t.data.size())
    return fail(op, name, " has shape ", str(t.shape), " (", n,
                " elements) but holds ", t.data.size(), " values");
  return Status::success();
}

Status checkTensor(const std::string &op, const char *name, const Tensor &t) {
  return checkArray(op, name, t);
}

Status checkTensor(const std::string &op, const char *name,
                   const IndexTensor &t) {
  return checkArray(op, name, t);
}

template <typename T>
static Status checkArrayRank(const std::string &op, const char *name,
                             const T &t, int64_t rank) {
  PIPER_REF_TRY(checkArray(op, name, t));
  if (t.rank() != rank)
    return fail(op, name, " must have rank ", rank, " but has shape ",
                str(t.shape));
  return Status::success();
}

Status checkRank(const std::string &op, const char *name, const Tensor &t,
                 int64_t rank) {
  return checkArrayRank(op, name, t, rank);
}

Status checkRank(const std::string &op, const char *name, const IndexTensor &t,
                 int64_t rank) {
  return checkArrayRank(op, name, t, rank);
}

Status checkMinRank(const std::string &op, const char *name, const Tensor &t,
                    int64_t rank) {
  PIPER_REF_TRY(checkTensor(op, name, t));
  if (t.rank() < rank)
    return fail(op, name, " must have rank >= ", rank, " but has shape ",
                str(t.shape));
  return Status::success();
}

Status checkSameShape(const std::string &op, const char *nameA, const Tensor &a,
                      const char *nameB, const Tensor &b) {
  PIPER_REF_TRY(checkTensor(op, nameB, b));
  if (a.shape != b.shape)
    return fail(op, nameA, " has shape ", str(a.shape), " but ", nameB,
                " has shape ", str(b.shape));
  return Status::success();
}

Status checkCotangent(const std::string &op, const char *name, const Tensor &d,
                      const Shape &outShape) {
  PIPER_REF_TRY(checkTensor(op, name, d));
  if (d.shape != outShape)
    return fail(op, name, " has shape ", str(d.shape),
                " but the output has shape ", str(outShape));
  return Status::success();
}

Status checkEps(const std::string &op, double eps) {
  if (!(eps >= 0.0) || !std::isfinite(eps))
    return fail(op, "eps must be finite and non-negative, got ", eps);
  return Status::success();
}

int64_t leadingNumel(const Shape &shape) {
  int64_t n = 1;
  for (size_t i = 0; i + 1 < shape.size(); ++i)
    n *= shape[i];
  return n;
}

void gemm(const double *a, const double *b, double *c, int64_t m, int64_t k,
          int64_t n, bool transA, bool transB, bool accumulate) {
  // The reference favours an obvious summation order over speed: each c[i, j]
  // is summed over p ascending, whatever the transposition.
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double sum = 0.0;
      for (int64_t p = 0; p < k; ++p) {
        double av = transA ? a[p * m + i] : a[i * k + p];
        double bv = transB ? b[j * k + p] : b[p * n + j];
        sum += av * bv;
      }
      c[i * n + j] = accumulate ? c[i * n + j] + sum : sum;
    }
  }
}

void softmaxRow(const double *x, double *y, int64_t n) {
  double maxV = *std::max_element(x, x + n);
  double sum = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    y[i] = std::exp(x[i] - maxV);
    sum += y[i];
  }
  for (int64_t i = 0; i < n; ++i)
    y[i] /= sum;
}

double logSumExp(const double *x, int64_t n) {
  double maxV = *std::max_element(x, x + n);
  double sum = 0.0;
  for (int64_t i = 0; i < n; ++i)
    sum += std::exp(x[i] - maxV);
  return maxV + std::log(sum);
}

double sigmoid(double x) {
  // exp of a non-positive argument never overflows.
  if (x >= 0.0)
    return 1.0 / (1.0 + std::exp(-x));
  double e = std::exp(x);
  return e / (1.0 + e);
}

double siluValue(double x) { return x * sigmoid(x); }

double siluDerivative(double x) {
  double s = sigmoid(x);
  return s * (1.0 + x * (1.0 - s));
}

} // namespace piper::ref::detail
