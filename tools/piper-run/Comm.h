//===- Comm.h - piper-run's multi-rank communication ---------------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The state behind the piper_comm_{send,recv}_<t> shims that compiled plans
// call (see Comm.cpp) and the few runtime operations piper-run itself needs.
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_TOOLS_PIPER_RUN_COMM_H
#define PIPER_TOOLS_PIPER_RUN_COMM_H

#include "piper-rt/piper_rt.h"

#include <string>
#include <utility>
#include <vector>

namespace piper::run {

/// Makes the shims use `context` (created and meshed by piper-run).
bool commStart(piper_rt_context context, std::string &error);
/// Creates the plan's communicators, in list order (every rank calls this
/// with the same list), each bound to a runtime stream named after its
/// stream.
bool commCreate(
    const std::vector<std::pair<std::vector<std::string>, std::string>> &list,
    std::string &error);
/// The running role's program streams in order (what the compiled
/// piper_comm_record/wait calls index).
void commSetProgramStreams(const std::vector<std::string> &names);
/// This rank's index in communicator `index` (0 if there is none).
int commMember(int64_t index);
/// Moves `count` elements from world rank `from` to `to` (a no-op on other
/// ranks and when they are the same): gathering results to rank 0.
bool commSendRecv(void *data, size_t count, piper_rt_dtype dtype, int from,
                  int to, std::string &error);
/// Waits for every send of the step and frees their copies; false, with the
/// first error of the step (a shim's or the wait's), if any failed.
bool commFinishStep(std::string &error);
/// Moves one f64 (the step's loss) from world rank `from` to rank `to`; a
/// no-op on other ranks and when they are the same rank.
bool commMoveScalar(double &value, int from, int to, int self,
                    std::string &error);
/// Frees the shims' streams (before piper_rt_finalize).
void commStop();

} // namespace piper::run

#endif // PIPER_TOOLS_PIPER_RUN_COMM_H
