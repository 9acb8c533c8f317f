//===- ScheduleDAG.cpp - Pipeline schedules on the global DAG -------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "piper/Dialect/Piper/Transforms/ScheduleDAG.h"
#include "piper/Dialect/Piper/Transforms/ChunkUtils.h"
#include "piper/Schedule/Simulator.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringMap.h"

#include <set>

using namespace mlir;
using namespace mlir::piper;

namespace {

/// The nodes of a DAG (IR order) with their data and temporal successors.
struct NodeGraph {
  SmallVector<Operation *> nodes;
  DenseMap<Operation *, unsigned> index;
  std::vector<SmallVector<unsigned>> successors;

  explicit NodeGraph(DAGOp dag) {
    for (Operation &node : dag.getBody().front().without_terminator()) {
      index[&node] = nodes.size();
      nodes.push_back(&node);
    }
    successors.resize(nodes.size());
    llvm::StringMap<unsigned> byName;
    for (auto [i, node] : llvm::enumerate(nodes))
      byName[getNodeName(node)] = i;
    for (auto [i, node] : llvm::enumerate(nodes)) {
      for (Operation *user : node->getUsers())
        if (auto it = index.find(user); it != index.end())
          successors[i].push_back(it->second);
      if (auto task = dyn_cast<TaskOp>(node))
        for (StringRef before : task.getAfter().getAsValueRange<StringAttr>())
          if (auto it = byName.find(before); it != byName.end())
            successors[it->second].push_back(i);
    }
  }

  void addEdge(Operation *from, Operation *to) {
    successors[index.lookup(from)].push_back(index.lookup(to));
  }

  /// The nodes of one cycle, first node repeated at the end, or empty.
  /// Depth-first from each node in IR order, so the answer is deterministic.
  SmallVector<Operation *> findCycle() const {
    enum Color : char { White, Grey, Black };
    std::vector<Color> color(nodes.size(), White);
    for (unsigned root = 0; root < nodes.size(); ++root) {
      if (color[root] != White)
        continue;
      // (node, next successor to visit)
      SmallVector<std::pair<unsigned, unsigned>> stack = {{root, 0}};
      color[root] = Grey;
      while (!stack.empty()) {
        auto &[node, next] = stack.back();
        if (next == successors[node].size()) {
          color[node] = Black;
          stack.pop_back();
          continue;
        }
        unsigned succ = successors[node][next++];
        if (color[succ] == Grey) {
          SmallVector<Operation *> cycle;
          auto start = llvm::find_if(
              stack, [&](auto &frame) { return frame.first == succ; });
          for (auto it = start; it != stack.end(); ++it)
            cycle.push_back(nodes[it->first]);
          cycle.push_back(nodes[succ]);
          return cycle;
        }
        if (color[succ] == White) {
          color[succ] = Grey;
          stack.push_back({succ, 0});
        }
      }
    }
    return {};
  }

  /// A topological order, ties broken by IR position; fails on a cycle.
  FailureOr<SmallVector<Operation *>> topologicalOrder() const {
    std::vector<unsigned> pending(nodes.size(), 0);
    for (const auto &succs : successors)
      for (unsigned s : succs)
        ++pending[s];
    std::set<unsigned> ready;
    for (unsigned i = 0; i < nodes.size(); ++i)
      if (pending[i] == 0)
        ready.insert(i);
    SmallVector<Operation *> order;
    while (!ready.empty()) {
      unsigned i = *ready.begin();
      ready.erase(ready.begin());
      order.push_back(nodes[i]);
      for (unsigned s : successors[i])
        if (--pending[s] == 0)
          ready.insert(s);
    }
    if (order.size() != nodes.size())
      return failure();
    return order;
  }
};

std::string formatCycle(ArrayRef<Operation *> cycle) {
  std::string text;
  llvm::raw_string_ostream os(text);
  llvm::interleave(
      cycle, os,
      [&](Operation *node) { os << "'" << getNodeName(node) << "'"; }, " -> ");
  return text;
}

std::string formatGroup(DictionaryAttr devices) {
  return devices ? formatDeviceGroup(devices) : std::string("no device group");
}

bool isPipelinePass(PassKind pass) {
  return pass == PassKind::F || pass == PassKind::B || pass == PassKind::BI ||
         pass == PassKind::BW;
}

/// `after` as a set, to compare the order groups of two tasks.
llvm::SmallDenseSet<StringRef> afterSet(TaskOp task) {
  llvm::SmallDenseSet<StringRef> set;
  for (StringRef name : task.getAfter().getAsValueRange<StringAttr>())
    set.insert(name);
  return set;
}

} // namespace

