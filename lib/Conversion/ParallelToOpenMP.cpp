//===- ParallelToOpenMP.cpp - scf.parallel to OpenMP for the host CPU -----===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// --piper-parallel-to-openmp: upstream's convert-scf-to-openmp (each
// scf.parallel, which --piper-tile-linalg made of thread-sized chunks,
// becomes omp.parallel + omp.wsloop), then the memref.alloca_scope it puts
// around every loop body is inlined. The scope only matters for stack
// allocations inside the body, and the bodies here have none (the
// deallocation pipeline left heap buffers outside them); the scope would
// otherwise have to stay one block, which the later scf-to-cf breaks.
//
// The team's size is not fixed in the code: libomp's nthreads ICV, which
// piper-run sets through piper_k_set_threads (--threads), decides it.
//
//===----------------------------------------------------------------------===//

#include "piper/Conversion/Passes.h"

#include "mlir/Conversion/SCFToOpenMP/SCFToOpenMP.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/OpenMP/OpenMPDialect.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::piper {
#define GEN_PASS_DEF_PARALLELTOOPENMPPASS
#include "piper/Conversion/Passes.h.inc"
} // namespace mlir::piper

using namespace mlir;

namespace {

/// Replaces `scope` by its body when the body allocates nothing on the
/// stack.
void inlineAllocaScope(RewriterBase &rewriter, memref::AllocaScopeOp scope) {
  bool allocates = false;
  scope.getBodyRegion().walk([&](memref::AllocaOp) { allocates = true; });
  if (allocates || !scope.getBodyRegion().hasOneBlock())
    return;
  Block &body = scope.getBodyRegion().front();
  auto terminator = cast<memref::AllocaScopeReturnOp>(body.getTerminator());
  SmallVector<Value> results(terminator.getResults());
  rewriter.eraseOp(terminator);
  rewriter.inlineBlockBefore(&body, scope);
  rewriter.replaceOp(scope, results);
}

struct ParallelToOpenMPPass
    : mlir::piper::impl::ParallelToOpenMPPassBase<ParallelToOpenMPPass> {
  void runOnOperation() override {
    OpPassManager pm(ModuleOp::getOperationName());
    pm.addPass(createConvertSCFToOpenMPPass());
    if (failed(runPipeline(pm, getOperation())))
      return signalPassFailure();
    SmallVector<memref::AllocaScopeOp> scopes;
    getOperation().walk([&](omp::WsloopOp loop) {
      loop.walk([&](memref::AllocaScopeOp s) { scopes.push_back(s); });
    });
    IRRewriter rewriter(&getContext());
    for (memref::AllocaScopeOp scope : scopes)
      inlineAllocaScope(rewriter, scope);
  }
};

} // namespace
