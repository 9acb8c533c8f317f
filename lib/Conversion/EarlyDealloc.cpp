//===- EarlyDealloc.cpp - Free buffers right after their last use ---------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Upstream's ownership-based deallocation frees a block's buffers at the end
// of the block. A step program is one block, so without this pass every
// buffer of the step lives until the step returns (the runtime's high-water
// mark of a PP2 x DP2 ZeRO-3 step was every allocation of the step). Moving
// each dealloc up to the last use of its buffer makes buffers live as the
// memory plan schedules them.
//
//===----------------------------------------------------------------------===//

#include "piper/Conversion/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace mlir::piper {
#define GEN_PASS_DEF_EARLYDEALLOCPASS
#include "piper/Conversion/Passes.h.inc"
} // namespace mlir::piper

using namespace mlir;

namespace {

/// Whether `op` makes an alias of its memref operand (its memref results
/// view the same buffer).
bool isAliasing(Operation *op) {
  return isa<ViewLikeOpInterface, memref::CastOp, memref::ReinterpretCastOp,
             memref::ReshapeOp, memref::ExpandShapeOp, memref::CollapseShapeOp,
             memref::ExtractStridedMetadataOp>(op);
}

/// Whether `use` is the output of a nonblocking collective, which the
/// runtime may still write after the call returns; a later reader of the
/// output waits for it first (the program's events), so the buffer may be
/// freed after a reader, never right after the call. Its input (operand 0)
/// is copied out at once (plan_abi.h), so it may be freed after the call.
bool isPendingOutput(OpOperand &use) {
  auto call = dyn_cast<func::CallOp>(use.getOwner());
  return call && call.getCallee().starts_with("piper_comm_i") &&
         use.getOperandNumber() != 0;
}

/// The last op of `dealloc`'s block that uses its buffer, or null when the
/// dealloc must stay where it is.
Operation *lastUse(memref::DeallocOp dealloc) {
  auto alloc = dealloc.getMemref().getDefiningOp<memref::AllocOp>();
  Block *block = dealloc->getBlock();
  if (!alloc || alloc->getBlock() != block)
    return nullptr;
  Operation *last = alloc;
  // Whether `last` is a nonblocking collective writing the buffer: then
  // nothing after it waits for the write, and the buffer stays to the end.
  bool pending = false;
  SmallVector<Value> worklist = {alloc.getResult()};
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    for (OpOperand &use : value.getUses()) {
      Operation *user = use.getOwner();
      if (user == dealloc)
        continue;
      Operation *inBlock = block->findAncestorOpInBlock(*user);
      if (!inBlock || dealloc->isBeforeInBlock(inBlock) ||
          user->hasTrait<OpTrait::IsTerminator>())
        return nullptr;
      if (last->isBeforeInBlock(inBlock)) {
        last = inBlock;
        pending = isPendingOutput(use);
      }
      bool aliasing = isAliasing(user);
      for (Value result : user->getResults()) {
        if (!isa<BaseMemRefType>(result.getType()))
          continue;
        if (!aliasing)
          return nullptr;
        worklist.push_back(result);
      }
    }
  }
  return pending ? nullptr : last;
}

struct EarlyDeallocPass : piper::impl::EarlyDeallocPassBase<EarlyDeallocPass> {
  void runOnOperation() override {
    SmallVector<memref::DeallocOp> deallocs;
    getOperation().walk(
        [&](memref::DeallocOp dealloc) { deallocs.push_back(dealloc); });
    for (memref::DeallocOp dealloc : deallocs)
      if (Operation *last = lastUse(dealloc))
        if (last->getNextNode() != dealloc)
          dealloc->moveAfter(last);
  }
};

} // namespace