//===----------------------------------------------------------------------===//
// Order edges
//===----------------------------------------------------------------------===//

LogicalResult
mlir::piper::addOrderEdges(DAGOp dag,
                           ArrayRef<SmallVector<OrderGroup>> sequences,
                           function_ref<InFlightDiagnostic()> emitError) {
  NodeGraph graph(dag);
  // New predecessors per task, in the order the sequences give them.
  llvm::MapVector<Operation *, llvm::SetVector<StringRef>> added;
  for (const SmallVector<OrderGroup> &sequence : sequences) {
    for (size_t k = 0; k + 1 < sequence.size(); ++k) {
      for (TaskOp before : sequence[k]) {
        for (TaskOp later : sequence[k + 1]) {
          if (before.getDevicesAttr() != later.getDevicesAttr())
            return emitError()
                   << "cannot order '" << later.getName() << "' on "
                   << formatGroup(later.getDevicesAttr()) << " after '"
                   << before.getName() << "' on "
                   << formatGroup(before.getDevicesAttr())
                   << ": temporal edges stay within one device group";
          graph.addEdge(before, later);
          added[later].insert(before.getName());
        }
      }
    }
  }
  SmallVector<Operation *> cycle = graph.findCycle();
  if (!cycle.empty())
    return emitError() << "the order would form a cycle: "
                       << formatCycle(cycle);
  Builder builder(dag.getContext());
  for (auto &[op, names] : added) {
    auto task = cast<TaskOp>(op);
    llvm::SetVector<StringRef> after;
    for (StringRef name : task.getAfter().getAsValueRange<StringAttr>())
      after.insert(name);
    after.insert(names.begin(), names.end());
    task.setAfterAttr(builder.getStrArrayAttr(after.getArrayRef()));
  }
  return success();
}

FailureOr<SmallVector<Operation *>>
mlir::piper::getTopologicalOrder(DAGOp dag) {
  return NodeGraph(dag).topologicalOrder();
}

bool mlir::piper::dependsOn(DAGOp dag, Operation *to, Operation *from) {
  NodeGraph graph(dag);
  unsigned target = graph.index.lookup(to);
  std::vector<bool> seen(graph.nodes.size(), false);
  SmallVector<unsigned> work = {graph.index.lookup(from)};
  while (!work.empty()) {
    unsigned node = work.pop_back_val();
    for (unsigned succ : graph.successors[node]) {
      if (succ == target)
        return true;
      if (!seen[succ]) {
        seen[succ] = true;
        work.push_back(succ);
      }
    }
  }
  return false;
}

//===----------------------------------------------------------------------===//
// Pipeline tasks
//===----------------------------------------------------------------------===//

const OrderGroup *PipelineTasks::find(PassKind pass, int64_t pp,
                                      int64_t mb) const {
  auto it = byKey.find({pass, pp, mb});
  return it == byKey.end() ? nullptr : &it->second;
}

