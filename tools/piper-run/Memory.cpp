//===- Memory.cpp - Each rank's peak bytes --------------------------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "Memory.h"

#include <cstdint>

using namespace piper;
using namespace piper::run;

bool piper::run::reportPeakBytes(Job &job, const std::vector<HostTensor> &args,
                                 const std::vector<HostTensor> &results,
                                 std::string &text, std::string &error) {
  const plan::Role &role = job.role();
  int64_t mine[2] = {0, 0};
  for (int64_t i : role.inputs)
    mine[0] += static_cast<int64_t>(args[i].bytes());
  for (int64_t j : role.outputs)
    mine[0] += static_cast<int64_t>(results[j].bytes());
  piper_plan_buffer_stats stats;
  piper_plan_session_buffer_stats(job.session, &stats);
  mine[1] = static_cast<int64_t>(stats.peak_bytes);
  for (int from = 0; from < static_cast<int>(job.roleOf.size()); ++from) {
    int64_t theirs[2] = {mine[0], mine[1]};
    // Below the loss's and --params-out's tags.
    if (job.context &&
        piper_plan_session_move(job.session, theirs, 2, PIPER_RT_I64, from, 0,
                                PIPER_RT_MAX_TAG - 3) != PIPER_RT_OK) {
      error = "--peak-bytes: moving rank " + std::to_string(from) +
              "'s figures to rank 0: " + piper_rt_last_error();
      return false;
    }
    if (job.rank == 0)
      text += "rank " + std::to_string(from) + ": peak " +
              std::to_string(theirs[0] + theirs[1]) + " bytes (plan buffers " +
              std::to_string(theirs[1]) + ", arguments and results " +
              std::to_string(theirs[0]) + ")\n";
  }
  return true;
}
