//===- Step.h - One run of a role's step program ----------------*- C++ -*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Training steps and held-out evaluation run the same compiled program: feed
// a batch, call the role's entry, check the kernels and the runtime, and
// agree on the loss. They differ only in what happens to the results: a
// training step makes the updated parameters and state the next step's
// arguments, an evaluation drops them (the program never writes its
// arguments, so the parameters are untouched).
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

/// Feeds batch `batch` from `data` and runs the role's program once. On
/// success `loss` is the mean loss over the loss role's replicas (the same
/// on every rank that asks) and `seconds` the time of the program call.
/// `what` names the step in errors ("step 3", "eval batch 2").
bool runStepProgram(StepContext &step, DataFeeder &data, int64_t batch,
                    const std::string &what, double &loss, double &seconds,
                    std::string &error);

/// The held-out loss: the mean over batches 1..`batches` of the eval
/// corpus's loss at the current parameters, discarding every update.
bool evaluateHeldOut(StepContext &step, DataFeeder &eval, int64_t batches,
                     double &meanLoss, std::string &error);

} // namespace piper::run

#endif // PIPER_TOOLS_PIPER_RUN_STEP_H
