//===- Memory.h - Each rank's peak bytes ------------------------*- C++ -*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// `--peak-bytes`: what each rank held at most during the run, in bytes. A
// rank holds two things: the step's arguments and results its program reads
// and writes (parameters, optimizer state, the data of a step, the updated
// copies), which this driver allocates once; and everything the plan
// allocates while a step runs (activations, gradients, received values,
// kernel temporaries), served by the session's buffer cache, which keeps
// the high-water mark of its live bytes (plan_abi.h).
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_TOOLS_PIPER_RUN_MEMORY_H
#define PIPER_TOOLS_PIPER_RUN_MEMORY_H

#include "HostTensor.h"
#include "Job.h"

#include <string>
#include <vector>

namespace piper::run {

/// Gathers every rank's peak on rank 0, which appends one line per rank to
/// `text`, in rank order:
///   rank R: peak P bytes (plan buffers B, arguments and results A)
/// with P = A + B, A the bytes of the role's inputs and outputs in `args`
/// and `results`, B the session's high-water mark.
bool reportPeakBytes(Job &job, const std::vector<HostTensor> &args,
                     const std::vector<HostTensor> &results, std::string &text,
                     std::string &error);

} // namespace piper::run

#endif // PIPER_TOOLS_PIPER_RUN_MEMORY_H
