//===- Split.cpp - transform.piper.split ----------------------------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "piper/Dialect/Piper/IR/PiperDialect.h"
#include "piper/Dialect/Piper/IR/PiperOps.h"
#include "piper/Limits.h"
#include "piper/TransformOps/PiperTransformOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Transform/IR/TransformDialect.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSet.h"

#include <deque>

using namespace mlir;
using namespace mlir::piper;

namespace {

/// `F{PP=0}` -> `F{PP=0,MB=1}`; `B{}#1` -> `B{MB=1}#1`.
std::string microbatchName(StringRef name, int64_t microbatch) {
  size_t close = name.rfind('}');
  if (close == StringRef::npos)
    return (name + "{MB=" + Twine(microbatch) + "}").str();
  StringRef head = name.take_front(close);
  return (head + (head.ends_with("{") ? "" : ",") + "MB=" + Twine(microbatch) +
          name.drop_front(close))
      .str();
}

/// The argument's source name (`%ids` carries a NameLoc) or its position.
std::string argumentName(BlockArgument arg) {
  if (auto loc = dyn_cast<NameLoc>(arg.getLoc()))
    return loc.getName().str();
  return ("arg" + Twine(arg.getArgNumber())).str();
}

/// Parameters and optimizer state are shared by all microbatches; any other
/// argument of the step is data.
bool isDataArgument(func::FuncOp fn, BlockArgument arg) {
  return !fn.getArgAttr(arg.getArgNumber(), PiperDialect::getParamAttrName()) &&
         !fn.getArgAttr(arg.getArgNumber(), PiperDialect::getStateAttrName());
}

} // namespace

LogicalResult SplitOp::verify() {
  // Signed reads: the getters return the attributes zero-extended.
  if (getCountAttr().getInt() < 1)
    return emitOpError() << "needs a count of at least 1, got "
                         << getCountAttr().getInt();
  // Checked before apply copies anything: the copies are the cost.
  if (getCountAttr().getInt() > kMaxMicrobatches)
    return emitOpError() << "makes at most " << kMaxMicrobatches
                         << " microbatches, got " << getCountAttr().getInt();
  if (getDimAttr().getInt() < 0)
    return emitOpError() << "needs a non-negative dimension, got "
                         << getDimAttr().getInt();
  return success();
}

