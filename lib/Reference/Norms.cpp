//===- Norms.cpp - RMSNorm and LayerNorm reference kernels ----------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Both norms work on rows of the last dim. The backward functions recompute
// the per-row statistics rather than taking them saved, so BI and BW can run
// at different times from the same inputs.
//
//===----------------------------------------------------------------------===//

#include "piper/Reference/Kernels.h"

#include "Detail.h"

#include <cmath>
#include <initializer_list>
#include <utility>

using namespace piper::ref;
using namespace piper::ref::detail;

namespace {

/// Validates x [..., H] and every per-feature vector in `params` as [H].
Status checkNorm(
    const std::string &op, const Tensor &x, double eps,
    std::initializer_list<std::pair<const char *, const Tensor *>> params) {
  PIPER_REF_TRY(checkMinRank(op, "x", x, 1));
  for (auto [name, p] : params) {
    PIPER_REF_TRY(checkRank(op, name, *p, 1));
    if (p->shape[0] != x.shape.back())
      return fail(op, name, " has shape ", str(p->shape), " but x has shape ",
                  str(x.shape), "; it must be [", x.shape.back(), "]");
  }
  return checkEps(op, eps);
}

/// Validates RMSNorm's x [..., H] and w [G], G dividing H: groups of G
/// channels are normalised apart (G = H: whole rows). Since groups are
/// contiguous, x is then rows of G.
Status checkRmsNorm(const std::string &op, const Tensor &x, const Tensor &w,
                    double eps) {
  PIPER_REF_TRY(checkMinRank(op, "x", x, 1));
  PIPER_REF_TRY(checkRank(op, "w", w, 1));
  if (w.shape[0] < 1 || x.shape.back() % w.shape[0] != 0)
    return fail(op, "w has shape ", str(w.shape), " but x has shape ",
                str(x.shape), "; it must be [G] with G dividing ",
                x.shape.back());
  return checkEps(op, eps);
}

/// 1 / sqrt(mean(row^2) + eps).
double rmsScale(const double *row, int64_t h, double eps) {
  double sumSq = 0.0;
  for (int64_t i = 0; i < h; ++i)
    sumSq += row[i] * row[i];
  return 1.0 / std::sqrt(sumSq / static_cast<double>(h) + eps);
}

/// Mean and 1 / sqrt(biased variance + eps) of a row.
std::pair<double, double> meanAndScale(const double *row, int64_t h,
                                       double eps) {
  double mean = 0.0;
  for (int64_t i = 0; i < h; ++i)
    mean += row[i];
  mean /= static_cast<double>(h);
  double var = 0.0;
  for (int64_t i = 0; i < h; ++i)
    var += (row[i] - mean) * (row[i] - mean);
  var /= static_cast<double>(h);
  return {mean, 1.0 / std::sqrt(var + eps)};
}

} // namespace

Status piper::ref::rmsnorm(const Tensor &x, const Tensor &w, double eps,
                           Tensor &out) {
  PIPER_REF_TRY(checkRmsNorm("rmsnorm", x, w, eps));
  int64_t h = w.shape[0], rows = x.numel() / h;
  Tensor y = Tensor::zeros(x.shape);
  for (int64_t r = 0; r < rows; ++r) {
    const double *xr = x.data.data() + r * h;
    double s = rmsScale(xr, h, eps);
    for (int64_t i = 0; i < h; ++i)
      y.data[r * h + i] = xr[i] * s * w.data[i];
  }
  out = std::move(y);
  return Status::success();
}

Status piper::ref::rmsnormBackwardInput(const Tensor &x, const Tensor &w,
                                        double eps, const Tensor &dy,
                                        Tensor &dx) {
  PIPER_REF_TRY(checkRmsNorm("rmsnorm BI", x, w, eps));
  PIPER_REF_TRY(checkCotangent("rmsnorm BI", "dy", dy, x.shape));
  int64_t h = w.shape[0], rows = x.numel() / h;
  Tensor g = Tensor::zeros(x.shape);
  for (int64_t r = 0; r < rows; ++r) {
    const double *xr = x.data.data() + r * h;
    const double *dyr = dy.data.data() + r * h;
    double s = rmsScale(xr, h, eps);
    // d s / d x_j = -s^3 x_j / H, hence the correction term.
    double dot = 0.0;
    for (int64_t i = 0; i < h; ++i)
      dot += dyr[i] * w.data[i] * xr[i];
    double meanDot = dot / static_cast<double>(h);
    for (int64_t i = 0; i < h; ++i)
      g.data[r * h + i] = s * (dyr[i] * w.data[i] - xr[i] * s * s * meanDot);
  }
  dx = std::move(g);
  return Status::success();
}

