//===- Schedule.cpp - transform.piper.order, overlap and schedule ---------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The scheduling directives: explicit orders, built-in and imported pipeline
// schedules (all three write temporal edges through addOrderEdges, which
// checks device groups and cycles), co-scheduled pairs with SM shares, and
// stream assignment for communication nodes.
//
//===----------------------------------------------------------------------===//

#include "piper/Analysis/TagFilter.h"
#include "piper/Dialect/Piper/IR/PiperDialect.h"
#include "piper/Dialect/Piper/IR/PiperOps.h"
#include "piper/Dialect/Piper/Transforms/ScheduleDAG.h"
#include "piper/Schedule/Builders.h"
#include "piper/Schedule/PyTorchCSV.h"
#include "piper/Schedule/Simulator.h"
#include "piper/TransformOps/PiperTransformOps.h"

#include "mlir/Dialect/Transform/IR/TransformDialect.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"

using namespace mlir;
using namespace mlir::piper;

namespace {

/// Scheduling directives only read their handles and rewrite the payload.
void getScheduleEffects(
    MutableArrayRef<OpOperand> handles,
    SmallVectorImpl<MemoryEffects::EffectInstance> &effects) {
  for (OpOperand &handle : handles)
    transform::onlyReadsHandle(handle, effects);
  transform::modifiesPayload(effects);
}

/// The `piper.dag` ops under the payload of `root`, in IR order.
SmallVector<DAGOp> collectDAGs(transform::TransformState &state, Value root) {
  SmallVector<DAGOp> dags;
  for (Operation *payload : state.getPayloadOps(root))
    payload->walk([&](DAGOp dag) { dags.push_back(dag); });
  return dags;
}

/// Builds the library schedule `name` for the stages, microbatches and ranks
/// found on the DAG. The stages per rank follow from the schedule: one (or
/// several consecutive ones, run as one), two for the V schedules, any
/// whole number for interleaved 1F1B.
sched::Result<sched::Schedule> buildFor(StringRef name,
                                        const PipelineTasks &tasks) {
  int64_t stages = tasks.numStages, ranks = tasks.numRanks;
  auto mismatch = [&](StringRef shape) {
    return sched::Error{(name + " runs " + shape + ", but the DAG has " +
                         Twine(stages) + " stages (PP tags) on " +
                         Twine(ranks) + " ranks")
                            .str()};
  };
  int v = 1;
  if (name == "interleaved-1f1b") {
    if (stages % ranks != 0)
      return mismatch("the same number of stages on every rank");
    v = stages / ranks;
  } else if (name == "zb-v" || name == "dualpipev") {
    if (stages != 2 * ranks)
      return mismatch("two stages per rank");
  } else if (stages != ranks && tasks.chunksPerRank == 1) {
    return mismatch("one stage per rank, or the same number of consecutive "
                    "stages on every rank");
  }
  // Consecutive stages on a rank run as one: the library schedules the
  // ranks, applySchedule expands each into its stages.
  return sched::buildSchedule(name.str(), ranks, tasks.numMicrobatches, v);
}

/// 0.5, 1.1: numbers in diagnostics as users write them.
std::string shortNumber(double value) {
  return llvm::formatv("{0}", llvm::format("%g", value)).str();
}

} // namespace

//===----------------------------------------------------------------------===//
// OrderOp
//===----------------------------------------------------------------------===//

/// The filters of one group: a dictionary, or an array of dictionaries.
static FailureOr<SmallVector<DictionaryAttr>> groupFilters(Attribute group) {
  if (auto filter = dyn_cast<DictionaryAttr>(group))
    return SmallVector<DictionaryAttr>{filter};
  auto list = dyn_cast<ArrayAttr>(group);
  if (!list || list.empty())
    return failure();
  SmallVector<DictionaryAttr> filters;
  for (Attribute entry : list) {
    auto filter = dyn_cast<DictionaryAttr>(entry);
    if (!filter)
      return failure();
    filters.push_back(filter);
  }
  return filters;
}