DiagnosedSilenceableFailure
SplitOp::apply(transform::TransformRewriter &rewriter,
               transform::TransformResults &results,
               transform::TransformState &state) {
  MLIRContext *ctx = getContext();
  int64_t count = getCount();
  SmallVector<TaskOp> split;
  DAGOp dag;
  for (Operation *op : state.getPayloadOps(getNodes())) {
    auto task = dyn_cast<TaskOp>(op);
    if (!task)
      return emitDefiniteFailure()
             << "split acts on DAG nodes (piper.task), got '" << op->getName()
             << "'";
    if (!dag)
      dag = task->getParentOfType<DAGOp>();
    else if (task->getParentOp() != dag)
      return emitDefiniteFailure()
             << "node '" << task.getName()
             << "' is in another DAG than the other nodes to split";
    // Updates run once per step, on the accumulated gradients.
    if (task.getPass() == PassKind::UPD)
      continue;
    if (task.getTags().get("MB"))
      return emitDefiniteFailure() << "node '" << task.getName()
                                   << "' is already split into microbatches";
    split.push_back(task);
  }
  if (split.empty())
    return emitDefiniteFailure()
           << "the handle holds no forward or backward node to split";
  DenseSet<Operation *> inSet;
  for (TaskOp task : split)
    inSet.insert(task);

  // Communication is added per microbatch by the directives that follow.
  for (TaskOp task : split) {
    for (Value input : task.getInputs())
      if (Operation *def = input.getDefiningOp();
          def && isa<TransferOp, CollectiveOp>(def))
        return emitDefiniteFailure()
               << "node '" << task.getName() << "' already receives '"
               << getNodeName(def)
               << "'; apply split before place, replicate and shard";
    for (Value output : task.getOutputs())
      for (Operation *user : output.getUsers())
        if (isa<TransferOp, CollectiveOp>(user))
          return emitDefiniteFailure()
                 << "node '" << task.getName() << "' already feeds '"
                 << getNodeName(user)
                 << "'; apply split before place, replicate and shard";
  }

  // Contiguity: no path may leave the set and come back into it, or the
  // node in between would need every microbatch before any could go on.
  llvm::StringMap<Operation *> byName;
  for (Operation &node : dag.getBody().front().without_terminator())
    byName[getNodeName(&node)] = &node;
  DenseMap<Operation *, SmallVector<Operation *>> successors;
  for (Operation &node : dag.getBody().front().without_terminator()) {
    for (Value result : node.getResults())
      for (Operation *user : result.getUsers())
        if (!isa<DAGYieldOp>(user))
          successors[&node].push_back(user);
    if (auto task = dyn_cast<TaskOp>(node))
      for (StringRef before : task.getAfter().getAsValueRange<StringAttr>())
        if (Operation *pred = byName.lookup(before))
          successors[pred].push_back(&node);
  }
  {
    // (outside node, the split node the path started from, first outside
    // node on the path)
    struct Step {
      Operation *node, *origin, *exit;
    };
    std::deque<Step> queue;
    DenseSet<Operation *> seen;
    for (TaskOp task : split)
      for (Operation *next : successors[task])
        if (!inSet.contains(next) && seen.insert(next).second)
          queue.push_back({next, task, next});
    while (!queue.empty()) {
      Step step = queue.front();
      queue.pop_front();
      for (Operation *next : successors[step.node]) {
        if (inSet.contains(next))
          return emitDefiniteFailure()
                 << "the nodes to split must form a contiguous sub-DAG, but "
                    "the path from '"
                 << getNodeName(step.origin) << "' to '" << getNodeName(next)
                 << "' leaves it through '" << getNodeName(step.exit) << "'";
        if (seen.insert(next).second)
          queue.push_back({next, step.origin, step.exit});
      }
    }
  }

  // Only sums can leave the copies: a forward activation used by an unsplit
  // node would need the microbatches concatenated. (The loss, yielded by
  // the DAG, is a mean.)
  for (TaskOp task : split)
    if (task.getPass() == PassKind::F)
      for (OpOperand &use : task->getUses())
        if (!inSet.contains(use.getOwner()) && !isa<DAGYieldOp>(use.getOwner()))
          return emitDefiniteFailure()
                 << "forward value #"
                 << cast<OpResult>(use.get()).getResultNumber() << " of '"
                 << task.getName() << "' feeds '" << getNodeName(use.getOwner())
                 << "', which is not split; split its consumers too";

  // Data arguments become global-batch arguments sliced per microbatch.
  auto fn = dag->getParentOfType<func::FuncOp>();
  SmallVector<BlockArgument> data;
  for (TaskOp task : split)
    for (Value input : task.getInputs())
      if (auto arg = dyn_cast<BlockArgument>(input);
          arg && fn && arg.getOwner() == &fn.getBody().front() &&
          isDataArgument(fn, arg) && !llvm::is_contained(data, arg))
        data.push_back(arg);
  llvm::sort(data, [](BlockArgument a, BlockArgument b) {
    return a.getArgNumber() < b.getArgNumber();
  });
  for (BlockArgument arg : data) {
    for (Operation *user : arg.getUsers())
      if (!inSet.contains(user))
        return emitDefiniteFailure()
               << "data argument '" << argumentName(arg)
               << "' is also used by '"
               << (getNodeName(user).empty() ? user->getName().getStringRef()
                                             : getNodeName(user))
               << "', which is not split";
    auto type = dyn_cast<RankedTensorType>(arg.getType());
    if (!type || int64_t(getDim()) >= type.getRank() ||
        type.isDynamicDim(getDim()))
      return emitDefiniteFailure()
             << "data argument '" << argumentName(arg) << "' of type "
             << arg.getType() << " has no static dimension " << getDim()
             << " to split into microbatches";
  }

  // One microbatch node per data argument and microbatch, at the top.
  Block &block = dag.getBody().front();
  rewriter.setInsertionPointToStart(&block);
  DenseMap<std::pair<Value, int64_t>, Value> slices;
  for (BlockArgument arg : data) {
    auto part = cast<RankedTensorType>(arg.getType());
    SmallVector<int64_t> wide(part.getShape());
    wide[getDim()] *= count;
    auto global = RankedTensorType::get(wide, part.getElementType());
    arg.setType(global);
    for (int64_t i = 0; i < count; ++i) {
      std::string name = (argumentName(arg) + "[MB=" + Twine(i) + "]").str();
      slices[{arg, i}] =
          MicrobatchOp::create(
              rewriter, arg.getLoc(), part, rewriter.getStringAttr(name), arg,
              rewriter.getI64IntegerAttr(i), rewriter.getI64IntegerAttr(count),
              rewriter.getI64IntegerAttr(getDim()))
              .getResult();
    }
  }
  if (!data.empty())
    fn.setFunctionType(FunctionType::get(
        ctx, fn.getBody().front().getArgumentTypes(), fn.getResultTypes()));

  // The copies, microbatch-major, where the first split node was.
  llvm::StringSet<> splitNames;
  for (TaskOp task : split)
    splitNames.insert(task.getName());
  rewriter.setInsertionPoint(split.front());
  std::vector<DenseMap<Operation *, TaskOp>> copies(count);
  SmallVector<Operation *> created;
  for (int64_t i = 0; i < count; ++i) {
    for (TaskOp task : split) {
      NamedAttrList tags(task.getTags());
      tags.set("MB", rewriter.getI64IntegerAttr(i));
      SmallVector<Attribute> after;
      for (StringRef before : task.getAfter().getAsValueRange<StringAttr>())
        after.push_back(rewriter.getStringAttr(splitNames.contains(before)
                                                   ? microbatchName(before, i)
                                                   : before.str()));
      SmallVector<Value> inputs;
      for (Value input : task.getInputs()) {
        auto arg = dyn_cast<BlockArgument>(input);
        inputs.push_back(arg && slices.count({arg, i}) ? slices[{arg, i}]
                                                       : input);
      }
      auto copy = TaskOp::create(
          rewriter, task.getLoc(), task.getOutputs().getTypes(),
          rewriter.getStringAttr(microbatchName(task.getName(), i)),
          task.getCalleeAttr(), inputs, tags.getDictionary(ctx),
          task.getPassAttr(), rewriter.getArrayAttr(after),
          task.getDevicesAttr());
      copies[i][task] = copy;
      created.push_back(copy);
    }
  }
  // Edges among split nodes connect copies of the same microbatch.
  for (int64_t i = 0; i < count; ++i)
    for (auto &[original, copy] : copies[i])
      for (OpOperand &use : copy->getOpOperands())
        if (auto result = dyn_cast<OpResult>(use.get());
            result && inSet.contains(result.getOwner()))
          use.set(copies[i][result.getOwner()]->getResult(
              result.getResultNumber()));

  // Values leaving the copies are summed in microbatch order, over n.
  rewriter.setInsertionPointAfter(created.back());
  for (TaskOp task : split) {
    for (OpResult output : task->getResults()) {
      SmallVector<OpOperand *> outside;
      for (OpOperand &use : output.getUses())
        if (!inSet.contains(use.getOwner()))
          outside.push_back(&use);
      if (outside.empty())
        continue;
      SmallVector<Value> parts;
      for (int64_t i = 0; i < count; ++i)
        parts.push_back(copies[i][task]->getResult(output.getResultNumber()));
      std::string name = ("accumulate(" + task.getName() + "#" +
                          Twine(output.getResultNumber()) + ")")
                             .str();
      auto sum =
          AccumulateOp::create(rewriter, task.getLoc(), output.getType(),
                               rewriter.getStringAttr(name), parts,
                               rewriter.getF64FloatAttr(1.0 / double(count)));
      for (OpOperand *use : outside)
        use->set(sum.getResult());
    }
  }
  // Temporal edges to a split node now wait for all its copies.
  for (auto task : block.getOps<TaskOp>()) {
    if (inSet.contains(task) || llvm::is_contained(created, task))
      continue;
    SmallVector<Attribute> after;
    bool changed = false;
    for (StringRef before : task.getAfter().getAsValueRange<StringAttr>()) {
      if (!splitNames.contains(before)) {
        after.push_back(rewriter.getStringAttr(before));
        continue;
      }
      changed = true;
      for (int64_t i = 0; i < count; ++i)
        after.push_back(rewriter.getStringAttr(microbatchName(before, i)));
    }
    if (changed)
      task.setAfterAttr(rewriter.getArrayAttr(after));
  }
  for (TaskOp task : split)
    rewriter.eraseOp(task);
  results.set(cast<OpResult>(getCopies()), created);
  return DiagnosedSilenceableFailure::success();
}

