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
// Forward
//===----------------------------------------------------------------------===//

template <typename T> void matmulK(MemRef a, MemRef b, MemRef o) {
  ref::Tensor r;
  Io<T>::out("matmul", ref::matmul(Io<T>::in(a), Io<T>::in(b), r), r, o);
}
template <typename T> void linearK(MemRef x, MemRef w, MemRef o) {
  ref::Tensor r;
  Io<T>::out("linear", ref::linear(Io<T>::in(x), Io<T>::in(w), nullptr, r), r,
             o);
}
template <typename T> void linearBiasK(MemRef x, MemRef w, MemRef b, MemRef o) {
  ref::Tensor r, bias = Io<T>::in(b);
  Io<T>::out("linear", ref::linear(Io<T>::in(x), Io<T>::in(w), &bias, r), r, o);
}

using Unary = ref::Status (*)(const ref::Tensor &, ref::Tensor &);
template <typename T, Unary F> void unaryK(const char *op, MemRef x, MemRef o) {
  ref::Tensor r;
  Io<T>::out(op, F(Io<T>::in(x), r), r, o);
}

template <typename T> void rmsnormK(MemRef x, MemRef w, MemRef o, double eps) {
  ref::Tensor r;
  Io<T>::out("rmsnorm", ref::rmsnorm(Io<T>::in(x), Io<T>::in(w), eps, r), r, o);
}
template <typename T>
void layernormK(MemRef x, MemRef w, MemRef b, MemRef o, double eps) {
  ref::Tensor r;
  Io<T>::out("layernorm",
             ref::layernorm(Io<T>::in(x), Io<T>::in(w), Io<T>::in(b), eps, r),
             r, o);
}
template <typename T>
void attentionK(MemRef q, MemRef k, MemRef v, MemRef o, int64_t heads) {
  ref::Tensor r;
  Io<T>::out("attention",
             ref::attention(Io<T>::in(q), Io<T>::in(k), Io<T>::in(v), heads, r),
             r, o);
}
template <typename T> void embeddingK(MemRef table, MemRef ids, MemRef o) {
  ref::Tensor r;
  Io<T>::out("embedding", ref::embedding(Io<T>::in(table), Io<T>::idx(ids), r),
             r, o);
}
template <typename T>
void crossEntropyK(MemRef logits, MemRef labels, MemRef o) {
  ref::Tensor r;
  Io<T>::out("cross_entropy",
             ref::crossEntropy(Io<T>::in(logits), Io<T>::idx(labels), r), r, o);
}
//===----------------------------------------------------------------------===//
// VJPs (the interpreter's dispatch on op and wrt)
//===----------------------------------------------------------------------===//

