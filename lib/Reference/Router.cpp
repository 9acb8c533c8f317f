//===- Router.cpp - MoE top-k router reference kernel ---------------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Qwen3-style routing: softmax over all experts, top-k, then renormalise the
// k selected probabilities. The VJP goes through the renormalisation and the
// full softmax; the selection is treated as constant (it is piecewise
// constant in x and w, so that is its derivative almost everywhere).
//
//===----------------------------------------------------------------------===//

#include "piper/Reference/Kernels.h"

#include "Detail.h"

#include <algorithm>
#include <numeric>

using namespace piper::ref;
using namespace piper::ref::detail;

namespace {

/// What forward and backward both need: the full probabilities and the
/// selection.
struct Routing {
  int64_t tokens = 0, experts = 0, k = 0;
  std::vector<double> probs;     // [T, E]
  std::vector<int64_t> chosen;   // [T, k], descending probability
  std::vector<double> chosenSum; // [T], sum of the selected probabilities
};

Status checkRouter(const std::string &op, const Tensor &x, const Tensor &w,
                   int64_t k) {
  PIPER_REF_TRY(checkRank(op, "x", x, 2));
  PIPER_REF_TRY(checkRank(op, "w", w, 2));
  if (x.shape[1] != w.shape[0])
    return fail(op, "x has shape ", str(x.shape), " but w has shape ",
                str(w.shape), "; dim 1 of x must equal dim 0 of w");
  if (k < 1 || k > w.shape[1])
    return fail(op, "k = ", k, " must be in [1, ", w.shape[1],
                "] (the number of experts)");
  return Status::success();
}

/// Computes the routing of validated operands.
Routing route(const Tensor &x, const Tensor &w, int64_t k) {
  Routing r;
  r.tokens = x.shape[0];
  r.experts = w.shape[1];
  r.k = k;
  int64_t h = x.shape[1], e = r.experts;
  r.probs.assign(static_cast<size_t>(r.tokens * e), 0.0);
  gemm(x.data.data(), w.data.data(), r.probs.data(), r.tokens, h, e, false,
       false, false);
  r.chosen.resize(static_cast<size_t>(r.tokens * k));
  r.chosenSum.assign(static_cast<size_t>(r.tokens), 0.0);
  std::vector<int64_t> order(static_cast<size_t>(e));
  for (int64_t t = 0; t < r.tokens; ++t) {
    double *p = r.probs.data() + t * e;
    softmaxRow(p, p, e);
    std::iota(order.begin(), order.end(), 0);
    // Descending probability; equal probabilities keep the lower expert
    // first, so the selection is a function of the values alone.
    std::partial_sort(order.begin(), order.begin() + k, order.end(),
                      [p](int64_t a, int64_t b) {
                        return p[a] > p[b] || (p[a] == p[b] && a < b);
                      });
    for (int64_t j = 0; j < k; ++j) {
      r.chosen[t * k + j] = order[j];
      r.chosenSum[t] += p[order[j]];
    }
  }
  return r;
}

/// The cotangent of the router logits x w, [T, E], for dWeights [T, k].
///
/// With S = sum of the selected p and weights_j = p_{c_j} / S:
///   dp_{c_j} = (dWeights_j - sum_l dWeights_l weights_l) / S,
///   dp = 0 for unselected experts, and the softmax VJP
///   dz = p (dp - sum(p dp)).
std::vector<double> logitsCotangent(const Routing &r, const Tensor &dWeights) {
  int64_t e = r.experts, k = r.k;
  std::vector<double> dz(static_cast<size_t>(r.tokens * e), 0.0);
  std::vector<double> dp(static_cast<size_t>(e));
  for (int64_t t = 0; t < r.tokens; ++t) {
    const double *p = r.probs.data() + t * e;
    const double *dw = dWeights.data.data() + t * k;
    double s = r.chosenSum[t];
    double dot = 0.0;
    for (int64_t j = 0; j < k; ++j)
      dot += dw[j] * p[r.chosen[t * k + j]] / s;
    std::fill(dp.begin(), dp.end(), 0.0);
    for (int64_t j = 0; j < k; ++j)
      dp[r.chosen[t * k + j]] = (dw[j] - dot) / s;
    double pdp = 0.0;
    for (int64_t i = 0; i < e; ++i)
      pdp += p[i] * dp[i];
    for (int64_t i = 0; i < e; ++i)
      dz[t * e + i] = p[i] * (dp[i] - pdp);
  }
  return dz;
}

} // namespace

Status piper::ref::router(const Tensor &x, const Tensor &w, int64_t k,
                          Tensor &weights, IndexTensor &indices) {
  PIPER_REF_TRY(checkRouter("router", x, w, k));
  Routing r = route(x, w, k);
  Tensor wt = Tensor::zeros({r.tokens, k});
  for (int64_t t = 0; t < r.tokens; ++t)
    for (int64_t j = 0; j < k; ++j)
      wt.data[t * k + j] =
          r.probs[t * r.experts + r.chosen[t * k + j]] / r.chosenSum[t];
  weights = std::move(wt);
  indices = IndexTensor::of({r.tokens, k}, std::move(r.chosen));
  return Status::success();
}

Status piper::ref::routerBackwardInput(const Tensor &x, const Tensor &w,
                                       int64_t k, const Tensor &dWeights,
                                       Tensor &dx) {
  PIPER_REF_TRY(checkRouter("router BI", x, w, k));
  PIPER_REF_TRY(
      checkCotangent("router BI", "dWeights", dWeights, {x.shape[0], k}));
  Routing r = route(x, w, k);
  std::vector<double> dz = logitsCotangent(r, dWeights);
  Tensor g = Tensor::zeros(x.shape);
  gemm(dz.data(), w.data.data(), g.data.data(), r.tokens, r.experts, x.shape[1],
       false, true, false);
  dx = std::move(g);
  return Status::success();
}

Status piper::ref::routerBackwardWeight(const Tensor &x, const Tensor &w,
                                        int64_t k, const Tensor &dWeights,
                                        Tensor &dw) {
  PIPER_REF_TRY(checkRouter("router BW", x, w, k));
  PIPER_REF_TRY(
      checkCotangent("router BW", "dWeights", dWeights, {x.shape[0], k}));
  Routing r = route(x, w, k);
  std::vector<double> dz = logitsCotangent(r, dWeights);
  Tensor g = Tensor::zeros(w.shape);
  gemm(x.data.data(), dz.data(), g.data.data(), x.shape[1], r.tokens, r.experts,
       true, false, false);
  dw = std::move(g);
  return Status::success();
}
