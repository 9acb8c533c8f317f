//===- TileLinalg.cpp - Linalg on buffers into thread chunks and vectors --===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// --piper-tile-linalg{parallel-grain=N vector-bytes=B}: every linalg op left
// after the GEMMs became BLAS calls is
//   1. split into an scf.parallel over its outermost parallel loop when it
//      has at least N iterations (chunks of at least N iterations each; the
//      pipeline turns scf.parallel into an OpenMP work-sharing loop), and
//   2. tiled into 1 x ... x 1 x W tiles (W = B / element size) that
//      linalg::vectorize turns into vector ops.
// Both choices are options so that the same linalg serves another target
// with other tile sizes; nothing here knows the CPU.
//
//===----------------------------------------------------------------------===//

#include "piper/Conversion/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::piper {
#define GEN_PASS_DEF_TILELINALGPASS
#include "piper/Conversion/Passes.h.inc"
} // namespace mlir::piper

using namespace mlir;

namespace {

/// The op's loop extents, or nothing if one of them is not static.
std::optional<SmallVector<int64_t>> staticRanges(linalg::LinalgOp op) {
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (llvm::any_of(ranges, ShapedType::isDynamic))
    return std::nullopt;
  return ranges;
}

/// Tiles `op` with `sizes` (0: untiled) into `loopType` loops and erases
/// it; the tiled op, or null if tiling failed (then `op` is unchanged).
linalg::LinalgOp tileLoops(RewriterBase &rewriter, linalg::LinalgOp op,
                           ArrayRef<int64_t> sizes,
                           linalg::LinalgTilingLoopType loopType) {
  linalg::LinalgTilingOptions options;
  options.setTileSizes(sizes).setLoopType(loopType);
  rewriter.setInsertionPoint(op);
  FailureOr<linalg::TiledLinalgOp> tiled =
      linalg::tileLinalgOp(rewriter, op, options);
  if (failed(tiled))
    return nullptr;
  rewriter.eraseOp(op);
  return tiled->op;
}

} // namespace

linalg::LinalgOp mlir::piper::tileLinalgForThreads(RewriterBase &rewriter,
                                                   linalg::LinalgOp op,
                                                   int64_t grain) {
  std::optional<SmallVector<int64_t>> ranges = staticRanges(op);
  if (grain <= 0 || !ranges || !op.hasPureBufferSemantics())
    return op;
  int64_t total = 1;
  for (int64_t r : *ranges)
    total *= r;
  if (total < 2 * grain)
    return op;
  // The outermost parallel loop that splits: reductions stay whole in one
  // thread, so every output element is summed in one order whatever the
  // thread count.
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  for (auto [dim, extent] : llvm::enumerate(*ranges)) {
    if (iterators[dim] != utils::IteratorType::parallel || extent < 2)
      continue;
    // Chunks of at least `grain` iterations; the chunk's extent divides the
    // loop's, so every chunk has the same static shape.
    int64_t inner = total / extent;
    int64_t chunk = std::max<int64_t>(1, llvm::divideCeil(grain, inner));
    while (extent % chunk != 0)
      ++chunk;
    if (chunk == extent)
      return op;
    SmallVector<int64_t> sizes(ranges->size(), 0);
    sizes[dim] = chunk;
    linalg::LinalgOp tiled = tileLoops(
        rewriter, op, sizes, linalg::LinalgTilingLoopType::ParallelLoops);
    return tiled ? tiled : op;
  }
  return op;
}

namespace {

/// Tiles `op` (static loops, innermost extent a multiple of `width`) into
/// 1 x ... x 1 x `width` tiles and vectorises each; a tile the vectoriser
/// rejects stays a linalg op (loops later).
void vectorizeTiles(RewriterBase &rewriter, linalg::LinalgOp op,
                    int64_t width) {
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  SmallVector<int64_t> sizes(ranges.size(), 1);
  sizes.back() = width;
  linalg::LinalgOp tiled = op;
  if (ranges != sizes) {
    tiled = tileLoops(rewriter, op, sizes, linalg::LinalgTilingLoopType::Loops);
    if (!tiled)
      return;
  }
  rewriter.setInsertionPoint(tiled);
  // The scalable flags are passed explicitly: LLVM 22's vectoriser reads
  // one per vector size, also past the end of an empty list.
  SmallVector<bool> fixedWidth(sizes.size(), false);
  FailureOr<linalg::VectorizationResult> result =
      linalg::vectorize(rewriter, tiled, sizes, fixedWidth);
  if (succeeded(result))
    rewriter.replaceOp(tiled, result->replacements);
}

} // namespace

