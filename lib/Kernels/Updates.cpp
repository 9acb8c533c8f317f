//===- Updates.cpp - Optimizer update kernels -----------------------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// piper_k_sgd_update_<t> and piper_k_adamw_update_<t>: the reference
// optimizer steps (piper/Reference/Optimizers.h) that the interpreter runs
// for piper.sgd_update and piper.adamw_update, with the op's attributes as
// scalars and AdamW's step count from its rank-0 i64 operand.
//
// They run natively: one pass over the memrefs (any strides and offset;
// one flat loop when every memref is contiguous), no allocation. Each
// element is computed as lib/Reference/Optimizers.cpp computes it: the same
// expressions in the same order, in f64 from the stored elements, the
// moments used unrounded within the step, each result rounded once to the
// element type. So f64 plans are bit-identical to the interpreter and f32
// plans to its --precision=f32 mode (which rounds the op's results once),
// exactly as the former copy through f64 reference tensors was
// (test/unit/Kernels/UpdatesTest.cpp compares the two bit for bit).
// Malformed operands (shapes that disagree, a step that is not one value
// >= 1, betas outside [0, 1)) still take that copy path, so the error
// (piper_kernels_last_error) and what the results hold are unchanged.
//
//===----------------------------------------------------------------------===//

#include "MemRef.h"

#include "piper/Reference/Optimizers.h"

#include <cmath>
#include <cstddef>

using namespace piper;
using namespace piper::kernels;