FailureOr<PipelineTasks> mlir::piper::collectPipelineTasks(
    DAGOp dag, StringRef axis, function_ref<InFlightDiagnostic()> emitError) {
  PipelineTasks result;
  std::set<int64_t> stages, microbatches, ranks;
  for (auto task : dag.getBody().getOps<TaskOp>()) {
    std::optional<int64_t> pp = getIntTag(task.getTags(), "PP");
    if (!pp || !isPipelinePass(task.getPass()))
      continue;
    std::optional<int64_t> mb = getIntTag(task.getTags(), "MB");
    if (!mb)
      return emitError() << "node '" << task.getName()
                         << "' has no MB tag; split the DAG into "
                            "microbatches (transform.piper.split) first";
    std::optional<int64_t> rank = getIntTag(task.getDevicesAttr(), axis);
    if (!rank)
      return emitError() << "node '" << task.getName()
                         << "' has no coordinate along '" << axis
                         << "'; place the stages (transform.piper.place) "
                            "first";
    stages.insert(*pp);
    microbatches.insert(*mb);
    ranks.insert(*rank);
    result.byKey[{task.getPass(), *pp, *mb}].push_back(task);
    result.tasks.push_back({task, *rank});
  }
  if (result.tasks.empty())
    return emitError() << "the DAG has no forward or backward task with a PP "
                          "tag to schedule";
  auto dense = [&](const std::set<int64_t> &set, StringRef what,
                   StringRef key) -> LogicalResult {
    int64_t expected = 0;
    for (int64_t value : set) {
      if (value != expected)
        return emitError() << "no pipeline task has " << key << " = "
                           << expected << ", but one has " << key << " = "
                           << value << ": " << what
                           << " must be numbered from 0 without gaps";
      ++expected;
    }
    return success();
  };
  if (failed(dense(stages, "stages", "PP")) ||
      failed(dense(microbatches, "microbatches", "MB")) ||
      failed(dense(ranks, "ranks", axis)))
    return failure();
  result.numStages = stages.size();
  result.numMicrobatches = microbatches.size();
  result.numRanks = ranks.size();
  if (result.numStages > result.numRanks &&
      result.numStages % result.numRanks == 0) {
    int64_t k = result.numStages / result.numRanks;
    if (llvm::all_of(result.tasks, [&](auto entry) {
          return *getIntTag(entry.first.getTags(), "PP") / k == entry.second;
        }))
      result.chunksPerRank = k;
  }
  return result;
}

DAGCoordinates mlir::piper::toDAG(const sched::Schedule &schedule, int stage,
                                  int microbatch) {
  int chain = stage / schedule.stagesPerChain();
  return {stage % schedule.stagesPerChain(),
          microbatch + int64_t(chain) * schedule.numMicrobatches};
}

//===----------------------------------------------------------------------===//
// Writing a schedule
//===----------------------------------------------------------------------===//

