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

#include "piper/Dialect/Piper/Transforms/MemoryPlan.h"
#include "piper/Dialect/Piper/Transforms/CommReport.h"
#include "piper/Dialect/Piper/Transforms/Passes.h"
#include "piper/Dialect/Piper/Transforms/ScheduleDAG.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

#include "llvm/ADT/EquivalenceClasses.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <functional>
#include <map>
#include <set>

namespace mlir::piper {
#define GEN_PASS_DEF_PIPERMEMORYPLAN
#include "piper/Dialect/Piper/Transforms/Passes.h.inc"
} // namespace mlir::piper

using namespace mlir;
using namespace mlir::piper;

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

/// What a node does in a group: runs there, or is the sending or receiving
/// half of a transfer.
enum class Role { Run, Send, Recv };

struct Member {
  Operation *node;
  Role role;
};

bool isBackward(PassKind pass) {
  return pass == PassKind::B || pass == PassKind::BI || pass == PassKind::BW;
}

std::string groupName(DictionaryAttr devices) {
  if (!devices || devices.empty())
    return "all";
  std::string text = formatDeviceGroup(devices);
  return text.substr(1, text.size() - 2);
}

std::optional<int64_t> intTag(DictionaryAttr dict, StringRef key) {
  if (!dict)
    return std::nullopt;
  auto value = dict.getAs<IntegerAttr>(key);
  if (!value || value.getType().isInteger(1))
    return std::nullopt;
  return value.getInt();
}

int64_t axesSize(CollectiveOp collective) {
  MeshOp mesh = lookupMesh(collective, collective.getMeshAttr());
  int64_t n = 1;
  if (mesh)
    for (StringRef axis : collective.getAxes().getAsValueRange<StringAttr>())
      if (MeshAxisAttr meshAxis = mesh.getAxis(axis))
        n *= meshAxis.getSize();
  return n;
}

/// Facts about the whole DAG that every group's plan uses.
class DAGFacts {
public:
  explicit DAGFacts(DAGOp dag) : dag(dag) {
    fn = dag->getParentOfType<FunctionOpInterface>();
    collectShardings();
    collectGradients();
  }

  ParamAttr paramOfArg(BlockArgument arg) const {
    if (!fn || arg.getOwner()->getParentOp() != fn.getOperation())
      return {};
    return fn.getArgAttrOfType<ParamAttr>(arg.getArgNumber(),
                                          PiperDialect::getParamAttrName());
  }
  OptStateAttr stateOfArg(BlockArgument arg) const {
    if (!fn || arg.getOwner()->getParentOp() != fn.getOperation())
      return {};
    return fn.getArgAttrOfType<OptStateAttr>(arg.getArgNumber(),
                                             PiperDialect::getStateAttrName());
  }

  ParamSharding sharding(StringRef name) const {
    auto it = shardings.find(name);
    return it == shardings.end() ? ParamSharding() : it->second;
  }

  bool isGradient(Value value) const { return gradients.contains(value); }

  /// The parameter a gradient value belongs to, following it to its update.
  ParamAttr paramOfGradient(Value gradient) {
    auto it = gradientParams.find(gradient);
    if (it != gradientParams.end())
      return it->second;
    ParamAttr found;
    SmallVector<Value> worklist = {gradient};
    DenseSet<Value> seen;
    while (!worklist.empty() && !found) {
      Value value = worklist.pop_back_val();
      if (!seen.insert(value).second)
        continue;
      if ((found = getParamOfGradient(value)))
        break;
      for (Operation *user : value.getUsers())
        if (isa<AccumulateOp, CollectiveOp, TransferOp>(user))
          worklist.push_back(user->getResult(0));
    }
    gradientParams[gradient] = found;
    return found;
  }

  /// Bytes one device holds of parameter `param` (of `type`), before ZeRO.
  int64_t splitBytes(ParamAttr param, Type type) const {
    return getTensorBytes(type) / sharding(param.getName()).split;
  }

  /// The MB tag of the forward task whose output `value` carries.
  std::optional<int64_t> forwardMicrobatch(Value value) const {
    TaskOp task = forwardTask(value);
    return task ? intTag(task.getTags(), "MB") : std::nullopt;
  }

  /// The forward task whose output `value` is, through transfers, or null.
  static TaskOp forwardTask(Value value) {
    while (auto transfer = value.getDefiningOp<TransferOp>())
      value = transfer.getValue();
    auto task = value.getDefiningOp<TaskOp>();
    return task && task.getPass() == PassKind::F ? task : TaskOp();
  }

