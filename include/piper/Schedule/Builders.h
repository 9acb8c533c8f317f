//===- Builders.h - Built-in pipeline schedules -----------------*- C++ -*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Builders of the published pipeline schedules as per-rank action lists.
// Each checks its constraints first and returns an Error whose text names the
// constraint and the offending numbers; docs/Schedules.md lists them.
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_SCHEDULE_BUILDERS_H
#define PIPER_SCHEDULE_BUILDERS_H

#include "piper/Schedule/Schedule.h"

#include <string_view>
#include <vector>

namespace piper::sched {

/// All forwards, then all backwards (Huang et al. 2019). p stages on p ranks.
Result<Schedule> buildGPipe(int p, int m);

/// One forward one backward (PipeDream-flush / Megatron). Needs m >= p.
Result<Schedule> build1F1B(int p, int m);

/// Megatron's interleaved 1F1B: v stages per rank, stage s on rank s % p.
/// Needs m to be a multiple of p, as Megatron requires.
Result<Schedule> buildInterleaved1F1B(int p, int m, int v);

/// Zero bubble ZB-H1 (Qi et al. 2024): 1F1B's memory bound (at most p - r
/// forwards in flight on rank r) with the backward split into I and W and the
/// W passes filling the bubbles. Needs m >= p.
Result<Schedule> buildZBH1(int p, int m);

/// Zero bubble ZB-V: two stages per rank in V order (rank r holds stages r
/// and 2p-1-r), the hand-crafted order of the paper's Section 6.
Result<Schedule> buildZBV(int p, int m);

/// DeepSeek's DualPipe: both directions placed, rank r holds stage r of the
/// rank 0 -> p-1 pipeline and stage p-1-r of the p-1 -> 0 one (two chains,
/// m/2 microbatches each). Needs p even, m even and m >= 2p.
Result<Schedule> buildDualPipe(int p, int m);

/// DualPipeV ("cut in half" DualPipe): R ranks, 2R stages in V order, rank r
/// holds stages r and 2R-1-r. Needs m >= 2R.
Result<Schedule> buildDualPipeV(int ranks, int m);

/// The names buildSchedule accepts, in the order docs list them:
/// gpipe, 1f1b, interleaved-1f1b, zb-h1, zb-v, dualpipe, dualpipev.
const std::vector<std::string_view> &builtinScheduleNames();

/// Builds a built-in schedule by name. `p` is the number of ranks, `v` the
/// number of stages per rank, which only interleaved-1f1b lets one choose
/// (the V schedules always have 2, the others 1).
Result<Schedule> buildSchedule(std::string_view name, int p, int m, int v = 1);

} // namespace piper::sched

#endif // PIPER_SCHEDULE_BUILDERS_H
