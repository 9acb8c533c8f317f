//===- MemoryFacts.h - What memory planning knows about a DAG --*- C++ -*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The pieces of --piper-memory-plan below the per-group walk
// (MemoryPlan.cpp): facts about the whole DAG (parameter shardings,
// gradients, body sizes), the order a group runs its nodes in, and buffer
// reuse. Internal to the Transforms library.
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_LIB_DIALECT_PIPER_TRANSFORMS_MEMORYFACTS_H
#define PIPER_LIB_DIALECT_PIPER_TRANSFORMS_MEMORYFACTS_H

#include "piper/Analysis/LocalSizes.h"
#include "piper/Dialect/Piper/IR/PiperDialect.h"
#include "piper/Dialect/Piper/IR/PiperOps.h"
#include "piper/Dialect/Piper/Transforms/ChunkUtils.h"
#include "piper/Dialect/Piper/Transforms/CommReport.h"
#include "piper/Dialect/Piper/Transforms/MemoryPlan.h"
#include "piper/Dialect/Piper/Transforms/Recompute.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

#include "llvm/ADT/StringMap.h"

#include <optional>
#include <string>

namespace mlir::piper::memory {

/// What a node does in a group: runs there, or is the sending or receiving
/// half of a transfer.
enum class Role { Run, Send, Recv };

struct Member {
  Operation *node;
  Role role;
};

bool isBackward(PassKind pass);
/// A device group as the report prints it: `pp=0`, or `all`.
std::string groupName(DictionaryAttr devices);
/// Devices in a collective's group.
int64_t axesSize(CollectiveOp collective);

/// Facts about the whole DAG that every group's plan uses.
class DAGFacts {
public:
  explicit DAGFacts(DAGOp dag) : dag(dag) {
    fn = dag->getParentOfType<FunctionOpInterface>();
    collectShardings();
    collectGradients();
    collectLocalTypes();
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

  /// How many times fewer elements one device holds of `value` than its
  /// global type: tensor-parallel splits of the parameters, followed through
  /// the task bodies (LocalSizes) and across the DAG. ZeRO shards apart.
  int64_t localDivisor(Value value) const {
    auto it = localTypes.find(value);
    return it == localTypes.end()
               ? 1
               : getElementDivisor(value.getType(), it->second);
  }

  /// The MB tag of the forward task whose output `value` carries.
  std::optional<int64_t> forwardMicrobatch(Value value) const {
    TaskOp task = forwardTask(value);
    return task ? getIntTag(task.getTags(), "MB") : std::nullopt;
  }

  /// The forward task whose output `value` is, through transfers, or null.
  static TaskOp forwardTask(Value value) {
    while (auto transfer = value.getDefiningOp<TransferOp>())
      value = transfer.getValue();
    auto task = value.getDefiningOp<TaskOp>();
    return task && (task.getPass() == PassKind::F || isRecomputeTask(task))
               ? task
               : TaskOp(); // an R node's outputs are activations again
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

  /// Each value's type on one device, where smaller than its own: step
  /// arguments by their placements, task results by their bodies, and what
  /// transfers, accumulators and type-preserving collectives carry.
  void collectLocalTypes();

  DAGOp dag;
  // Mutable: the interface accessors are not const.
  mutable FunctionOpInterface fn;
  llvm::StringMap<ParamSharding> shardings;
  DenseSet<Value> gradients;
  DenseMap<Value, ParamAttr> gradientParams;
  DenseMap<Attribute, int64_t> bodyBytes;
  DenseMap<Value, Type> localTypes;
};

/// The nodes of one group in the order it runs them (see MemoryFacts.cpp).
SmallVector<Member> orderGroup(ArrayRef<Member> members,
                               const DenseMap<Operation *, unsigned> &position);

/// Greedy reuse of transient buffers by size class (see MemoryFacts.cpp).
void planReuse(DeviceMemoryPlan &plan);

} // namespace mlir::piper::memory

#endif // PIPER_LIB_DIALECT_PIPER_TRANSFORMS_MEMORYFACTS_H
