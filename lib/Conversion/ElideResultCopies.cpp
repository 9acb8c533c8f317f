//===- ElideResultCopies.cpp - Results computed in their out-parameter ----===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// --piper-elide-result-copies: after buffer-results-to-out-params, a
// function that returns what a call produced still computes it in a fresh
// buffer and copies that into its out-parameter at the end (upstream hoists
// only a returned memref.alloc, and the program function returns the
// results of its pass functions, whose out-parameters it allocates later).
// Where the buffer is a memref.alloc of the out-parameter's type in the same
// block, is not used after the copy, and the out-parameter is used only by
// the copy, the buffer is the out-parameter: the 4-layer GPT's step copied
// every parameter and AdamW moment once more per step (157 copies, 40 MB).
//
//===----------------------------------------------------------------------===//

#include "piper/Conversion/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace mlir::piper {
#define GEN_PASS_DEF_ELIDERESULTCOPIESPASS
#include "piper/Conversion/Passes.h.inc"
} // namespace mlir::piper

using namespace mlir;

namespace {

/// Whether `copy` (in the function's entry block) copies a buffer the
/// function allocated in that block into an out-parameter that nothing
/// else touches, after the buffer's last use.
bool isElidable(memref::CopyOp copy, Block &entry) {
  auto arg = dyn_cast<BlockArgument>(copy.getTarget());
  auto alloc = copy.getSource().getDefiningOp<memref::AllocOp>();
  if (!arg || arg.getOwner() != &entry || !arg.hasOneUse() || !alloc ||
      alloc->getBlock() != &entry || copy->getBlock() != &entry ||
      alloc.getType() != arg.getType())
    return false;
  // Every other use of the buffer comes before the copy.
  for (Operation *user : alloc->getUsers()) {
    Operation *top = entry.findAncestorOpInBlock(*user);
    if (user != copy && (!top || !top->isBeforeInBlock(copy)))
      return false;
  }
  return true;
}

struct ElideResultCopiesPass
    : mlir::piper::impl::ElideResultCopiesPassBase<ElideResultCopiesPass> {
  void runOnOperation() override {
    func::FuncOp fn = getOperation();
    if (fn.isExternal())
      return;
    Block &entry = fn.front();
    SmallVector<memref::CopyOp> copies;
    for (auto copy : entry.getOps<memref::CopyOp>())
      if (isElidable(copy, entry))
        copies.push_back(copy);
    for (memref::CopyOp copy : copies) {
      Operation *alloc = copy.getSource().getDefiningOp();
      Value arg = copy.getTarget();
      copy->erase();
      alloc->getResult(0).replaceAllUsesWith(arg);
      alloc->erase();
    }
  }
};

} // namespace
