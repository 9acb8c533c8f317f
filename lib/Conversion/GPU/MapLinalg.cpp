//===- MapLinalg.cpp - Linalg on buffers to loops on blocks and threads ---===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// --piper-gpu-map-linalg{block-size=N}: the GPU counterpart of
// --piper-tile-linalg, on the same linalg. Each op becomes
//
//   scf.parallel over its parallel loops, collapsed into one    (upstream
//     scf.for over its reduction loops, inside each iteration    linalg)
//   -> tiled by N: tiles on block_x, a tile's iterations on thread_x
//
// and convert-parallel-loops-to-gpu turns the mapped loops into a
// gpu.launch. One thread computes one output element with its reduction in
// the CPU's order, so results do not depend on the block size. Collapsing
// makes every op a 1-D grid: a [rows, cols] elementwise op and a [rows]
// row reduction launch the same way, and no dimension runs into the 65,535
// limit of grid y/z. The mapping is upstream's loop-to-processor
// attribute, so a later schedule (a block-cooperative reduction, shared
// memory tiles) can replace this greedy one op by op.
//
//===----------------------------------------------------------------------===//

#include "piper/Conversion/GPU/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/ParallelLoopMapper.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"

namespace mlir::piper {
#define GEN_PASS_DEF_GPUMAPLINALGPASS
#include "piper/Conversion/GPU/Passes.h.inc"
} // namespace mlir::piper

using namespace mlir;

