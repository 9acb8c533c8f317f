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

#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace mlir::piper;

void mlir::piper::reshardPerMicrobatch(
    RewriterBase &rewriter, SmallVectorImpl<CollectiveOp> &gradCollectives,
    SmallVectorImpl<Operation *> &created) {
  SmallVector<CollectiveOp> result;
  for (CollectiveOp step : gradCollectives) {
    auto accumulate = step.getValue().getDefiningOp<AccumulateOp>();
    if (step.getKind() != CollectiveKind::ReduceScatter || !accumulate ||
        accumulate.getValues().size() < 2 || !accumulate->hasOneUse()) {
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
