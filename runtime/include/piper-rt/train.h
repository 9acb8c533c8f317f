//===- train.h - Training defaults, LR schedules, clipping, decay -*- C++ -*-//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The one implementation of what a training step's hyperparameters are,
// shared by every tool that trains (docs/Training.md): piper-interp (the
// serial reference), piper-compile (the defaults it compiles in and records
// in plan.json) and piper-run (the per-step learning rate and the clipping
// bound it hands the plan). Plain C++17 with no dependency, so that the
// runtime links it without MLIR or LLVM.
//
//  - Defaults: one optimizer and one set of hyperparameters for all tools.
//  - Learning-rate schedules: linear warmup, then constant, cosine or linear
//    decay to a minimum, a pure function of the 1-based step.
//  - Gradient-norm clipping: the coefficient PyTorch's clip_grad_norm_
//    multiplies every gradient by.
//  - Weight-decay groups: which parameters decay, by rank or by name.
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_RT_TRAIN_H
#define PIPER_RT_TRAIN_H

#include "piper-rt/train_defaults.h"

#include <cstdint>
#include <string>
#include <vector>

namespace piper::train {

//===----------------------------------------------------------------------===//
// Defaults (every tool's, tests/unit pin them)
//===----------------------------------------------------------------------===//

/// The optimizer every tool builds when given none.
inline constexpr const char *kDefaultOptimizer = PIPER_TRAIN_DEFAULT_OPTIMIZER;
inline constexpr double kDefaultLr = PIPER_TRAIN_DEFAULT_LR;
inline constexpr double kDefaultBeta1 = PIPER_TRAIN_DEFAULT_BETA1;
inline constexpr double kDefaultBeta2 = PIPER_TRAIN_DEFAULT_BETA2;
inline constexpr double kDefaultEps = PIPER_TRAIN_DEFAULT_EPS;
inline constexpr double kDefaultMomentum = PIPER_TRAIN_DEFAULT_MOMENTUM;
/// Weight decay when none is given: PyTorch's per optimizer.
inline constexpr double kDefaultAdamWWeightDecay =
    PIPER_TRAIN_DEFAULT_ADAMW_WEIGHT_DECAY;
inline constexpr double kDefaultSgdWeightDecay =
    PIPER_TRAIN_DEFAULT_SGD_WEIGHT_DECAY;
/// The weight-decay rule when none is given (see DecayRule).
inline constexpr const char *kDefaultNoDecay = PIPER_TRAIN_DEFAULT_NO_DECAY;
/// clip_grad_norm_'s epsilon: coef = max_norm / (norm + kClipEpsilon).
inline constexpr double kClipEpsilon = 1e-6;

/// The default weight decay of optimizer `name` ("sgd" or "adamw").
double defaultWeightDecay(const std::string &optimizer);

//===----------------------------------------------------------------------===//
// Learning-rate schedules
//===----------------------------------------------------------------------===//

enum class ScheduleKind { Constant, Cosine, Linear };

struct LrSchedule {
  /// The peak learning rate (after warmup).
  double lr = kDefaultLr;
  /// Steps of linear warmup: step t <= warmup uses lr * t / warmup.
  int64_t warmupSteps = 0;
  ScheduleKind kind = ScheduleKind::Constant;
  /// What cosine and linear decay reach at decaySteps.
  double minLr = 0.0;
  /// The step at which decay ends (the run's step count by default);
  /// later steps keep minLr.
  int64_t decaySteps = 0;
};

/// "constant", "cosine" or "linear"; false for anything else.
bool parseScheduleKind(const std::string &text, ScheduleKind &kind);
const char *scheduleKindName(ScheduleKind kind);

/// An error message for an invalid schedule ("" if it is valid): negative
/// or non-finite rates, negative step counts.
std::string checkSchedule(const LrSchedule &schedule);

/// The learning rate of 1-based step `step`:
///   t <= W:  lr * t / W                                   (W = warmupSteps)
///   else p = min(1, (t - W) / max(1, D - W))              (D = decaySteps)
///     constant: lr
///     cosine:   minLr + (lr - minLr) * (1 + cos(pi p)) / 2
///     linear:   (1 - p) * lr + p * minLr
double lrAt(const LrSchedule &schedule, int64_t step);

//===----------------------------------------------------------------------===//
// Gradient-norm clipping
//===----------------------------------------------------------------------===//

/// The factor every gradient is multiplied by, given the global L2 norm of
/// all gradients (sqrt of `sumOfSquares`) and the bound `maxNorm`:
/// min(1, maxNorm / (norm + kClipEpsilon)) as torch.nn.utils.clip_grad_norm_;
/// 1 when maxNorm <= 0 (clipping off).
double clipCoefficient(double sumOfSquares, double maxNorm);

//===----------------------------------------------------------------------===//
// Weight-decay groups
//===----------------------------------------------------------------------===//

/// Which parameters get no weight decay. Spelled as one string:
///   "rank<2"       (default) every parameter of rank 0 or 1: biases and
///                  norm gains, as nanoGPT and most LLM recipes do;
///   "none"         every parameter decays (the optimizer's plain rule);
///   "all"          no parameter decays;
///   "GLOB,GLOB..." the parameters whose names match a glob (* and ?),
///                  e.g. "*.bias,*norm*".
struct DecayRule {
  enum class Kind { LowRank, None, All, Names } kind = Kind::LowRank;
  std::vector<std::string> globs;
};

/// Parses a rule; false (with `error` set) if it is malformed.
bool parseDecayRule(const std::string &text, DecayRule &rule,
                    std::string &error);

/// Whether parameter `name` of rank `rank` decays under `rule`.
bool decays(const DecayRule &rule, const std::string &name, int64_t rank);

/// Whether `text` matches glob `pattern` (* any run, ? one character).
bool globMatch(const std::string &pattern, const std::string &text);

} // namespace piper::train

#endif // PIPER_RT_TRAIN_H