namespace {

/// Sets `loop`'s mapping: every dimension to `processor`.
LogicalResult mapLoop(scf::ParallelOp loop, gpu::Processor processor) {
  MLIRContext *ctx = loop.getContext();
  AffineMap identity = AffineMap::getMultiDimIdentityMap(1, ctx);
  SmallVector<gpu::ParallelLoopDimMappingAttr> dims(
      loop.getNumLoops(),
      gpu::ParallelLoopDimMappingAttr::get(ctx, processor, identity, identity));
  return gpu::setMappingAttr(loop, dims);
}

/// `op` as a linalg.generic whose parallel loops come first (a named op is
/// generalised): `[reduction, parallel]` (a column sum, a norm's weight
/// gradient) would otherwise map one thread to the whole op. Each output
/// element still sums in the same order (the reduction loops keep theirs).
FailureOr<linalg::LinalgOp> parallelLoopsFirst(RewriterBase &rewriter,
                                               linalg::LinalgOp op) {
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  SmallVector<unsigned> order;
  for (unsigned i = 0; i < iterators.size(); ++i)
    if (iterators[i] == utils::IteratorType::parallel)
      order.push_back(i);
  for (unsigned i = 0; i < iterators.size(); ++i)
    if (iterators[i] != utils::IteratorType::parallel)
      order.push_back(i);
  if (llvm::equal(order, llvm::seq<unsigned>(0, order.size())))
    return op;
  rewriter.setInsertionPoint(op);
  auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
  if (!generic) {
    FailureOr<linalg::GenericOp> g = linalg::generalizeNamedOp(rewriter, op);
    if (failed(g))
      return op.emitError() << "cannot generalize for the GPU mapping";
    generic = *g;
  }
  FailureOr<linalg::GenericOp> swapped =
      linalg::interchangeGenericOp(rewriter, generic, order);
  if (failed(swapped))
    return generic.emitError() << "cannot put parallel loops first";
  return cast<linalg::LinalgOp>(swapped->getOperation());
}

/// Lowers `op` to an scf.parallel nest and maps its outermost parallel
/// loop to blocks of `blockSize` threads.
LogicalResult mapOp(RewriterBase &rewriter, linalg::LinalgOp op,
                    int64_t blockSize) {
  Location loc = op.getLoc();
  if (llvm::any_of(op.getStaticLoopRanges(), ShapedType::isDynamic))
    return op.emitError() << "the GPU target maps static iteration spaces only";
  FailureOr<linalg::LinalgOp> reordered = parallelLoopsFirst(rewriter, op);
  if (failed(reordered))
    return failure();
  op = *reordered;
  // An op with no parallel loop (a full reduction, a 0-d update) runs
  // inside a one-iteration loop: one thread.
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  Operation *anchor = op;
  // The iterations of the loop mapped to blocks and threads: the product of
  // the leading parallel loops' extents (the loops upstream's lowering puts
  // in the outermost scf.parallel), or the one iteration of `single`.
  int64_t trips = 1;
  for (auto [iterator, extent] :
       llvm::zip(iterators, op.getStaticLoopRanges())) {
    if (iterator != utils::IteratorType::parallel)
      break;
    trips *= extent;
  }
  if (iterators.empty() || iterators.front() != utils::IteratorType::parallel) {
    rewriter.setInsertionPoint(op);
    Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
    Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
    auto single = scf::ParallelOp::create(rewriter, loc, ValueRange{zero},
                                          ValueRange{one}, ValueRange{one});
    rewriter.moveOpBefore(op, single.getBody()->getTerminator());
    anchor = single;
  }
  rewriter.setInsertionPoint(op);
  FailureOr<linalg::LinalgLoops> loops =
      linalg::linalgOpToParallelLoops(rewriter, op);
  if (failed(loops))
    return op.emitError() << "cannot lower to parallel loops";
  rewriter.eraseOp(op);
  // The nest starts with the op's leading parallel loops, or `single`.
  auto outer = anchor == op.getOperation()
                   ? dyn_cast<scf::ParallelOp>(loops->front())
                   : cast<scf::ParallelOp>(anchor);
  if (!outer)
    return emitError(loc) << "lowered op has no outer parallel loop";
  Block *block = outer->getBlock();
  if (outer.getNumLoops() > 1) {
    Operation *prev = outer->getPrevNode();
    std::vector<unsigned> all(outer.getNumLoops());
    std::iota(all.begin(), all.end(), 0u);
    rewriter.setInsertionPoint(outer);
    collapseParallelLoops(rewriter, outer, {all});
    // The collapsed loop replaces `outer`, after the bounds it computes.
    Operation *it = prev ? prev->getNextNode() : &block->front();
    while (!isa<scf::ParallelOp>(it))
      it = it->getNextNode();
    outer = cast<scf::ParallelOp>(it);
  }
  int64_t tile = std::clamp<int64_t>(trips, 1, blockSize);
  rewriter.setInsertionPoint(outer);
  // Replaces `outer`.
  auto [blocks, threads] =
      scf::tileParallelLoop(outer, {tile}, /*noMinMaxBounds=*/true);
  if (failed(mapLoop(blocks, gpu::Processor::BlockX)) ||
      failed(mapLoop(threads, gpu::Processor::ThreadX)))
    return failure();
  // Deeper parallel loops (parallel loops after a reduction loop) run in
  // the thread.
  WalkResult inner = threads.getBody()->walk([&](scf::ParallelOp loop) {
    return failed(mapLoop(loop, gpu::Processor::Sequential))
               ? WalkResult::interrupt()
               : WalkResult::advance();
  });
  return failure(inner.wasInterrupted());
}

struct GPUMapLinalgPass
    : mlir::piper::impl::GPUMapLinalgPassBase<GPUMapLinalgPass> {
  using GPUMapLinalgPassBase::GPUMapLinalgPassBase;

  void runOnOperation() override {
    if (blockSize < 32 || blockSize > 1024 || blockSize % 32 != 0) {
      getOperation().emitError()
          << "block-size must be a multiple of 32 in [32, 1024], got "
          << static_cast<int64_t>(blockSize);
      return signalPassFailure();
    }
    SmallVector<linalg::LinalgOp> ops;
    getOperation().walk([&](linalg::LinalgOp op) {
      // Ops inside a loop already mapped (--piper-gpu-serial-loops) run in
      // its thread.
      if (op.hasPureBufferSemantics() &&
          !op->getParentOfType<gpu::LaunchOp>() &&
          !op->getParentOfType<scf::ParallelOp>())
        ops.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::LinalgOp op : ops)
      if (failed(mapOp(rewriter, op, blockSize)))
        return signalPassFailure();
  }
};

} // namespace