Status piper::ref::rmsnormBackwardWeight(const Tensor &x, const Tensor &w,
                                         double eps, const Tensor &dy,
                                         Tensor &dw) {
  PIPER_REF_TRY(checkRmsNorm("rmsnorm BW", x, w, eps));
  PIPER_REF_TRY(checkCotangent("rmsnorm BW", "dy", dy, x.shape));
  int64_t h = w.shape[0], rows = x.numel() / h;
  Tensor g = Tensor::zeros(w.shape);
  for (int64_t r = 0; r < rows; ++r) {
    const double *xr = x.data.data() + r * h;
    double s = rmsScale(xr, h, eps);
    for (int64_t i = 0; i < h; ++i)
      g.data[i] += dy.data[r * h + i] * xr[i] * s;
  }
  dw = std::move(g);
  return Status::success();
}

Status piper::ref::layernorm(const Tensor &x, const Tensor &w, const Tensor &b,
                             double eps, Tensor &out) {
  PIPER_REF_TRY(checkNorm("layernorm", x, eps, {{"w", &w}, {"b", &b}}));
  int64_t h = x.shape.back(), rows = leadingNumel(x.shape);
  Tensor y = Tensor::zeros(x.shape);
  for (int64_t r = 0; r < rows; ++r) {
    const double *xr = x.data.data() + r * h;
    auto [mean, s] = meanAndScale(xr, h, eps);
    for (int64_t i = 0; i < h; ++i)
      y.data[r * h + i] = (xr[i] - mean) * s * w.data[i] + b.data[i];
  }
  out = std::move(y);
  return Status::success();
}

Status piper::ref::layernormBackwardInput(const Tensor &x, const Tensor &w,
                                          const Tensor &b, double eps,
                                          const Tensor &dy, Tensor &dx) {
  PIPER_REF_TRY(checkNorm("layernorm BI", x, eps, {{"w", &w}, {"b", &b}}));
  PIPER_REF_TRY(checkCotangent("layernorm BI", "dy", dy, x.shape));
  int64_t h = x.shape.back(), rows = leadingNumel(x.shape);
  double invH = 1.0 / static_cast<double>(h);
  Tensor g = Tensor::zeros(x.shape);
  for (int64_t r = 0; r < rows; ++r) {
    const double *xr = x.data.data() + r * h;
    const double *dyr = dy.data.data() + r * h;
    auto [mean, s] = meanAndScale(xr, h, eps);
    double meanG = 0.0, meanGXhat = 0.0;
    for (int64_t i = 0; i < h; ++i) {
      double gi = dyr[i] * w.data[i];
      meanG += gi;
      meanGXhat += gi * (xr[i] - mean) * s;
    }
    meanG *= invH;
    meanGXhat *= invH;
    for (int64_t i = 0; i < h; ++i) {
      double xhat = (xr[i] - mean) * s;
      g.data[r * h + i] = s * (dyr[i] * w.data[i] - meanG - xhat * meanGXhat);
    }
  }
  dx = std::move(g);
  return Status::success();
}

Status piper::ref::layernormBackwardWeight(const Tensor &x, const Tensor &w,
                                           const Tensor &b, double eps,
                                           const Tensor &dy, Tensor &dw,
                                           Tensor &db) {
  PIPER_REF_TRY(checkNorm("layernorm BW", x, eps, {{"w", &w}, {"b", &b}}));
  PIPER_REF_TRY(checkCotangent("layernorm BW", "dy", dy, x.shape));
  int64_t h = x.shape.back(), rows = leadingNumel(x.shape);
  Tensor gw = Tensor::zeros(w.shape), gb = Tensor::zeros(b.shape);
  for (int64_t r = 0; r < rows; ++r) {
    const double *xr = x.data.data() + r * h;
    auto [mean, s] = meanAndScale(xr, h, eps);
    for (int64_t i = 0; i < h; ++i) {
      double d = dy.data[r * h + i];
      gw.data[i] += d * (xr[i] - mean) * s;
      gb.data[i] += d;
    }
  }
  dw = std::move(gw);
  db = std::move(gb);
  return Status::success();
}
