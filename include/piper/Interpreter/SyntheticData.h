//===- SyntheticData.h - Deterministic, shardable training data -*- C++ -*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The synthetic inputs that the interpreter feeds to every non-parameter
// argument of a model, one batch per training step. Like parameter
// initialisation (piper/Reference/Init.h) every value is a pure function of
// (seed, argument index, step, global row-major element index), so a device
// that holds only a slice of a batch (data, sequence or expert parallel)
// produces exactly the values the serial program sees at those positions,
// whatever the strategy.
//
// The formula, exactly (uint64_t arithmetic wraps modulo 2^64; splitmix64,
// initKey and standardNormalAt are those of Init.h):
//
//   name          = "data." followed by the decimal argument index (the
//                   position of the argument in the function signature,
//                   counting parameters too), e.g. "data.4"
//   step s        = the 1-based step number (the first step is 1)
//   key(s)        = splitmix64(initKey(seed, name) + s)
//   float element e:   value = standardNormalAt(key(s), e)   (mean 0, std 1)
//   integer element e with bound B >= 1:
//                      r = splitmix64(key(s) + e)
//                      value = floor(r * B / 2^64), i.e. the high 64 bits
//                              of the 128-bit product r * B, in [0, B)
//
// The integer rule has no rejection loop (its bias is below B / 2^64) and
// uses no floating point, so it is bit-exact on every machine. The float
// rule has Init.h's caveat: log and cos come from the C library.
//
// Header-only and dependent only on Tensor.h and Init.h, so the runtime can
// reproduce the interpreter's data without linking MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_INTERPRETER_SYNTHETICDATA_H
#define PIPER_INTERPRETER_SYNTHETICDATA_H

#include "piper/Reference/Init.h"
#include "piper/Reference/Tensor.h"

#include <cstdint>
#include <string>

namespace piper::ref {

/// The name whose key seeds the data of argument `argIndex`: "data.<index>".
inline std::string dataName(uint64_t argIndex) {
  return "data." + std::to_string(argIndex);
}

/// key(s) of the file comment: the key of argument `argIndex` at 1-based
/// step `step`.
inline uint64_t dataKey(uint64_t seed, uint64_t argIndex, uint64_t step) {
  return splitmix64(initKey(seed, dataName(argIndex)) + step);
}

/// The integer of element `index` under `key`, uniform in [0, bound);
/// bound >= 1.
inline int64_t uniformIndexAt(uint64_t key, uint64_t index, uint64_t bound) {
  uint64_t r = splitmix64(key + index);
  return static_cast<int64_t>(
      static_cast<uint64_t>((static_cast<unsigned __int128>(r) * bound) >> 64));
}

/// Checks an element range [begin, end) and its output buffer.
inline Status checkRange(uint64_t argIndex, int64_t begin, int64_t end,
                         const void *out) {
  if (begin < 0 || end < begin)
    return Status::error("synthetic data: element range [" +
                         std::to_string(begin) + ", " + std::to_string(end) +
                         ") of argument " + std::to_string(argIndex) +
                         " is invalid");
  if (end > begin && !out)
    return Status::error("synthetic data: output buffer is null");
  return Status::success();
}

/// Writes the float data of the global elements [begin, end) of argument
/// `argIndex` at `step` to out[0 .. end - begin).
inline Status syntheticFloatRange(uint64_t seed, uint64_t argIndex,
                                  uint64_t step, int64_t begin, int64_t end,
                                  double *out) {
  if (Status status = checkRange(argIndex, begin, end, out); !status.ok())
    return status;
  uint64_t key = dataKey(seed, argIndex, step);
  for (int64_t i = begin; i < end; ++i)
    out[i - begin] = standardNormalAt(key, static_cast<uint64_t>(i));
  return Status::success();
}

/// Writes the integer data in [0, bound) of the global elements [begin, end)
/// of argument `argIndex` at `step` to out[0 .. end - begin).
inline Status syntheticIndexRange(uint64_t seed, uint64_t argIndex,
                                  uint64_t step, int64_t bound, int64_t begin,
                                  int64_t end, int64_t *out) {
  if (bound < 1)
    return Status::error("synthetic data: the bound of argument " +
                         std::to_string(argIndex) + " must be >= 1, got " +
                         std::to_string(bound));
  if (Status status = checkRange(argIndex, begin, end, out); !status.ok())
    return status;
  uint64_t key = dataKey(seed, argIndex, step);
  for (int64_t i = begin; i < end; ++i)
    out[i - begin] = uniformIndexAt(key, static_cast<uint64_t>(i),
                                    static_cast<uint64_t>(bound));
  return Status::success();
}

/// The whole float batch of argument `argIndex` at `step`.
inline Status syntheticFloat(uint64_t seed, uint64_t argIndex, uint64_t step,
                             const Shape &shape, Tensor &out) {
  int64_t n = numelOf(shape);
  if (n < 0)
    return Status::error("synthetic data: shape " + shapeToString(shape) +
                         " is invalid");
  Tensor t = Tensor::zeros(shape);
  if (Status s = syntheticFloatRange(seed, argIndex, step, 0, n, t.data.data());
      !s.ok())
    return s;
  out = std::move(t);
  return Status::success();
}

/// The whole integer batch of argument `argIndex` at `step`, in [0, bound).
inline Status syntheticIndex(uint64_t seed, uint64_t argIndex, uint64_t step,
                             const Shape &shape, int64_t bound,
                             IndexTensor &out) {
  int64_t n = numelOf(shape);
  if (n < 0)
    return Status::error("synthetic data: shape " + shapeToString(shape) +
                         " is invalid");
  IndexTensor t = IndexTensor::zeros(shape);
  if (Status s =
          syntheticIndexRange(seed, argIndex, step, bound, 0, n, t.data.data());
      !s.ok())
    return s;
  out = std::move(t);
  return Status::success();
}

} // namespace piper::ref

#endif // PIPER_INTERPRETER_SYNTHETICDATA_H