void SplitOp::getEffects(
    SmallVectorImpl<MemoryEffects::EffectInstance> &effects) {
  transform::consumesHandle(getNodesMutable(), effects);
  transform::producesHandle(getOperation()->getOpResults(), effects);
  transform::modifiesPayload(effects);
}

//===----------------------------------------------------------------------===//
// SplitBackwardOp
//===----------------------------------------------------------------------===//

DiagnosedSilenceableFailure
SplitBackwardOp::apply(transform::TransformRewriter &rewriter,
                       transform::TransformResults &results,
                       transform::TransformState &state) {
  MLIRContext *ctx = getContext();
  SmallVector<Operation *> parts;
  for (Operation *op : state.getPayloadOps(getNodes())) {
    auto task = dyn_cast<TaskOp>(op);
    if (!task)
      return emitDefiniteFailure()
             << "split_backward acts on DAG nodes (piper.task), got '"
             << op->getName() << "'";
    if (task.getPass() != PassKind::B)
      continue;
    // The fused body: call BI, call BW, return.
    auto body = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
        task, task.getCalleeAttr());
    SmallVector<func::CallOp> calls;
    bool shaped = body && !body.isExternal() && body.getBody().hasOneBlock();
    if (shaped) {
      for (Operation &inner : body.getBody().front().without_terminator()) {
        auto call = dyn_cast<func::CallOp>(inner);
        shaped &= bool(call);
        if (call)
          calls.push_back(call);
      }
      shaped &= calls.size() == 2;
    }
    if (!shaped)
      return emitDefiniteFailure()
             << "node '" << task.getName()
             << "' has no BI and BW parts to split: its body is not the two "
                "calls --piper-build-dag=fuse-backward emits";
    Block &block = body.getBody().front();
    auto ret = cast<func::ReturnOp>(block.getTerminator());

    // Body values -> DAG values: arguments are the task's inputs, call
    // results the new nodes' outputs.
    IRMapping mapping;
    mapping.map(block.getArguments(), task.getInputs());
    std::string name = task.getName().str();
    std::string suffix = name.substr(1); // "{PP=0,MB=1}..."
    rewriter.setInsertionPoint(task);
    SmallVector<TaskOp> halves;
    static constexpr PassKind kHalves[] = {PassKind::BI, PassKind::BW};
    for (auto [call, pass] : llvm::zip(calls, kHalves)) {
      SmallVector<Value> inputs = llvm::map_to_vector(
          call.getOperands(), [&](Value v) { return mapping.lookup(v); });
      auto half = TaskOp::create(
          rewriter, task.getLoc(), call.getResultTypes(),
          rewriter.getStringAttr(stringifyPassKind(pass) + suffix),
          call.getCalleeAttr(), inputs, task.getTags(),
          PassKindAttr::get(ctx, pass),
          pass == PassKind::BI ? task.getAfterAttr()
                               : rewriter.getStrArrayAttr({}),
          task.getDevicesAttr());
      mapping.map(call.getResults(), half.getOutputs());
      halves.push_back(half);
      parts.push_back(half);
    }
    for (auto [result, returned] :
         llvm::zip(task.getOutputs(), ret.getOperands()))
      result.replaceAllUsesWith(mapping.lookup(returned));
    // Temporal edges to the fused node wait for both halves.
    auto dag = task->getParentOfType<DAGOp>();
    for (auto other : dag.getBody().getOps<TaskOp>()) {
      if (!llvm::is_contained(other.getAfter().getAsValueRange<StringAttr>(),
                              task.getName()))
        continue;
      SmallVector<Attribute> after;
      for (StringRef before : other.getAfter().getAsValueRange<StringAttr>()) {
        if (before != task.getName()) {
          after.push_back(rewriter.getStringAttr(before));
          continue;
        }
        for (TaskOp half : halves)
          after.push_back(half.getNameAttr());
      }
      other.setAfterAttr(rewriter.getArrayAttr(after));
    }
    rewriter.eraseOp(task);
  }
  results.set(cast<OpResult>(getParts()), parts);
  return DiagnosedSilenceableFailure::success();
}

void SplitBackwardOp::getEffects(
    SmallVectorImpl<MemoryEffects::EffectInstance> &effects) {
  transform::consumesHandle(getNodesMutable(), effects);
  transform::producesHandle(getOperation()->getOpResults(), effects);
  transform::modifiesPayload(effects);
}
