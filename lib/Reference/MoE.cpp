//===- MoE.cpp - MoE slot assignment, dispatch and combine ----------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// dispatch and combine must agree on which (token, choice) pair sits in which
// expert slot and which pairs are dropped; both go through assignSlots, the
// only place that rule is written down. An expert-parallel strategy reproduces
// the serial result only if its all-to-all layout follows the same rule.
//
//===----------------------------------------------------------------------===//

#include "piper/Reference/Kernels.h"

#include "Detail.h"

using namespace piper::ref;
using namespace piper::ref::detail;

namespace {

/// Validates indices [T, k] (values in [0, numExperts)) and capacity, and
/// fills slots[t k + j] with the pair's slot or -1 if it is dropped.
Status assignSlots(const std::string &op, const IndexTensor &indices,
                   int64_t numExperts, int64_t capacity,
                   std::vector<int64_t> &slots) {
  PIPER_REF_TRY(checkRank(op, "indices", indices, 2));
  if (numExperts < 1)
    return fail(op, "num_experts must be >= 1, got ", numExperts);
  if (capacity < 0)
    return fail(op, "capacity must be >= 0, got ", capacity);
  int64_t tokens = indices.shape[0], k = indices.shape[1];
  std::vector<int64_t> filled(static_cast<size_t>(numExperts), 0);
  std::vector<int64_t> result(indices.data.size(), -1);
  // Pairs in order t ascending, then j ascending: earlier pairs win slots.
  for (int64_t t = 0; t < tokens; ++t) {
    for (int64_t j = 0; j < k; ++j) {
      int64_t e = indices.data[t * k + j];
      if (e < 0 || e >= numExperts)
        return fail(op, "expert index ", e, " at (token ", t, ", choice ", j,
                    ") is out of range for ", numExperts, " experts");
      int64_t s = filled[e]++;
      if (s < capacity)
        result[t * k + j] = s;
    }
  }
  slots = std::move(result);
  return Status::success();
}

/// Validates x [T, H] against indices [T, k].
Status checkTokens(const std::string &op, const char *name, const Tensor &x,
                   const IndexTensor &indices) {
  PIPER_REF_TRY(checkRank(op, name, x, 2));
  if (x.shape[0] != indices.shape[0])
    return fail(op, name, " has shape ", str(x.shape),
                " but indices has shape ", str(indices.shape),
                "; both need the same number of tokens");
  return Status::success();
}

/// Validates combine's operands and assigns the slots.
Status checkCombine(const std::string &op, const Tensor &y,
                    const Tensor &weights, const IndexTensor &indices,
                    int64_t capacity, std::vector<int64_t> &slots) {
  PIPER_REF_TRY(checkRank(op, "y", y, 3));
  PIPER_REF_TRY(assignSlots(op, indices, y.shape[0], capacity, slots));
  if (y.shape[1] != capacity)
    return fail(op, "y has shape ", str(y.shape), " but capacity is ", capacity,
                "; dim 1 of y must equal it");
  PIPER_REF_TRY(checkTensor(op, "weights", weights));
  if (weights.shape != indices.shape)
    return fail(op, "weights has shape ", str(weights.shape),
                " but indices has shape ", str(indices.shape));
  return Status::success();
}

} // namespace

Status piper::ref::assignExpertSlots(const IndexTensor &indices,
                                     int64_t numExperts, int64_t capacity,
                                     std::vector<int64_t> &slots) {
  return assignSlots("assign_slots", indices, numExperts, capacity, slots);
}

