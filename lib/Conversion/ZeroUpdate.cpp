//===- ZeroUpdate.cpp - Optimizer updates on flat shards ------------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "ZeroUpdate.h"

#include "piper/Dialect/Piper/IR/PiperOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/SymbolTable.h"

using namespace mlir;
using namespace mlir::piper;

SmallVector<Value> mlir::piper::updateOperands(Operation *op) {
  if (auto adamw = dyn_cast<AdamWUpdateOp>(op))
    return {adamw.getParam(), adamw.getGrad(), adamw.getExpAvg(),
            adamw.getExpAvgSq()};
  if (auto sgd = dyn_cast<SgdUpdateOp>(op))
    return {sgd.getParam(), sgd.getGrad(), sgd.getMomentumBuffer()};
  return {};
}

bool mlir::piper::isUpdateBody(func::FuncOp body) {
  bool any = false;
  WalkResult walk = body.walk([&](Operation *op) {
    if (isa<AdamWUpdateOp, SgdUpdateOp>(op)) {
      any = true;
      return WalkResult::advance();
    }
    if (op == body.getOperation() || isa<AnnotateOp, YieldOp, func::ReturnOp,
                                         arith::ConstantOp, arith::AddIOp>(op))
      return WalkResult::advance();
    return WalkResult::interrupt();
  });
  return any && !walk.wasInterrupted();
}

FailureOr<SmallVector<SmallVector<unsigned>>>
mlir::piper::updateGroups(func::FuncOp body, Operation *at) {
  SmallVector<SmallVector<unsigned>> groups;
  WalkResult walk = body.walk([&](Operation *op) {
    SmallVector<Value> operands = updateOperands(op);
    if (operands.empty())
      return WalkResult::advance();
    SmallVector<unsigned> group;
    for (Value v : operands) {
      auto arg = dyn_cast<BlockArgument>(v);
      if (!arg || arg.getOwner() != &body.getBody().front()) {
        at->emitError() << "cannot shard the update in @" << body.getSymName()
                        << ": an operand of '" << op->getName()
                        << "' is computed in the body, not passed to it";
        return WalkResult::interrupt();
      }
      group.push_back(arg.getArgNumber());
    }
    groups.push_back(std::move(group));
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();
  return groups;
}

FailureOr<func::FuncOp> mlir::piper::cloneUpdateBody(func::FuncOp body,
                                                     ArrayRef<Type> argTypes,
                                                     Operation *at) {
  OpBuilder builder(body);
  builder.setInsertionPointAfter(body);
  auto clone = cast<func::FuncOp>(builder.clone(*body.getOperation()));
  auto module = body->getParentOfType<ModuleOp>();
  SymbolTable symbols(module);
  // A fresh name: `<body>.zero`, `<body>.zero_1`, ...
  std::string name = (body.getSymName() + ".zero").str();
  for (int i = 1; symbols.lookup(name); ++i)
    name = (body.getSymName() + ".zero_" + Twine(i)).str();
  clone.setSymName(name);
  Block &entry = clone.getBody().front();
  for (auto [arg, type] : llvm::zip(entry.getArguments(), argTypes))
    arg.setType(type);
  // Post-order: an update before the annotate around it.
  WalkResult walk = clone.walk([&](Operation *op) {
    SmallVector<Value> operands = updateOperands(op);
    if (!operands.empty()) {
      Type type = operands.front().getType();
      for (Value v : operands)
        if (v.getType() != type) {
          at->emitError() << "cannot shard the update in @" << body.getSymName()
                          << ": '" << op->getName() << "' would mix " << type
                          << " and " << v.getType()
                          << " (a parameter, its gradient and its state must "
                             "share one ZeRO stage and group)";
          return WalkResult::interrupt();
        }
      for (Value result : op->getResults())
        result.setType(type);
    } else if (auto annotate = dyn_cast<AnnotateOp>(op)) {
      auto yield = cast<YieldOp>(annotate.getBody().front().getTerminator());
      for (auto [result, value] :
           llvm::zip(annotate->getResults(), yield->getOperands()))
        result.setType(value.getType());
    }
    return WalkResult::advance();
  });
  if (walk.wasInterrupted()) {
    clone.erase();
    return failure();
  }
  auto ret = cast<func::ReturnOp>(entry.getTerminator());
  clone.setFunctionType(
      builder.getFunctionType(argTypes, ret.getOperandTypes()));
  clone.setPrivate();
  return clone;
}
