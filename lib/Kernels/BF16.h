//===- BF16.h - bf16 storage for the kernel library -------------*- C++ -*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// bf16 as the kernels store it: the high 16 bits of an f32. Widening is
// exact; narrowing rounds to nearest, ties to even, as arith.truncf (expanded
// by --piper-expand-bf16) and the interpreter's roundF32ToBF16 do, so a
// kernel and a generated loop that hold the same f32 store the same bf16.
// Internal to the kernel library.
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_LIB_KERNELS_BF16_H
#define PIPER_LIB_KERNELS_BF16_H

#include <cstdint>
#include <cstring>

namespace piper::kernels {

/// One bf16 value (MLIR's bf16 memref element: 2 bytes).
struct BF16 {
  uint16_t bits;
};

/// The f32 that `v` denotes (exact).
inline float toFloat(BF16 v) {
  uint32_t bits = uint32_t(v.bits) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

/// `f` rounded to bf16, to nearest with ties to even; a NaN stays a (quiet)
/// NaN.
inline BF16 toBF16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  if ((bits & 0x7fffffffu) > 0x7f800000u)
    return BF16{uint16_t((bits | 0x00400000u) >> 16)};
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return BF16{uint16_t(bits >> 16)};
}

} // namespace piper::kernels

#endif // PIPER_LIB_KERNELS_BF16_H
