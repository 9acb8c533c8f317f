//===- Step.cpp - One run of a role's step program ------------------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "Step.h"

#ifdef PIPER_PLAN_HAVE_CUDA
#include "cuda/DeviceMirror.h"
#endif

#include <chrono>

using namespace piper;
using namespace piper::run;

bool piper::run::callEntry(StepContext &step, void (*entry)(void **),
                           const std::vector<int64_t> &inputs,
                           const std::vector<int64_t> &outputs,
                           HostTensor *extra, const std::string &what,
                           double &seconds, std::string &error) {
  std::vector<void *> pointers;
#ifdef PIPER_PLAN_HAVE_CUDA
  // A GPU plan reads and writes device copies (DeviceMirror.h).
  for (int64_t i : inputs)
    pointers.push_back(
        deviceDescriptor(step.job.session, step.args[i], true, error));
  for (int64_t j : outputs)
    pointers.push_back(
        deviceDescriptor(step.job.session, step.results[j], false, error));
  if (extra)
    pointers.push_back(
        deviceDescriptor(step.job.session, *extra, false, error));
  if (!error.empty())
    return false;
#else
  for (int64_t i : inputs)
    pointers.push_back(step.args[i].descriptor.data());
  for (int64_t j : outputs)
    pointers.push_back(step.results[j].descriptor.data());
  if (extra)
    pointers.push_back(extra->descriptor.data());
#endif
  auto start = std::chrono::steady_clock::now();
  entry(pointers.data());
  seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  if (step.program.lastError && step.program.lastError()) {
    std::string message = step.program.lastError();
    if (step.program.clearError)
      step.program.clearError();
    // A multi-rank job's other ranks stop at the runtime's timeout.
    error = what + ": kernel error: " + message;
    return false;
  }
  if (step.job.context &&
      piper_plan_session_finish_step(step.job.session) != PIPER_RT_OK) {
    error = "rank " + std::to_string(step.job.rank) + ": " + what + ": " +
            piper_plan_session_step_error(step.job.session);
    return false;
  }
#ifdef PIPER_PLAN_HAVE_CUDA
  for (int64_t j : outputs)
    if (!downloadTensor(step.job.session, step.results[j], error))
      return false;
  if (extra && !downloadTensor(step.job.session, *extra, error))
    return false;
#endif
  return true;
}

bool piper::run::runStepProgram(StepContext &step, DataFeeder &data,
                                int64_t batch, const std::string &what,
                                double &loss, double &seconds,
                                std::string &error, bool forwardOnly) {
  if (!data.feed(batch, step.args, error))
    return false;
  // The evaluation entry reads and writes subsets of the role's tensors.
  const plan::Role &role = step.role;
  if (!callEntry(step,
                 forwardOnly ? step.program.evalEntry : step.program.entry,
                 forwardOnly ? role.eval->inputs : role.inputs,
                 forwardOnly ? role.eval->outputs : role.outputs, nullptr, what,
                 seconds, error))
    return false;
  loss = step.results[0].info ? step.results[0].floatAt(0) : 0.0;
  if (!step.job.meanLoss(step.lossRanks, loss, error)) {
    error =
        "rank " + std::to_string(step.job.rank) + ": " + what + ": " + error;
    return false;
  }
  return true;
}

bool piper::run::evaluateHeldOut(StepContext &step, DataFeeder &eval,
                                 int64_t batches, bool withStep,
                                 double &meanLoss, double &seconds,
                                 std::string &error) {
  // A plan compiled before evaluation entries existed runs its step.
  bool forwardOnly = !withStep && step.program.evalEntry && step.role.eval;
  double sum = 0;
  seconds = 0;
  for (int64_t b = 1; b <= batches; ++b) {
    double loss = 0, batchSeconds = 0;
    if (!runStepProgram(step, eval, b, "eval batch " + std::to_string(b), loss,
                        batchSeconds, error, forwardOnly))
      return false;
    sum += loss;
    seconds += batchSeconds;
  }
  meanLoss = sum / static_cast<double>(batches);
  return true;
}
