//===- Rope.cpp - Rotary position embedding reference kernel --------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The angles are computed as PyTorch's rotary tables are (inverse frequency
// 1 / theta^(2c / R) over the R rotated channels, times the position
// s + offset) and the pair is combined as
// `x * cos + rotate_half(x) * sin`, so an f64 module written the usual way
// agrees to the last bits.
//
//===----------------------------------------------------------------------===//

#include "piper/Reference/Kernels.h"

#include "Detail.h"

#include <cmath>

using namespace piper::ref;
using namespace piper::ref::detail;

Status piper::ref::rope(const Tensor &x, int64_t headDim, double theta,
                        bool inverse, Tensor &out, int64_t offset,
                        int64_t rotaryDim) {
  PIPER_REF_TRY(checkRank("rope", "x", x, 3));
  if (headDim < 2 || headDim % 2 != 0 || x.shape[2] % headDim != 0)
    return fail("rope", "head_dim ", headDim,
                " must be even and divide the channels ", x.shape[2]);
  if (!(theta > 0))
    return fail("rope", "theta must be > 0, got ", theta);
  if (offset < 0)
    return fail("rope", "offset must be >= 0, got ", offset);
  int64_t rot = rotaryDim > 0 ? rotaryDim : headDim;
  if (rot % 2 != 0 || rot > headDim)
    return fail("rope", "rotary_dim ", rot, " must be even and <= head_dim ",
                headDim);
  int64_t half = rot / 2, heads = x.shape[2] / headDim;
  double sign = inverse ? -1.0 : 1.0;
  // Channels past the rotary ones pass through.
  Tensor y = x;
  for (int64_t s = 0; s < x.shape[1]; ++s) {
    for (int64_t c = 0; c < half; ++c) {
      // As PyTorch's tables: inv_freq = 1 / theta^(2c / R), angle = p inv.
      double inv = 1.0 / std::pow(theta, static_cast<double>(2 * c) /
                                             static_cast<double>(rot));
      double a = static_cast<double>(s + offset) * inv;
      double cs = std::cos(a), sn = sign * std::sin(a);
      for (int64_t b = 0; b < x.shape[0]; ++b) {
        for (int64_t n = 0; n < heads; ++n) {
          int64_t base = (b * x.shape[1] + s) * x.shape[2] + n * headDim;
          double lo = x.data[base + c], hi = x.data[base + c + half];
          y.data[base + c] = lo * cs - hi * sn;
          y.data[base + c + half] = hi * cs + lo * sn;
        }
      }
    }
  }
  out = std::move(y);
  return Status::success();
}
