//===- Switch.cpp - Changing strategy in the middle of a job --------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "Switch.h"
#include "Hyperparameters.h"

#include "piper-rt/checkpoint.h"

#include "llvm/Support/raw_ostream.h"

#include <map>

using namespace piper;
using namespace piper::run;
namespace cl = llvm::cl;

namespace {

cl::opt<std::string> switchTo(
    "switch-to",
    cl::desc("After --switch-after steps, continue under the plan in DIR (the "
             "same model under another strategy, on the same ranks): "
             "parameters and optimizer state move in memory, without a "
             "restart or the disk"),
    cl::value_desc("dir"), cl::cat(runOptions()));
cl::opt<int64_t>
    switchAfter("switch-after",
                cl::desc("With --switch-to: the step after which to switch"),
                cl::value_desc("K"), cl::init(0), cl::cat(runOptions()));

/// The point-to-point tag of the moves: the loss uses PIPER_RT_MAX_TAG,
/// --params-out -1, checkpoints -2, --peak-bytes -3.
constexpr int64_t kSwitchTag = PIPER_RT_MAX_TAG - 4;

} // namespace

SwitchFlags piper::run::switchFlags() {
  return SwitchFlags{switchTo.getValue(), switchAfter.getValue()};
}

bool piper::run::checkSwitch(const plan::Manifest &current, int64_t steps,
                             plan::Manifest &next, std::string &error) {
  if (switchTo.empty()) {
    if (switchAfter.getNumOccurrences())
      error = "--switch-after needs --switch-to=PLAN";
    return error.empty();
  }
  if (switchAfter < 1 || switchAfter >= steps) {
    error = "--switch-after=" + std::to_string(switchAfter) +
            " must be a step before the last (1 to " +
            std::to_string(steps - 1) + " of --steps=" + std::to_string(steps) +
            ")";
    return false;
  }
  if (!plan::loadManifest(switchTo, next, error)) {
    error = "--switch-to: " + error;
    return false;
  }
  if (next.mesh.numDevices() != current.mesh.numDevices()) {
    error = "--switch-to: " + switchTo + " runs on " +
            std::to_string(next.mesh.numDevices()) + " devices, this plan on " +
            std::to_string(current.mesh.numDevices()) +
            "; a switch in memory keeps the ranks (save and --resume instead)";
    return false;
  }
  // The same trained state on both sides, tensor by tensor: nothing may be
  // dropped or invented by the switch.
  std::map<std::string, const plan::Tensor *> saved;
  for (const plan::Tensor &arg : current.arguments)
    if (ckpt::isSaved(arg))
      saved[ckpt::logicalName(arg)] = &arg;
  size_t matched = 0;
  for (const plan::Tensor &arg : next.arguments) {
    if (!ckpt::isSaved(arg))
      continue;
    auto it = saved.find(ckpt::logicalName(arg));
    if (it == saved.end() || it->second->shape != arg.shape ||
        it->second->dtype != arg.dtype) {
      error = "--switch-to: " + switchTo + " trains '" +
              ckpt::logicalName(arg) +
              (it == saved.end() ? "', which this plan does not have"
                                 : "' with another shape or dtype") +
              "; both plans must be of one model (and one optimizer)";
      return false;
    }
    ++matched;
  }
  if (matched != saved.size()) {
    error = "--switch-to: " + switchTo + " trains " + std::to_string(matched) +
            " of this plan's " + std::to_string(saved.size()) +
            " parameter and optimizer tensors; both plans must be of one "
            "model (and one optimizer)";
    return false;
  }
  // The move is a redistribution of checkpoint regions.
  if (!ckpt::hasRegions(current, false, error) ||
      !ckpt::hasRegions(next, false, error)) {
    error = "--switch-to: " + error;
    return false;
  }
  if (ckpt::globalDataShapes(next) != ckpt::globalDataShapes(current)) {
    error = "--switch-to: " + switchTo +
            " trains on another global batch; the data order would not "
            "continue (give both plans the same global batch)";
    return false;
  }
  return true;
}

bool piper::run::switchPlan(plan::Manifest &manifest, plan::Manifest &next,
                            Job &job, bool traced, int threads,
                            std::vector<HostTensor> &args,
                            std::vector<HostTensor> &results, Program &program,
                            std::string &error) {
  std::vector<const plan::Role *> nextRoles;
  if (!next.rolesOfRanks(nextRoles, error))
    return false;
  std::vector<HostTensor> nextArgs(next.arguments.size());
  for (const plan::Tensor &arg : next.arguments)
    nextArgs[arg.index].allocate(arg);
  std::vector<const void *> fromHeld(args.size(), nullptr);
  for (int64_t i : job.role().inputs)
    fromHeld[i] = args[i].data();
  std::vector<void *> toHeld(nextArgs.size(), nullptr);
  for (int64_t i : nextRoles[job.rank]->inputs)
    toHeld[i] = nextArgs[i].data();

  ckpt::Comm comm;
  comm.rank = job.rank;
  comm.size = static_cast<int>(job.roleOf.size());
  piper_plan_session session = job.session;
  comm.move = [session](int64_t *data, size_t count, int from, int to,
                        std::string &why) {
    if (piper_plan_session_move(session, data, count, PIPER_RT_I64, from, to,
                                kSwitchTag) == PIPER_RT_OK)
      return true;
    why = piper_rt_last_error();
    return false;
  };
  if (!ckpt::redistribute(manifest, job.roleOf, fromHeld, next, nextRoles,
                          toHeld, comm, error)) {
    error = "--switch-to: " + error;
    return false;
  }

  manifest = std::move(next);
  args = std::move(nextArgs);
  if (!job.switchTo(manifest, traced, error))
    return false;
  results.assign(manifest.results.size(), HostTensor());
  for (int64_t j : job.role().outputs)
    results[j].allocate(manifest.results[j]);
  program = Program();
  if (!program.load(switchTo, manifest, job.role(), error))
    return false;
  if (program.setThreads)
    program.setThreads(threads);
  if (job.rank == 0) {
    std::string line = "piper-run: switched to " + switchTo + " after step " +
                       std::to_string(switchAfter) + "\n";
    llvm::errs() << line;
  }
  return true;
}
