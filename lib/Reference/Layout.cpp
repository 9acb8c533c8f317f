//===- Layout.cpp - Transpose and reshape reference kernels ---------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "piper/Reference/Kernels.h"

#include "Detail.h"

using namespace piper::ref;
using namespace piper::ref::detail;

namespace {

Status checkPerm(const std::string &op, const Tensor &x,
                 const std::vector<int64_t> &perm) {
  PIPER_REF_TRY(checkTensor(op, "x", x));
  int64_t rank = x.rank();
  std::vector<bool> seen(static_cast<size_t>(rank), false);
  bool valid = static_cast<int64_t>(perm.size()) == rank;
  for (size_t i = 0; valid && i < perm.size(); ++i) {
    valid = perm[i] >= 0 && perm[i] < rank && !seen[perm[i]];
    if (valid)
      seen[perm[i]] = true;
  }
  if (!valid)
    return fail(op, "perm ", str(perm), " is not a permutation of the ", rank,
                " dims of x ", str(x.shape));
  return Status::success();
}

/// out = x with dims permuted by `perm` (already validated).
Tensor permute(const Tensor &x, const std::vector<int64_t> &perm) {
  Shape outShape(perm.size());
  for (size_t i = 0; i < perm.size(); ++i)
    outShape[i] = x.shape[perm[i]];
  Tensor y = Tensor::zeros(outShape);
  Shape inStrides = stridesOf(x.shape);
  // Walk the output in row-major order with an odometer, so each step only
  // adjusts the source offset instead of re-deriving it.
  Shape idx(perm.size(), 0);
  int64_t src = 0;
  for (size_t flat = 0; flat < y.data.size(); ++flat) {
    y.data[flat] = x.data[src];
    for (size_t d = perm.size(); d-- > 0;) {
      ++idx[d];
      src += inStrides[perm[d]];
      if (idx[d] < outShape[d])
        break;
      src -= idx[d] * inStrides[perm[d]];
      idx[d] = 0;
    }
  }
  return y;
}

Status checkReshape(const std::string &op, const Tensor &x,
                    const Shape &shape) {
  PIPER_REF_TRY(checkTensor(op, "x", x));
  int64_t n = numelOf(shape);
  if (n != x.numel())
    return fail(op, "cannot reshape x ", str(x.shape), " (", x.numel(),
                " elements) to ", str(shape),
                n < 0 ? " (an invalid shape)"
                      : " (" + std::to_string(n) + " elements)");
  return Status::success();
}

} // namespace

Status piper::ref::transpose(const Tensor &x, const std::vector<int64_t> &perm,
                             Tensor &out) {
  PIPER_REF_TRY(checkPerm("transpose", x, perm));
  out = permute(x, perm);
  return Status::success();
}

Status piper::ref::transposeBackward(const Tensor &x,
                                     const std::vector<int64_t> &perm,
                                     const Tensor &dy, Tensor &dx) {
  PIPER_REF_TRY(checkPerm("transpose VJP", x, perm));
  Shape outShape(perm.size());
  std::vector<int64_t> inverse(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) {
    outShape[i] = x.shape[perm[i]];
    inverse[perm[i]] = static_cast<int64_t>(i);
  }
  PIPER_REF_TRY(checkCotangent("transpose VJP", "dy", dy, outShape));
  dx = permute(dy, inverse);
  return Status::success();
}

Status piper::ref::reshape(const Tensor &x, const Shape &shape, Tensor &out) {
  PIPER_REF_TRY(checkReshape("reshape", x, shape));
  out = Tensor::of(shape, x.data);
  return Status::success();
}

Status piper::ref::reshapeBackward(const Tensor &x, const Shape &shape,
                                   const Tensor &dy, Tensor &dx) {
  PIPER_REF_TRY(checkReshape("reshape VJP", x, shape));
  PIPER_REF_TRY(checkCotangent("reshape VJP", "dy", dy, shape));
  dx = Tensor::of(x.shape, dy.data);
  return Status::success();
}
