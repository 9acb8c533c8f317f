//===- Hyperparameters.h - piper-run's per-step LR and clipping -*- C++ -*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The flags that set what a plan reads each step (plan_abi.h, "Per-step
// hyperparameters"): --lr, --warmup-steps, --lr-schedule, --min-lr,
// --decay-steps and --clip-grad-norm, with the plan's compile-time values
// (plan.json "optimizer") as defaults. The schedule itself is
// piper-rt/train.h's, the same code piper-interp runs.
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_TOOLS_PIPER_RUN_HYPERPARAMETERS_H
#define PIPER_TOOLS_PIPER_RUN_HYPERPARAMETERS_H

#include "Job.h"

#include "piper-rt/plan_manifest.h"
#include "piper-rt/train.h"

#include "llvm/Support/CommandLine.h"

#include <string>

namespace piper::run {

/// piper-run's option category (--help lists only it).
llvm::cl::OptionCategory &runOptions();

struct Hyperparameters {
  train::LrSchedule schedule;
  /// The gradient-norm bound (0: off); only plans compiled with clipping.
  double clipMaxNorm = 0.0;
  bool clips = false;

  /// From the flags and `manifest`, with `steps` the run's length (the
  /// default decay horizon). False with `error` on an invalid flag.
  bool configure(const plan::Manifest &manifest, int64_t steps,
                 std::string &error);
  /// Opens the clip communicator if the plan clips (every rank, once).
  bool start(const plan::Manifest &manifest, Job &job, std::string &error);
  /// Hands step `step`'s learning rate and bound to the session.
  void set(Job &job, int64_t step) const;
};

} // namespace piper::run

#endif // PIPER_TOOLS_PIPER_RUN_HYPERPARAMETERS_H
