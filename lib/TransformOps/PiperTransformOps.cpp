//===- PiperTransformOps.cpp - transform.piper.* directives ---------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "piper/TransformOps/PiperTransformOps.h"
#include "ReshardMicrobatch.h"
#include "piper/Analysis/TagFilter.h"
#include "piper/Dialect/Piper/IR/PiperDialect.h"
#include "piper/Dialect/Piper/Transforms/Autodiff.h"
#include "piper/Dialect/Piper/Transforms/CommReport.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Transform/IR/TransformDialect.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/StringSet.h"

using namespace mlir;
using namespace mlir::piper;

//===----------------------------------------------------------------------===//
// MatchChunksOp and MatchNodesOp
//===----------------------------------------------------------------------===//

/// Shared by the two selection ops: checks the filter, collects what
/// `collect` finds under every payload root, and fails (silenceably) when
/// nothing matches, naming the filter and `what` was looked for.
template <typename OpTy, typename Collect>
static DiagnosedSilenceableFailure
applyMatch(OpTy op, transform::TransformResults &results,
           transform::TransformState &state, StringRef what,
           Collect &&collect) {
  FailureOr<TagFilter> filter =
      TagFilter::get(op.getFilter(), [&]() { return op.emitOpError(); });
  if (failed(filter))
    return DiagnosedSilenceableFailure::definiteFailure();
  SmallVector<Operation *> found;
  for (Operation *root : state.getPayloadOps(op.getRoot()))
    for (auto match : collect(*filter, root))
      found.push_back(match);
  if (found.empty())
    return op.emitSilenceableError()
           << "filter " << op.getFilter() << " matches no " << what;
  results.set(cast<OpResult>(op->getResult(0)), found);
  return DiagnosedSilenceableFailure::success();
}

/// Selection reads its handle and the payload and produces a new handle.
static void
getMatchEffects(OpOperand &root, Operation *op,
                SmallVectorImpl<MemoryEffects::EffectInstance> &effects) {
  transform::onlyReadsHandle(root, effects);
  transform::producesHandle(op->getOpResults(), effects);
  transform::onlyReadsPayload(effects);
}

LogicalResult MatchChunksOp::verify() {
  return TagFilter::get(getFilter(), [&]() { return emitOpError(); });
}

DiagnosedSilenceableFailure
MatchChunksOp::apply(transform::TransformRewriter &rewriter,
                     transform::TransformResults &results,
                     transform::TransformState &state) {
  return applyMatch(*this, results, state, "chunk",
                    [](const TagFilter &filter, Operation *root) {
                      return filter.collect(root);
                    });
}

void MatchChunksOp::getEffects(
    SmallVectorImpl<MemoryEffects::EffectInstance> &effects) {
  getMatchEffects(getRootMutable(), getOperation(), effects);
}

LogicalResult MatchNodesOp::verify() {
  return TagFilter::get(getFilter(), [&]() { return emitOpError(); });
}

DiagnosedSilenceableFailure
MatchNodesOp::apply(transform::TransformRewriter &rewriter,
                    transform::TransformResults &results,
                    transform::TransformState &state) {
  return applyMatch(*this, results, state, "DAG node",
                    [](const TagFilter &filter, Operation *root) {
                      return filter.collectNodes(root);
                    });
}

void MatchNodesOp::getEffects(
    SmallVectorImpl<MemoryEffects::EffectInstance> &effects) {
  getMatchEffects(getRootMutable(), getOperation(), effects);
}

//===----------------------------------------------------------------------===//
// PlaceOp
//===----------------------------------------------------------------------===//

LogicalResult PlaceOp::verify() {
  for (NamedAttribute axis : getDevices()) {
    auto coordinate = dyn_cast<IntegerAttr>(axis.getValue());
    if (!coordinate || coordinate.getType().isInteger(1) ||
        coordinate.getValue().isNegative())
      return emitOpError() << "coordinate of axis '"
                           << axis.getName().getValue()
                           << "' must be a non-negative integer";
  }
  return success();
}

