//===- Init.h - Deterministic, shardable parameter init ---------*- C++ -*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Parameter initialisation must not depend on the parallelisation strategy:
// a device that holds only a shard of a parameter (ZeRO-3, tensor or expert
// parallel) has to produce exactly the values the serial program would put
// at those positions. So every value is a pure function of
// (seed, parameter name, global row-major element index) and nothing else:
// no generator state is carried from one element, parameter or device to the
// next.
//
// The algorithm, exactly (all arithmetic on uint64_t wraps modulo 2^64):
//
//   splitmix64(x):  z = x + 0x9e3779b97f4a7c15
//                   z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
//                   z = (z ^ (z >> 27)) * 0x94d049bb133111eb
//                   return z ^ (z >> 31)
//   fnv1a64(name):  h = 0xcbf29ce484222325; for each byte c of name (as
//                   unsigned char): h = (h ^ c) * 0x100000001b3
//   key           = splitmix64(seed ^ fnv1a64(name))
//   element i:      r1 = splitmix64(key + 2 i), r2 = splitmix64(key + 2 i + 1)
//                   u1 = ((r1 >> 11) + 1) * 2^-53      in (0, 1]
//                   u2 = (r2 >> 11) * 2^-53            in [0, 1)
//                   z  = sqrt(-2 ln u1) * cos((2 pi) u2) (Box-Muller,
//                        cosine branch only; pi is the double
//                        3.141592653589793, so 2 pi is exact)
//                   value = std * z
//
// u1 excludes 0 so the logarithm is finite; dropping the sine branch wastes
// half of the randomness but keeps one element a function of one index.
// sqrt is exactly rounded but log and cos come from the C library: shards are
// bit-identical to the serial values when every device evaluates this header
// with the same libm and without -ffast-math (e.g. on the host CPU, not in a
// GPU kernel with its own math library).
//
// Header-only and dependent only on Tensor.h, so the runtime can use it
// without linking the reference kernels.
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_REFERENCE_INIT_H
#define PIPER_REFERENCE_INIT_H

#include "piper/Reference/Tensor.h"

#include <cmath>
#include <cstdint>
#include <sstream>
#include <string>
#include <string_view>

namespace piper::ref {

/// The splitmix64 finaliser applied to x + 0x9e3779b97f4a7c15: the value the
/// classic splitmix64 generator returns from state x.
constexpr uint64_t splitmix64(uint64_t x) {
  uint64_t z = x + 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

/// 64-bit FNV-1a hash of the bytes of `s`.
constexpr uint64_t fnv1a64(std::string_view s) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (char c : s)
    h = (h ^ static_cast<unsigned char>(c)) * 0x100000001b3ULL;
  return h;
}

/// The per-parameter key: splitmix64(seed ^ fnv1a64(name)).
constexpr uint64_t initKey(uint64_t seed, std::string_view name) {
  return splitmix64(seed ^ fnv1a64(name));
}

/// The standard normal sample of element `index` under `key` (see the file
/// comment for the exact algorithm).
inline double standardNormalAt(uint64_t key, uint64_t index) {
  const double twoPow53Inv = 1.0 / 9007199254740992.0; // 2^-53
  const double pi = 3.141592653589793;
  uint64_t r1 = splitmix64(key + 2 * index);
  uint64_t r2 = splitmix64(key + 2 * index + 1);
  double u1 = static_cast<double>((r1 >> 11) + 1) * twoPow53Inv;
  double u2 = static_cast<double>(r2 >> 11) * twoPow53Inv;
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * pi * u2);
}

/// Writes the normal(0, stddev) values of the global elements [begin, end)
/// of parameter `name` to out[0 .. end - begin). This is how a device
/// initialises its shard: the result equals the same slice of initNormal.
/// Requires 0 <= begin <= end, out non-null when the range is not empty, and
/// stddev finite and >= 0.
inline Status initNormalRange(uint64_t seed, std::string_view name,
                              double stddev, int64_t begin, int64_t end,
                              double *out) {
  if (begin < 0 || end < begin)
    return Status::error("init_normal: element range [" +
                         std::to_string(begin) + ", " + std::to_string(end) +
                         ") of '" + std::string(name) + "' is invalid");
  if (!(stddev >= 0.0) || !std::isfinite(stddev)) {
    std::ostringstream os;
    os << "init_normal: std of '" << name
       << "' must be finite and non-negative, got " << stddev;
    return Status::error(os.str());
  }
  if (end > begin && !out)
    return Status::error("init_normal: output buffer for '" +
                         std::string(name) + "' is null");
  uint64_t key = initKey(seed, name);
  for (int64_t i = begin; i < end; ++i)
    out[i - begin] = stddev * standardNormalAt(key, static_cast<uint64_t>(i));
  return Status::success();
}

/// out = a tensor of `shape` whose row-major element i is
/// stddev * standardNormalAt(initKey(seed, name), i).
inline Status initNormal(uint64_t seed, std::string_view name,
                         const Shape &shape, double stddev, Tensor &out) {
  int64_t n = numelOf(shape);
  if (n < 0)
    return Status::error("init_normal: shape " + shapeToString(shape) +
                         " of '" + std::string(name) + "' is invalid");
  Tensor t = Tensor::zeros(shape);
  if (Status s = initNormalRange(seed, name, stddev, 0, n, t.data.data());
      !s.ok())
    return s;
  out = std::move(t);
  return Status::success();
}

/// out = a tensor of `shape` filled with `value` (shared by initZeros and
/// initOnes; constants need no seed).
inline Status initConstant(const Shape &shape, double value, Tensor &out) {
  if (numelOf(shape) < 0)
    return Status::error("init_constant: shape " + shapeToString(shape) +
                         " is invalid");
  out = Tensor::filled(shape, value);
  return Status::success();
}
inline Status initZeros(const Shape &shape, Tensor &out) {
  return initConstant(shape, 0.0, out);
}
inline Status initOnes(const Shape &shape, Tensor &out) {
  return initConstant(shape, 1.0, out);
}

} // namespace piper::ref

#endif // PIPER_REFERENCE_INIT_H
