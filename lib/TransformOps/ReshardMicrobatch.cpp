//===- ReshardMicrobatch.cpp - ZeRO-2/3 reduce-scatter per microbatch -----===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// `split` sums each parameter's gradient over the microbatches
// (piper.accumulate) before its update; `replicate` with ZeRO puts one
// reduce-scatter between the sum and the update. At ZeRO-1 that is the
// point: each replica keeps full gradients and communicates once per step.
// At ZeRO-2/3 the full accumulator would live through the whole backward
// phase of a pipeline schedule, which is what ZeRO-2 exists to avoid, so
// here the reduce-scatter moves onto every contribution (as DeepSpeed's
// ZeRO-2 reduces per microbatch): m times the messages of ZeRO-1, each a
// 1/N shard added into a 1/N accumulator. The sum is linear, so the update
// sees the same gradient up to the order of the additions.
//
//===----------------------------------------------------------------------===//

#include "ReshardMicrobatch.h"

#include "piper/Dialect/Piper/IR/PiperDialect.h"
#include "piper/Dialect/Piper/Transforms/ChunkUtils.h"
#include "piper/Dialect/Piper/Transforms/CommReport.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "llvm/ADT/STLExtras.h"

#include <map>

using namespace mlir;
using namespace mlir::piper;

/// Whether every contribution to `accumulate` is produced on one device
/// group. Under DualPipe a stage's microbatches run on two mirrored ranks,
/// whose contributions meet in the accumulator over a transfer: a shard
/// cannot cross roles, so those gradients keep one reduce-scatter per step.
static bool onOneDeviceGroup(AccumulateOp accumulate) {
  std::optional<DictionaryAttr> group;
  for (Value value : accumulate.getValues()) {
    auto task = value.getDefiningOp<TaskOp>();
    DictionaryAttr devices = task ? task.getDevicesAttr() : DictionaryAttr();
    if (group && *group != devices)
      return false;
    group = devices;
  }
  return true;
}

void mlir::piper::reshardPerMicrobatch(
    RewriterBase &rewriter, SmallVectorImpl<CollectiveOp> &gradCollectives,
    SmallVectorImpl<Operation *> &created) {
  SmallVector<CollectiveOp> result;
  for (CollectiveOp step : gradCollectives) {
    auto accumulate = step.getValue().getDefiningOp<AccumulateOp>();
    if (step.getKind() != CollectiveKind::ReduceScatter || !accumulate ||
        accumulate.getValues().size() < 2 || !accumulate->hasOneUse() ||
        !onOneDeviceGroup(accumulate)) {
      result.push_back(step);
      continue;
    }
    for (OpOperand &contribution : accumulate->getOpOperands()) {
      Value value = contribution.get();
      if (Operation *producer = value.getDefiningOp())
        rewriter.setInsertionPointAfter(producer);
      else
        rewriter.setInsertionPoint(accumulate);
      std::string name =
          ("reduce_scatter(" + getNodeName(value.getDefiningOp()) + "#" +
           Twine(cast<OpResult>(value).getResultNumber()) + ")")
              .str();
      auto shard = CollectiveOp::create(
          rewriter, step.getLoc(), value.getType(),
          rewriter.getStringAttr(name), step.getKindAttr(), value,
          step.getAxesAttr(), step.getMeshAttr(), step.getStreamAttr(),
          step.getDevicesAttr(), /*bucket=*/IntegerAttr());
      rewriter.modifyOpInPlace(accumulate,
                               [&] { contribution.set(shard.getResult()); });
      result.push_back(shard);
      created.push_back(shard);
    }
    rewriter.replaceAllUsesWith(step.getResult(), accumulate.getResult());
    llvm::erase(created, step.getOperation());
    rewriter.eraseOp(step);
  }
  gradCollectives = std::move(result);
}

