//===- MemoryPlan.cpp - memory planning per device ------------------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// How much memory one device of each device group needs for a training
// step, before anything runs. Each group's nodes are walked in the order it
// runs them: its tasks in the DAG's topological order (data and temporal
// edges, ties broken by IR position: the schedule the directives wrote),
// communication as a runtime issues it. A value is live from the step that
// produces it to its last use in the group; parameters and optimizer state
// live throughout. See docs/Memory.md for the rules and worked numbers.
//
//===----------------------------------------------------------------------===//

#include "MemoryFacts.h"

#include "piper/Dialect/Piper/Transforms/MemoryPlan.h"
#include "piper/Dialect/Piper/Transforms/ScheduleDAG.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include "llvm/ADT/EquivalenceClasses.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SetVector.h"

#include <functional>
#include <map>
#include <set>

using namespace mlir;
using namespace mlir::piper;
using namespace mlir::piper::memory;

StringRef mlir::piper::stringifyMemoryKind(MemoryKind kind) {
  switch (kind) {
  case MemoryKind::Params:
    return "params";
  case MemoryKind::Grads:
    return "grads";
  case MemoryKind::OptimizerState:
    return "optimizer";
  case MemoryKind::Activations:
    return "activations";
  case MemoryKind::CommBuffers:
    return "comm";
  case MemoryKind::Other:
    return "other";
  }
  llvm_unreachable("unknown memory kind");
}

int64_t MemoryBreakdown::total() const {
  int64_t sum = 0;
  for (int64_t b : bytes)
    sum += b;
  return sum;
}