DiagnosedSilenceableFailure
PlaceOp::apply(transform::TransformRewriter &rewriter,
               transform::TransformResults &results,
               transform::TransformState &state) {
  SmallVector<Operation *> transfers;
  auto payload = llvm::to_vector(state.getPayloadOps(getNodes()));
  for (Operation *op : payload) {
    auto task = dyn_cast<TaskOp>(op);
    if (!task)
      return emitDefiniteFailure()
             << "place acts on DAG nodes (piper.task), got '" << op->getName()
             << "'";
    MeshOp mesh = lookupMesh(task, getMeshAttr());
    if (!mesh)
      return emitDefiniteFailure() << "unknown mesh " << getMeshAttr();
    for (NamedAttribute axis : getDevices()) {
      MeshAxisAttr meshAxis = mesh.getAxis(axis.getName().getValue());
      if (!meshAxis)
        return emitDefiniteFailure()
               << "mesh " << getMeshAttr() << " has no axis '"
               << axis.getName().getValue()
               << "' (axes: " << mesh.getAxisNamesForDiagnostic() << ")";
      int64_t coordinate = cast<IntegerAttr>(axis.getValue()).getInt();
      if (coordinate >= meshAxis.getSize())
        return emitDefiniteFailure()
               << "axis '" << axis.getName().getValue() << "' of "
               << getMeshAttr() << " has size " << meshAxis.getSize()
               << "; coordinate " << coordinate << " is out of range";
    }
    if (task.getDevicesAttr() && task.getDevicesAttr() != getDevices())
      return emitDefiniteFailure()
             << "node '" << task.getName() << "' is already placed on "
             << formatDeviceGroup(task.getDevicesAttr())
             << "; cannot also place it on " << formatDeviceGroup(getDevices());
    task.setDevicesAttr(getDevices());
  }

  // Data edges between placed nodes of different groups get a transfer;
  // one per (value, destination group).
  // Each DAG once: a placement of every stage and microbatch (deepseek_v3's
  // 32 x 32) would otherwise scan the whole DAG per node.
  DenseMap<std::pair<Value, Attribute>, TransferOp> existing;
  SetVector<Operation *> payloadDags;
  for (Operation *op : payload)
    payloadDags.insert(op->getParentOfType<DAGOp>());
  for (Operation *dag : payloadDags)
    for (auto transfer : cast<DAGOp>(dag).getBody().getOps<TransferOp>())
      existing[{transfer.getValue(), transfer.getTo()}] = transfer;
  // `to` is the consumer's device group.
  auto connect = [&](Operation *consumer, DictionaryAttr to, OpOperand &use) {
    auto producer = dyn_cast_or_null<TaskOp>(use.get().getDefiningOp());
    if (!producer || !producer.getDevicesAttr() || !to ||
        producer.getDevicesAttr() == to)
      return;
    TransferOp &transfer = existing[{use.get(), to}];
    if (!transfer) {
      rewriter.setInsertionPoint(consumer);
      std::string name = (producer.getName() + "#" +
                          Twine(cast<OpResult>(use.get()).getResultNumber()) +
                          "->" + formatDeviceGroup(to))
                             .str();
      transfer =
          TransferOp::create(rewriter, consumer->getLoc(), use.get().getType(),
                             rewriter.getStringAttr(name), use.get(),
                             producer.getDevicesAttr(), to, getStreamAttr());
      transfers.push_back(transfer);
    }
    use.set(transfer.getResult());
  };
  DenseSet<Operation *> dags;
  for (Operation *op : payload) {
    auto task = cast<TaskOp>(op);
    dags.insert(task->getParentOp());
    for (OpOperand &use : task->getOpOperands())
      connect(task, task.getDevicesAttr(), use);
    for (Value output : task.getOutputs())
      for (OpOperand &use : llvm::make_early_inc_range(output.getUses()))
        if (auto consumer = dyn_cast<TaskOp>(use.getOwner()))
          connect(consumer, consumer.getDevicesAttr(), use);
  }
  // A sum of microbatch copies placed on several groups (DualPipe runs the
  // two halves of the microbatches in opposite directions, so one stage's
  // copies live on two ranks) is taken on the group of its first copy; the
  // other copies are sent there.
  for (Operation *dag : dags)
    for (auto accumulate : cast<DAGOp>(dag).getBody().getOps<AccumulateOp>()) {
      auto first = accumulate.getValues().front().getDefiningOp<TaskOp>();
      if (!first || !first.getDevicesAttr())
        continue;
      for (OpOperand &use : accumulate->getOpOperands())
        connect(accumulate, first.getDevicesAttr(), use);
    }
  results.set(cast<OpResult>(getTransfers()), transfers);
  return DiagnosedSilenceableFailure::success();
}

void PlaceOp::getEffects(
    SmallVectorImpl<MemoryEffects::EffectInstance> &effects) {
  transform::onlyReadsHandle(getNodesMutable(), effects);
  transform::producesHandle(getOperation()->getOpResults(), effects);
  transform::modifiesPayload(effects);
}

//===----------------------------------------------------------------------===//
// ReplicateOp
//===----------------------------------------------------------------------===//