namespace {

/// Whether every output of weight-gradient node `task` is only accumulated
/// over microbatches into a gradient that is reduce-scattered for its
/// update (what `replicate` at ZeRO >= 1 made of `split`'s sums).
bool reshardable(TaskOp task) {
  if (task.getPass() != PassKind::BW || task.getNumResults() < 2 ||
      !getIntTag(task.getTags(), "MB"))
    return false;
  return llvm::all_of(task.getOutputs(), [](Value output) {
    if (!output.hasOneUse())
      return false;
    auto accumulate = dyn_cast<AccumulateOp>(*output.getUsers().begin());
    if (!accumulate || !accumulate->hasOneUse())
      return false;
    auto collective = dyn_cast<CollectiveOp>(*accumulate->getUsers().begin());
    return collective && collective.getKind() == CollectiveKind::ReduceScatter;
  });
}

/// Drops the results of `annotate` that nothing uses (and their yielded
/// values), rebuilding it with the rest; whether it changed anything.
bool shrinkAnnotate(AnnotateOp annotate) {
  SmallVector<unsigned> used;
  for (OpResult result : annotate->getResults())
    if (!result.use_empty())
      used.push_back(result.getResultNumber());
  if (used.size() == annotate->getNumResults())
    return false;
  auto yield = cast<YieldOp>(annotate.getBody().front().getTerminator());
  SmallVector<Type> types;
  SmallVector<Value> yielded;
  for (unsigned i : used) {
    types.push_back(annotate->getResult(i).getType());
    yielded.push_back(yield->getOperand(i));
  }
  OpBuilder builder(annotate);
  auto shrunk =
      AnnotateOp::create(builder, annotate.getLoc(), types,
                         annotate.getTagsAttr(), annotate.getPassAttr());
  shrunk.getBody().takeBody(annotate.getBody());
  yield->setOperands(yielded);
  for (auto [k, i] : llvm::enumerate(used))
    annotate->getResult(i).replaceAllUsesWith(shrunk->getResult(k));
  annotate.erase();
  return true;
}

/// A copy of weight-gradient body `body` returning only results `keep`, its
/// unneeded work removed (the body's ops are pure).
func::FuncOp bucketBody(func::FuncOp body, ArrayRef<unsigned> keep,
                        SymbolTable &symbols) {
  OpBuilder builder(body);
  builder.setInsertionPointAfter(body);
  auto clone = cast<func::FuncOp>(builder.clone(*body.getOperation()));
  std::string name = (body.getSymName() + ".bucket").str();
  for (int i = 1; symbols.lookup(name); ++i)
    name = (body.getSymName() + ".bucket_" + Twine(i)).str();
  clone.setSymName(name);
  symbols.insert(clone);
  Block &entry = clone.getBody().front();
  auto ret = cast<func::ReturnOp>(entry.getTerminator());
  SmallVector<Value> kept;
  for (unsigned i : keep)
    kept.push_back(ret.getOperand(i));
  ret->setOperands(kept);
  // Innermost first: dead ops inside annotates go before the annotates
  // shrink, and what those yielded dies in the next round.
  for (bool changed = true; changed;) {
    SmallVector<Operation *> dead;
    clone.walk([&](Operation *op) {
      if (op != clone.getOperation() && isOpTriviallyDead(op))
        dead.push_back(op);
    });
    for (Operation *op : dead)
      op->erase();
    changed = !dead.empty();
    SmallVector<AnnotateOp> annotates;
    clone.walk([&](AnnotateOp annotate) { annotates.push_back(annotate); });
    for (AnnotateOp annotate : annotates)
      changed |= shrinkAnnotate(annotate);
  }
  clone.setFunctionType(
      builder.getFunctionType(entry.getArgumentTypes(), ret.getOperandTypes()));
  clone.setPrivate();
  return clone;
}

} // namespace

void mlir::piper::splitWeightGradientBuckets(RewriterBase &rewriter, DAGOp dag,
                                             int64_t bucketBytes) {
  auto module = dag->getParentOfType<ModuleOp>();
  SymbolTable symbols(module);
  // One copy of a body per bucket, shared by every microbatch.
  std::map<std::pair<std::string, SmallVector<unsigned>>, func::FuncOp> bodies;
  SmallVector<TaskOp> tasks;
  for (TaskOp task : dag.getBody().getOps<TaskOp>())
    if (reshardable(task))
      tasks.push_back(task);
  for (TaskOp task : tasks) {
    auto body = symbols.lookup<func::FuncOp>(task.getCallee());
    if (!body || body.isExternal())
      continue;
    SmallVector<SmallVector<unsigned>> buckets;
    int64_t filled = 0;
    for (OpResult output : task->getResults()) {
      int64_t bytes = getTensorBytes(output.getType());
      if (buckets.empty() || bucketBytes <= 0 || filled + bytes > bucketBytes) {
        buckets.emplace_back();
        filled = 0;
      }
      buckets.back().push_back(output.getResultNumber());
      filled += bytes;
    }
    if (buckets.size() < 2)
      continue;
    rewriter.setInsertionPointAfter(task);
    for (auto [k, keep] : llvm::enumerate(buckets)) {
      func::FuncOp &copy = bodies[{body.getSymName().str(), keep}];
      if (!copy)
        copy = bucketBody(body, keep, symbols);
      SmallVector<Type> types;
      for (unsigned i : keep)
        types.push_back(task->getResult(i).getType());
      std::string name = k == 0 ? task.getName().str()
                                : (task.getName() + ".b" + Twine(k)).str();
      auto bucket = TaskOp::create(
          rewriter, task.getLoc(), types, rewriter.getStringAttr(name),
          FlatSymbolRefAttr::get(copy.getSymNameAttr()), task.getInputs(),
          task.getTagsAttr(), task.getPassAttr(), task.getAfterAttr(),
          task.getDevicesAttr());
      for (auto [j, i] : llvm::enumerate(keep))
        rewriter.replaceAllUsesWith(task->getResult(i), bucket->getResult(j));
    }
    rewriter.eraseOp(task);
  }
}
