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