  /// Bytes of the collectives inside the body `task` calls (the expert
  /// all-to-alls, tensor-parallel all-reduces), live while it runs.
  int64_t bodyCollectiveBytes(TaskOp task) {
    auto found = bodyBytes.find(task.getCalleeAttr());
    if (found != bodyBytes.end())
      return found->second;
    int64_t bytes = 0;
    if (auto callee = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
            task, task.getCalleeAttr());
        callee && !callee.isExternal())
      callee.walk([&](CollectiveOp collective) {
        bytes += getTensorBytes(collective.getType());
      });
    bodyBytes[task.getCalleeAttr()] = bytes;
    return bytes;
  }

private:
  /// ZeRO stage and degrees of every updated parameter, from the collectives
  /// on its gradient and uses.
  void collectShardings() {
    auto meshOf = [&](ParamAttr param) -> MeshOp {
      return param.getPlacement()
                 ? lookupMesh(dag, param.getPlacement().getMesh())
                 : MeshOp();
    };
    for (Operation &node : dag.getBody().front().without_terminator()) {
      auto task = dyn_cast<TaskOp>(node);
      if (!task || task.getPass() != PassKind::UPD)
        continue;
      auto callee = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
          task, task.getCalleeAttr());
      if (!callee || callee.isExternal())
        continue;
      callee.walk([&](Operation *op) {
        Value paramValue, gradValue;
        if (auto sgd = dyn_cast<SgdUpdateOp>(op)) {
          paramValue = sgd.getParam();
          gradValue = sgd.getGrad();
        } else if (auto adamw = dyn_cast<AdamWUpdateOp>(op)) {
          paramValue = adamw.getParam();
          gradValue = adamw.getGrad();
        } else {
          return;
        }
        auto paramArg = dyn_cast<BlockArgument>(paramValue);
        auto gradArg = dyn_cast<BlockArgument>(gradValue);
        if (!paramArg || !gradArg ||
            paramArg.getOwner()->getParentOp() != callee ||
            gradArg.getOwner()->getParentOp() != callee)
          return;
        ParamAttr param =
            getCarriedParam(task->getOperand(paramArg.getArgNumber()));
        if (!param)
          return;
        ParamSharding &sharding = shardings[param.getName()];
        sharding.split = getSplitFactor(param, meshOf(param));
        // The first collective on the way back from the update says how
        // the gradient is synchronised.
        Value grad = task->getOperand(gradArg.getArgNumber());
        while (Operation *def = grad.getDefiningOp()) {
          if (auto collective = dyn_cast<CollectiveOp>(def)) {
            sharding.dataParallel = axesSize(collective);
            if (collective.getKind() == CollectiveKind::ReduceScatter)
              sharding.zero =
                  param.getPlacement() && param.getPlacement().getZero() == 1
                      ? 1
                      : 2;
            break;
          }
          if (isa<TransferOp>(def) || isa<AccumulateOp>(def))
            grad = def->getOperand(0);
          else
            break;
        }
      });
    }
    // ZeRO-3 gathers the parameter itself before use.
    for (Operation &node : dag.getBody().front().without_terminator()) {
      auto gather = dyn_cast<CollectiveOp>(node);
      if (!gather || gather.getKind() != CollectiveKind::AllGather)
        continue;
      auto arg = dyn_cast<BlockArgument>(gather.getValue());
      ParamAttr param = arg ? paramOfArg(arg) : ParamAttr();
      if (!param)
        continue;
      ParamSharding &sharding = shardings[param.getName()];
      sharding.zero = 3;
      sharding.dataParallel = axesSize(gather);
      sharding.split = getSplitFactor(param, meshOf(param));
    }
  }

  /// Weight gradients: outputs of BW tasks, values flowing into updates
  /// that are not arguments, and whatever carries them (accumulators,
  /// collectives, transfers), both ways.
  void collectGradients() {
    SmallVector<Value> forward, backward;
    for (Operation &node : dag.getBody().front().without_terminator()) {
      auto task = dyn_cast<TaskOp>(node);
      if (!task)
        continue;
      if (task.getPass() == PassKind::BW)
        llvm::append_range(forward, task.getOutputs());
      if (task.getPass() == PassKind::UPD)
        for (Value input : task.getInputs())
          if (!isa<BlockArgument>(input))
            backward.push_back(input);
    }
    while (!forward.empty()) {
      Value value = forward.pop_back_val();
      if (!gradients.insert(value).second)
        continue;
      for (Operation *user : value.getUsers())
        if (isa<AccumulateOp, CollectiveOp, TransferOp>(user))
          forward.push_back(user->getResult(0));
    }
    DenseSet<Value> seen;
    while (!backward.empty()) {
      Value value = backward.pop_back_val();
      if (!seen.insert(value).second)
        continue;
      gradients.insert(value);
      Operation *def = value.getDefiningOp();
      if (isa_and_nonnull<AccumulateOp, CollectiveOp, TransferOp>(def))
        for (Value operand : def->getOperands())
          if (!isa<BlockArgument>(operand))
            backward.push_back(operand);
    }
  }

  DAGOp dag;
  // Mutable: the interface accessors are not const.
  mutable FunctionOpInterface fn;
  llvm::StringMap<ParamSharding> shardings;
  DenseSet<Value> gradients;
  DenseMap<Value, ParamAttr> gradientParams;
  DenseMap<Attribute, int64_t> bodyBytes;
};

