//===- BlasVjpBF16.cpp - Linear and matmul VJPs on bf16 tensors -----------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// piper_k_vjp_{matmul_0,matmul_1,linear_0,linear_1,linear_2}_bf16: the VJPs
// of 2-D matmul and linear on bf16 operands (bf16-mixed plans). Each bf16
// operand is widened (exactly) into a dense f32 copy, the f32 kernel of
// BlasVjp.cpp runs on the copies (sgemm: f32 products and sums; the bias
// gradient sums in f64 and rounds to f32), and the f32 result is rounded to
// bf16 once into the caller's buffer. That is the forward GEMM's rule
// (Gemm.cpp: f32 accumulation, one rounding to bf16) and the interpreter's
// (exact, then f32, then bf16), up to the order of the f32 sums.
//
//===----------------------------------------------------------------------===//

#include "BF16.h"
#include "Blas.h"
#include "MemRef.h"

#include "piper/Reference/Kernels.h"

#include <vector>

using namespace piper;
using namespace piper::kernels;

namespace {

/// A dense row-major f32 tensor with its own memref descriptor.
struct F32Tensor {
  std::vector<float> data;
  std::vector<int64_t> desc;
  int64_t rank;

  explicit F32Tensor(const MemRef &like) : rank(like.rank) {
    data.resize(like.numel());
    desc.resize((piper_memref_descriptor_size(rank) + 7) / 8);
    piper_memref_describe(desc.data(), data.data(), rank, like.sizes());
  }
  MemRef ref() { return MemRef(rank, desc.data()); }
};

/// Whether `m` is dense row-major (the common case: one flat loop, which
/// the compiler vectorises, instead of a strided walk per element).
bool dense(const MemRef &m) {
  int64_t expect = 1;
  for (int64_t d = m.rank - 1; d >= 0; --d) {
    if (m.sizes()[d] != 1 && m.strides()[d] != expect)
      return false;
    expect *= m.sizes()[d];
  }
  return true;
}

/// `m` (bf16, any strides) widened into a dense f32 tensor.
F32Tensor widen(MemRef m) {
  F32Tensor t(m);
  const BF16 *base = static_cast<const BF16 *>(m.aligned());
  int64_t n = m.numel();
  if (dense(m)) {
    base += m.offset();
    for (int64_t i = 0; i < n; ++i)
      t.data[i] = toFloat(base[i]);
    return t;
  }
  for (int64_t i = 0; i < n; ++i)
    t.data[i] = toFloat(base[m.elementOffset(i)]);
  return t;
}

/// Rounds the f32 tensor `t` into the bf16 memref `o` (same shape).
void narrow(const F32Tensor &t, MemRef o) {
  BF16 *base = static_cast<BF16 *>(o.aligned());
  int64_t n = o.numel();
  if (dense(o)) {
    base += o.offset();
    for (int64_t i = 0; i < n; ++i)
      base[i] = toBF16(t.data[i]);
    return;
  }
  for (int64_t i = 0; i < n; ++i)
    base[o.elementOffset(i)] = toBF16(t.data[i]);
}

/// Zeroes the bf16 memref `o` (a failed kernel's result).
void zero(MemRef o) {
  BF16 *base = static_cast<BF16 *>(o.aligned());
  for (int64_t i = 0, n = o.numel(); i < n; ++i)
    base[o.elementOffset(i)] = BF16{0};
}

void vjpMatmul(int wrt, MemRef a, MemRef b, MemRef dy, MemRef o) {
  F32Tensor A = widen(a), B = widen(b), DY = widen(dy), O(o);
  if (blasVjpMatmul<float>(wrt, A.ref(), B.ref(), DY.ref(), O.ref()))
    return narrow(O, o);
  // Shapes the reference reports as an error.
  ref::Tensor dA, dB;
  report("vjp matmul", ref::matmulBackward(readFloat<float>(A.ref()),
                                           readFloat<float>(B.ref()),
                                           readFloat<float>(DY.ref()), dA, dB));
  zero(o);
}

void vjpLinear(int wrt, MemRef x, MemRef w, MemRef dy, MemRef o) {
  F32Tensor X = widen(x), W = widen(w), DY = widen(dy), O(o);
  if (blasVjpLinear<float>(wrt, X.ref(), W.ref(), DY.ref(), O.ref()))
    return narrow(O, o);
  ref::Tensor g, unused;
  ref::Tensor XT = readFloat<float>(X.ref()), WT = readFloat<float>(W.ref()),
              DYT = readFloat<float>(DY.ref());
  report("vjp linear",
         wrt == 0   ? ref::linearBackwardInput(XT, WT, DYT, g)
         : wrt == 1 ? ref::linearBackwardWeight(XT, WT, DYT, g, nullptr)
                    : ref::linearBackwardWeight(XT, WT, DYT, unused, &g));
  zero(o);
}

} // namespace

#define MR(n) int64_t n##R, void *n##D
#define M(n)                                                                   \
  MemRef { n##R, n##D }

extern "C" {

void piper_k_vjp_matmul_0_bf16(MR(a), MR(b), MR(dy), MR(o)) {
  vjpMatmul(0, M(a), M(b), M(dy), M(o));
}
void piper_k_vjp_matmul_1_bf16(MR(a), MR(b), MR(dy), MR(o)) {
  vjpMatmul(1, M(a), M(b), M(dy), M(o));
}
void piper_k_vjp_linear_0_bf16(MR(x), MR(w), MR(dy), MR(o)) {
  vjpLinear(0, M(x), M(w), M(dy), M(o));
}
void piper_k_vjp_linear_1_bf16(MR(x), MR(w), MR(dy), MR(o)) {
  vjpLinear(1, M(x), M(w), M(dy), M(o));
}
void piper_k_vjp_linear_2_bf16(MR(x), MR(w), MR(dy), MR(o)) {
  vjpLinear(2, M(x), M(w), M(dy), M(o));
}

} // extern "C"
