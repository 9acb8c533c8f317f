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

#include <vector>

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

/// The permutation packed by the lowering: 4 bits per dim, dim 0 lowest.
std::vector<int64_t> unpackPermutation(int64_t packed, int64_t rank) {
  std::vector<int64_t> perm(rank);
  for (int64_t i = 0; i < rank; ++i)
    perm[i] = (packed >> (4 * i)) & 0xf;
  return perm;
}

//===----------------------------------------------------------------------===//
// Forward
//===----------------------------------------------------------------------===//

template <typename T> void reshapeK(MemRef x, MemRef o) {
  ref::Tensor r;
  Io<T>::out("reshape", ref::reshape(Io<T>::in(x), o.shape(), r), r, o);
}
template <typename T> void transposeK(MemRef x, MemRef o, int64_t perm) {
  ref::Tensor r;
  Io<T>::out("transpose",
             ref::transpose(Io<T>::in(x), unpackPermutation(perm, x.rank), r),
             r, o);
}
template <typename T>
void routerK(MemRef x, MemRef w, MemRef weights, MemRef indices, int64_t k) {
  ref::Tensor wts;
  ref::IndexTensor idx;
  ref::Status status = ref::router(Io<T>::in(x), Io<T>::in(w), k, wts, idx);
  Io<T>::out("router", status, wts, weights);
  if (status.ok())
    writeIndex("router", idx, indices);
}
template <typename T>
void dispatchK(MemRef x, MemRef indices, MemRef o, int64_t capacity) {
  ref::Tensor r;
  Io<T>::out("dispatch",
             ref::dispatch(Io<T>::in(x), Io<T>::idx(indices), o.sizes()[0],
                           capacity, r),
             r, o);
}
template <typename T>
void expertFfnK(MemRef buf, MemRef wg, MemRef wu, MemRef wd, MemRef o) {
  ref::Tensor r;
  Io<T>::out("expert_ffn",
             ref::expertFfn(Io<T>::in(buf), Io<T>::in(wg), Io<T>::in(wu),
                            Io<T>::in(wd), r),
             r, o);
}
template <typename T>
void combineK(MemRef y, MemRef weights, MemRef indices, MemRef o) {
  ref::Tensor r;
  Io<T>::out("combine",
             ref::combine(Io<T>::in(y), Io<T>::in(weights), Io<T>::idx(indices),
                          y.sizes()[1], r),
             r, o);
}

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

