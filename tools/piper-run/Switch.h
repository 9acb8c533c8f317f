//===- Switch.h - Changing strategy in the middle of a job ------*- C++ -*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// --switch-to=PLAN --switch-after=K: after step K the job continues under
// another plan of the same model on the same ranks, without a restart and
// without the disk. The live parameters and optimizer state move from the
// old plan's layout to the new one's over the runtime (ckpt::redistribute:
// what a save under the old plan and a resume under the new one would
// read), the runtime's mesh and the session are replaced, and the new
// plan's objects are loaded. Data order and initialisation do not depend
// on the strategy, so steps K+1... equal those of an uninterrupted run.
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_TOOLS_PIPER_RUN_SWITCH_H
#define PIPER_TOOLS_PIPER_RUN_SWITCH_H

#include "HostTensor.h"
#include "Job.h"
#include "Program.h"

#include "piper-rt/plan_manifest.h"

#include "llvm/Support/CommandLine.h"

#include <string>
#include <vector>

namespace piper::run {

/// The flags, in `category`.
struct SwitchFlags {
  std::string planDir;
  int64_t after = 0;
  bool enabled() const { return !planDir.empty(); }
};
SwitchFlags switchFlags();

/// Checks the flags against the run before any step: the new plan loads,
/// runs on as many devices and trains the same model (names, shapes and
/// dtypes of every saved tensor), and K is a step of the run.
bool checkSwitch(const plan::Manifest &current, int64_t steps,
                 plan::Manifest &next, std::string &error);

/// The switch itself, at the step boundary after --switch-after (every
/// rank). On return `manifest`, `args`, `results`, `program` and the job's
/// session are the new plan's; `args` hold the moved state.
bool switchPlan(plan::Manifest &manifest, plan::Manifest &next, Job &job,
                bool traced, int threads, std::vector<HostTensor> &args,
                std::vector<HostTensor> &results, Program &program,
                std::string &error);

} // namespace piper::run

#endif // PIPER_TOOLS_PIPER_RUN_SWITCH_H