Status piper::ref::dispatch(const Tensor &x, const IndexTensor &indices,
                            int64_t numExperts, int64_t capacity,
                            Tensor &buffer) {
  std::vector<int64_t> slots;
  PIPER_REF_TRY(assignSlots("dispatch", indices, numExperts, capacity, slots));
  PIPER_REF_TRY(checkTokens("dispatch", "x", x, indices));
  int64_t h = x.shape[1], k = indices.shape[1];
  Tensor buf = Tensor::zeros({numExperts, capacity, h});
  for (size_t pair = 0; pair < slots.size(); ++pair) {
    if (slots[pair] < 0)
      continue;
    int64_t t = static_cast<int64_t>(pair) / k, e = indices.data[pair];
    double *dst = buf.data.data() + (e * capacity + slots[pair]) * h;
    for (int64_t c = 0; c < h; ++c)
      dst[c] = x.data[t * h + c];
  }
  buffer = std::move(buf);
  return Status::success();
}

Status piper::ref::dispatchBackward(const Tensor &x, const IndexTensor &indices,
                                    int64_t numExperts, int64_t capacity,
                                    const Tensor &dOut, Tensor &dx) {
  const char *op = "dispatch VJP";
  std::vector<int64_t> slots;
  PIPER_REF_TRY(assignSlots(op, indices, numExperts, capacity, slots));
  PIPER_REF_TRY(checkTokens(op, "x", x, indices));
  int64_t h = x.shape[1], k = indices.shape[1];
  PIPER_REF_TRY(checkCotangent(op, "dOut", dOut, {numExperts, capacity, h}));
  Tensor g = Tensor::zeros(x.shape);
  for (size_t pair = 0; pair < slots.size(); ++pair) {
    if (slots[pair] < 0)
      continue;
    int64_t t = static_cast<int64_t>(pair) / k, e = indices.data[pair];
    const double *src = dOut.data.data() + (e * capacity + slots[pair]) * h;
    for (int64_t c = 0; c < h; ++c)
      g.data[t * h + c] += src[c];
  }
  dx = std::move(g);
  return Status::success();
}

Status piper::ref::combine(const Tensor &y, const Tensor &weights,
                           const IndexTensor &indices, int64_t capacity,
                           Tensor &out) {
  std::vector<int64_t> slots;
  PIPER_REF_TRY(checkCombine("combine", y, weights, indices, capacity, slots));
  int64_t tokens = indices.shape[0], k = indices.shape[1], h = y.shape[2];
  Tensor o = Tensor::zeros({tokens, h});
  for (size_t pair = 0; pair < slots.size(); ++pair) {
    if (slots[pair] < 0)
      continue;
    int64_t t = static_cast<int64_t>(pair) / k, e = indices.data[pair];
    const double *src = y.data.data() + (e * capacity + slots[pair]) * h;
    for (int64_t c = 0; c < h; ++c)
      o.data[t * h + c] += weights.data[pair] * src[c];
  }
  out = std::move(o);
  return Status::success();
}

Status piper::ref::combineBackward(const Tensor &y, const Tensor &weights,
                                   const IndexTensor &indices, int64_t capacity,
                                   const Tensor &dOut, Tensor &dY,
                                   Tensor &dWeights) {
  const char *op = "combine VJP";
  std::vector<int64_t> slots;
  PIPER_REF_TRY(checkCombine(op, y, weights, indices, capacity, slots));
  int64_t tokens = indices.shape[0], k = indices.shape[1], h = y.shape[2];
  PIPER_REF_TRY(checkCotangent(op, "dOut", dOut, {tokens, h}));
  Tensor gy = Tensor::zeros(y.shape), gw = Tensor::zeros(weights.shape);
  for (size_t pair = 0; pair < slots.size(); ++pair) {
    if (slots[pair] < 0)
      continue;
    int64_t t = static_cast<int64_t>(pair) / k, e = indices.data[pair];
    int64_t off = (e * capacity + slots[pair]) * h;
    double dot = 0.0;
    for (int64_t c = 0; c < h; ++c) {
      gy.data[off + c] += weights.data[pair] * dOut.data[t * h + c];
      dot += y.data[off + c] * dOut.data[t * h + c];
    }
    gw.data[pair] = dot;
  }
  dY = std::move(gy);
  dWeights = std::move(gw);
  return Status::success();
}