LogicalResult OrderOp::verify() {
  if (getGroups().empty())
    return emitOpError() << "needs at least one group";
  for (auto [index, group] : llvm::enumerate(getGroups())) {
    FailureOr<SmallVector<DictionaryAttr>> filters = groupFilters(group);
    if (failed(filters))
      return emitOpError() << "group #" << index
                           << " must be a tag filter (a dictionary) or a "
                              "non-empty list of tag filters";
    for (DictionaryAttr filter : *filters)
      if (failed(TagFilter::get(filter, [&]() { return emitOpError(); })))
        return failure();
  }
  return success();
}

DiagnosedSilenceableFailure
OrderOp::apply(transform::TransformRewriter &rewriter,
               transform::TransformResults &results,
               transform::TransformState &state) {
  SmallVector<Operation *> roots =
      llvm::to_vector(state.getPayloadOps(getRoot()));
  SmallVector<OrderGroup> sequence;
  DAGOp dag;
  for (auto [index, group] : llvm::enumerate(getGroups())) {
    OrderGroup tasks;
    // Kept alive for the loop (the verifier checked the group).
    FailureOr<SmallVector<DictionaryAttr>> filters = groupFilters(group);
    for (DictionaryAttr filterAttr : *filters) {
      TagFilter filter =
          *TagFilter::get(filterAttr, [&]() { return emitOpError(); });
      size_t before = tasks.size();
      for (Operation *root : roots)
        for (TaskOp task : filter.collectNodes(root))
          if (!llvm::is_contained(tasks, task))
            tasks.push_back(task);
      if (tasks.size() == before)
        return emitDefiniteFailure() << "filter " << filterAttr << " of group #"
                                     << index << " matches no DAG node";
    }
    for (TaskOp task : tasks) {
      auto parent = task->getParentOfType<DAGOp>();
      if (!dag)
        dag = parent;
      else if (parent != dag)
        return emitDefiniteFailure()
               << "node '" << task.getName()
               << "' is in another DAG than the nodes ordered before it";
    }
    sequence.push_back(std::move(tasks));
  }
  if (failed(addOrderEdges(dag, ArrayRef<SmallVector<OrderGroup>>(sequence),
                           [&]() { return getOperation()->emitError(); })))
    return DiagnosedSilenceableFailure::definiteFailure();
  return DiagnosedSilenceableFailure::success();
}

void OrderOp::getEffects(
    SmallVectorImpl<MemoryEffects::EffectInstance> &effects) {
  getScheduleEffects(getOperation()->getOpOperands(), effects);
}

/// Writes onto every DAG under `root` the schedule `scheduleFor` makes for
/// its pipeline tasks (or the error it returns): shared by `schedule` and
/// `schedule_from_csv`.
template <typename OpTy, typename ScheduleFor>
static DiagnosedSilenceableFailure
scheduleDAGs(OpTy op, transform::TransformState &state,
             ScheduleFor &&scheduleFor) {
  auto emitError = [&]() { return op->emitError(); };
  SmallVector<DAGOp> dags = collectDAGs(state, op.getRoot());
  if (dags.empty())
    return op.emitDefiniteFailure() << "no piper.dag to schedule";
  for (DAGOp dag : dags) {
    FailureOr<PipelineTasks> tasks =
        collectPipelineTasks(dag, op.getAxis(), emitError);
    if (failed(tasks))
      return DiagnosedSilenceableFailure::definiteFailure();
    FailureOr<sched::Schedule> schedule = scheduleFor(*tasks);
    if (failed(schedule))
      return DiagnosedSilenceableFailure::definiteFailure();
    if (failed(applySchedule(dag, *tasks, *schedule, emitError)))
      return DiagnosedSilenceableFailure::definiteFailure();
  }
  return DiagnosedSilenceableFailure::success();
}

//===----------------------------------------------------------------------===//
// ScheduleOp
//===----------------------------------------------------------------------===//

LogicalResult ScheduleOp::verify() {
  const auto &names = sched::builtinScheduleNames();
  if (llvm::is_contained(names, std::string_view(getName())))
    return success();
  std::string known;
  for (std::string_view name : names)
    known += (known.empty() ? "" : ", ") + std::string(name);
  return emitOpError() << "unknown schedule '" << getName()
                       << "'; expected one of " << known;
}