namespace {

/// Whether a microbatch's contribution to an accumulator is added into it
/// as it is produced: a task's output, or (ZeRO-2/3 under `split`) the
/// shard a reduce-scatter of it yields.
bool isAddedInPlace(Value contribution) {
  if (contribution.getDefiningOp<TaskOp>())
    return true;
  auto collective = contribution.getDefiningOp<CollectiveOp>();
  return collective && collective.getKind() == CollectiveKind::ReduceScatter;
}

/// The reduce-scatter whose shard `node`'s result holds: `node` itself, or
/// the one feeding an accumulator of shards; null otherwise.
CollectiveOp reduceScatterOf(Operation *node) {
  if (auto accumulate = dyn_cast_or_null<AccumulateOp>(node))
    node = accumulate.getValues().front().getDefiningOp();
  auto collective = dyn_cast_or_null<CollectiveOp>(node);
  return collective && collective.getKind() == CollectiveKind::ReduceScatter
             ? collective
             : CollectiveOp();
}

/// The plan of one group, from its nodes in order.
DeviceMemoryPlan planGroup(std::string group, DictionaryAttr devices,
                           SmallVector<Member> order, DAGOp dag,
                           DAGFacts &facts) {
  DeviceMemoryPlan plan;
  plan.group = std::move(group);
  plan.devices = devices;
  unsigned numSteps = order.size();
  unsigned last = numSteps ? numSteps - 1 : 0;

  DenseMap<Value, unsigned> defStep, lastUse;
  // Values stored in place in another value's buffer (an all-reduce, a
  // ZeRO-1 reduce-scatter, a gradient contribution added into its
  // accumulator as it is produced).
  llvm::EquivalenceClasses<Value> aliases;
  // Updated parameters and state are written in place into the persistent
  // buffers they replace: no bytes of their own.
  DenseSet<Value> inPlace;
  // Step arguments used, in first-use order.
  llvm::SetVector<BlockArgument> args;
  SmallVector<std::pair<unsigned, int64_t>> bodyComm;

  auto use = [&](Value value, unsigned step) {
    if (auto arg = dyn_cast<BlockArgument>(value))
      args.insert(arg);
    unsigned &at = lastUse[value];
    at = std::max(at, step);
  };
  for (auto [step, member] : llvm::enumerate(order)) {
    plan.steps.push_back(member.node);
    Operation *node = member.node;
    if (member.role == Role::Recv) {
      defStep[node->getResult(0)] = step;
      continue;
    }
    if (member.role == Role::Send) {
      use(node->getOperand(0), step);
      continue;
    }
    for (Value result : node->getResults())
      defStep[result] = step;
    for (Value operand : node->getOperands())
      use(operand, step);
    if (auto task = dyn_cast<TaskOp>(node)) {
      if (task.getPass() == PassKind::UPD)
        for (Value output : task.getOutputs())
          inPlace.insert(output);
      if (int64_t bytes = facts.bodyCollectiveBytes(task))
        bodyComm.push_back({unsigned(step), bytes});
    } else if (auto collective = dyn_cast<CollectiveOp>(node)) {
      Value input = collective.getValue();
      if (inPlace.contains(input)) {
        inPlace.insert(collective.getResult());
      } else if (defStep.count(input)) {
        bool zero1 = false;
        if (collective.getKind() == CollectiveKind::ReduceScatter)
          if (ParamAttr param = facts.paramOfGradient(collective.getResult()))
            zero1 = facts.sharding(param.getName()).zero == 1;
        if (collective.getKind() == CollectiveKind::AllReduce || zero1)
          aliases.unionSets(input, collective.getResult());
      }
    } else if (auto accumulate = dyn_cast<AccumulateOp>(node)) {
      aliases.insert(accumulate.getResult());
      for (Value contribution : accumulate.getValues())
        if (isAddedInPlace(contribution) && defStep.count(contribution) &&
            contribution.hasOneUse())
          aliases.unionSets(accumulate.getResult(), contribution);
    }
  }
  for (Value result : dag.getBody().front().getTerminator()->getOperands())
    if (defStep.count(result))
      use(result, last);

  // Buffers of the values this group computes or receives, one per class
  // of aliases, in step order. The class's kind and bytes are those of its
  // leader as chosen below: the value that allocates (the earliest).
  DenseMap<Value, unsigned> bufferOf;
  SmallVector<std::pair<unsigned, Value>> defined;
  for (auto &[value, step] : defStep)
    defined.push_back({step, value});
  // One node per step: its results in order.
  auto resultNumber = [](Value value) {
    auto result = dyn_cast<OpResult>(value);
    return result ? result.getResultNumber() : 0u;
  };
  llvm::sort(defined, [&](auto &a, auto &b) {
    return std::make_pair(a.first, resultNumber(a.second)) <
           std::make_pair(b.first, resultNumber(b.second));
  });
  auto classify = [&](Value value, Operation *node, MemoryBuffer &buffer) {
    // What one device holds: tensor-parallel bodies keep split channels.
    buffer.bytes = getTensorBytes(value.getType()) / facts.localDivisor(value);
    if (facts.isGradient(value)) {
      buffer.kind = MemoryKind::Grads;
      if (ParamAttr param = facts.paramOfGradient(value)) {
        buffer.bytes = facts.splitBytes(param, value.getType());
        if (CollectiveOp collective = reduceScatterOf(node))
          buffer.bytes /= axesSize(collective);
      }
      return;
    }
    if (auto gather = dyn_cast<CollectiveOp>(node);
        gather && gather.getKind() == CollectiveKind::AllGather) {
      if (ParamAttr param = getCarriedParam(gather.getValue())) {
        buffer.kind = MemoryKind::Params;
        buffer.bytes = facts.splitBytes(param, value.getType());
        return;
      }
    }
    if (TaskOp forward = DAGFacts::forwardTask(value)) {
      bool saved = llvm::any_of(value.getUsers(), [&](Operation *user) {
        auto task = dyn_cast<TaskOp>(user);
        return task && isBackward(task.getPass()) &&
               groupName(task.getDevicesAttr()) == plan.group;
      });
      if (saved) {
        buffer.kind = MemoryKind::Activations;
        // An unsplit DAG is one microbatch.
        buffer.microbatch = getIntTag(forward.getTags(), "MB").value_or(0);
        return;
      }
    }
    buffer.kind = isa<TransferOp, CollectiveOp>(node) ? MemoryKind::CommBuffers
                                                      : MemoryKind::Other;
  };
  for (auto &[step, value] : defined) {
    Value leader =
        aliases.contains(value) ? aliases.getLeaderValue(value) : value;
    if (inPlace.contains(value) || inPlace.contains(leader))
      continue;
    unsigned end = std::max(step, lastUse.lookup(value));
    if (auto it = bufferOf.find(leader); it != bufferOf.end()) {
      MemoryBuffer &buffer = plan.buffers[it->second];
      buffer.start = std::min(buffer.start, step);
      buffer.end = std::max(buffer.end, end);
      continue;
    }
    // The class's first value allocates and says what it holds, except
    // that an accumulator speaks for the contributions added into it.
    Value representative = value;
    if (aliases.contains(value))
      for (auto it = aliases.findLeader(value); it != aliases.member_end();
           ++it)
        if (isa_and_nonnull<AccumulateOp>((*it).getDefiningOp()))
          representative = *it;
    MemoryBuffer buffer;
    buffer.value = representative;
    buffer.start = step;
    buffer.end = end;
    classify(representative, representative.getDefiningOp(), buffer);
    bufferOf[leader] = plan.buffers.size();
    plan.buffers.push_back(buffer);
  }

  // A contribution after an accumulator's first is written by the task (or
  // reduce-scatter) that produces it into a buffer of its own and added into
  // the running sum after it (Partition.cpp, foldIntoAccumulators): a task's
  // output right away, so it is live for its producer's step beside the sum;
  // a reduce-scatter's shard when the next contribution arrives (or at the
  // accumulator). The first one becomes the sum.
  std::map<unsigned, SmallVector<std::pair<unsigned, Value>>> addedTo;
  for (auto &[step, value] : defined) {
    if (!aliases.contains(value) ||
        isa_and_nonnull<AccumulateOp>(value.getDefiningOp()) ||
        llvm::none_of(value.getUsers(),
                      [](Operation *user) { return isa<AccumulateOp>(user); }))
      continue;
    auto it = bufferOf.find(aliases.getLeaderValue(value));
    if (it != bufferOf.end() &&
        isa_and_nonnull<AccumulateOp>(
            plan.buffers[it->second].value.getDefiningOp()))
      addedTo[it->second].push_back({step, value});
  }
  SmallVector<MemoryBuffer> contributions;
  for (auto &[index, added] : addedTo) {
    const MemoryBuffer &sum = plan.buffers[index];
    unsigned sumStep = defStep.lookup(sum.value);
    for (auto [k, entry] : llvm::enumerate(added)) {
      auto [step, value] = entry;
      if (step == sum.start)
        continue;
      MemoryBuffer buffer = sum;
      buffer.value = value;
      buffer.start = buffer.end = step;
      if (value.getDefiningOp<CollectiveOp>())
        buffer.end =
            k + 1 < added.size() ? added[k + 1].first : std::max(step, sumStep);
      contributions.push_back(buffer);
    }
  }
  plan.buffers.append(contributions.begin(), contributions.end());

  // Step arguments: parameters and state persist; data (unsplit inputs)
  // lives until its last use.
  for (BlockArgument arg : args) {
    MemoryBuffer buffer;
    buffer.value = arg;
    buffer.start = 0;
    buffer.end = last;
    if (ParamAttr param = facts.paramOfArg(arg)) {
      ParamSharding sharding = facts.sharding(param.getName());
      buffer.kind = MemoryKind::Params;
      buffer.persistent = true;
      buffer.bytes = getTensorBytes(arg.getType()) / sharding.split;
      if (sharding.zero == 3)
        buffer.bytes /= sharding.dataParallel;
    } else if (OptStateAttr state = facts.stateOfArg(arg)) {
      buffer.kind = MemoryKind::OptimizerState;
      buffer.persistent = true;
      buffer.bytes = getTensorBytes(arg.getType());
      // Slots shaped like the parameter shard with it; the step counter is
      // a scalar every device keeps.
      if (auto type = dyn_cast<RankedTensorType>(arg.getType());
          type && type.getRank() > 0) {
        ParamSharding sharding = facts.sharding(state.getParam());
        buffer.bytes /= sharding.split;
        if (sharding.zero >= 1)
          buffer.bytes /= sharding.dataParallel;
      }
    } else {
      if (llvm::all_of(arg.getUsers(),
                       [](Operation *user) { return isa<MicrobatchOp>(user); }))
        continue; // the global batch stays with the data loader
      buffer.kind = MemoryKind::Other;
      buffer.bytes = getTensorBytes(arg.getType());
      buffer.end = lastUse.lookup(arg);
    }
    plan.buffers.push_back(buffer);
  }
  for (auto [step, bytes] : bodyComm) {
    MemoryBuffer buffer;
    buffer.kind = MemoryKind::CommBuffers;
    buffer.bytes = bytes;
    buffer.start = buffer.end = step;
    plan.buffers.push_back(buffer);
  }

  // Live bytes per step, from differences at the interval ends.
  std::vector<MemoryBreakdown> delta(numSteps + 1);
  std::map<int64_t, std::vector<int64_t>> perMicrobatch;
  for (const MemoryBuffer &buffer : plan.buffers) {
    delta[buffer.start][buffer.kind] += buffer.bytes;
    delta[buffer.end + 1][buffer.kind] -= buffer.bytes;
    if (buffer.kind == MemoryKind::Activations && buffer.microbatch) {
      std::vector<int64_t> &count = perMicrobatch[*buffer.microbatch];
      count.resize(numSteps + 1, 0);
      ++count[buffer.start];
      --count[buffer.end + 1];
    }
  }
  MemoryBreakdown running;
  for (auto &[mb, count] : perMicrobatch)
    for (unsigned step = 1; step <= numSteps; ++step)
      count[step] += count[step - 1];
  for (unsigned step = 0; step < numSteps; ++step) {
    for (unsigned k = 0; k < kNumMemoryKinds; ++k) {
      running.bytes[k] += delta[step].bytes[k];
      plan.maxPerKind.bytes[k] =
          std::max(plan.maxPerKind.bytes[k], running.bytes[k]);
    }
    plan.live.push_back(running);
    if (running.total() > plan.atPeak.total() || step == 0) {
      plan.atPeak = running;
      plan.peakStep = step;
    }
    int64_t inFlight = 0;
    for (auto &[mb, count] : perMicrobatch)
      inFlight += count[step] > 0;
    plan.maxActivationMicrobatches =
        std::max(plan.maxActivationMicrobatches, inFlight);
  }
  planReuse(plan);
  return plan;
}

} // namespace