namespace {

//===----------------------------------------------------------------------===//
// The reference path (error cases)
//===----------------------------------------------------------------------===//

template <typename T>
void sgdReference(MemRef param, MemRef grad, MemRef buf, MemRef newParam,
                  MemRef newBuf, const ref::SgdConfig &config) {
  ref::Tensor p = readFloat<T>(param), b = readFloat<T>(buf);
  if (!report("sgd_update", ref::sgdStep(config, p, readFloat<T>(grad), b)))
    return;
  writeFloat<T>("sgd_update", p, newParam);
  writeFloat<T>("sgd_update", b, newBuf);
}

template <typename T>
void adamwReference(MemRef param, MemRef grad, MemRef m, MemRef v, MemRef step,
                    MemRef newParam, MemRef newM, MemRef newV,
                    const ref::AdamWConfig &config) {
  ref::IndexTensor t = readIndex(step);
  if (t.data.size() != 1) {
    report("adamw_update", ref::Status::error("step must hold one value"));
    return;
  }
  ref::Tensor p = readFloat<T>(param), mm = readFloat<T>(m),
              vv = readFloat<T>(v);
  if (!report("adamw_update",
              ref::adamwStep(config, t.data[0], p, readFloat<T>(grad), mm, vv)))
    return;
  writeFloat<T>("adamw_update", p, newParam);
  writeFloat<T>("adamw_update", mm, newM);
  writeFloat<T>("adamw_update", vv, newV);
}

//===----------------------------------------------------------------------===//
// Walking memrefs of one shape together
//===----------------------------------------------------------------------===//

/// No size is negative.
bool validSizes(MemRef m) {
  for (int64_t d = 0; d < m.rank; ++d)
    if (m.sizes()[d] < 0)
      return false;
  return true;
}

/// Every memref in `ms` has valid sizes and the shape of ms[0].
template <size_t N> bool sameShapes(const MemRef (&ms)[N]) {
  for (const MemRef &m : ms) {
    if (!validSizes(m) || m.rank != ms[0].rank)
      return false;
    for (int64_t d = 0; d < m.rank; ++d)
      if (m.sizes()[d] != ms[0].sizes()[d])
        return false;
  }
  return true;
}

/// Calls `row.template run<Unit>(n, p, s)` for runs of elements of the N
/// memrefs of element type T (one shape, checked by sameShapes) in
/// row-major order: element i of a run is p[k][i * s[k]] in memref k, and
/// Unit says that every s[k] is 1. The innermost dims that every memref
/// lays out as one arithmetic progression form a run, so contiguous
/// memrefs are a single run with Unit.
template <typename T, size_t N, typename Row>
void walk(const MemRef (&ms)[N], const Row &row) {
  const int64_t rank = ms[0].rank;
  const int64_t *sizes = ms[0].sizes();
  int64_t numel = 1;
  for (int64_t d = 0; d < rank; ++d)
    numel *= sizes[d];
  if (numel == 0)
    return;
  // The run: dims [first, rank), runLen elements, stride s[k] in memref k.
  int64_t s[N];
  bool have = false;
  int64_t runLen = 1, first = rank;
  for (size_t k = 0; k < N; ++k)
    s[k] = 1;
  for (int64_t d = rank - 1; d >= 0; --d) {
    if (sizes[d] != 1) {
      bool fits = true;
      if (have)
        for (size_t k = 0; k < N; ++k)
          fits = fits && ms[k].strides()[d] == s[k] * runLen;
      if (!fits)
        break;
      if (!have)
        for (size_t k = 0; k < N; ++k)
          s[k] = ms[k].strides()[d];
      have = true;
      runLen *= sizes[d];
    }
    first = d;
  }
  bool unit = true;
  for (size_t k = 0; k < N; ++k)
    unit = unit && s[k] == 1;
  T *base[N], *p[N];
  for (size_t k = 0; k < N; ++k)
    base[k] = static_cast<T *>(ms[k].aligned()) + ms[k].offset();
  for (int64_t r = 0, rows = numel / runLen; r < rows; ++r) {
    for (size_t k = 0; k < N; ++k)
      p[k] = base[k];
    // Row-major index r over dims [0, first) to an offset in each memref.
    int64_t flat = r;
    for (int64_t d = first - 1; d >= 0 && flat > 0; --d) {
      int64_t i = flat % sizes[d];
      flat /= sizes[d];
      for (size_t k = 0; k < N; ++k)
        p[k] += i * ms[k].strides()[d];
    }
    if (unit)
      row.template run<true>(runLen, p, s);
    else
      row.template run<false>(runLen, p, s);
  }
}

//===----------------------------------------------------------------------===//
// SGD with momentum
//===----------------------------------------------------------------------===//

/// Memrefs: param, grad, buf, newParam, newBuf.
template <typename T> struct SgdRow {
  double lr, momentum, weightDecay;

  template <bool Unit>
  void run(int64_t n, T *const *p, const int64_t *s) const {
    const T *param = p[0], *grad = p[1], *buf = p[2];
    T *newParam = p[3], *newBuf = p[4];
    int64_t ps = Unit ? 1 : s[0], gs = Unit ? 1 : s[1], bs = Unit ? 1 : s[2],
            nps = Unit ? 1 : s[3], nbs = Unit ? 1 : s[4];
    // Results are fresh buffers (or the operand itself, element for element):
    // no iteration reads what another writes.
#pragma clang loop vectorize(assume_safety)
    for (int64_t i = 0; i < n; ++i) {
      // ref::sgdStep, element i.
      double x = static_cast<double>(param[i * ps]);
      double g = static_cast<double>(grad[i * gs]);
      double b = static_cast<double>(buf[i * bs]);
      if (weightDecay != 0.0)
        g += weightDecay * x;
      if (momentum != 0.0) {
        b = momentum * b + g;
        g = b;
      }
      x -= lr * g;
      newParam[i * nps] = static_cast<T>(x);
      newBuf[i * nbs] = static_cast<T>(b);
    }
  }
};

template <typename T>
void sgdK(MemRef param, MemRef grad, MemRef buf, MemRef newParam, MemRef newBuf,
          double lr, double momentum, double weightDecay) {
  ref::SgdConfig config;
  config.lr = lr;
  config.momentum = momentum;
  config.weightDecay = weightDecay;
  const MemRef all[] = {param, grad, buf, newParam, newBuf};
  if (!sameShapes(all)) {
    sgdReference<T>(param, grad, buf, newParam, newBuf, config);
    return;
  }
  walk<T>(all, SgdRow<T>{config.lr, config.momentum, config.weightDecay});
}

//===----------------------------------------------------------------------===//
// AdamW
//===----------------------------------------------------------------------===//

/// Memrefs: param, grad, m, v, newParam, newM, newV.
template <typename T> struct AdamWRow {
  double lr, beta1, beta2, eps, weightDecay, bias1, bias2;

  template <bool Unit>
  void run(int64_t n, T *const *p, const int64_t *s) const {
    const T *param = p[0], *grad = p[1], *m = p[2], *v = p[3];
    T *newParam = p[4], *newM = p[5], *newV = p[6];
    int64_t ps = Unit ? 1 : s[0], gs = Unit ? 1 : s[1], ms = Unit ? 1 : s[2],
            vs = Unit ? 1 : s[3], nps = Unit ? 1 : s[4], nms = Unit ? 1 : s[5],
            nvs = Unit ? 1 : s[6];
#pragma clang loop vectorize(assume_safety)
    for (int64_t i = 0; i < n; ++i) {
      // ref::adamwStep, element i, with the same association.
      double g = static_cast<double>(grad[i * gs]);
      double x = static_cast<double>(param[i * ps]);
      x -= lr * weightDecay * x;
      double mi = beta1 * static_cast<double>(m[i * ms]) + (1.0 - beta1) * g;
      double vi =
          beta2 * static_cast<double>(v[i * vs]) + (1.0 - beta2) * g * g;
      double mHat = mi / bias1;
      double vHat = vi / bias2;
      x -= lr * mHat / (std::sqrt(vHat) + eps);
      newParam[i * nps] = static_cast<T>(x);
      newM[i * nms] = static_cast<T>(mi);
      newV[i * nvs] = static_cast<T>(vi);
    }
  }
};

template <typename T>
void adamwK(MemRef param, MemRef grad, MemRef m, MemRef v, MemRef step,
            MemRef newParam, MemRef newM, MemRef newV, double lr, double beta1,
            double beta2, double eps, double weightDecay) {
  ref::AdamWConfig config;
  config.lr = lr;
  config.beta1 = beta1;
  config.beta2 = beta2;
  config.eps = eps;
  config.weightDecay = weightDecay;
  const MemRef all[] = {param, grad, m, v, newParam, newM, newV};
  // The cases ref::adamwStep accepts: one step >= 1, betas in [0, 1).
  const MemRef steps[] = {step};
  bool native = sameShapes(all) && sameShapes(steps) && step.numel() == 1;
  int64_t t = 0;
  if (native)
    t = static_cast<const int64_t *>(step.aligned())[step.elementOffset(0)];
  native = native && t >= 1 && config.beta1 >= 0.0 && config.beta1 < 1.0 &&
           config.beta2 >= 0.0 && config.beta2 < 1.0;
  if (!native) {
    adamwReference<T>(param, grad, m, v, step, newParam, newM, newV, config);
    return;
  }
  double tt = static_cast<double>(t);
  double bias1 = 1.0 - std::pow(config.beta1, tt);
  double bias2 = 1.0 - std::pow(config.beta2, tt);
  walk<T>(all, AdamWRow<T>{config.lr, config.beta1, config.beta2, config.eps,
                           config.weightDecay, bias1, bias2});
}

} // namespace

