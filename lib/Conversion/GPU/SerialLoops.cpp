//===- SerialLoops.cpp - Host loops over device buffers to one thread -----===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// --piper-gpu-serial-loops: an scf.for at the top of a host function that
// touches buffers (the embedding VJP's scatter over ids, whose order
// matters when ids repeat) becomes one GPU thread: its callees are inlined,
// their linalg ops lowered to loops, and the loop wrapped in a mapped
// one-iteration scf.parallel that convert-parallel-loops-to-gpu launches.
//
//===----------------------------------------------------------------------===//

#include "piper/Conversion/GPU/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/ParallelLoopMapper.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::piper {
#define GEN_PASS_DEF_GPUSERIALLOOPSPASS
#include "piper/Conversion/GPU/Passes.h.inc"
} // namespace mlir::piper

using namespace mlir;

namespace {

/// Whether `loop` reads or writes a buffer, itself or through a call.
bool touchesBuffers(scf::ForOp loop) {
  WalkResult found = loop.walk([](Operation *op) {
    return isa<memref::LoadOp, memref::StoreOp, linalg::LinalgOp, func::CallOp>(
               op)
               ? WalkResult::interrupt()
               : WalkResult::advance();
  });
  return found.wasInterrupted();
}

/// Inlines every call in `loop` of a function defined in `module` (one
/// block ending in a return without results: the outlined kernels).
LogicalResult inlineCalls(RewriterBase &rewriter, scf::ForOp loop,
                          SymbolTable &symbols) {
  SmallVector<func::CallOp> calls;
  loop.walk([&](func::CallOp call) { calls.push_back(call); });
  for (func::CallOp call : calls) {
    auto callee = symbols.lookup<func::FuncOp>(call.getCallee());
    if (!callee || callee.isExternal() || !callee.getBody().hasOneBlock() ||
        call.getNumResults() != 0)
      return call.emitError()
             << "the GPU target cannot run a call inside a host loop over "
                "buffers";
    IRMapping map;
    Block &body = callee.getBody().front();
    map.map(body.getArguments(), call.getOperands());
    rewriter.setInsertionPoint(call);
    for (Operation &op : body.without_terminator())
      rewriter.clone(op, map);
    rewriter.eraseOp(call);
  }
  return success();
}

/// Wraps `op` in a one-iteration scf.parallel on block_x and one on
/// thread_x.
LogicalResult wrapInOneThread(RewriterBase &rewriter, Operation *op) {
  Location loc = op->getLoc();
  MLIRContext *ctx = op->getContext();
  rewriter.setInsertionPoint(op);
  Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
  Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
  auto blocks = scf::ParallelOp::create(rewriter, loc, ValueRange{zero},
                                        ValueRange{one}, ValueRange{one});
  rewriter.setInsertionPoint(blocks.getBody()->getTerminator());
  auto threads = scf::ParallelOp::create(rewriter, loc, ValueRange{zero},
                                         ValueRange{one}, ValueRange{one});
  rewriter.moveOpBefore(op, threads.getBody()->getTerminator());
  AffineMap id = AffineMap::getMultiDimIdentityMap(1, ctx);
  auto dim = [&](gpu::Processor p) {
    return gpu::ParallelLoopDimMappingAttr::get(ctx, p, id, id);
  };
  if (failed(gpu::setMappingAttr(blocks, dim(gpu::Processor::BlockX))) ||
      failed(gpu::setMappingAttr(threads, dim(gpu::Processor::ThreadX))))
    return failure();
  return success();
}

struct GPUSerialLoopsPass
    : mlir::piper::impl::GPUSerialLoopsPassBase<GPUSerialLoopsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    SmallVector<scf::ForOp> loops;
    for (auto fn : module.getOps<func::FuncOp>())
      if (!fn.isExternal())
        for (auto loop : fn.getBody().getOps<scf::ForOp>())
          if (touchesBuffers(loop))
            loops.push_back(loop);
    IRRewriter rewriter(&getContext());
    for (scf::ForOp loop : loops) {
      if (failed(inlineCalls(rewriter, loop, symbols)))
        return signalPassFailure();
      SmallVector<linalg::LinalgOp> ops;
      loop.walk([&](linalg::LinalgOp op) { ops.push_back(op); });
      for (linalg::LinalgOp op : ops) {
        rewriter.setInsertionPoint(op);
        if (failed(linalg::linalgOpToLoops(rewriter, op)))
          return signalPassFailure();
        rewriter.eraseOp(op);
      }
      if (failed(wrapInOneThread(rewriter, loop)))
        return signalPassFailure();
    }
  }
};

} // namespace
