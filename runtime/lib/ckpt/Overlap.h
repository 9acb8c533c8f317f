//===- Overlap.h - Where two regions of a tensor meet -----------*- C++ -*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Two regions' elements as runs of the row-major order, both increasing, so
// one merge finds every overlap: what a resumed rank reads of a saved piece
// (Read.cpp) and what one rank sends another when the layout changes in
// memory (Redistribute.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_RT_LIB_CKPT_OVERLAP_H
#define PIPER_RT_LIB_CKPT_OVERLAP_H

#include "piper-rt/checkpoint.h"

#include <algorithm>

namespace piper::ckpt {

/// Runs with the local (stored) offset of their first element.
struct Run {
  int64_t global, length, local;
};

inline std::vector<Run> localRuns(const Region &r,
                                  const std::vector<int64_t> &shape) {
  std::vector<Run> out;
  int64_t local = 0;
  for (auto [start, length] : r.runs(shape)) {
    out.push_back({start, length, local});
    local += length;
  }
  return out;
}

/// One overlap: `length` elements at `src` of the piece and `dst` of the
/// destination (local element offsets).
struct Copy {
  int64_t src, dst, length;
};

/// The overlaps of two sorted run lists, merged where both sides continue.
inline std::vector<Copy> overlaps(const std::vector<Run> &piece,
                                  const std::vector<Run> &dest) {
  std::vector<Copy> out;
  size_t i = 0, j = 0;
  while (i < piece.size() && j < dest.size()) {
    const Run &a = piece[i], &b = dest[j];
    int64_t lo = std::max(a.global, b.global);
    int64_t hi = std::min(a.global + a.length, b.global + b.length);
    if (lo < hi) {
      Copy c{a.local + (lo - a.global), b.local + (lo - b.global), hi - lo};
      if (!out.empty() && out.back().src + out.back().length == c.src &&
          out.back().dst + out.back().length == c.dst)
        out.back().length += c.length;
      else
        out.push_back(c);
    }
    if (a.global + a.length <= b.global + b.length)
      ++i;
    else
      ++j;
  }
  return out;
}

} // namespace piper::ckpt

#endif // PIPER_RT_LIB_CKPT_OVERLAP_H
