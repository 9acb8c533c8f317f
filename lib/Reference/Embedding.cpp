//===- Embedding.cpp - Embedding lookup reference kernel ------------------===//
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

/// Validates table [V, H] and every id, and computes the output shape
/// ids.shape + [H].
static Status checkEmbedding(const std::string &op, const Tensor &table,
                             const IndexTensor &ids, Shape &outShape) {
  PIPER_REF_TRY(checkRank(op, "table", table, 2));
  PIPER_REF_TRY(checkTensor(op, "ids", ids));
  int64_t rows = table.shape[0];
  for (size_t p = 0; p < ids.data.size(); ++p)
    if (ids.data[p] < 0 || ids.data[p] >= rows)
      return fail(op, "id ", ids.data[p], " at position ", p,
                  " is out of range for a table of ", rows, " rows");
  outShape = ids.shape;
  outShape.push_back(table.shape[1]);
  return Status::success();
}

Status piper::ref::embedding(const Tensor &table, const IndexTensor &ids,
                             Tensor &out) {
  Shape outShape;
  PIPER_REF_TRY(checkEmbedding("embedding", table, ids, outShape));
  int64_t h = table.shape[1];
  Tensor y = Tensor::zeros(outShape);
  for (size_t p = 0; p < ids.data.size(); ++p)
    for (int64_t c = 0; c < h; ++c)
      y.data[p * h + c] = table.data[ids.data[p] * h + c];
  out = std::move(y);
  return Status::success();
}

Status piper::ref::embeddingBackwardWeight(const Tensor &table,
                                           const IndexTensor &ids,
                                           const Tensor &dy, Tensor &dTable) {
  Shape outShape;
  PIPER_REF_TRY(checkEmbedding("embedding BW", table, ids, outShape));
  PIPER_REF_TRY(checkCotangent("embedding BW", "dy", dy, outShape));
  int64_t h = table.shape[1];
  Tensor g = Tensor::zeros(table.shape);
  // Scatter-add in position order, so repeated ids sum deterministically.
  for (size_t p = 0; p < ids.data.size(); ++p)
    for (int64_t c = 0; c < h; ++c)
      g.data[ids.data[p] * h + c] += dy.data[p * h + c];
  dTable = std::move(g);
  return Status::success();
}