/// For each result of the update node `task`: the operand number of the
/// parameter it is the update of, or nullopt for optimizer state.
static SmallVector<std::optional<unsigned>> updatedParams(TaskOp task) {
  SmallVector<std::optional<unsigned>> params(task.getNumResults());
  auto callee = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
      task, task.getCalleeAttr());
  if (!callee || callee.isExternal())
    return params;
  auto ret = cast<func::ReturnOp>(callee.getBody().front().getTerminator());
  for (auto [index, returned] : llvm::enumerate(ret.getOperands())) {
    Value value = returned;
    // Through the chunk that holds the update, to what its yield returns.
    while (auto chunk = value.getDefiningOp<AnnotateOp>())
      value = chunk.getBody().front().getTerminator()->getOperand(
          cast<OpResult>(value).getResultNumber());
    // The updated parameter is an update op's first result; its first
    // operand is the parameter (an argument of the body).
    Operation *def = value.getDefiningOp();
    if (!def || !isa<SgdUpdateOp, AdamWUpdateOp>(def) ||
        cast<OpResult>(value).getResultNumber() != 0)
      continue;
    if (auto arg = dyn_cast<BlockArgument>(def->getOperand(0));
        arg && arg.getOwner() == &callee.getBody().front())
      params[index] = arg.getArgNumber();
  }
  return params;
}

/// Packs gradient collectives into buckets of at most `bucketSize` bytes per
/// (device group, kind, stream), in the order the gradients are produced
/// (DAG order of their producers).
static void assignBuckets(ArrayRef<CollectiveOp> collectives,
                          int64_t bucketSize) {
  // Producer position, then handle order: a total order, so plain sort
  // is deterministic.
  DenseMap<Operation *, unsigned> position;
  if (!collectives.empty())
    for (auto [index, op] :
         llvm::enumerate(collectives.front()->getBlock()->getOperations()))
      position[&op] = index;
  auto keyOf = [&](CollectiveOp op, unsigned index) {
    Operation *producer = op.getValue().getDefiningOp();
    return std::make_pair(producer ? position.lookup(producer) : 0u, index);
  };
  SmallVector<std::pair<std::pair<unsigned, unsigned>, CollectiveOp>> keyed;
  for (auto [index, op] : llvm::enumerate(collectives))
    keyed.push_back({keyOf(op, index), op});
  llvm::sort(keyed,
             [](const auto &a, const auto &b) { return a.first < b.first; });
  SmallVector<CollectiveOp> ordered = llvm::map_to_vector(
      keyed, [](const auto &entry) { return entry.second; });
  // Key: the collective's device group, kind and stream, printed.
  llvm::StringMap<std::pair<int64_t, int64_t>> open; // key -> (bucket, bytes)
  int64_t next = 0;
  for (CollectiveOp op : ordered) {
    std::string key;
    llvm::raw_string_ostream os(key);
    os << op.getDevicesAttr() << "|" << stringifyCollectiveKind(op.getKind())
       << "|" << op.getStream();
    int64_t bytes = getTensorBytes(op.getType());
    auto it = open.find(key);
    if (it == open.end() || it->second.second + bytes > bucketSize)
      it = open.insert_or_assign(key, std::make_pair(next++, 0)).first;
    it->second.second += bytes;
    op.setBucketAttr(IntegerAttr::get(IntegerType::get(op.getContext(), 64),
                                      it->second.first));
  }
}

LogicalResult ReplicateOp::verify() {
  if (getZero() < 0 || getZero() > 3)
    return emitOpError() << "ZeRO stage must be 0, 1, 2 or 3, got "
                         << getZero();
  if (getAxes().empty())
    return emitOpError() << "needs at least one axis to replicate over";
  if (getBucketSize() < 0)
    return emitOpError() << "bucket size must be non-negative, got "
                         << getBucketSize();
  if (getWhere() &&
      failed(TagFilter::get(*getWhere(), [&]() { return emitOpError(); })))
    return failure();
  return success();
}