DiagnosedSilenceableFailure
ScheduleOp::apply(transform::TransformRewriter &rewriter,
                  transform::TransformResults &results,
                  transform::TransformState &state) {
  return scheduleDAGs(
      *this, state, [&](PipelineTasks &tasks) -> FailureOr<sched::Schedule> {
        sched::Result<sched::Schedule> schedule = buildFor(getName(), tasks);
        if (!schedule)
          return emitOpError() << schedule.error();
        return std::move(*schedule);
      });
}

void ScheduleOp::getEffects(
    SmallVectorImpl<MemoryEffects::EffectInstance> &effects) {
  getScheduleEffects(getOperation()->getOpOperands(), effects);
}

//===----------------------------------------------------------------------===//
// ScheduleFromCSVOp
//===----------------------------------------------------------------------===//

LogicalResult ScheduleFromCSVOp::verify() {
  if (bool(getFile()) == bool(getText()))
    return emitOpError() << "takes exactly one of `file` and `text`";
  return success();
}

DiagnosedSilenceableFailure
ScheduleFromCSVOp::apply(transform::TransformRewriter &rewriter,
                         transform::TransformResults &results,
                         transform::TransformState &state) {
  std::string text;
  std::string source = "the CSV schedule";
  if (getFile()) {
    auto buffer = llvm::MemoryBuffer::getFile(*getFile());
    if (!buffer)
      return emitDefiniteFailure() << "cannot read '" << *getFile()
                                   << "': " << buffer.getError().message();
    text = (*buffer)->getBuffer().str();
    source = ("'" + *getFile() + "'").str();
  } else {
    text = getText()->str();
  }
  sched::Result<sched::Schedule> schedule = sched::readPyTorchCSV(text);
  if (!schedule)
    return emitDefiniteFailure() << source << ": " << schedule.error();
  if (sched::Status valid = sched::validate(*schedule); !valid)
    return emitDefiniteFailure()
           << source << " is not a valid schedule: " << valid.error();
  schedule->name = source;

  return scheduleDAGs(
      *this, state, [&](PipelineTasks &tasks) -> FailureOr<sched::Schedule> {
        if (tasks.numStages != schedule->numStages ||
            tasks.numMicrobatches != schedule->numMicrobatches ||
            tasks.numRanks != schedule->numRanks) {
          (*this)->emitError()
              << source << " has " << schedule->numStages << " stages, "
              << schedule->numMicrobatches << " microbatches and "
              << schedule->numRanks << " ranks, but the DAG has "
              << tasks.numStages << " stages, " << tasks.numMicrobatches
              << " microbatches and " << tasks.numRanks << " ranks";
          return failure();
        }
        return *schedule;
      });
}

void ScheduleFromCSVOp::getEffects(
    SmallVectorImpl<MemoryEffects::EffectInstance> &effects) {
  getScheduleEffects(getOperation()->getOpOperands(), effects);
}

//===----------------------------------------------------------------------===//
// OverlapOp
//===----------------------------------------------------------------------===//

LogicalResult OverlapOp::verify() {
  if (!getSmShares())
    return success();
  ArrayRef<Attribute> shares = getSmShares()->getValue();
  if (shares.size() != 2)
    return emitOpError() << "sm_shares holds one share per task of a pair, "
                            "got "
                         << shares.size() << " numbers";
  double sum = 0;
  for (Attribute share : shares) {
    double value = cast<FloatAttr>(share).getValueAsDouble();
    if (!(value > 0 && value <= 1))
      return emitOpError() << "SM share " << shortNumber(value)
                           << " is not in (0, 1]";
    sum += value;
  }
  // Shares are decimal fractions; allow for their binary rounding.
  if (sum > 1 + 1e-9)
    return emitOpError() << "SM shares sum to " << shortNumber(sum)
                         << ", more than the whole device";
  return success();
}