LogicalResult
mlir::piper::applySchedule(DAGOp dag, const PipelineTasks &tasks,
                           const sched::Schedule &schedule,
                           function_ref<InFlightDiagnostic()> emitError) {
  DenseMap<Operation *, int64_t> rankOf;
  for (auto [task, rank] : tasks.tasks)
    rankOf[task] = rank;
  DenseSet<Operation *> covered;

  // A library stage is `chunks` consecutive DAG stages when the schedule
  // runs fewer stages than the DAG has (PipelineTasks::chunksPerRank).
  int64_t chunks = tasks.numStages / schedule.stagesPerChain();
  // The tasks of one computation, checked to be on `rank`.
  auto tasksOf = [&](const sched::Compute &compute, int rank,
                     OrderGroup &group) -> LogicalResult {
    DAGCoordinates at = toDAG(schedule, compute.stage, compute.microbatch);
    auto takeChunk = [&](PassKind pass, int64_t pp) -> LogicalResult {
      at.pp = pp;
      const OrderGroup *found = tasks.find(pass, at.pp, at.mb);
      if (!found)
        return emitError() << schedule.name << " runs " << compute.str()
                           << ", but no task has PASS = "
                           << stringifyPassKind(pass) << ", PP = " << at.pp
                           << " and MB = " << at.mb;
      for (TaskOp task : *found) {
        if (rankOf.lookup(task) != rank)
          return emitError() << "node '" << task.getName() << "' is on "
                             << formatGroup(task.getDevicesAttr()) << ", but "
                             << schedule.name << " runs its action "
                             << compute.str() << " on rank " << rank;
        covered.insert(task);
        group.push_back(task);
      }
      return success();
    };
    // Forwards run a library stage's chunks in order, backwards in reverse.
    int64_t first = at.pp * chunks;
    auto take = [&](PassKind pass) -> LogicalResult {
      for (int64_t c = 0; c < chunks; ++c)
        if (failed(takeChunk(pass, pass == PassKind::F
                                       ? first + c
                                       : first + chunks - 1 - c)))
          return failure();
      return success();
    };
    switch (compute.kind) {
    case sched::Kind::F:
      return take(PassKind::F);
    case sched::Kind::I:
      return take(PassKind::BI);
    case sched::Kind::W:
      return take(PassKind::BW);
    case sched::Kind::B:
      // A backward not split by autodiff is one task; a split one is both.
      if (tasks.find(PassKind::B, first, at.mb))
        return take(PassKind::B);
      if (failed(take(PassKind::BI)))
        return failure();
      return take(PassKind::BW);
    }
    llvm_unreachable("unknown action kind");
  };

  std::vector<SmallVector<OrderGroup>> sequences(schedule.numRanks);
  SmallVector<std::pair<TaskOp, TaskOp>> overlaps;
  for (int rank = 0; rank < schedule.numRanks; ++rank) {
    for (const sched::Action &action : schedule.ranks[rank]) {
      OrderGroup group;
      if (failed(tasksOf(action.first, rank, group)))
        return failure();
      if (action.overlapped) {
        size_t forwardEnd = group.size();
        if (failed(tasksOf(*action.overlapped, rank, group)))
          return failure();
        // One forward task with the first task of the backward: the pair a
        // runtime co-schedules (the weight gradient follows its input
        // gradient through their data edge).
        if (forwardEnd == 1)
          overlaps.push_back({group[0], group[1]});
      }
      sequences[rank].push_back(std::move(group));
    }
  }
  for (auto [task, rank] : tasks.tasks)
    if (!covered.contains(task))
      return emitError() << "node '" << task.getName() << "' is not in "
                         << schedule.name << "'s actions";
  if (failed(addOrderEdges(dag, sequences, emitError)))
    return failure();
  for (auto [forward, backward] : overlaps) {
    forward.setOverlapAttr(backward.getNameAttr());
    backward.setOverlapAttr(forward.getNameAttr());
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Reading a schedule back
//===----------------------------------------------------------------------===//

FailureOr<sched::Schedule>
mlir::piper::recoverSchedule(DAGOp dag, StringRef axis,
                             function_ref<InFlightDiagnostic()> emitError) {
  FailureOr<PipelineTasks> tasks = collectPipelineTasks(dag, axis, emitError);
  if (failed(tasks))
    return failure();
  int64_t numStages = tasks->numStages,
          numMicrobatches = tasks->numMicrobatches;

  // One direction unless a stage runs on two ranks (DualPipe).
  DenseMap<Operation *, int64_t> rankOf;
  std::map<int64_t, std::set<int64_t>> ranksOfStage;
  for (auto [task, rank] : tasks->tasks) {
    rankOf[task] = rank;
    ranksOfStage[*getIntTag(task.getTags(), "PP")].insert(rank);
  }
  int chains = 1;
  for (auto &[stage, ranks] : ranksOfStage)
    if (ranks.size() > 1)
      chains = 2;
  if (chains == 2 && numMicrobatches % 2 != 0)
    return emitError() << "stages run on two ranks each, as in DualPipe, "
                          "but the number of microbatches ("
                       << numMicrobatches << ") is odd";
  int64_t perChain = numMicrobatches / chains;
  auto stageOf = [&](TaskOp task) {
    int64_t pp = *getIntTag(task.getTags(), "PP");
    int64_t mb = *getIntTag(task.getTags(), "MB");
    return std::make_pair(int(pp + (mb / perChain) * numStages),
                          int(mb % perChain));
  };
  std::vector<int> stageToRank(numStages * chains, -1);
  for (auto [task, rank] : tasks->tasks) {
    int &slot = stageToRank[stageOf(task).first];
    if (slot != -1 && slot != rank)
      return emitError() << "stage " << *getIntTag(task.getTags(), "PP")
                         << " is placed on " << axis << " = " << slot << " and "
                         << axis << " = " << rank
                         << " for microbatches of one direction";
    slot = rank;
  }

  NodeGraph graph(dag);
  FailureOr<SmallVector<Operation *>> order = graph.topologicalOrder();
  if (failed(order))
    return emitError() << "the DAG's edges form a cycle: "
                       << formatCycle(graph.findCycle());

  llvm::StringMap<TaskOp> byName;
  for (auto [task, rank] : tasks->tasks)
    byName[task.getName()] = task;
  auto kindOf = [](PassKind pass) {
    switch (pass) {
    case PassKind::F:
      return sched::Kind::F;
    case PassKind::BI:
      return sched::Kind::I;
    case PassKind::BW:
      return sched::Kind::W;
    default:
      return sched::Kind::B;
    }
  };

  sched::Schedule schedule;
  schedule.name = dag->getParentOfType<func::FuncOp>()
                      ? dag->getParentOfType<func::FuncOp>().getSymName().str()
                      : "dag";
  schedule.numRanks = tasks->numRanks;
  schedule.numStages = numStages * chains;
  schedule.numMicrobatches = perChain;
  schedule.numChains = chains;
  schedule.stageToRank = stageToRank;
  schedule.ranks.resize(tasks->numRanks);

  DenseSet<Operation *> done;
  // The computation `task` performs with the rest of its group, marking the
  // group done: a BI whose BW shares its order group is a full backward.
  auto consume = [&](TaskOp task) {
    int64_t pp = *getIntTag(task.getTags(), "PP");
    int64_t mb = *getIntTag(task.getTags(), "MB");
    auto [stage, microbatch] = stageOf(task);
    sched::Compute compute{kindOf(task.getPass()), stage, microbatch};
    for (TaskOp member : *tasks->find(task.getPass(), pp, mb))
      done.insert(member);
    if (task.getPass() == PassKind::BI)
      if (const OrderGroup *weights = tasks->find(PassKind::BW, pp, mb);
          weights && !done.contains(weights->front()) &&
          rankOf.lookup(weights->front()) == rankOf.lookup(task) &&
          afterSet(weights->front()) == afterSet(task)) {
        compute.kind = sched::Kind::B;
        for (TaskOp member : *weights)
          done.insert(member);
      }
    return compute;
  };
  for (Operation *node : *order) {
    auto task = dyn_cast<TaskOp>(node);
    if (!task || !rankOf.count(task) || done.contains(task))
      continue;
    int64_t rank = rankOf.lookup(task);
    TaskOp partner;
    if (StringAttr overlap = task.getOverlapAttr())
      partner = byName.lookup(overlap.getValue());
    if (partner && !done.contains(partner) && rankOf.lookup(partner) == rank &&
        (task.getPass() == PassKind::F) != (partner.getPass() == PassKind::F)) {
      TaskOp forward = task.getPass() == PassKind::F ? task : partner;
      TaskOp backward = forward == task ? partner : task;
      sched::Action action(consume(forward));
      action.overlapped = consume(backward);
      schedule.ranks[rank].push_back(action);
      continue;
    }
    schedule.ranks[rank].push_back(sched::Action(consume(task)));
  }
  if (sched::Status status = sched::validate(schedule); !status)
    return emitError() << "the DAG's order is not a valid pipeline schedule: "
                       << status.error();
  return schedule;
}