/// The nodes of one group in the order it runs them: its tasks in the
/// DAG's order; a node fed by something the group computes (a send, a
/// gradient collective, an accumulator) right after its inputs are ready,
/// as runtimes issue communication from completion hooks; a node fed only
/// from elsewhere (a receive, a ZeRO-3 gather, a microbatch slice) right
/// before its first consumer, so its buffer lives no longer than needed.
SmallVector<Member>
orderGroup(ArrayRef<Member> members,
           const DenseMap<Operation *, unsigned> &position) {
  unsigned n = members.size();
  DenseMap<Value, unsigned> producer;
  for (auto [i, member] : llvm::enumerate(members))
    if (member.role != Role::Send)
      for (Value result : member.node->getResults())
        producer[result] = i;
  std::vector<SmallVector<unsigned>> preds(n), eagerConsumers(n);
  std::vector<unsigned> pending(n, 0);
  std::vector<bool> eager(n, false);
  for (auto [i, member] : llvm::enumerate(members)) {
    if (member.role == Role::Recv)
      continue;
    for (Value operand : member.node->getOperands())
      if (auto it = producer.find(operand); it != producer.end())
        preds[i].push_back(it->second);
    if (!isa<TaskOp>(member.node) && !preds[i].empty()) {
      eager[i] = true;
      pending[i] = preds[i].size();
      for (unsigned p : preds[i])
        eagerConsumers[p].push_back(i);
    }
  }
  SmallVector<Member> order;
  std::vector<bool> emitted(n, false);
  // Ready eager nodes, by DAG position.
  std::set<std::pair<unsigned, unsigned>> ready;
  std::function<void(unsigned)> emit = [&](unsigned i) {
    if (emitted[i])
      return;
    for (unsigned p : preds[i])
      emit(p);
    if (emitted[i])
      return;
    emitted[i] = true;
    order.push_back(members[i]);
    for (unsigned c : eagerConsumers[i])
      if (--pending[c] == 0)
        ready.insert({position.lookup(members[c].node), c});
  };
  auto drain = [&]() {
    while (!ready.empty()) {
      unsigned i = ready.begin()->second;
      ready.erase(ready.begin());
      emit(i);
    }
  };
  for (unsigned i = 0; i < n; ++i)
    if (isa<TaskOp>(members[i].node)) {
      emit(i);
      drain();
    }
  for (unsigned i = 0; i < n; ++i) {
    emit(i);
    drain();
  }
  return order;
}

