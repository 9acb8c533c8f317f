//===- Simulator.h - Validation and event simulation of schedules -*- C++ -*-//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The validator checks that a schedule computes every gradient exactly once
// and can run to completion; the simulator times it under per-kind costs with
// zero communication latency. Both use the same dependency rules:
//
//   F(s)         needs F(s-1)                      (unless s starts its chain)
//   I(s) or B(s) needs F(s) and I-or-B(s+1)        (unless s ends its chain)
//   W(s)         needs I(s)
//
// and each rank runs its list strictly in order.
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_SCHEDULE_SIMULATOR_H
#define PIPER_SCHEDULE_SIMULATOR_H

#include "piper/Schedule/Schedule.h"

#include <optional>
#include <vector>

namespace piper::sched {

/// Checks the schedule's shape (placement, ranges, every action on the rank
/// of its stage), that each (stage, microbatch) runs F exactly once and
/// either B or I and W exactly once, that W follows its I on the rank, and
/// that the per-rank orders admit an execution (no deadlock). The first
/// problem found is returned, naming the actions and ranks involved.
Status validate(const Schedule &schedule);

/// Durations per computation kind. B costs I + W. An overlapped F&B pair
/// costs `overlapFB` if set, else F + B: the upper end, with no gain from
/// overlap, as schedules.md's closed forms assume.
struct Costs {
  double f = 1, i = 1, w = 1;
  std::optional<double> overlapFB;

  double b() const { return i + w; }
  double fb() const { return overlapFB ? *overlapFB : f + b(); }
  double of(const Action &a) const;
};

/// One action's execution interval.
struct Interval {
  double start = 0, end = 0;
};

/// The result of simulating a schedule.
struct Timeline {
  /// times[r][k]: when rank r runs its k-th action.
  std::vector<std::vector<Interval>> times;
  /// Time at which the last action ends.
  double makespan = 0;
  /// busy[r]: total duration of rank r's actions.
  std::vector<double> busy;

  /// Idle time of rank r within [0, makespan].
  double bubble(int rank) const { return makespan - busy[rank]; }
};

/// Validates, then runs each rank's list in order: an action starts once its
/// rank is free and its dependencies have ended (no communication latency).
Result<Timeline> simulate(const Schedule &schedule, const Costs &costs = {});

} // namespace piper::sched

#endif // PIPER_SCHEDULE_SIMULATOR_H