template <typename T>
}
template <typename T> void vjpReshapeK(MemRef x, MemRef dy, MemRef o) {
  ref::Tensor g, DY = Io<T>::in(dy);
  Io<T>::out("vjp reshape", ref::reshapeBackward(Io<T>::in(x), DY.shape, DY, g),
             g, o);
}
template <typename T>
void vjpTransposeK(MemRef x, MemRef dy, MemRef o, int64_t perm) {
  ref::Tensor g;
  Io<T>::out("vjp transpose",
             ref::transposeBackward(Io<T>::in(x),
                                    unpackPermutation(perm, x.rank),
                                    Io<T>::in(dy), g),
             g, o);
}
template <typename T>
void vjpRouterK(int wrt, MemRef x, MemRef w, MemRef dy, MemRef o, int64_t k) {
  ref::Tensor g, X = Io<T>::in(x), W = Io<T>::in(w), DY = Io<T>::in(dy);
  ref::Status s = wrt == 0 ? ref::routerBackwardInput(X, W, k, DY, g)
                           : ref::routerBackwardWeight(X, W, k, DY, g);
  Io<T>::out("vjp router", s, g, o);
}
template <typename T>
void vjpDispatchK(MemRef x, MemRef indices, MemRef dy, MemRef o,
                  int64_t capacity) {
  ref::Tensor g;
  Io<T>::out("vjp dispatch",
             ref::dispatchBackward(Io<T>::in(x), Io<T>::idx(indices),
                                   dy.sizes()[0], capacity, Io<T>::in(dy), g),
             g, o);
}
template <typename T>
void vjpExpertFfnK(int wrt, MemRef buf, MemRef wg, MemRef wu, MemRef wd,
                   MemRef dy, MemRef o) {
  ref::Tensor B = Io<T>::in(buf), G = Io<T>::in(wg), U = Io<T>::in(wu),
              D = Io<T>::in(wd), DY = Io<T>::in(dy);
  ref::Tensor g, dG, dU, dD;
  ref::Status s =
      wrt == 0 ? ref::expertFfnBackwardInput(B, G, U, D, DY, g)
               : ref::expertFfnBackwardWeight(B, G, U, D, DY, dG, dU, dD);
  Io<T>::out("vjp expert_ffn", s,
             wrt == 0   ? g
             : wrt == 1 ? dG
             : wrt == 2 ? dU
                        : dD,
             o);
}
template <typename T>
void vjpCombineK(int wrt, MemRef y, MemRef weights, MemRef indices, MemRef dy,
                 MemRef o) {
  ref::Tensor dY, dW;
  ref::Status s = ref::combineBackward(Io<T>::in(y), Io<T>::in(weights),
                                       Io<T>::idx(indices), y.sizes()[1],
                                       Io<T>::in(dy), dY, dW);
  Io<T>::out("vjp combine", s, wrt == 0 ? dY : dW, o);
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

// Forward.
#undef B
#define B(T) reshapeK<T>(M(x), M(o))
PIPER_KERNEL(reshape, (MR(x), MR(o)), B)
#undef B
#define B(T) transposeK<T>(M(x), M(o), perm)
PIPER_KERNEL(transpose, (MR(x), MR(o), int64_t perm), B)
#undef B
#define B(T) routerK<T>(M(x), M(w), M(o), M(i), k)
PIPER_KERNEL(router, (MR(x), MR(w), MR(o), MR(i), int64_t k), B)
#undef B
#define B(T) dispatchK<T>(M(x), M(i), M(o), capacity)
PIPER_KERNEL(dispatch, (MR(x), MR(i), MR(o), int64_t capacity), B)
#undef B
#define B(T) expertFfnK<T>(M(b), M(g), M(u), M(d), M(o))
PIPER_KERNEL(expert_ffn, (MR(b), MR(g), MR(u), MR(d), MR(o)), B)
#undef B
#define B(T) combineK<T>(M(y), M(w), M(i), M(o))
PIPER_KERNEL(combine, (MR(y), MR(w), MR(i), MR(o)), B)
#undef B

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

#define B(T) vjpReshapeK<T>(M(x), M(dy), M(o))
PIPER_KERNEL(vjp_reshape_0, (MR(x), MR(dy), MR(o)), B)
#undef B
#define B(T) vjpTransposeK<T>(M(x), M(dy), M(o), perm)
PIPER_KERNEL(vjp_transpose_0, (MR(x), MR(dy), MR(o), int64_t perm), B)
#undef B
#define VJP_ROUTER_B0(T) vjpRouterK<T>(0, M(x), M(w), M(dy), M(o), k)
#define VJP_ROUTER_B1(T) vjpRouterK<T>(1, M(x), M(w), M(dy), M(o), k)
PIPER_KERNEL(vjp_router_0, (MR(x), MR(w), MR(dy), MR(o), int64_t k),
             VJP_ROUTER_B0)
PIPER_KERNEL(vjp_router_1, (MR(x), MR(w), MR(dy), MR(o), int64_t k),
             VJP_ROUTER_B1)
#define B(T) vjpDispatchK<T>(M(x), M(i), M(dy), M(o), capacity)
PIPER_KERNEL(vjp_dispatch_0, (MR(x), MR(i), MR(dy), MR(o), int64_t capacity), B)
#undef B
#define VJP_FFN(W)                                                             \
  void piper_k_vjp_expert_ffn_##W##_f32(MR(b), MR(g), MR(u), MR(d), MR(dy),    \
                                        MR(o)) {                               \
    vjpExpertFfnK<float>(W, M(b), M(g), M(u), M(d), M(dy), M(o));              \
  }                                                                            \
  void piper_k_vjp_expert_ffn_##W##_f64(MR(b), MR(g), MR(u), MR(d), MR(dy),    \
                                        MR(o)) {                               \
    vjpExpertFfnK<double>(W, M(b), M(g), M(u), M(d), M(dy), M(o));             \
  }
VJP_FFN(0)
VJP_FFN(1)
VJP_FFN(2)
VJP_FFN(3)
#define VJP_COMBINE_B0(T) vjpCombineK<T>(0, M(y), M(w), M(i), M(dy), M(o))
#define VJP_COMBINE_B1(T) vjpCombineK<T>(1, M(y), M(w), M(i), M(dy), M(o))
PIPER_KERNEL(vjp_combine_0, (MR(y), MR(w), MR(i), MR(dy), MR(o)),
             VJP_COMBINE_B0)
PIPER_KERNEL(vjp_combine_1, (MR(y), MR(w), MR(i), MR(dy), MR(o)),
             VJP_COMBINE_B1)

} // extern "C"