DiagnosedSilenceableFailure
ReplicateOp::apply(transform::TransformRewriter &rewriter,
                   transform::TransformResults &results,
                   transform::TransformState &state) {
  SmallVector<Operation *> created;
  auto payload = llvm::to_vector(state.getPayloadOps(getNodes()));
  SmallVector<TaskOp> tasks;
  for (Operation *op : payload) {
    auto task = dyn_cast<TaskOp>(op);
    if (!task)
      return emitDefiniteFailure()
             << "replicate acts on DAG nodes (piper.task), got '"
             << op->getName() << "'";
    tasks.push_back(task);
  }
  if (tasks.empty())
    return emitDefiniteFailure() << "no node to replicate";
  MeshOp mesh = lookupMesh(tasks.front(), getMeshAttr());
  if (!mesh)
    return emitDefiniteFailure() << "unknown mesh " << getMeshAttr();
  llvm::StringSet<> axes;
  for (StringRef axis : getAxes().getAsValueRange<StringAttr>()) {
    if (!mesh.getAxis(axis))
      return emitDefiniteFailure()
             << "mesh " << getMeshAttr() << " has no axis '" << axis
             << "' (axes: " << mesh.getAxisNamesForDiagnostic() << ")";
    if (!axes.insert(axis).second)
      return emitDefiniteFailure() << "axis '" << axis << "' is listed twice";
  }

  // `where` narrows the directive to the operands used in matching places
  // of the bodies (expert weights of a MoE are not replicated over `ep`).
  std::optional<TagFilter> where;
  if (getWhere())
    where = *TagFilter::get(*getWhere(), [&]() { return emitOpError(); });
  auto selected = [&](TaskOp task, OpOperand &use) {
    return !where || where->matchesUse(task, use.getOperandNumber());
  };

  // A parameter split over an axis cannot also be replicated over it.
  auto paramOf = [](Value value) {
    return getArgumentParam(dyn_cast<BlockArgument>(value));
  };
  for (TaskOp task : tasks)
    for (OpOperand &use : task->getOpOperands())
      if (ParamAttr param = paramOf(use.get());
          param && param.getPlacement() && selected(task, use))
        for (StringAttr axis : param.getPlacement().getSplitAxes())
          if (axes.contains(axis.getValue()))
            return emitDefiniteFailure()
                   << "parameter '" << param.getName().getValue()
                   << "' (used by node '" << task.getName()
                   << "') is split over '" << axis.getValue()
                   << "'; it cannot also be replicated over it";

  auto collective = [&](Operation *before, CollectiveKind kind, Value value,
                        StringRef name, StringAttr stream,
                        DictionaryAttr devices) {
    rewriter.setInsertionPoint(before);
    auto op =
        CollectiveOp::create(rewriter, before->getLoc(), value.getType(),
                             rewriter.getStringAttr(name),
                             CollectiveKindAttr::get(getContext(), kind), value,
                             getAxesAttr(), getMeshAttr(), stream, devices,
                             /*bucket=*/IntegerAttr());
    created.push_back(op);
    return op.getResult();
  };

  CollectiveKind gradKind = getZero() >= 1 ? CollectiveKind::ReduceScatter
                                           : CollectiveKind::AllReduce;
  SmallVector<CollectiveOp> gradCollectives;
  for (TaskOp task : tasks) {
    if (task.getPass() == PassKind::UPD) {
      // Gradients are the inputs computed by other nodes.
      for (OpOperand &use : task->getOpOperands()) {
        Operation *producer = use.get().getDefiningOp();
        if (!producer || isa<CollectiveOp>(producer) || !selected(task, use))
          continue;
        std::string name =
            (stringifyCollectiveKind(gradKind) + "(" + getNodeName(producer) +
             "#" + Twine(cast<OpResult>(use.get()).getResultNumber()) + ")")
                .str();
        use.set(collective(task, gradKind, use.get(), name, getGradStreamAttr(),
                           task.getDevicesAttr()));
        gradCollectives.push_back(use.get().getDefiningOp<CollectiveOp>());
      }
      // ZeRO-1/2: each replica updated its shard; collect the parameter.
      if (getZero() == 1 || getZero() == 2)
        for (auto [index, updated] : llvm::enumerate(updatedParams(task))) {
          if (!updated || !selected(task, task->getOpOperand(*updated)))
            continue;
          Value result = task.getOutputs()[index];
          std::string name =
              ("all_gather(" + task.getName() + "#" + Twine(index) + ")").str();
          rewriter.setInsertionPointAfter(task);
          auto gather = CollectiveOp::create(
              rewriter, task.getLoc(), result.getType(),
              rewriter.getStringAttr(name),
              CollectiveKindAttr::get(getContext(), CollectiveKind::AllGather),
              result, getAxesAttr(), getMeshAttr(), getParamStreamAttr(),
              task.getDevicesAttr(), /*bucket=*/IntegerAttr());
          result.replaceAllUsesExcept(gather.getResult(), gather);
          created.push_back(gather);
        }
      continue;
    }
    if (getZero() != 3)
      continue;
    auto callee = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
        task, task.getCalleeAttr());
    for (OpOperand &use : task->getOpOperands()) {
      ParamAttr param = paramOf(use.get());
      if (!param || !selected(task, use))
        continue;
      // A body that passes the parameter only to VJPs that do not need its
      // value (the weight gradient of a linear layer) does not gather it.
      if (callee && !callee.isExternal()) {
        BlockArgument arg = callee.getArgument(use.getOperandNumber());
        bool needed = llvm::any_of(arg.getUses(), [](OpOperand &inner) {
          auto vjp = dyn_cast<VJPOp>(inner.getOwner());
          if (!vjp)
            return true;
          unsigned primal = inner.getOperandNumber();
          if (primal >= vjp.getPrimals().size())
            return true; // used as a cotangent
          return llvm::any_of(vjp.getWrt(), [&](int64_t wrt) {
            return vjpNeedsPrimal(vjp.getOp(), wrt, primal);
          });
        });
        if (!needed)
          continue;
      }
      std::string name =
          ("all_gather(" + param.getName().getValue() + ")->" + task.getName())
              .str();
      use.set(collective(task, CollectiveKind::AllGather, use.get(), name,
                         getParamStreamAttr(), task.getDevicesAttr()));
    }
  }

  // Record the stage and the axes on each updated parameter's placement,
  // where memory planning and lowering read them (ZeRO-1 and ZeRO-2 make
  // the same collectives, so they could not tell otherwise).
  for (TaskOp task : tasks) {
    if (task.getPass() != PassKind::UPD)
      continue;
    for (std::optional<unsigned> operand : updatedParams(task)) {
      if (!operand || !selected(task, task->getOpOperand(*operand)))
        continue;
      auto arg = dyn_cast<BlockArgument>(task->getOperand(*operand));
      ParamAttr param = paramOf(task->getOperand(*operand));
      if (!arg || !param)
        continue;
      // The directive is the strategy: its stage replaces the model's.
      PlacementAttr placement = param.getPlacement();
      SmallVector<Attribute> replicated;
      if (placement)
        llvm::append_range(replicated, placement.getReplicated());
      for (Attribute axis : getAxes())
        if (!llvm::is_contained(replicated, axis))
          replicated.push_back(axis);
      SmallVector<ArrayAttr> dims;
      if (placement)
        llvm::append_range(dims, placement.getDims());
      else
        dims.assign(cast<RankedTensorType>(arg.getType()).getRank(),
                    rewriter.getArrayAttr({}));
      auto recorded = PlacementAttr::get(
          getContext(), placement ? placement.getMesh() : getMeshAttr(), dims,
          rewriter.getArrayAttr(replicated), unsigned(getZero()));
      auto fn = cast<FunctionOpInterface>(arg.getOwner()->getParentOp());
      fn.setArgAttr(arg.getArgNumber(), PiperDialect::getParamAttrName(),
                    ParamAttr::get(getContext(), param.getName(),
                                   param.getInit(), param.getStd(), recorded));
    }
  }
  // Last: splitting weight-gradient nodes erases tasks of the payload.
  if (getZero() >= 2) {
    DAGOp dag = tasks.front()->getParentOfType<DAGOp>();
    splitWeightGradientBuckets(rewriter, dag, getBucketSize());
    reshardPerMicrobatch(rewriter, gradCollectives, created);
  }
  if (getBucketSize() > 0)
    assignBuckets(gradCollectives, getBucketSize());
  results.set(cast<OpResult>(getCollectives()), created);
  return DiagnosedSilenceableFailure::success();
}

void ReplicateOp::getEffects(
    SmallVectorImpl<MemoryEffects::EffectInstance> &effects) {
  transform::onlyReadsHandle(getNodesMutable(), effects);
  transform::producesHandle(getOperation()->getOpResults(), effects);
  transform::modifiesPayload(effects);
}

//===----------------------------------------------------------------------===//
// Extension
//===----------------------------------------------------------------------===//

#define GET_OP_CLASSES
#include "piper/TransformOps/PiperTransformOps.cpp.inc"

namespace {
class PiperTransformDialectExtension
    : public transform::TransformDialectExtension<
          PiperTransformDialectExtension> {
public:
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(PiperTransformDialectExtension)
  using Base::Base;

  void init() {
    declareDependentDialect<PiperDialect>();
    registerTransformOps<
#define GET_OP_LIST
#include "piper/TransformOps/PiperTransformOps.cpp.inc"
        >();
  }
};
} // namespace

void mlir::piper::registerTransformDialectExtension(DialectRegistry &registry) {
  registry.addExtensions<PiperTransformDialectExtension>();
}
