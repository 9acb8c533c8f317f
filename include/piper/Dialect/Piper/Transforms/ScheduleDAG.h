//===- ScheduleDAG.h - Pipeline schedules on the global DAG -----*- C++ -*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The bridge between the MLIR-free schedule library (piper/Schedule) and the
// global training DAG: which tasks a schedule's actions name, temporal edges
// written for per-device orders (checked for cycles and device groups), and
// the per-rank action lists read back from a scheduled DAG. Shared by the
// `transform.piper.order`/`schedule` directives and
// `--piper-export-schedule`, so that writing and reading agree.
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_DIALECT_PIPER_TRANSFORMS_SCHEDULEDAG_H
#define PIPER_DIALECT_PIPER_TRANSFORMS_SCHEDULEDAG_H

#include "piper/Dialect/Piper/IR/PiperOps.h"
#include "piper/Schedule/Schedule.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/STLFunctionalExtras.h"

#include <map>
#include <optional>
#include <tuple>

namespace mlir::piper {

/// The MLIR-free schedule library, as `sched::` inside Piper's MLIR code.
namespace sched = ::piper::sched;

/// Tasks that may run concurrently: one step of an order.
using OrderGroup = SmallVector<TaskOp>;

/// Makes every task of each group of every sequence run after every task of
/// the group before it in its sequence (`after`). First checks, naming the
/// nodes, that no edge joins tasks of different device groups and that the
/// new edges with the DAG's data and temporal edges form no cycle; on failure
/// reports through `emitError` and changes nothing. All tasks are in `dag`.
LogicalResult addOrderEdges(DAGOp dag,
                            ArrayRef<SmallVector<OrderGroup>> sequences,
                            function_ref<InFlightDiagnostic()> emitError);

/// The nodes of `dag` in a topological order of its data and temporal
/// edges, ties broken by position in the IR (the order every reader of a
/// scheduled DAG uses: schedule export, memory planning); fails on a cycle.
FailureOr<SmallVector<Operation *>> getTopologicalOrder(DAGOp dag);

/// Whether `to` depends on `from` through the data and temporal edges of
/// `dag` (both are nodes of it).
bool dependsOn(DAGOp dag, Operation *to, Operation *from);

/// The tasks of a DAG that pipeline schedules order: forward and backward
/// tasks (`F`, `B`, `BI`, `BW`) with an integer `PP` tag. Updates and
/// untagged work are left to their data edges.
struct PipelineTasks {
  /// (pass, PP, MB) -> the tasks doing that work, in IR order.
  std::map<std::tuple<PassKind, int64_t, int64_t>, OrderGroup> byKey;
  /// Every pipeline task, in IR order, with its rank (coordinate along the
  /// schedule's axis).
  SmallVector<std::pair<TaskOp, int64_t>> tasks;
  int64_t numStages = 0;
  int64_t numMicrobatches = 0;
  int64_t numRanks = 0;
  /// k when every rank holds k > 1 consecutive stages (stage s on rank
  /// s / k), else 1: a one-stage-per-rank schedule then runs each rank's
  /// stages as one (forwards in stage order, backwards in reverse), so a
  /// stage of several chunks is placed and scheduled like one stage.
  int64_t chunksPerRank = 1;

  /// The tasks doing `pass` of stage `pp` on microbatch `mb`, or null.
  const OrderGroup *find(PassKind pass, int64_t pp, int64_t mb) const;
};

/// Collects the pipeline tasks of `dag`. Every one must carry an integer
/// `MB` tag (the DAG is split into microbatches) and a coordinate along
/// `axis` in its device group (it is placed); stages, microbatches and ranks
/// must each be numbered from 0 without gaps. Reports the first violation
/// through `emitError`, naming the node.
FailureOr<PipelineTasks>
collectPipelineTasks(DAGOp dag, StringRef axis,
                     function_ref<InFlightDiagnostic()> emitError);

/// Where the library's (stage, microbatch) lives in the DAG: a schedule with
/// two chains (bidirectional DualPipe) runs the DAG's stages twice, chain c
/// on microbatches c * numMicrobatches and up.
struct DAGCoordinates {
  int64_t pp, mb;
};
DAGCoordinates toDAG(const sched::Schedule &schedule, int stage,
                     int microbatch);

/// Writes `schedule` onto `dag` as temporal edges, one sequence of groups
/// per rank (see `transform.piper.schedule`), and marks overlapped F&B
/// pairs. Checks that the DAG has the tasks of every action and that each
/// sits on the rank the schedule runs its stage on; reports through
/// `emitError` and changes nothing on failure.
LogicalResult applySchedule(DAGOp dag, const PipelineTasks &tasks,
                            const sched::Schedule &schedule,
                            function_ref<InFlightDiagnostic()> emitError);

/// Reads back each rank's action list from `dag`: ranks are the tasks'
/// coordinates along `axis`, the order on a rank is a topological order of
/// the data and temporal edges (ties broken by position in the IR), a `BI`
/// and `BW` of one stage and microbatch with the same `after` list (one
/// order group) are one `B` action, and a forward whose `overlap` names a
/// backward is one F&B pair. A stage placed on two ranks is read as the two
/// directions of DualPipe (microbatches below m/2 in the first).
FailureOr<sched::Schedule>
recoverSchedule(DAGOp dag, StringRef axis,
                function_ref<InFlightDiagnostic()> emitError);

} // namespace mlir::piper

#endif // PIPER_DIALECT_PIPER_TRANSFORMS_SCHEDULEDAG_H
