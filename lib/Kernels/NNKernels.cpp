//===- NNKernels.cpp - Forward and VJP kernels of the NN ops --------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// piper_k_<op>_<t> and piper_k_vjp_<op>_<wrt>_<t> (see Kernels.h for the
// ABI). Each kernel copies its operands into f64 reference tensors, runs the
// reference function the interpreter runs for the same op (and, for VJPs,
// the same `wrt`, dispatched exactly as Interpreter.cpp does) and rounds the
// result once into the caller's buffer. The copies cost O(size) per call,
// negligible next to the kernels themselves at the sizes plans run today;
// ops that are hot at scale (GEMMs, elementwise) do not come here, nor do
// the VJPs of linear and 2-D matmul, which are BLAS calls (BlasVjp.cpp).
//
//===----------------------------------------------------------------------===//

#include "Blas.h"
#include "MemRef.h"

#include "piper/Reference/Kernels.h"

using namespace piper;
using namespace piper::kernels;

namespace {

/// Accessors for kernels whose float tensors have element type T.
template <typename T> struct Io {
  static ref::Tensor in(MemRef m) { return readFloat<T>(m); }
  static ref::IndexTensor idx(MemRef m) { return readIndex(m); }
  /// Runs `status`; on success writes `t` to `out`, else zeroes `out`.
  static void out(const char *op, const ref::Status &status,
                  const ref::Tensor &t, MemRef m) {
    if (report(op, status))
      writeFloat<T>(op, t, m);
    else
      writeFloat<T>(op, ref::Tensor::zeros(m.shape()), m);
  }
};

//===----------------------------------------------------------------------===//
// VJPs (the interpreter's dispatch on op and wrt)
//===----------------------------------------------------------------------===//

template <typename T>
void vjpMatmulK(int wrt, MemRef a, MemRef b, MemRef dy, MemRef o) {
  if (blasVjpMatmul<T>(wrt, a, b, dy, o))
    return;
  // Shapes the reference reports as an error (batched matmuls lower to
  // linalg: BatchedMatmulToLinalg.cpp).
  ref::Tensor dA, dB;
  ref::Status s =
      ref::matmulBackward(Io<T>::in(a), Io<T>::in(b), Io<T>::in(dy), dA, dB);
  Io<T>::out("vjp matmul", s, wrt == 0 ? dA : dB, o);
}
template <typename T>
void vjpLinearK(int wrt, MemRef x, MemRef w, MemRef dy, MemRef o) {
  if (blasVjpLinear<T>(wrt, x, w, dy, o))
    return;
  // Shapes the reference reports as an error.
  ref::Tensor g, unused;
  ref::Tensor X = Io<T>::in(x), W = Io<T>::in(w), DY = Io<T>::in(dy);
  ref::Status s = wrt == 0   ? ref::linearBackwardInput(X, W, DY, g)
                  : wrt == 1 ? ref::linearBackwardWeight(X, W, DY, g, nullptr)
                             : ref::linearBackwardWeight(X, W, DY, unused, &g);
  Io<T>::out("vjp linear", s, g, o);
}

} // namespace

//===----------------------------------------------------------------------===//
// C entry points
//===----------------------------------------------------------------------===//

// An unranked memref parameter (rank, descriptor) and its MemRef.
#define MR(n) int64_t n##R, void *n##D
#define M(n)                                                                   \
  MemRef { n##R, n##D }

// Defines piper_k_<NAME>_f32 and _f64 with parameters PARAMS calling
// BODY(T) with T the float element type.
#define PIPER_KERNEL(NAME, PARAMS, BODY)                                       \
  void piper_k_##NAME##_f32 PARAMS { BODY(float); }                            \
  void piper_k_##NAME##_f64 PARAMS { BODY(double); }

extern "C" {

// VJPs: piper_k_vjp_<op>_<wrt>.
#define VJP_MATMUL(W)                                                          \
  PIPER_KERNEL(vjp_matmul_##W, (MR(a), MR(b), MR(dy), MR(o)), VJP_MATMUL_B##W)
#define VJP_MATMUL_B0(T) vjpMatmulK<T>(0, M(a), M(b), M(dy), M(o))
#define VJP_MATMUL_B1(T) vjpMatmulK<T>(1, M(a), M(b), M(dy), M(o))
VJP_MATMUL(0)
VJP_MATMUL(1)
#define VJP_LINEAR_B0(T) vjpLinearK<T>(0, M(x), M(w), M(dy), M(o))
#define VJP_LINEAR_B1(T) vjpLinearK<T>(1, M(x), M(w), M(dy), M(o))
#define VJP_LINEAR_B2(T) vjpLinearK<T>(2, M(x), M(w), M(dy), M(o))
PIPER_KERNEL(vjp_linear_0, (MR(x), MR(w), MR(dy), MR(o)), VJP_LINEAR_B0)
PIPER_KERNEL(vjp_linear_1, (MR(x), MR(w), MR(dy), MR(o)), VJP_LINEAR_B1)
PIPER_KERNEL(vjp_linear_2, (MR(x), MR(w), MR(dy), MR(o)), VJP_LINEAR_B2)

} // extern "C"
