//===- Job.h - This rank's place in a run -----------------------*- C++ -*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// A one-device plan runs in a single process without the runtime. A plan on
// several devices (or a traced one) runs under `mpiexec -np N`: the runtime
// checks N against the plan's mesh, each rank runs the role its mesh
// coordinates match, and the plan's calls go through a session on the
// runtime's context (plan_abi.h).
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_TOOLS_PIPER_RUN_JOB_H
#define PIPER_TOOLS_PIPER_RUN_JOB_H

#include "piper-rt/plan_abi.h"
#include "piper-rt/plan_manifest.h"

#include <string>
#include <vector>

namespace piper::run {

struct Job {
  /// Null when the run needs no runtime (one device, no trace).
  piper_rt_context context = nullptr;
  int rank = 0;
  /// The role of every world rank, in rank order.
  std::vector<const plan::Role *> roleOf;
  piper_plan_session session = nullptr;

  /// Starts the runtime if the plan needs one, assigns roles, opens and
  /// activates the plan's session (with `traceFile`, tracing every launch).
  /// On failure, `error` is for rank 0 to print (see stop).
  bool start(int &argc, char **&argv, const plan::Manifest &manifest,
             const std::string &traceFile, std::string &error);
  /// At a step boundary, closes this plan's session and opens `manifest`'s
  /// on the same ranks (the runtime's mesh replaced by the new plan's), so
  /// that the job continues under another strategy (--switch-to).
  bool switchTo(const plan::Manifest &manifest, bool traced,
                std::string &error);
  const plan::Role &role() const { return *roleOf[rank]; }
  /// The step's loss on rank 0: the mean over `lossRanks` (the batch
  /// replicas of the loss role) of their `loss`.
  bool meanLoss(const std::vector<int> &lossRanks, double &loss,
                std::string &error);
  /// Closes the session and the runtime (which writes the trace); false
  /// with the runtime's error.
  bool stop(std::string &error);

private:
  /// Assigns roles and opens, activates and wires the plan's session.
  bool openSession(const plan::Manifest &manifest, bool traced,
                   std::string &error);
};

} // namespace piper::run

#endif // PIPER_TOOLS_PIPER_RUN_JOB_H
