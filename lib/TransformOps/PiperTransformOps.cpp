//===- PiperTransformOps.cpp - transform.piper.* directives ---------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "piper/TransformOps/PiperTransformOps.h"
#include "piper/Analysis/TagFilter.h"
#include "piper/Dialect/Piper/IR/PiperDialect.h"

#include "mlir/Dialect/Transform/IR/TransformDialect.h"

using namespace mlir;
using namespace mlir::piper;

//===----------------------------------------------------------------------===//
// MatchChunksOp
//===----------------------------------------------------------------------===//

LogicalResult MatchChunksOp::verify() {
  return TagFilter::get(getFilter(), [&]() { return emitOpError(); });
}

DiagnosedSilenceableFailure
MatchChunksOp::apply(transform::TransformRewriter &rewriter,
                     transform::TransformResults &results,
                     transform::TransformState &state) {
  FailureOr<TagFilter> filter =
      TagFilter::get(getFilter(), [&]() { return emitOpError(); });
  if (failed(filter))
    return DiagnosedSilenceableFailure::definiteFailure();
  SmallVector<Operation *> chunks;
  for (Operation *root : state.getPayloadOps(getRoot()))
    for (AnnotateOp chunk : filter->collect(root))
      chunks.push_back(chunk);
  if (chunks.empty())
    return emitSilenceableError()
           << "filter " << getFilter() << " matches no chunk";
  results.set(cast<OpResult>(getChunks()), chunks);
  return DiagnosedSilenceableFailure::success();
}

void MatchChunksOp::getEffects(
    SmallVectorImpl<MemoryEffects::EffectInstance> &effects) {
  transform::onlyReadsHandle(getRootMutable(), effects);
  transform::producesHandle(getOperation()->getOpResults(), effects);
  transform::onlyReadsPayload(effects);
}

//===----------------------------------------------------------------------===//
// MatchNodesOp
//===----------------------------------------------------------------------===//

LogicalResult MatchNodesOp::verify() {
  return TagFilter::get(getFilter(), [&]() { return emitOpError(); });
}

DiagnosedSilenceableFailure
MatchNodesOp::apply(transform::TransformRewriter &rewriter,
                    transform::TransformResults &results,
                    transform::TransformState &state) {
  FailureOr<TagFilter> filter =
      TagFilter::get(getFilter(), [&]() { return emitOpError(); });
  if (failed(filter))
    return DiagnosedSilenceableFailure::definiteFailure();
  SmallVector<Operation *> nodes;
  for (Operation *root : state.getPayloadOps(getRoot()))
    for (TaskOp task : filter->collectNodes(root))
      nodes.push_back(task);
  if (nodes.empty())
    return emitSilenceableError()
           << "filter " << getFilter() << " matches no DAG node";
  results.set(cast<OpResult>(getNodes()), nodes);
  return DiagnosedSilenceableFailure::success();
}

void MatchNodesOp::getEffects(
    SmallVectorImpl<MemoryEffects::EffectInstance> &effects) {
  transform::onlyReadsHandle(getRootMutable(), effects);
  transform::producesHandle(getOperation()->getOpResults(), effects);
  transform::onlyReadsPayload(effects);
}

//===----------------------------------------------------------------------===//
// PlaceOp
//===----------------------------------------------------------------------===//

/// `{pp=1,ep=0}`: a device group as it appears in node names.
static std::string formatDevices(DictionaryAttr devices) {
  std::string text = "{";
  llvm::raw_string_ostream os(text);
  llvm::interleave(
      devices, os,
      [&](NamedAttribute axis) {
        os << axis.getName().getValue() << "="
           << cast<IntegerAttr>(axis.getValue()).getInt();
      },
      ",");
  os << "}";
  return text;
}

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
             << formatDevices(task.getDevicesAttr())
             << "; cannot also place it on " << formatDevices(getDevices());
    task.setDevicesAttr(getDevices());
  }

  // Data edges between placed nodes of different groups get a transfer;
  // one per (value, destination group).
  DenseMap<std::pair<Value, Attribute>, TransferOp> existing;
  for (Operation *op : payload) {
    auto dag = op->getParentOfType<DAGOp>();
    for (auto transfer : dag.getBody().getOps<TransferOp>())
      existing[{transfer.getValue(), transfer.getTo()}] = transfer;
  }
  auto connect = [&](TaskOp consumer, OpOperand &use) {
    auto producer = dyn_cast_or_null<TaskOp>(use.get().getDefiningOp());
    if (!producer || !producer.getDevicesAttr() || !consumer.getDevicesAttr() ||
        producer.getDevicesAttr() == consumer.getDevicesAttr())
      return;
    DictionaryAttr to = consumer.getDevicesAttr();
    TransferOp &transfer = existing[{use.get(), to}];
    if (!transfer) {
      rewriter.setInsertionPoint(consumer);
      std::string name = (producer.getName() + "#" +
                          Twine(cast<OpResult>(use.get()).getResultNumber()) +
                          "->" + formatDevices(to))
                             .str();
      transfer =
          TransferOp::create(rewriter, consumer.getLoc(), use.get().getType(),
                             rewriter.getStringAttr(name), use.get(),
                             producer.getDevicesAttr(), to, getStreamAttr());
      transfers.push_back(transfer);
    }
    use.set(transfer.getResult());
  };
  for (Operation *op : payload) {
    auto task = cast<TaskOp>(op);
    for (OpOperand &use : task->getOpOperands())
      connect(task, use);
    for (Value output : task.getOutputs())
      for (OpOperand &use : llvm::make_early_inc_range(output.getUses()))
        if (auto consumer = dyn_cast<TaskOp>(use.getOwner()))
          connect(consumer, use);
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
