//===- Optimizers.cpp - SGD-momentum and AdamW reference updates ----------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Each element is updated from its own parameter, gradient and state only,
// so a sharded update is bit-identical to the full one. The formulas are
// those of PyTorch's documentation; PyTorch's kernels group some operations
// differently (e.g. m.lerp_(g, 1 - beta1)), so agreement with PyTorch is to
// rounding, not bitwise.
//
//===----------------------------------------------------------------------===//

#include "piper/Reference/Optimizers.h"

#include "Detail.h"

#include <cmath>
#include <initializer_list>
#include <utility>

using namespace piper::ref;
using namespace piper::ref::detail;

namespace {

Status checkBuffers(const char *op, int64_t n,
                    std::initializer_list<const void *> buffers) {
  if (n < 0)
    return fail(op, "element count must be >= 0, got ", n);
  if (n > 0)
    for (const void *b : buffers)
      if (!b)
        return fail(op, "a parameter, gradient or state buffer is null");
  return Status::success();
}

/// param is well formed and every other tensor has its shape.
Status checkTensors(
    const char *op, const Tensor &param,
    std::initializer_list<std::pair<const char *, const Tensor *>> others) {
  PIPER_REF_TRY(checkTensor(op, "param", param));
  for (auto [name, t] : others)
    PIPER_REF_TRY(checkSameShape(op, "param", param, name, *t));
  return Status::success();
}

} // namespace

Status piper::ref::sgdStep(const SgdConfig &config, int64_t n, double *param,
                           const double *grad, double *momentumBuf) {
  if (config.momentum != 0.0)
    PIPER_REF_TRY(checkBuffers("sgd", n, {param, grad, momentumBuf}));
  else
    PIPER_REF_TRY(checkBuffers("sgd", n, {param, grad}));
  for (int64_t i = 0; i < n; ++i) {
    double g = grad[i];
    if (config.weightDecay != 0.0)
      g += config.weightDecay * param[i];
    if (config.momentum != 0.0) {
      momentumBuf[i] = config.momentum * momentumBuf[i] + g;
      g = momentumBuf[i];
    }
    param[i] -= config.lr * g;
  }
  return Status::success();
}

Status piper::ref::sgdStep(const SgdConfig &config, Tensor &param,
                           const Tensor &grad, Tensor &momentumBuf) {
  PIPER_REF_TRY(checkTensors(
      "sgd", param, {{"grad", &grad}, {"momentum_buf", &momentumBuf}}));
  return sgdStep(config, param.numel(), param.data.data(), grad.data.data(),
                 momentumBuf.data.data());
}

Status piper::ref::adamwStep(const AdamWConfig &config, int64_t step, int64_t n,
                             double *param, const double *grad, double *m,
                             double *v) {
  if (step < 1)
    return fail("adamw", "step must be >= 1 (the first update is step 1), got ",
                step);
  if (!(config.beta1 >= 0.0 && config.beta1 < 1.0))
    return fail("adamw", "beta1 must be in [0, 1), got ", config.beta1);
  if (!(config.beta2 >= 0.0 && config.beta2 < 1.0))
    return fail("adamw", "beta2 must be in [0, 1), got ", config.beta2);
  PIPER_REF_TRY(checkBuffers("adamw", n, {param, grad, m, v}));
  double t = static_cast<double>(step);
  double bias1 = 1.0 - std::pow(config.beta1, t);
  double bias2 = 1.0 - std::pow(config.beta2, t);
  for (int64_t i = 0; i < n; ++i) {
    double g = grad[i];
    param[i] -= config.lr * config.weightDecay * param[i];
    m[i] = config.beta1 * m[i] + (1.0 - config.beta1) * g;
    v[i] = config.beta2 * v[i] + (1.0 - config.beta2) * g * g;
    double mHat = m[i] / bias1;
    double vHat = v[i] / bias2;
    param[i] -= config.lr * mHat / (std::sqrt(vHat) + config.eps);
  }
  return Status::success();
}

Status piper::ref::adamwStep(const AdamWConfig &config, int64_t step,
                             Tensor &param, const Tensor &grad, Tensor &m,
                             Tensor &v) {
  PIPER_REF_TRY(
      checkTensors("adamw", param, {{"grad", &grad}, {"m", &m}, {"v", &v}}));
  return adamwStep(config, step, param.numel(), param.data.data(),
                   grad.data.data(), m.data.data(), v.data.data());
}
