//===- Attention.cpp - Causal multi-head attention reference kernel -------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Works one query row at a time: the causal mask is applied by only visiting
// keys j <= i, so masked positions contribute exactly 0 to the output and to
// every gradient (no -inf arithmetic, and an output never depends on a later
// position even through rounding).
//
//===----------------------------------------------------------------------===//

#include "piper/Reference/Kernels.h"

#include "Detail.h"

#include <cmath>

using namespace piper::ref;
using namespace piper::ref::detail;

namespace {

struct AttentionDims {
  int64_t batch = 0, seq = 0, heads = 0, headDim = 0, hidden = 0;
  /// Key/value heads and their channels; a group of heads / kvHeads query
  /// heads shares one.
  int64_t kvHeads = 0, kvHidden = 0;
};

Status checkAttention(const std::string &op, const Tensor &q, const Tensor &k,
                      const Tensor &v, int64_t numHeads, int64_t numKvHeads,
                      AttentionDims &dims) {
  PIPER_REF_TRY(checkRank(op, "q", q, 3));
  if (numKvHeads == 0 || numKvHeads == numHeads) {
    PIPER_REF_TRY(checkSameShape(op, "q", q, "k", k));
    PIPER_REF_TRY(checkSameShape(op, "q", q, "v", v));
    numKvHeads = numHeads;
  }
  if (numHeads < 1)
    return fail(op, "num_heads must be >= 1, got ", numHeads);
  if (numKvHeads < 1 || numHeads % numKvHeads != 0)
    return fail(op, "num_kv_heads ", numKvHeads,
                " must be >= 1 and divide num_heads ", numHeads);
  if (q.shape[2] % numHeads != 0)
    return fail(op, "hidden size ", q.shape[2],
                " is not divisible by num_heads ", numHeads);
  int64_t headDim = q.shape[2] / numHeads;
  // Grouped-query attention: k and v hold numKvHeads heads.
  Shape kvShape = {q.shape[0], q.shape[1], numKvHeads * headDim};
  for (auto [name, t] :
       {std::pair<const char *, const Tensor *>{"k", &k}, {"v", &v}})
    if (t->shape != kvShape)
      return fail(op, name, " has shape ", str(t->shape), " but q has shape ",
                  str(q.shape), "; with ", numKvHeads,
                  " key/value heads it must be ", str(kvShape));
  dims.batch = q.shape[0];
  dims.seq = q.shape[1];
  dims.hidden = q.shape[2];
  dims.heads = numHeads;
  dims.headDim = headDim;
  dims.kvHeads = numKvHeads;
  dims.kvHidden = numKvHeads * headDim;
  return Status::success();
}

/// Offset of (batch b, position s, head h) in a [B, S, D] tensor.
int64_t rowOffset(const AttentionDims &d, int64_t b, int64_t s, int64_t h) {
  return (b * d.seq + s) * d.hidden + h * d.headDim;
}

/// Offset of the key/value row query head h reads at (b, s).
int64_t kvOffset(const AttentionDims &d, int64_t b, int64_t s, int64_t h) {
  return (b * d.seq + s) * d.kvHidden + h / (d.heads / d.kvHeads) * d.headDim;
}

/// p[0 .. i] = softmax_j(q_i . k_j * scale) for j <= i.
void causalProbs(const AttentionDims &d, const Tensor &q, const Tensor &k,
                 int64_t b, int64_t h, int64_t i, double scale,
                 std::vector<double> &p) {
  const double *qi = q.data.data() + rowOffset(d, b, i, h);
  for (int64_t j = 0; j <= i; ++j) {
    const double *kj = k.data.data() + kvOffset(d, b, j, h);
    double dot = 0.0;
    for (int64_t c = 0; c < d.headDim; ++c)
      dot += qi[c] * kj[c];
    p[j] = dot * scale;
  }
  softmaxRow(p.data(), p.data(), i + 1);
}

} // namespace

Status piper::ref::attention(const Tensor &q, const Tensor &k, const Tensor &v,
                             int64_t numHeads, Tensor &out,
                             int64_t numKvHeads) {
  AttentionDims d;
  PIPER_REF_TRY(checkAttention("attention", q, k, v, numHeads, numKvHeads, d));
  double scale = 1.0 / std::sqrt(static_cast<double>(d.headDim));
  Tensor y = Tensor::zeros(q.shape);
  std::vector<double> p(static_cast<size_t>(d.seq));
  for (int64_t b = 0; b < d.batch; ++b) {
    for (int64_t h = 0; h < d.heads; ++h) {
      for (int64_t i = 0; i < d.seq; ++i) {
        causalProbs(d, q, k, b, h, i, scale, p);
        double *yi = y.data.data() + rowOffset(d, b, i, h);
        for (int64_t j = 0; j <= i; ++j) {
          const double *vj = v.data.data() + kvOffset(d, b, j, h);
          for (int64_t c = 0; c < d.headDim; ++c)
            yi[c] += p[j] * vj[c];
        }
      }
    }
  }
  out = std::move(y);
  return Status::success();
}

Status piper::ref::attentionBackward(const Tensor &q, const Tensor &k,
                                     const Tensor &v, int64_t numHeads,
                                     const Tensor &dy, Tensor &dq, Tensor &dk,
                                     Tensor &dv, int64_t numKvHeads) {
  AttentionDims d;
  PIPER_REF_TRY(
      checkAttention("attention VJP", q, k, v, numHeads, numKvHeads, d));
  PIPER_REF_TRY(checkCotangent("attention VJP", "dy", dy, q.shape));
  double scale = 1.0 / std::sqrt(static_cast<double>(d.headDim));
  Tensor gq = Tensor::zeros(q.shape), gk = Tensor::zeros(k.shape),
         gv = Tensor::zeros(v.shape);
  std::vector<double> p(static_cast<size_t>(d.seq));
  std::vector<double> dp(static_cast<size_t>(d.seq));
  for (int64_t b = 0; b < d.batch; ++b) {
    for (int64_t h = 0; h < d.heads; ++h) {
      for (int64_t i = 0; i < d.seq; ++i) {
        causalProbs(d, q, k, b, h, i, scale, p);
        const double *dyi = dy.data.data() + rowOffset(d, b, i, h);
        // out_i = sum_j p_j v_j: dv_j += p_j dy_i and dp_j = dy_i . v_j.
        double dotPdp = 0.0;
        for (int64_t j = 0; j <= i; ++j) {
          const double *vj = v.data.data() + kvOffset(d, b, j, h);
          double *gvj = gv.data.data() + kvOffset(d, b, j, h);
          double dpj = 0.0;
          for (int64_t c = 0; c < d.headDim; ++c) {
            gvj[c] += p[j] * dyi[c];
            dpj += dyi[c] * vj[c];
          }
          dp[j] = dpj;
          dotPdp += p[j] * dpj;
        }
        // Softmax VJP to the scores, then scores_ij = scale q_i . k_j.
        const double *qi = q.data.data() + rowOffset(d, b, i, h);
        double *gqi = gq.data.data() + rowOffset(d, b, i, h);
        for (int64_t j = 0; j <= i; ++j) {
          double ds = p[j] * (dp[j] - dotPdp) * scale;
          const double *kj = k.data.data() + kvOffset(d, b, j, h);
          double *gkj = gk.data.data() + kvOffset(d, b, j, h);
          for (int64_t c = 0; c < d.headDim; ++c) {
            gqi[c] += ds * kj[c];
            gkj[c] += ds * qi[c];
          }
        }
      }
    }
  }
  dq = std::move(gq);
  dk = std::move(gk);
  dv = std::move(gv);
  return Status::success();
}
