//===- Softmax.cpp - Softmax reference kernel -----------------------------===//
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

Status piper::ref::softmax(const Tensor &x, Tensor &out) {
  PIPER_REF_TRY(checkMinRank("softmax", "x", x, 1));
  int64_t n = x.shape.back(), rows = leadingNumel(x.shape);
  Tensor y = Tensor::zeros(x.shape);
  if (n > 0)
    for (int64_t r = 0; r < rows; ++r)
      softmaxRow(x.data.data() + r * n, y.data.data() + r * n, n);
  out = std::move(y);
  return Status::success();
}

Status piper::ref::softmaxBackward(const Tensor &x, const Tensor &dy,
                                   Tensor &dx) {
  PIPER_REF_TRY(checkMinRank("softmax VJP", "x", x, 1));
  PIPER_REF_TRY(checkCotangent("softmax VJP", "dy", dy, x.shape));
  int64_t n = x.shape.back(), rows = leadingNumel(x.shape);
  Tensor g = Tensor::zeros(x.shape);
  std::vector<double> y(static_cast<size_t>(n));
  for (int64_t r = 0; r < rows && n > 0; ++r) {
    softmaxRow(x.data.data() + r * n, y.data(), n);
    const double *dyr = dy.data.data() + r * n;
    double dot = 0.0;
    for (int64_t i = 0; i < n; ++i)
      dot += dyr[i] * y[i];
    for (int64_t i = 0; i < n; ++i)
      g.data[r * n + i] = y[i] * (dyr[i] - dot);
  }
  dx = std::move(g);
  return Status::success();
}
