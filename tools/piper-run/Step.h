//===- Step.h - One run of a role's step program ----------------*- C++ -*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Training steps and held-out evaluation run the same way: feed a batch,
// call one of the role's entries, check the kernels and the runtime, and
// agree on the loss. A training step calls the step entry and makes the
// updated parameters and state the next step's arguments; an evaluation
// calls the forward-only evaluation entry (plan.json's role "eval"), which
// writes only the loss. With --eval-program=step, or a plan without
// evaluation entries, it calls the step entry and drops its updates (the
// program never writes its arguments, so the parameters are untouched).
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_TOOLS_PIPER_RUN_STEP_H
#define PIPER_TOOLS_PIPER_RUN_STEP_H

#include "Data.h"
#include "HostTensor.h"
#include "Job.h"
#include "Program.h"

#include <string>
#include <vector>

namespace piper::run {

/// What one step program needs, shared by training and evaluation.
struct StepContext {
  const plan::Manifest &manifest;
  const plan::Role &role;
  Program &program;
  Job &job;
  const std::vector<int> &lossRanks;
  std::vector<HostTensor> &args;
  std::vector<HostTensor> &results;
};

/// Calls `entry` with the descriptors of `inputs` (of step.args), `outputs`
/// (of step.results) and `extra` (when set, last), then checks the kernels'
/// and the runtime's errors. `seconds`: the call's time.
bool callEntry(StepContext &step, void (*entry)(void **),
               const std::vector<int64_t> &inputs,
               const std::vector<int64_t> &outputs, HostTensor *extra,
               const std::string &what, double &seconds, std::string &error);

/// Feeds batch `batch` from `data` and runs the role's program once. On
/// success `loss` is the mean loss over the loss role's replicas (the same
/// on every rank that asks) and `seconds` the time of the program call.
/// `what` names the step in errors ("step 3", "eval batch 2").
/// `forwardOnly` calls the evaluation entry (the role must have one).
bool runStepProgram(StepContext &step, DataFeeder &data, int64_t batch,
                    const std::string &what, double &loss, double &seconds,
                    std::string &error, bool forwardOnly = false);

/// The held-out loss: the mean over batches 1..`batches` of the eval
/// corpus's loss at the current parameters, by the evaluation entry, or
/// by the step entry discarding every update when `withStep` is set or the
/// plan has no evaluation entry. `seconds`: the entries' time in all.
bool evaluateHeldOut(StepContext &step, DataFeeder &eval, int64_t batches,
                     bool withStep, double &meanLoss, double &seconds,
                     std::string &error);

} // namespace piper::run

#endif // PIPER_TOOLS_PIPER_RUN_STEP_H
