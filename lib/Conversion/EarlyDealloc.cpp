//===- EarlyDealloc.cpp - Free program buffers after their last use -------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Upstream's ownership-based deallocation frees a buffer at the end of the
// block that allocated it. A program function is one block for the whole
// step, so without this pass every launch's outputs (the activations of every
// microbatch) live until the step ends, and the measured peak is the sum of
// everything the step computes rather than what the memory plan predicts.
//
//===----------------------------------------------------------------------===//

#include "piper/Conversion/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::piper {
#define GEN_PASS_DEF_EARLYDEALLOCPASS
#include "piper/Conversion/Passes.h.inc"
} // namespace mlir::piper

using namespace mlir;

namespace {

/// Whether `op` hands a buffer to a nonblocking collective, which may write
/// its output after the call returns.
bool isNonblockingComm(Operation *op) {
  auto call = dyn_cast<func::CallOp>(op);
  return call && call.getCallee().starts_with("piper_comm_i");
}

/// The op of `block` after which the buffer `root` is dead: the last op of
/// the block using it or a value computed from it (views, casts), or null
/// when its dealloc must stay (used outside the block or by a nonblocking
/// collective).
Operation *lastUseInBlock(Value root, Operation *dealloc, Block &block) {
  llvm::SetVector<Value> aliases;
  aliases.insert(root);
  Operation *last = root.getDefiningOp();
  if (last && last->getBlock() != &block)
    return nullptr;
  for (size_t i = 0; i < aliases.size(); ++i) {
    for (Operation *user : aliases[i].getUsers()) {
      if (user == dealloc)
        continue;
      if (isNonblockingComm(user))
        return nullptr;
      Operation *inBlock = block.findAncestorOpInBlock(*user);
      if (!inBlock)
        return nullptr;
      if (!last || last->isBeforeInBlock(inBlock))
        last = inBlock;
      for (Value result : user->getResults())
        if (isa<BaseMemRefType>(result.getType()))
          aliases.insert(result);
    }
  }
  return last;
}

/// The buffer a dealloc frees: its operand, through the views it was taken
/// from (the lowering may free the base of a cast or subview); null when it
/// may be one of several.
Value rootOf(Value value) {
  while (Operation *def = value.getDefiningOp()) {
    if (isa<memref::AllocOp, memref::AllocaOp>(def) ||
        def->getNumOperands() == 0)
      break;
    // One buffer operand: a view of it. Several (a select): unknown.
    SmallVector<Value> sources;
    for (Value operand : def->getOperands())
      if (isa<BaseMemRefType>(operand.getType()))
        sources.push_back(operand);
    if (sources.size() > 1 || isa<func::CallOp>(def))
      return Value();
    if (sources.empty())
      break;
    value = sources.front();
  }
  return value;
}

struct EarlyDeallocPass
    : public piper::impl::EarlyDeallocPassBase<EarlyDeallocPass> {
  void runOnOperation() override {
    func::FuncOp fn = getOperation();
    if (!fn->hasAttr("piper_plan.role") || fn.getBody().empty())
      return;
    Block &entry = fn.getBody().front();
    SmallVector<memref::DeallocOp> deallocs(entry.getOps<memref::DeallocOp>());
    for (memref::DeallocOp dealloc : deallocs) {
      Value root = rootOf(dealloc.getMemref());
      Operation *last = root ? lastUseInBlock(root, dealloc, entry) : nullptr;
      if (last && last->isBeforeInBlock(dealloc))
        dealloc->moveAfter(last);
    }
  }
};

} // namespace