FailureOr<std::vector<DeviceMemoryPlan>>
mlir::piper::planMemory(DAGOp dag,
                        function_ref<InFlightDiagnostic()> emitError) {
  // Either every task is placed or none is (one group, every device).
  TaskOp placed, unplaced;
  for (Operation &node : dag.getBody().front().without_terminator())
    if (auto task = dyn_cast<TaskOp>(node)) {
      bool hasGroup = task.getDevicesAttr() && !task.getDevicesAttr().empty();
      if (hasGroup && !placed)
        placed = task;
      if (!hasGroup && !unplaced)
        unplaced = task;
    }
  if (placed && unplaced) {
    emitError() << "node '" << unplaced.getName()
                << "' has no device group, but '" << placed.getName()
                << "' is placed on "
                << formatDeviceGroup(placed.getDevicesAttr())
                << "; place every task (transform.piper.place) before "
                   "planning memory";
    return failure();
  }

  FailureOr<SmallVector<Operation *>> order = getTopologicalOrder(dag);
  if (failed(order)) {
    emitError() << "the DAG's data and temporal edges form a cycle";
    return failure();
  }
  DenseMap<Operation *, unsigned> position;
  for (auto [i, node] : llvm::enumerate(*order))
    position[node] = i;

  // Where accumulators and microbatch slices run: with what they read
  // from, or with their consumers.
  std::function<DictionaryAttr(Value)> home = [&](Value value) {
    Operation *def = value.getDefiningOp();
    if (!def)
      return DictionaryAttr();
    if (auto task = dyn_cast<TaskOp>(def))
      return task.getDevicesAttr();
    if (auto collective = dyn_cast<CollectiveOp>(def))
      return collective.getDevicesAttr();
    if (auto transfer = dyn_cast<TransferOp>(def))
      return transfer.getTo();
    if (auto accumulate = dyn_cast<AccumulateOp>(def))
      return home(accumulate.getValues().front());
    return DictionaryAttr();
  };
  std::map<std::string, std::pair<DictionaryAttr, SmallVector<Member>>> groups;
  auto add = [&](DictionaryAttr devices, Operation *node, Role role) {
    auto &entry = groups[groupName(devices)];
    if (!entry.first && devices && !devices.empty())
      entry.first = devices;
    entry.second.push_back({node, role});
  };
  for (Operation *node : *order) {
    if (auto task = dyn_cast<TaskOp>(node)) {
      add(task.getDevicesAttr(), node, Role::Run);
    } else if (auto collective = dyn_cast<CollectiveOp>(node)) {
      add(collective.getDevicesAttr(), node, Role::Run);
    } else if (auto transfer = dyn_cast<TransferOp>(node)) {
      add(transfer.getFrom(), node, Role::Send);
      add(transfer.getTo(), node, Role::Recv);
    } else if (auto accumulate = dyn_cast<AccumulateOp>(node)) {
      add(home(accumulate.getValues().front()), node, Role::Run);
    } else if (auto microbatch = dyn_cast<MicrobatchOp>(node)) {
      std::set<std::string> seen;
      for (Operation *user : microbatch->getUsers()) {
        DictionaryAttr devices;
        if (auto task = dyn_cast<TaskOp>(user))
          devices = task.getDevicesAttr();
        else if (auto transfer = dyn_cast<TransferOp>(user))
          devices = transfer.getFrom();
        else if (auto collective = dyn_cast<CollectiveOp>(user))
          devices = collective.getDevicesAttr();
        if (seen.insert(groupName(devices)).second)
          add(devices, node, Role::Run);
      }
    }
  }

  // Groups in mesh-coordinate order (pp=2 before pp=10).
  SmallVector<
      std::pair<SmallVector<std::pair<std::string, int64_t>>, std::string>>
      keys;
  for (auto &[name, entry] : groups) {
    SmallVector<std::pair<std::string, int64_t>> key;
    if (entry.first)
      for (NamedAttribute coordinate : entry.first)
        key.push_back({coordinate.getName().str(),
                       isa<IntegerAttr>(coordinate.getValue())
                           ? cast<IntegerAttr>(coordinate.getValue()).getInt()
                           : 0});
    keys.push_back({key, name});
  }
  llvm::sort(keys);

  DAGFacts facts(dag);
  std::vector<DeviceMemoryPlan> plans;
  for (auto &[key, name] : keys) {
    auto &[devices, members] = groups[name];
    plans.push_back(
        planGroup(name, devices, orderGroup(members, position), dag, facts));
  }
  return plans;
}

ParamSharding mlir::piper::getParamSharding(DAGOp dag, StringRef name) {
  return DAGFacts(dag).sharding(name);
}