template <typename T>
void vjpMatmulK(int wrt, MemRef a, MemRef b, MemRef dy, MemRef o) {
  if (blasVjpMatmul<T>(wrt, a, b, dy, o))
    return;
  // Batched matmul, or shapes the reference reports as an error.
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

using UnaryBwd = ref::Status (*)(const ref::Tensor &, const ref::Tensor &,
                                 ref::Tensor &);
template <typename T, UnaryBwd F>
void vjpUnaryK(const char *op, MemRef x, MemRef dy, MemRef o) {
  ref::Tensor g;
  Io<T>::out(op, F(Io<T>::in(x), Io<T>::in(dy), g), g, o);
}
template <typename T>
void vjpRmsnormK(int wrt, MemRef x, MemRef w, MemRef dy, MemRef o, double eps) {
  ref::Tensor g, X = Io<T>::in(x), W = Io<T>::in(w), DY = Io<T>::in(dy);
  ref::Status s = wrt == 0 ? ref::rmsnormBackwardInput(X, W, eps, DY, g)
                           : ref::rmsnormBackwardWeight(X, W, eps, DY, g);
  Io<T>::out("vjp rmsnorm", s, g, o);
}
template <typename T>
void vjpLayernormK(int wrt, MemRef x, MemRef w, MemRef b, MemRef dy, MemRef o,
                   double eps) {
  ref::Tensor X = Io<T>::in(x), W = Io<T>::in(w), B = Io<T>::in(b),
              DY = Io<T>::in(dy);
  ref::Tensor g, dw, db;
  ref::Status s = wrt == 0
                      ? ref::layernormBackwardInput(X, W, B, eps, DY, g)
                      : ref::layernormBackwardWeight(X, W, B, eps, DY, dw, db);
  Io<T>::out("vjp layernorm", s, wrt == 0 ? g : wrt == 1 ? dw : db, o);
}
template <typename T>
void vjpAttentionK(int wrt, MemRef q, MemRef k, MemRef v, MemRef dy, MemRef o,
                   int64_t heads) {
  ref::Tensor dq, dk, dv;
  ref::Status s =
      ref::attentionBackward(Io<T>::in(q), Io<T>::in(k), Io<T>::in(v), heads,
                             Io<T>::in(dy), dq, dk, dv);
  Io<T>::out("vjp attention", s, wrt == 0 ? dq : wrt == 1 ? dk : dv, o);
}
template <typename T>
void vjpEmbeddingK(MemRef table, MemRef ids, MemRef dy, MemRef o) {
  ref::Tensor g;
  Io<T>::out("vjp embedding",
             ref::embeddingBackwardWeight(Io<T>::in(table), Io<T>::idx(ids),
                                          Io<T>::in(dy), g),
             g, o);
}
template <typename T>
void vjpCrossEntropyK(MemRef logits, MemRef labels, MemRef dy, MemRef o) {
  ref::Tensor g;
  Io<T>::out("vjp cross_entropy",
             ref::crossEntropyBackward(Io<T>::in(logits), Io<T>::idx(labels),
                                       Io<T>::in(dy), g),
             g, o);
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
#define B(T) matmulK<T>(M(a), M(b), M(o))
PIPER_KERNEL(matmul, (MR(a), MR(b), MR(o)), B)
#undef B
#define B(T) linearK<T>(M(x), M(w), M(o))
PIPER_KERNEL(linear, (MR(x), MR(w), MR(o)), B)
#undef B
#define B(T) linearBiasK<T>(M(x), M(w), M(b), M(o))
PIPER_KERNEL(linear_bias, (MR(x), MR(w), MR(b), MR(o)), B)
#undef B
#define UNARY(NAME, FN) PIPER_KERNEL(NAME, (MR(x), MR(o)), UNARY_BODY_##NAME)
#define UNARY_BODY_softmax(T) unaryK<T, ref::softmax>("softmax", M(x), M(o))
UNARY(softmax, ref::softmax)
#define B(T) rmsnormK<T>(M(x), M(w), M(o), eps)
PIPER_KERNEL(rmsnorm, (MR(x), MR(w), MR(o), double eps), B)
#undef B
#define B(T) layernormK<T>(M(x), M(w), M(b), M(o), eps)
PIPER_KERNEL(layernorm, (MR(x), MR(w), MR(b), MR(o), double eps), B)
#undef B
#define B(T) attentionK<T>(M(q), M(k), M(v), M(o), heads)
PIPER_KERNEL(attention, (MR(q), MR(k), MR(v), MR(o), int64_t heads), B)
#undef B
#define B(T) embeddingK<T>(M(t), M(i), M(o))
PIPER_KERNEL(embedding, (MR(t), MR(i), MR(o)), B)
#undef B
#define B(T) crossEntropyK<T>(M(l), M(i), M(o))
PIPER_KERNEL(cross_entropy, (MR(l), MR(i), MR(o)), B)
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

#define VJP_UNARY(NAME, FN)                                                    \
  void piper_k_vjp_##NAME##_0_f32(MR(x), MR(dy), MR(o)) {                      \
    vjpUnaryK<float, FN>("vjp " #NAME, M(x), M(dy), M(o));                     \
  }                                                                            \
  void piper_k_vjp_##NAME##_0_f64(MR(x), MR(dy), MR(o)) {                      \
    vjpUnaryK<double, FN>("vjp " #NAME, M(x), M(dy), M(o));                    \
  }
VJP_UNARY(softmax, ref::softmaxBackward)

#define VJP_RMS_B0(T) vjpRmsnormK<T>(0, M(x), M(w), M(dy), M(o), eps)
#define VJP_RMS_B1(T) vjpRmsnormK<T>(1, M(x), M(w), M(dy), M(o), eps)
PIPER_KERNEL(vjp_rmsnorm_0, (MR(x), MR(w), MR(dy), MR(o), double eps),
             VJP_RMS_B0)
PIPER_KERNEL(vjp_rmsnorm_1, (MR(x), MR(w), MR(dy), MR(o), double eps),
             VJP_RMS_B1)
#define VJP_LN_B0(T) vjpLayernormK<T>(0, M(x), M(w), M(b), M(dy), M(o), eps)
#define VJP_LN_B1(T) vjpLayernormK<T>(1, M(x), M(w), M(b), M(dy), M(o), eps)
#define VJP_LN_B2(T) vjpLayernormK<T>(2, M(x), M(w), M(b), M(dy), M(o), eps)
PIPER_KERNEL(vjp_layernorm_0, (MR(x), MR(w), MR(b), MR(dy), MR(o), double eps),
             VJP_LN_B0)
PIPER_KERNEL(vjp_layernorm_1, (MR(x), MR(w), MR(b), MR(dy), MR(o), double eps),
             VJP_LN_B1)
PIPER_KERNEL(vjp_layernorm_2, (MR(x), MR(w), MR(b), MR(dy), MR(o), double eps),
             VJP_LN_B2)
#define VJP_ATT_B0(T) vjpAttentionK<T>(0, M(q), M(k), M(v), M(dy), M(o), heads)
#define VJP_ATT_B1(T) vjpAttentionK<T>(1, M(q), M(k), M(v), M(dy), M(o), heads)
#define VJP_ATT_B2(T) vjpAttentionK<T>(2, M(q), M(k), M(v), M(dy), M(o), heads)
PIPER_KERNEL(vjp_attention_0,
             (MR(q), MR(k), MR(v), MR(dy), MR(o), int64_t heads), VJP_ATT_B0)
PIPER_KERNEL(vjp_attention_1,
             (MR(q), MR(k), MR(v), MR(dy), MR(o), int64_t heads), VJP_ATT_B1)
PIPER_KERNEL(vjp_attention_2,
             (MR(q), MR(k), MR(v), MR(dy), MR(o), int64_t heads), VJP_ATT_B2)
#define B(T) vjpEmbeddingK<T>(M(t), M(i), M(dy), M(o))
PIPER_KERNEL(vjp_embedding_0, (MR(t), MR(i), MR(dy), MR(o)), B)
#undef B
#define B(T) vjpCrossEntropyK<T>(M(l), M(i), M(dy), M(o))
PIPER_KERNEL(vjp_cross_entropy_0, (MR(l), MR(i), MR(dy), MR(o)), B)
#undef B

} // extern "C"
