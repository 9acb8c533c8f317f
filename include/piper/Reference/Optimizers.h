//===- Optimizers.h - Shardable SGD and AdamW -------------------*- C++ -*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// SGD with momentum and AdamW with PyTorch's semantics. Both are purely
// elementwise, so the pointer forms work on any contiguous slice of a
// flattened parameter together with the matching slices of its gradient and
// state: ZeRO-1/2/3 shards update their slice and get exactly the values of
// the unsharded update. Optimizer state starts at zero.
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_REFERENCE_OPTIMIZERS_H
#define PIPER_REFERENCE_OPTIMIZERS_H

#include "piper/Reference/Tensor.h"

#include <cstdint>

namespace piper::ref {

/// torch.optim.SGD with dampening 0 and nesterov off.
struct SgdConfig {
  double lr = 0.01;
  double momentum = 0.0;
  double weightDecay = 0.0;
};

/// One SGD step on n elements:
///   g = grad + weightDecay * param
///   buf = momentum * buf + g        (PyTorch sets buf = g on the first step,
///                                    which is the same from a zero buf)
///   param -= lr * buf
/// `momentumBuf` may be null when momentum == 0 (PyTorch keeps no buffer
/// then and the update is param -= lr * g).
Status sgdStep(const SgdConfig &config, int64_t n, double *param,
               const double *grad, double *momentumBuf);
/// sgdStep on whole tensors; grad and momentumBuf must have param's shape.
Status sgdStep(const SgdConfig &config, Tensor &param, const Tensor &grad,
               Tensor &momentumBuf);

/// torch.optim.AdamW with amsgrad off.
struct AdamWConfig {
  double lr = 1e-3;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  double weightDecay = 1e-2;
};

/// One AdamW step on n elements; `step` is the 1-based step count t
/// (the first update uses t = 1):
///   param -= lr * weightDecay * param     (decoupled decay, applied first)
///   m = beta1 m + (1 - beta1) grad
///   v = beta2 v + (1 - beta2) grad^2
///   param -= lr * (m / (1 - beta1^t)) / (sqrt(v / (1 - beta2^t)) + eps)
/// Requires 0 <= beta1, beta2 < 1 (else the bias corrections divide by 0).
Status adamwStep(const AdamWConfig &config, int64_t step, int64_t n,
                 double *param, const double *grad, double *m, double *v);
/// adamwStep on whole tensors; grad, m and v must have param's shape.
Status adamwStep(const AdamWConfig &config, int64_t step, Tensor &param,
                 const Tensor &grad, Tensor &m, Tensor &v);

} // namespace piper::ref

#endif // PIPER_REFERENCE_OPTIMIZERS_H
