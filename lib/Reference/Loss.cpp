//===- Loss.cpp - Cross-entropy reference kernel --------------------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The loss is a mean over the N rows of the (micro)batch it sees. Splitting a
// batch into microbatches therefore needs a 1/num_microbatches scale on each
// microbatch loss to reproduce the serial gradient; that scaling belongs to
// the schedule, not to this kernel.
//
//===----------------------------------------------------------------------===//

#include "piper/Reference/Kernels.h"

#include "Detail.h"

using namespace piper::ref;
using namespace piper::ref::detail;

static Status checkCrossEntropy(const std::string &op, const Tensor &logits,
                                const IndexTensor &labels) {
  PIPER_REF_TRY(checkRank(op, "logits", logits, 2));
  PIPER_REF_TRY(checkRank(op, "labels", labels, 1));
  int64_t n = logits.shape[0], v = logits.shape[1];
  if (labels.shape[0] != n)
    return fail(op, "labels has shape ", str(labels.shape),
                " but logits has shape ", str(logits.shape), "; it must be [",
                n, "]");
  if (n == 0)
    return fail(op, "the batch is empty, so the mean is undefined");
  for (int64_t i = 0; i < n; ++i)
    if (labels.data[i] < 0 || labels.data[i] >= v)
      return fail(op, "label ", labels.data[i], " at position ", i,
                  " is out of range for ", v, " classes");
  return Status::success();
}

Status piper::ref::crossEntropy(const Tensor &logits, const IndexTensor &labels,
                                Tensor &loss) {
  PIPER_REF_TRY(checkCrossEntropy("cross_entropy", logits, labels));
  int64_t n = logits.shape[0], v = logits.shape[1];
  double sum = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    const double *row = logits.data.data() + i * v;
    sum += logSumExp(row, v) - row[labels.data[i]];
  }
  loss = Tensor::filled({}, sum / static_cast<double>(n));
  return Status::success();
}

Status piper::ref::crossEntropyBackward(const Tensor &logits,
                                        const IndexTensor &labels,
                                        const Tensor &dLoss, Tensor &dLogits) {
  const char *op = "cross_entropy VJP";
  PIPER_REF_TRY(checkCrossEntropy(op, logits, labels));
  PIPER_REF_TRY(checkTensor(op, "dLoss", dLoss));
  if (dLoss.numel() != 1)
    return fail(op, "dLoss must hold one value but has shape ",
                str(dLoss.shape));
  int64_t n = logits.shape[0], v = logits.shape[1];
  double scale = dLoss.data[0] / static_cast<double>(n);
  Tensor g = Tensor::zeros(logits.shape);
  for (int64_t i = 0; i < n; ++i) {
    double *gr = g.data.data() + i * v;
    softmaxRow(logits.data.data() + i * v, gr, v);
    gr[labels.data[i]] -= 1.0;
    for (int64_t j = 0; j < v; ++j)
      gr[j] *= scale;
  }
  dLogits = std::move(g);
  return Status::success();
}
