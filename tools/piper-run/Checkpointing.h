//===- Checkpointing.h - piper-run's checkpoint flags -----------*- C++ -*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// --save=DIR [--save-every=K] [--keep=N], --resume=DIR and --init-from=FILE
// (docs/Checkpoints.md): the driver's side of the runtime's checkpoint
// library (piper-rt/checkpoint.h). The flags live here, in their own
// option category.
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_TOOLS_PIPER_RUN_CHECKPOINTING_H
#define PIPER_TOOLS_PIPER_RUN_CHECKPOINTING_H

#include "HostTensor.h"
#include "Job.h"

#include "piper-rt/checkpoint.h"

#include "llvm/Support/CommandLine.h"

#include <memory>

namespace piper::run {

/// The checkpoint flags' category (shown by --help beside piper-run's).
llvm::cl::OptionCategory &checkpointCategory();

class Checkpointing {
public:
  /// Before the first step, after parameters are initialised: restores
  /// --resume's checkpoint (parameters, optimizer state, step, seed) or
  /// --init-from's weights into `args`, and prepares --save. `seed` is the
  /// run's (a resumed run takes the checkpoint's; `seedGiven`: --seed was
  /// passed, and must then agree); `firstStep` is set to the step to run
  /// next.
  bool begin(const plan::Manifest &manifest, const std::string &planDir,
             Job &job, std::vector<HostTensor> &args, uint64_t &seed,
             bool seedGiven, const std::string &dataFile, int64_t &firstStep,
             std::string &error);
  /// Whether begin's error is one every rank meets alike (flags, the
  /// index, another model): then rank 0 alone reports it.
  bool commonError = true;
  /// After step `step` (of `lastStep`) has updated `args`.
  bool afterStep(int64_t step, int64_t lastStep, std::vector<HostTensor> &args,
                 std::string &error);
  /// Whether --save is on.
  bool saves() const { return saver != nullptr; }
  /// Commits the save in flight, if any; prints --ckpt-stats.
  bool finish(std::string &error);
  ~Checkpointing();

private:
  std::unique_ptr<ckpt::Saver> saver;
  int64_t readBytes = 0;
  double readSeconds = 0;
  const plan::Role *role = nullptr;
  int rank = 0;
};

} // namespace piper::run

#endif // PIPER_TOOLS_PIPER_RUN_CHECKPOINTING_H
