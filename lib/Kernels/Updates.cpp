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
//===----------------------------------------------------------------------===//

#include "MemRef.h"

#include "piper/Reference/Optimizers.h"

using namespace piper;
using namespace piper::kernels;

namespace {

template <typename T>
void sgdK(MemRef param, MemRef grad, MemRef buf, MemRef newParam, MemRef newBuf,
          double lr, double momentum, double weightDecay) {
  ref::SgdConfig config;
  config.lr = lr;
  config.momentum = momentum;
  config.weightDecay = weightDecay;
  ref::Tensor p = readFloat<T>(param), b = readFloat<T>(buf);
  if (!report("sgd_update", ref::sgdStep(config, p, readFloat<T>(grad), b)))
    return;
  writeFloat<T>("sgd_update", p, newParam);
  writeFloat<T>("sgd_update", b, newBuf);
}

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