/// Greedy reuse: walking the steps, a transient buffer takes a freed
/// allocation of its size class (the next power of two, as caching
/// allocators round) or a new one.
void planReuse(DeviceMemoryPlan &plan) {
  SmallVector<unsigned> transient;
  int64_t persistentBytes = 0;
  for (auto [i, buffer] : llvm::enumerate(plan.buffers)) {
    if (buffer.persistent)
      persistentBytes += buffer.bytes;
    else if (buffer.bytes > 0)
      transient.push_back(i);
  }
  llvm::stable_sort(transient, [&](unsigned a, unsigned b) {
    return plan.buffers[a].start < plan.buffers[b].start;
  });
  // Live allocations by the step after which they are free: (end, class).
  std::multimap<unsigned, uint64_t> busy;
  std::map<uint64_t, unsigned> freeByClass;
  unsigned allocations = 0;
  int64_t reserved = persistentBytes;
  for (unsigned index : transient) {
    const MemoryBuffer &buffer = plan.buffers[index];
    while (!busy.empty() && busy.begin()->first < buffer.start) {
      ++freeByClass[busy.begin()->second];
      busy.erase(busy.begin());
    }
    uint64_t sizeClass = llvm::PowerOf2Ceil(uint64_t(buffer.bytes));
    if (auto it = freeByClass.find(sizeClass);
        it != freeByClass.end() && it->second > 0) {
      --it->second;
    } else {
      ++allocations;
      reserved += int64_t(sizeClass);
    }
    busy.insert({buffer.end, sizeClass});
  }
  plan.numTransientBuffers = transient.size();
  plan.numAllocations = allocations;
  plan.reservedBytes = reserved;
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
        if (contribution.getDefiningOp<TaskOp>() &&
            defStep.count(contribution) && contribution.hasOneUse())
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
    buffer.bytes = getTensorBytes(value.getType());
    if (facts.isGradient(value)) {
      buffer.kind = MemoryKind::Grads;
      if (ParamAttr param = facts.paramOfGradient(value)) {
        buffer.bytes = facts.splitBytes(param, value.getType());
        if (auto collective = dyn_cast<CollectiveOp>(node);
            collective && collective.getKind() == CollectiveKind::ReduceScatter)
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
        buffer.microbatch = intTag(forward.getTags(), "MB").value_or(0);
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

//===----------------------------------------------------------------------===//
// Pass
//===----------------------------------------------------------------------===//

namespace {

struct MemoryPlanPass
    : public mlir::piper::impl::PiperMemoryPlanBase<MemoryPlanPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    llvm::raw_ostream &os = llvm::outs();
    bool found = false, failedAny = false;
    module.walk([&](DAGOp dag) {
      found = true;
      auto plans = planMemory(dag, [&]() { return dag.emitError(); });
      if (failed(plans)) {
        failedAny = true;
        return;
      }
      auto fn = dag->getParentOfType<FunctionOpInterface>();
      os << "memory plan of @" << (fn ? fn.getName() : StringRef("dag"))
         << " (bytes per device)\n";
      for (const DeviceMemoryPlan &plan : *plans) {
        print(os, plan);
        if (listBuffers)
          printBuffers(os, plan);
      }
      if (budget <= 0)
        return;
      for (const DeviceMemoryPlan &plan : *plans) {
        if (plan.peakBytes() <= int64_t(budget))
          continue;
        Operation *at =
            plan.steps.empty() ? dag.getOperation() : plan.steps[plan.peakStep];
        at->emitError() << "device group " << plan.group << " needs "
                        << plan.peakBytes() << " bytes at its peak (step "
                        << plan.peakStep + 1 << " of " << plan.steps.size()
                        << ", '" << getNodeName(at) << "'), over the budget of "
                        << int64_t(budget) << " bytes";
        failedAny = true;
      }
    });
    os.flush();
    if (!found) {
      module.emitError() << "no piper.dag to plan memory for; build the "
                            "training DAG (--piper-build-dag) first";
      failedAny = true;
    }
    if (failedAny)
      signalPassFailure();
    markAllAnalysesPreserved();
  }

  /// `[first-last] kind bytes what`, steps counted from 1.
  static void printBuffers(llvm::raw_ostream &os,
                           const DeviceMemoryPlan &plan) {
    for (const MemoryBuffer &buffer : plan.buffers) {
      os << "    [" << buffer.start + 1 << "-" << buffer.end + 1 << "] "
         << stringifyMemoryKind(buffer.kind) << " " << buffer.bytes << " ";
      if (!buffer.value) {
        os << "collectives in '" << getNodeName(plan.steps[buffer.start])
           << "'";
      } else if (auto arg = dyn_cast<BlockArgument>(buffer.value)) {
        auto fn = dyn_cast<FunctionOpInterface>(arg.getOwner()->getParentOp());
        if (auto param =
                fn ? fn.getArgAttrOfType<ParamAttr>(
                         arg.getArgNumber(), PiperDialect::getParamAttrName())
                   : ParamAttr())
          os << param.getName().getValue();
        else if (auto state = fn ? fn.getArgAttrOfType<OptStateAttr>(
                                       arg.getArgNumber(),
                                       PiperDialect::getStateAttrName())
                                 : OptStateAttr())
          os << state.getParam().getValue() << "."
             << state.getSlot().getValue();
        else
          os << "arg" << arg.getArgNumber();
      } else {
        auto result = cast<OpResult>(buffer.value);
        os << getNodeName(result.getOwner()) << "#" << result.getResultNumber();
      }
      if (buffer.microbatch)
        os << " (MB " << *buffer.microbatch << ")";
      os << "\n";
    }
  }

  static void print(llvm::raw_ostream &os, const DeviceMemoryPlan &plan) {
    os << plan.group << ": peak " << plan.peakBytes() << " at step "
       << plan.peakStep + 1 << " of " << plan.steps.size();
    if (!plan.steps.empty())
      os << " '" << getNodeName(plan.steps[plan.peakStep]) << "'";
    os << "\n ";
    for (unsigned k = 0; k < kNumMemoryKinds; ++k)
      os << " " << stringifyMemoryKind(MemoryKind(k)) << " "
         << plan.atPeak.bytes[k];
    os << "\n  max:";
    for (unsigned k = 0; k < kNumMemoryKinds; ++k) {
      os << " " << stringifyMemoryKind(MemoryKind(k)) << " "
         << plan.maxPerKind.bytes[k];
      if (MemoryKind(k) == MemoryKind::Activations)
        os << " (" << plan.maxActivationMicrobatches << " microbatches)";
    }
    os << "\n  reuse: " << plan.numTransientBuffers << " buffers in "
       << plan.numAllocations << " allocations, " << plan.reservedBytes
       << " bytes reserved\n";
  }
};

} // namespace
