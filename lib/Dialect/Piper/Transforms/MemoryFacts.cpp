//===- MemoryFacts.cpp - What memory planning knows about a DAG -----------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "MemoryFacts.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/MathExtras.h"

#include <map>
#include <set>

using namespace mlir;
using namespace mlir::piper;
using namespace mlir::piper::memory;

bool memory::isBackward(PassKind pass) {
  return pass == PassKind::B || pass == PassKind::BI || pass == PassKind::BW;
}

std::string memory::groupName(DictionaryAttr devices) {
  if (!devices || devices.empty())
    return "all";
  std::string text = formatDeviceGroup(devices);
  return text.substr(1, text.size() - 2);
}

int64_t memory::axesSize(CollectiveOp collective) {
  MeshOp mesh = lookupMesh(collective, collective.getMeshAttr());
  int64_t n = 1;
  if (mesh)
    for (StringRef axis : collective.getAxes().getAsValueRange<StringAttr>())
      if (MeshAxisAttr meshAxis = mesh.getAxis(axis))
        n *= meshAxis.getSize();
  return n;
}

void DAGFacts::collectLocalTypes() {
  auto localOf = [&](Value value) {
    auto it = localTypes.find(value);
    return it == localTypes.end() ? value.getType() : it->second;
  };
  auto record = [&](Value value, Type type) {
    if (type && type != value.getType() &&
        getElementDivisor(value.getType(), type) > 1)
      localTypes[value] = type;
  };
  if (fn && !fn.isExternal()) {
    // Parameters by their placements; optimizer slots shaped like their
    // parameter with it.
    llvm::StringMap<std::pair<Type, Type>> params;
    for (BlockArgument arg : fn.getArguments())
      if (ParamAttr param = paramOfArg(arg)) {
        Type type = getLocalParamType(param, arg.getType(), dag);
        record(arg, type);
        params[param.getName()] = {arg.getType(), type};
      }
    for (BlockArgument arg : fn.getArguments())
      if (OptStateAttr state = stateOfArg(arg))
        if (auto it = params.find(state.getParam());
            it != params.end() && it->second.first == arg.getType())
          record(arg, it->second.second);
  }
  for (Operation &node : dag.getBody().front().without_terminator()) {
    if (auto task = dyn_cast<TaskOp>(node)) {
      SmallVector<Type> argTypes;
      bool split = false;
      for (Value operand : task->getOperands()) {
        argTypes.push_back(localOf(operand));
        split |= argTypes.back() != operand.getType();
      }
      if (!split)
        continue;
      auto callee = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
          task, task.getCalleeAttr());
      if (!callee || callee.isExternal())
        continue;
      LocalSizes sizes(callee, argTypes);
      for (auto [result, type] :
           llvm::zip(task.getOutputs(), sizes.getResultTypes()))
        record(result, type);
      continue;
    }
    if (isa<TransferOp, AccumulateOp, CollectiveOp>(node) &&
        node.getNumResults() == 1 && node.getNumOperands() >= 1 &&
        node.getResult(0).getType() == node.getOperand(0).getType())
      record(node.getResult(0), localOf(node.getOperand(0)));
  }
}

/// The nodes of one group in the order it runs them: its tasks in the
/// DAG's order; a node fed by something the group computes (a send, a
/// gradient collective, an accumulator) right after its inputs are ready,
/// as runtimes issue communication from completion hooks; a node fed only
/// from elsewhere (a receive, a ZeRO-3 gather, a microbatch slice) right
/// before its first consumer, so its buffer lives no longer than needed;
/// except that a ZeRO-3 gather is prefetched one task ahead.
SmallVector<Member>
memory::orderGroup(ArrayRef<Member> members,
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
  // A ZeRO-3 gather (of a step argument, nothing of the group feeding it)
  // is prefetched one task ahead, as the programs issue it
  // (Partition.cpp): it runs before the task that precedes its consumer.
  auto isPrefetched = [&](unsigned p) {
    auto gather = dyn_cast<CollectiveOp>(members[p].node);
    return gather && gather.getKind() == CollectiveKind::AllGather &&
           members[p].role == Role::Run && preds[p].empty();
  };
  SmallVector<unsigned> tasks;
  for (unsigned i = 0; i < n; ++i)
    if (isa<TaskOp>(members[i].node))
      tasks.push_back(i);
  for (auto [k, i] : llvm::enumerate(tasks)) {
    // The task's own inputs first, then the next task's prefetch.
    for (unsigned p : preds[i])
      emit(p);
    if (k + 1 < tasks.size())
      for (unsigned p : preds[tasks[k + 1]])
        if (isPrefetched(p))
          emit(p);
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
void memory::planReuse(DeviceMemoryPlan &plan) {
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