#define MR(n) int64_t n##R, void *n##D
#define M(n)                                                                   \
  MemRef { n##R, n##D }

extern "C" {

void piper_k_sgd_update_f32(MR(p), MR(g), MR(b), MR(np), MR(nb), double lr,
                            double momentum, double wd) {
  sgdK<float>(M(p), M(g), M(b), M(np), M(nb), lr, momentum, wd);
}
void piper_k_sgd_update_f64(MR(p), MR(g), MR(b), MR(np), MR(nb), double lr,
                            double momentum, double wd) {
  sgdK<double>(M(p), M(g), M(b), M(np), M(nb), lr, momentum, wd);
}
void piper_k_adamw_update_f32(MR(p), MR(g), MR(m), MR(v), MR(s), MR(np), MR(nm),
                              MR(nv), double lr, double b1, double b2,
                              double eps, double wd) {
  adamwK<float>(M(p), M(g), M(m), M(v), M(s), M(np), M(nm), M(nv), lr, b1, b2,
                eps, wd);
}
void piper_k_adamw_update_f64(MR(p), MR(g), MR(m), MR(v), MR(s), MR(np), MR(nm),
                              MR(nv), double lr, double b1, double b2,
                              double eps, double wd) {
  adamwK<double>(M(p), M(g), M(m), M(v), M(s), M(np), M(nm), M(nv), lr, b1, b2,
                 eps, wd);
}

} // extern "C"
