//===- OpCounts.cpp - FLOPs and bytes of piper ops ------------------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Each op's FLOPs and bytes are its distribution rule's
// (DistributionOpInterface::getCost, PiperDistributionRules.cpp): the
// global view at the op's own types, one device's share at its local types
// (LocalSizes). Ops without a rule move their bytes and do one vector FLOP
// a result element.
//
//===----------------------------------------------------------------------===//

#include "piper/Simulator/OpCounts.h"

#include "piper/Analysis/LocalSizes.h"
#include "piper/Dialect/Piper/IR/PiperDistributionRule.h"
#include "piper/Dialect/Piper/IR/PiperOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/SymbolTable.h"

using namespace mlir;
using namespace mlir::piper;

namespace {

/// The cost of an op without a distribution rule: its bytes and one vector
/// FLOP a result element.
OpCount genericCost(Operation *op) {
  OpCount c;
  for (Type t : op->getOperandTypes())
    c.bytes += piper::detail::getBytes(t);
  for (Type t : op->getResultTypes())
    c.bytes += piper::detail::getBytes(t);
  if (op->getNumResults() > 0)
    c.vectorFlops = piper::detail::getNumElements(op->getResult(0).getType());
  c.kernels = 1;
  return c;
}

} // namespace

OpCount mlir::piper::countOp(Operation *op, const LocalSizes *sizes) {
  if (isa<func::CallOp, func::ReturnOp, YieldOp, CollectiveOp>(op) ||
      op->hasTrait<OpTrait::ConstantLike>())
    return {};
  bool hasTensor =
      llvm::any_of(op->getOperandTypes(), llvm::IsaPred<ShapedType>) ||
      llvm::any_of(op->getResultTypes(), llvm::IsaPred<ShapedType>);
  if (!hasTensor)
    return {};
  std::optional<DistributionRule> rule = DistributionRule::get(op);
  if (!rule)
    return genericCost(op);
  if (!sizes || sizes->getFlopDivisor(op) <= 1)
    return rule->getGlobalCost();
  // A device's share of a tensor-parallel op: the same rule at its types.
  auto localTypes = [&](ValueRange values) {
    SmallVector<Type> types;
    for (Value v : values)
      types.push_back(sizes->getLocalType(v));
    return types;
  };
  return rule->getCost(localTypes(op->getOperands()),
                       localTypes(op->getResults()));
}
OpCount mlir::piper::countBody(FunctionOpInterface body,
                               const LocalSizes *sizes) {
  OpCount total;
  body->walk([&](Operation *op) {
    if (auto call = dyn_cast<func::CallOp>(op)) {
      if (auto callee = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
              op, call.getCalleeAttr()))
        total += countBody(callee);
      return;
    }
    if (isa<AnnotateOp>(op))
      return;
    total += countOp(op, sizes);
  });
  return total;
}
