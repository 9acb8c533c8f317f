//===- FoldSplatConstants.cpp - Keep shape-sized constants out of objects -===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// --piper-fold-splat-constants: a splat tensor constant (the microbatch
// scale 1/n of every accumulated gradient, a zero cotangent, ...) must not
// reach bufferization, which makes it a memref.global of the tensor's size
// and then a dense array in the plan's .rodata: with qwen3_1b's embedding
// gradient, a 600 MB step.pp0.so and minutes of LLVM translation. Here,
// before bufferization:
//
//   - an input of a linalg.generic that is a splat (an arith.constant splat
//     or a linalg.fill) is dropped and its scalar used in the body;
//   - any other splat tensor constant of more than one element becomes
//     tensor.empty + linalg.fill (filled at run time, O(1) in the object).
//
// Rank-0 and one-element constants stay: their size does not depend on the
// model. A greedy rewrite, so the constants and fills that only fed folded
// inputs are erased as dead.
//
//===----------------------------------------------------------------------===//

#include "piper/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::piper {
#define GEN_PASS_DEF_FOLDSPLATCONSTANTSPASS
#include "piper/Conversion/Passes.h.inc"
} // namespace mlir::piper

using namespace mlir;
using namespace mlir::piper;

namespace {

/// The splat attribute of an arith.constant tensor of more than one element,
/// or null.
SplatElementsAttr getShapedSplat(arith::ConstantOp constant) {
  auto type = dyn_cast<RankedTensorType>(constant.getType());
  if (!type || !type.hasStaticShape() || type.getNumElements() <= 1)
    return nullptr;
  return dyn_cast<SplatElementsAttr>(constant.getValue());
}

/// What an input of a linalg.generic reads at every index, when that is one
/// scalar: the value of a linalg.fill, or the splat of an arith.constant
/// (`splat` is set and the result is null: the caller materialises it).
Value getSplatScalar(Value tensor, TypedAttr &splat) {
  splat = nullptr;
  if (auto fill = tensor.getDefiningOp<linalg::FillOp>()) {
    if (!fill.hasPureTensorSemantics())
      return nullptr;
    return fill.getInputs().front();
  }
  if (auto constant = tensor.getDefiningOp<arith::ConstantOp>())
    if (auto attr = dyn_cast<SplatElementsAttr>(constant.getValue()))
      splat = cast<TypedAttr>(attr.getSplatValue<Attribute>());
  return nullptr;
}

/// linalg.generic ins(%splat, %x) -> linalg.generic ins(%x) with the splat's
/// scalar in the body. The loop bounds must still follow from the remaining
/// operands (as upstream's elementwise fusion requires).
struct FoldSplatInputs : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::GenericOp op,
                                PatternRewriter &rewriter) const override {
    if (!op.hasPureTensorSemantics())
      return failure();
    Block &body = op.getRegion().front();
    // Per input: the scalar it reads, or the splat attribute to make one of.
    SmallVector<std::pair<OpOperand *, Value>> folded;
    SmallVector<std::pair<OpOperand *, TypedAttr>> splats;
    SmallVector<Value> inputs;
    SmallVector<AffineMap> maps;
    for (OpOperand *input : op.getDpsInputOperands()) {
      Type element = body.getArgument(input->getOperandNumber()).getType();
      TypedAttr splat;
      Value scalar = getSplatScalar(input->get(), splat);
      if (scalar && scalar.getType() == element) {
        folded.push_back({input, scalar});
        continue;
      }
      if (splat && splat.getType() == element) {
        splats.push_back({input, splat});
        continue;
      }
      inputs.push_back(input->get());
      maps.push_back(op.getMatchingIndexingMap(input));
    }
    if (folded.empty() && splats.empty())
      return failure();
    for (OpOperand &init : op.getDpsInitsMutable())
      maps.push_back(op.getMatchingIndexingMap(&init));
    if (!inversePermutation(concatAffineMaps(maps, rewriter.getContext())))
      return rewriter.notifyMatchFailure(op, "the loop bounds would follow "
                                             "from no operand");

    Location loc = op.getLoc();
    for (auto [input, splat] : splats)
      folded.push_back(
          {input, arith::ConstantOp::create(rewriter, loc, splat).getResult()});
    auto generic = linalg::GenericOp::create(
        rewriter, loc, op.getResultTypes(), inputs, op.getDpsInits(),
        rewriter.getAffineMapArrayAttr(maps), op.getIteratorTypes(),
        /*doc=*/nullptr, /*libraryCall=*/nullptr);
    rewriter.inlineRegionBefore(op.getRegion(), generic.getRegion(),
                                generic.getRegion().end());
    Block &moved = generic.getRegion().front();
    llvm::BitVector erased(moved.getNumArguments());
    for (auto [input, scalar] : folded) {
      unsigned index = input->getOperandNumber();
      rewriter.replaceAllUsesWith(moved.getArgument(index), scalar);
      erased.set(index);
    }
    rewriter.modifyOpInPlace(generic, [&] { moved.eraseArguments(erased); });
    rewriter.replaceOp(op, generic.getResults());
    return success();
  }
};

/// arith.constant dense<v> : tensor<...> (more than one element) ->
/// linalg.fill of tensor.empty with the scalar v.
struct SplatConstantToFill : OpRewritePattern<arith::ConstantOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(arith::ConstantOp constant,
                                PatternRewriter &rewriter) const override {
    SplatElementsAttr splat = getShapedSplat(constant);
    if (!splat)
      return failure();
    Location loc = constant.getLoc();
    auto type = cast<RankedTensorType>(constant.getType());
    Value scalar = arith::ConstantOp::create(
        rewriter, loc, cast<TypedAttr>(splat.getSplatValue<Attribute>()));
    Value empty = tensor::EmptyOp::create(rewriter, loc, type.getShape(),
                                          type.getElementType());
    rewriter.replaceOpWithNewOp<linalg::FillOp>(constant, ValueRange{scalar},
                                                ValueRange{empty});
    return success();
  }
};

struct FoldSplatConstantsPass
    : mlir::piper::impl::FoldSplatConstantsPassBase<FoldSplatConstantsPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateFoldSplatConstantsPatterns(patterns);
    // Only these rewrites: no folding of other ops, no hoisting of
    // constants, no region simplification.
    GreedyRewriteConfig config;
    config.enableFolding(false).enableConstantCSE(false);
    config.setRegionSimplificationLevel(GreedySimplifyRegionLevel::Disabled);
    if (failed(
            applyPatternsGreedily(getOperation(), std::move(patterns), config)))
      return signalPassFailure();
  }
};

} // namespace

void mlir::piper::populateFoldSplatConstantsPatterns(
    RewritePatternSet &patterns) {
  // In either order: FoldSplatInputs also reads through the fills that
  // SplatConstantToFill makes, and a fill left without readers is dead.
  patterns.add<FoldSplatInputs, SplatConstantToFill>(patterns.getContext());
}