DiagnosedSilenceableFailure
OverlapOp::apply(transform::TransformRewriter &rewriter,
                 transform::TransformResults &results,
                 transform::TransformState &state) {
  auto first = llvm::to_vector(state.getPayloadOps(getFirst()));
  auto second = llvm::to_vector(state.getPayloadOps(getSecond()));
  if (first.size() != second.size())
    return emitDefiniteFailure()
           << "pairs the tasks of two handles element by element, but they "
              "hold "
           << first.size() << " and " << second.size() << " ops";
  SmallVector<std::pair<TaskOp, TaskOp>> pairs;
  for (auto [a, b] : llvm::zip(first, second)) {
    for (Operation *op : {a, b})
      if (!isa<TaskOp>(op))
        return emitDefiniteFailure()
               << "overlap acts on DAG tasks (piper.task), got '"
               << op->getName() << "'";
    auto x = cast<TaskOp>(a), y = cast<TaskOp>(b);
    if (x == y)
      return emitDefiniteFailure()
             << "cannot overlap '" << x.getName() << "' with itself";
    for (auto [task, partner] : {std::pair(x, y), std::pair(y, x)})
      if (task.getOverlapAttr() && task.getOverlap() != partner.getName())
        return emitDefiniteFailure()
               << "node '" << task.getName() << "' already overlaps '"
               << *task.getOverlap() << "'";
    auto dag = x->getParentOfType<DAGOp>();
    if (y->getParentOfType<DAGOp>() != dag)
      return emitDefiniteFailure()
             << "cannot overlap '" << x.getName() << "' and '" << y.getName()
             << "' of different DAGs";
    if (x.getDevicesAttr() != y.getDevicesAttr())
      return emitDefiniteFailure()
             << "cannot overlap '" << x.getName() << "' on "
             << (x.getDevicesAttr() ? formatDeviceGroup(x.getDevicesAttr())
                                    : "no device group")
             << " with '" << y.getName() << "' on "
             << (y.getDevicesAttr() ? formatDeviceGroup(y.getDevicesAttr())
                                    : "no device group")
             << ": a pair shares one device group";
    for (auto [later, earlier] : {std::pair(x, y), std::pair(y, x)})
      if (dependsOn(dag, later, earlier))
        return emitDefiniteFailure()
               << "cannot overlap '" << x.getName() << "' with '" << y.getName()
               << "': '" << later.getName() << "' runs after '"
               << earlier.getName() << "' by data or temporal edges";
    pairs.push_back({x, y});
  }
  for (auto [x, y] : pairs) {
    x.setOverlapAttr(y.getNameAttr());
    y.setOverlapAttr(x.getNameAttr());
    if (ArrayAttr shares = getSmSharesAttr()) {
      x.setSmShareAttr(cast<FloatAttr>(shares[0]));
      y.setSmShareAttr(cast<FloatAttr>(shares[1]));
    }
  }
  return DiagnosedSilenceableFailure::success();
}

void OverlapOp::getEffects(
    SmallVectorImpl<MemoryEffects::EffectInstance> &effects) {
  getScheduleEffects(getOperation()->getOpOperands(), effects);
}

//===----------------------------------------------------------------------===//
// SetStreamOp
//===----------------------------------------------------------------------===//

LogicalResult SetStreamOp::verify() {
  if (getStream().empty())
    return emitOpError() << "needs a non-empty stream name";
  return success();
}

DiagnosedSilenceableFailure
SetStreamOp::apply(transform::TransformRewriter &rewriter,
                   transform::TransformResults &results,
                   transform::TransformState &state) {
  auto payload = llvm::to_vector(state.getPayloadOps(getNodes()));
  for (Operation *op : payload)
    if (!isa<TransferOp, CollectiveOp>(op))
      return emitDefiniteFailure()
             << "set_stream acts on communication nodes (piper.transfer, "
                "piper.collective), got '"
             << op->getName() << "'";
  for (Operation *op : payload) {
    if (auto transfer = dyn_cast<TransferOp>(op))
      transfer.setStreamAttr(getStreamAttr());
    else
      cast<CollectiveOp>(op).setStreamAttr(getStreamAttr());
  }
  return DiagnosedSilenceableFailure::success();
}

void SetStreamOp::getEffects(
    SmallVectorImpl<MemoryEffects::EffectInstance> &effects) {
  getScheduleEffects(getOperation()->getOpOperands(), effects);
}
