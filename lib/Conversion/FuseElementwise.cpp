//===- FuseElementwise.cpp - Elementwise linalg fusion on tensors ---------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// --piper-fuse-elementwise: upstream's producer/consumer fusion of
// elementwise linalg.generic ops, before bufferization, so a chain such as
// `dy * partial(x)` or `x + bias` then an activation is one loop nest that
// writes one buffer instead of one per op.
//
// Only the fusion patterns: upstream's linalg-fuse-elementwise-ops pass also
// folds linalg ops on constants, which would turn splat operands into dense
// constants of the tensor's shape inside the plan (issue 14: plan size must
// not depend on tensor sizes), and propagates reshapes, which the kernel
// calls still in the IR do not expect.
//
//===----------------------------------------------------------------------===//

#include "piper/Conversion/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::piper {
#define GEN_PASS_DEF_FUSEELEMENTWISEPASS
#include "piper/Conversion/Passes.h.inc"
} // namespace mlir::piper

using namespace mlir;

void mlir::piper::populateFuseElementwisePatterns(RewritePatternSet &patterns) {
  // A producer with other users would be computed once per user (and its
  // own result still written for them): fuse single-use producers only.
  //
  // Fusion computes the producer where its consumer is. Across a call (a
  // kernel launch, a collective, a send in a step program) that would keep
  // the producer's operands alive until the consumer: a microbatch's
  // gradient added into its running sum (Partition.cpp) would wait for the
  // last microbatch's, all of them live at once. Fuse only producers with
  // no call between them and their consumer.
  linalg::ControlFusionFn singleUse = [](OpOperand *fused) {
    Operation *producer = fused->get().getDefiningOp();
    if (!producer || !producer->hasOneUse())
      return false;
    Operation *consumer = fused->getOwner();
    if (producer->getBlock() != consumer->getBlock())
      return true;
    for (Operation *op = producer->getNextNode(); op && op != consumer;
         op = op->getNextNode())
      if (isa<func::CallOp>(op))
        return false;
    return true;
  };
  linalg::populateElementwiseOpsFusionPatterns(patterns, singleUse);
}

namespace {

struct FuseElementwisePass
    : mlir::piper::impl::FuseElementwisePassBase<FuseElementwisePass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    mlir::piper::populateFuseElementwisePatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
