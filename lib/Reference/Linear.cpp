//===- Linear.cpp - Linear and matmul reference kernels -------------------===//
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

/// The problem sizes of a (batched) matmul.
struct MatmulDims {
  int64_t batch = 1, m = 0, k = 0, n = 0;
  /// b has rank 2 and is used by every batch element.
  bool sharedB = false;
  Shape outShape;
};

Status checkMatmul(const std::string &op, const Tensor &a, const Tensor &b,
                   MatmulDims &dims) {
  PIPER_REF_TRY(checkMinRank(op, "a", a, 2));
  PIPER_REF_TRY(checkMinRank(op, "b", b, 2));
  int64_t ra = a.rank(), rb = b.rank();
  if (rb != 2 && rb != ra)
    return fail(op, "b must have rank 2 (shared across the batch) or the rank ",
                ra, " of a, but has shape ", str(b.shape));
  Shape batchA(a.shape.begin(), a.shape.end() - 2);
  if (rb != 2) {
    Shape batchB(b.shape.begin(), b.shape.end() - 2);
    if (batchA != batchB)
      return fail(op, "batch dims of a ", str(a.shape), " and b ", str(b.shape),
                  " differ");
  }
  if (a.shape[ra - 1] != b.shape[rb - 2])
    return fail(op, "a has shape ", str(a.shape), " and b has shape ",
                str(b.shape), "; the contraction dims ", a.shape[ra - 1],
                " and ", b.shape[rb - 2], " differ");
  dims.batch = numelOf(batchA);
  dims.m = a.shape[ra - 2];
  dims.k = a.shape[ra - 1];
  dims.n = b.shape[rb - 1];
  dims.sharedB = rb == 2 && ra != 2;
  dims.outShape = batchA;
  dims.outShape.push_back(dims.m);
  dims.outShape.push_back(dims.n);
  return Status::success();
}

/// The sizes of linear: `rows` rows of `in` features to `out` features.
struct LinearDims {
  int64_t rows = 0, in = 0, out = 0;
  Shape outShape;
};

Status checkLinear(const std::string &op, const Tensor &x, const Tensor &w,
                   LinearDims &dims) {
  PIPER_REF_TRY(checkMinRank(op, "x", x, 1));
  PIPER_REF_TRY(checkRank(op, "w", w, 2));
  if (x.shape.back() != w.shape[0])
    return fail(op, "x has shape ", str(x.shape), " but w has shape ",
                str(w.shape), "; the last dim of x must equal dim 0 of w");
  dims.rows = leadingNumel(x.shape);
  dims.in = w.shape[0];
  dims.out = w.shape[1];
  dims.outShape = x.shape;
  dims.outShape.back() = dims.out;
  return Status::success();
}

} // namespace

Status piper::ref::matmul(const Tensor &a, const Tensor &b, Tensor &out) {
  MatmulDims d;
  PIPER_REF_TRY(checkMatmul("matmul", a, b, d));
  Tensor y = Tensor::zeros(d.outShape);
  int64_t strideB = d.sharedB ? 0 : d.k * d.n;
  for (int64_t i = 0; i < d.batch; ++i)
    gemm(a.data.data() + i * d.m * d.k, b.data.data() + i * strideB,
         y.data.data() + i * d.m * d.n, d.m, d.k, d.n, false, false, false);
  out = std::move(y);
  return Status::success();
}

Status piper::ref::matmulBackward(const Tensor &a, const Tensor &b,
                                  const Tensor &dy, Tensor &dA, Tensor &dB) {
  MatmulDims d;
  PIPER_REF_TRY(checkMatmul("matmul VJP", a, b, d));
  PIPER_REF_TRY(checkCotangent("matmul VJP", "dy", dy, d.outShape));
  Tensor ga = Tensor::zeros(a.shape), gb = Tensor::zeros(b.shape);
  int64_t strideB = d.sharedB ? 0 : d.k * d.n;
  for (int64_t i = 0; i < d.batch; ++i) {
    const double *ai = a.data.data() + i * d.m * d.k;
    const double *bi = b.data.data() + i * strideB;
    const double *dyi = dy.data.data() + i * d.m * d.n;
    // dA_i = dy_i b_i^T; dB_i = a_i^T dy_i, accumulated over the batch when b
    // is shared (the gradient of a broadcast is the sum).
    gemm(dyi, bi, ga.data.data() + i * d.m * d.k, d.m, d.n, d.k, false, true,
         false);
    gemm(ai, dyi, gb.data.data() + i * strideB, d.k, d.m, d.n, true, false,
         d.sharedB);
  }
  dA = std::move(ga);
  dB = std::move(gb);
  return Status::success();
}

Status piper::ref::linear(const Tensor &x, const Tensor &w, const Tensor *bias,
                          Tensor &out) {
  LinearDims d;
  PIPER_REF_TRY(checkLinear("linear", x, w, d));
  if (bias) {
    PIPER_REF_TRY(checkRank("linear", "bias", *bias, 1));
    if (bias->shape[0] != d.out)
      return fail("linear", "bias has shape ", str(bias->shape), " but w has ",
                  d.out, " output columns");
  }
  Tensor y = Tensor::zeros(d.outShape);
  gemm(x.data.data(), w.data.data(), y.data.data(), d.rows, d.in, d.out, false,
       false, false);
  if (bias)
    for (int64_t r = 0; r < d.rows; ++r)
      for (int64_t j = 0; j < d.out; ++j)
        y.data[r * d.out + j] += bias->data[j];
  out = std::move(y);
  return Status::success();
}

Status piper::ref::linearBackwardInput(const Tensor &x, const Tensor &w,
                                       const Tensor &dy, Tensor &dx) {
  LinearDims d;
  PIPER_REF_TRY(checkLinear("linear BI", x, w, d));
  PIPER_REF_TRY(checkCotangent("linear BI", "dy", dy, d.outShape));
  Tensor g = Tensor::zeros(x.shape);
  gemm(dy.data.data(), w.data.data(), g.data.data(), d.rows, d.out, d.in, false,
       true, false);
  dx = std::move(g);
  return Status::success();
}

Status piper::ref::linearBackwardWeight(const Tensor &x, const Tensor &w,
                                        const Tensor &dy, Tensor &dw,
                                        Tensor *dBias) {
  LinearDims d;
  PIPER_REF_TRY(checkLinear("linear BW", x, w, d));
  PIPER_REF_TRY(checkCotangent("linear BW", "dy", dy, d.outShape));
  Tensor gw = Tensor::zeros(w.shape);
  gemm(x.data.data(), dy.data.data(), gw.data.data(), d.in, d.rows, d.out, true,
       false, false);
  if (dBias) {
    Tensor gb = Tensor::zeros({d.out});
    for (int64_t r = 0; r < d.rows; ++r)
      for (int64_t j = 0; j < d.out; ++j)
        gb.data[j] += dy.data[r * d.out + j];
    *dBias = std::move(gb);
  }
  dw = std::move(gw);
  return Status::success();
}