LogicalResult mlir::piper::tileAndVectorizeLinalg(RewriterBase &rewriter,
                                                  linalg::LinalgOp op,
                                                  int64_t vectorBytes) {
  std::optional<SmallVector<int64_t>> ranges = staticRanges(op);
  if (vectorBytes <= 0 || !ranges || ranges->empty() ||
      !op.hasPureBufferSemantics() || op.getNumDpsInits() == 0)
    return failure();
  // A body the vectoriser cannot handle (a gather through memref.load, a
  // call) keeps its loops. Fills too: LLVM turns their loops into memset.
  if (isa<linalg::FillOp>(op) || failed(linalg::vectorizeOpPrecondition(op)))
    return failure();
  Type element = getElementTypeOrSelf(op.getDpsInits()[0].getType());
  if (!element.isIntOrFloat())
    return failure();
  int64_t bytes = std::max<int64_t>(1, element.getIntOrFloatBitWidth() / 8);
  int64_t extent = ranges->back();
  int64_t width = std::min(extent, vectorBytes / bytes);
  if (width < 2)
    return failure();
  // No masks: the innermost loop splits into a part that is a multiple of
  // the width and a shorter tail, each with static vectors (masked
  // transfers cost more than a second loop nest and do not vectorise
  // reductions on buffers in LLVM 22).
  int64_t tail = extent % width;
  if (tail != 0) {
    rewriter.setInsertionPoint(op);
    auto [head, rest] = linalg::splitOp(
        rewriter, cast<TilingInterface>(op.getOperation()), ranges->size() - 1,
        rewriter.getIndexAttr(extent - tail));
    if (!head || !rest)
      return failure();
    if (tail >= 2)
      vectorizeTiles(rewriter, cast<linalg::LinalgOp>(rest.getOperation()),
                     tail);
    op = cast<linalg::LinalgOp>(head.getOperation());
  }
  vectorizeTiles(rewriter, op, width);
  return success();
}

void mlir::piper::populateDropVectorUnitDimsPatterns(
    RewritePatternSet &patterns) {
  // The vectoriser's n-D forms with unit dims (vector<1x8xf32>, a reduction
  // over a tile's unit loop) to 1-D vectors and transfers, before anything
  // is lowered: mixed with the lowering patterns below, the reduction
  // lowering and the unit-dim folds rewrite each other without end.
  vector::MultiDimReductionOp::getCanonicalizationPatterns(
      patterns, patterns.getContext());
  vector::populateCastAwayVectorLeadingOneDimPatterns(patterns);
  vector::populateVectorTransferDropUnitDimsPatterns(patterns);
}

void mlir::piper::populateLowerTiledVectorPatterns(
    RewritePatternSet &patterns) {
  // What is left to plain vector loads, stores and reductions, which
  // convert-vector-to-llvm takes.
  vector::populateVectorMaskLoweringPatternsForSideEffectingOps(patterns);
  vector::populateVectorTransferPermutationMapLoweringPatterns(patterns);
  vector::populateVectorMultiReductionLoweringPatterns(
      patterns, vector::VectorMultiReductionLowering::InnerReduction);
  vector::populateVectorBroadcastLoweringPatterns(patterns);
  vector::populateVectorShapeCastLoweringPatterns(patterns);
  vector::populateVectorTransferLoweringPatterns(patterns,
                                                 /*maxTransferRank=*/1);
  vector::populateVectorMaskOpLoweringPatterns(patterns);
  // f32 exp as a polynomial on the vector (upstream's approximation, about
  // 1 ulp): LLVM scalarises llvm.exp.v16f32 into 16 libm expf calls, 6% of
  // the 4-layer GPT's step (softmax, attention, cross-entropy, swish).
  // f64 keeps the libm call (the patterns take f32 only).
  populateMathPolynomialApproximationPatterns(patterns, [](StringRef name) {
    return name == math::ExpOp::getOperationName();
  });
}

namespace {

struct TileLinalgPass : mlir::piper::impl::TileLinalgPassBase<TileLinalgPass> {
  using TileLinalgPassBase::TileLinalgPassBase;

  void runOnOperation() override {
    // Options come from the command line: a bad one is one located error,
    // not a silently different tiling.
    if (parallelGrain < 0 || vectorBytes < 0 ||
        (vectorBytes > 0 && !llvm::isPowerOf2_64(vectorBytes))) {
      getOperation()->emitError()
          << "piper-tile-linalg: parallel-grain must be >= 0 and vector-bytes "
             "0 or a power of two, got parallel-grain="
          << int64_t(parallelGrain) << " vector-bytes=" << int64_t(vectorBytes);
      return signalPassFailure();
    }
    SmallVector<linalg::LinalgOp> ops;
    getOperation().walk([&](linalg::LinalgOp op) { ops.push_back(op); });
    IRRewriter rewriter(&getContext());
    bool vectorized = false;
    for (linalg::LinalgOp op : ops) {
      linalg::LinalgOp chunk =
          mlir::piper::tileLinalgForThreads(rewriter, op, parallelGrain);
      vectorized |= succeeded(
          mlir::piper::tileAndVectorizeLinalg(rewriter, chunk, vectorBytes));
    }
    if (!vectorized)
      return;
    // A bound on the rewrites, so that patterns that undo each other fail
    // the pass instead of growing the IR without end.
    GreedyRewriteConfig config;
    config.setMaxNumRewrites(1 << 16);
    for (auto populate : {mlir::piper::populateDropVectorUnitDimsPatterns,
                          mlir::piper::populateLowerTiledVectorPatterns}) {
      RewritePatternSet patterns(&getContext());
      populate(patterns);
      if (failed(applyPatternsGreedily(getOperation(), std::move(patterns),
                                       config))) {
        getOperation().emitError("the vector clean-up of piper-tile-linalg "
                                 "did not converge");
        return signalPassFailure();
      }
    }
  }
};

} // namespace
