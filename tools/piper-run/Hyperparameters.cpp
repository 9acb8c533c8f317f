//===- Hyperparameters.cpp - piper-run's per-step LR and clipping ---------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "Hyperparameters.h"

#include "llvm/Support/CommandLine.h"

#include <cmath>

using namespace piper;
using namespace piper::run;
namespace cl = llvm::cl;

llvm::cl::OptionCategory &piper::run::runOptions() {
  static cl::OptionCategory c("piper-run options");
  return c;
}

namespace {

cl::OptionCategory &category() { return runOptions(); }

cl::opt<double> lr("lr",
                   cl::desc("Peak learning rate (default: the plan's, "
                            "piper-compile --lr)"),
                   cl::cat(category()));
cl::opt<int64_t> warmupSteps("warmup-steps",
                             cl::desc("Steps of linear warmup from 0 to --lr "
                                      "(default 0)"),
                             cl::init(0), cl::cat(category()));
cl::opt<std::string>
    lrSchedule("lr-schedule",
               cl::desc("After warmup: constant (default), cosine or linear "
                        "decay to --min-lr at --decay-steps"),
               cl::init("constant"), cl::cat(category()));
cl::opt<double> minLr("min-lr",
                      cl::desc("Learning rate at the end of decay (default 0)"),
                      cl::init(0.0), cl::cat(category()));
cl::opt<int64_t> decaySteps("decay-steps",
                            cl::desc("Step at which decay ends (default: "
                                     "--steps)"),
                            cl::init(0), cl::cat(category()));
cl::opt<double> clipGradNorm(
    "clip-grad-norm",
    cl::desc("Clip the global gradient norm to this bound (default: the "
             "plan's, piper-compile --clip-grad-norm; 0 turns it off; only "
             "plans compiled with clipping)"),
    cl::cat(category()));

} // namespace

bool Hyperparameters::configure(const plan::Manifest &manifest, int64_t steps,
                                std::string &error) {
  double planLr =
      manifest.optimizer ? manifest.optimizer->lr : train::kDefaultLr;
  schedule.lr = lr.getNumOccurrences() ? double(lr) : planLr;
  schedule.warmupSteps = warmupSteps;
  schedule.minLr = minLr;
  schedule.decaySteps =
      decaySteps.getNumOccurrences() ? int64_t(decaySteps) : steps;
  if (!train::parseScheduleKind(lrSchedule, schedule.kind)) {
    error = "--lr-schedule must be constant, cosine or linear, got '" +
            lrSchedule + "'";
    return false;
  }
  if (std::string bad = train::checkSchedule(schedule); !bad.empty()) {
    error = "invalid learning-rate schedule: " + bad;
    return false;
  }
  clips = manifest.optimizer && manifest.optimizer->clipGradNorm > 0;
  clipMaxNorm = clips ? manifest.optimizer->clipGradNorm : 0.0;
  if (clipGradNorm.getNumOccurrences()) {
    if (!(std::isfinite(clipGradNorm) && clipGradNorm >= 0)) {
      error = "--clip-grad-norm must be finite and non-negative";
      return false;
    }
    if (!clips && clipGradNorm > 0) {
      error = "--clip-grad-norm: this plan was compiled without gradient "
              "clipping; compile it with piper-compile --clip-grad-norm=X";
      return false;
    }
    clipMaxNorm = clipGradNorm;
  }
  return true;
}

bool Hyperparameters::start(const plan::Manifest &manifest, Job &job,
                            std::string &error) {
  if (!clips)
    return true;
  std::vector<const char *> axes;
  for (const plan::MeshAxis &axis : manifest.mesh.axes)
    axes.push_back(axis.name.c_str());
  if (piper_plan_session_enable_clip(job.session, axes.size(), axes.data()) !=
      PIPER_RT_OK) {
    error = std::string("clip communicator: ") + piper_rt_last_error();
    return false;
  }
  return true;
}

void Hyperparameters::set(Job &job, int64_t step) const {
  piper_plan_session_set_hyperparameters(
      job.session, train::lrAt(schedule, step), clipMaxNorm);
}
