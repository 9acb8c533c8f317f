//===- Blas.h - GEMM-shaped VJPs on BLAS ------------------------*- C++ -*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The VJPs of piper.linear and 2-D piper.matmul as OpenBLAS sgemm/dgemm on
// the memrefs' own data and element type. Internal to the kernel library.
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_LIB_KERNELS_BLAS_H
#define PIPER_LIB_KERNELS_BLAS_H

#include "MemRef.h"

namespace piper::kernels {

/// piper.vjp of piper.linear (x [.., K], w [K, N], dy [.., N]) w.r.t. `wrt`:
///   0: o = dy w^T          (o has x's shape)
///   1: o = x^T dy          (leading dims of x and dy collapsed; o [K, N])
///   2: o = column sums of dy (o [N]; summed in f64, rounded once)
/// with T the float element type. Returns false, writing nothing, when the
/// shapes do not fit (the caller then runs the reference, which reports the
/// error) or a size exceeds BLAS's 32-bit integers.
template <typename T>
bool blasVjpLinear(int wrt, MemRef x, MemRef w, MemRef dy, MemRef o);

/// piper.vjp of a 2-D piper.matmul (a [M, K], b [K, N], dy [M, N]):
///   0: o = dy b^T [M, K];  1: o = a^T dy [K, N].
/// Returns false, writing nothing, for other ranks or mismatched shapes.
template <typename T>
bool blasVjpMatmul(int wrt, MemRef a, MemRef b, MemRef dy, MemRef o);

} // namespace piper::kernels

#endif // PIPER_LIB_KERNELS_BLAS_H
