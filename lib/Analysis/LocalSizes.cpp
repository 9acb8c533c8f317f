//===- LocalSizes.cpp - What one device holds of a task body --------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "piper/Analysis/LocalSizes.h"

#include "piper/Dialect/Piper/IR/PiperDistributionRule.h"

#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;
using namespace mlir::piper;

int64_t mlir::piper::getElementDivisor(Type global, Type local) {
  auto g = dyn_cast<RankedTensorType>(global);
  auto l = dyn_cast<RankedTensorType>(local);
  if (!g || !l || !g.hasStaticShape() || !l.hasStaticShape() ||
      l.getNumElements() <= 0 || g.getNumElements() % l.getNumElements() != 0)
    return 1;
  return g.getNumElements() / l.getNumElements();
}

Type mlir::piper::getLocalParamType(ParamAttr param, Type type,
                                    Operation *from) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!param || !param.getPlacement() || !tensor || !tensor.hasStaticShape())
    return type;
  MeshOp mesh = lookupMesh(from, param.getPlacement().getMesh());
  if (!mesh)
    return type;
  return RankedTensorType::get(
      param.getPlacement().getLocalShape(tensor.getShape(), mesh),
      tensor.getElementType());
}

LocalSizes::LocalSizes(func::FuncOp body, ArrayRef<Type> argTypes)
    : body(body) {
  if (!body || body.isExternal())
    return;
  for (auto [arg, type] :
       llvm::zip(body.getBody().front().getArguments(), argTypes))
    if (type && type != arg.getType() &&
        getElementDivisor(arg.getType(), type) > 1) {
      local[arg] = type;
      split = true;
    }
  if (!split)
    return;
  // Post-order: operands before their users, the ops of an annotate before
  // the annotate.
  body.walk([&](Operation *op) {
    if (op != body.getOperation())
      visit(op);
  });
}

Type LocalSizes::getLocalType(Value value) const {
  auto it = local.find(value);
  return it == local.end() ? value.getType() : it->second;
}

int64_t LocalSizes::getDivisor(Value value) const {
  return getElementDivisor(value.getType(), getLocalType(value));
}

int64_t LocalSizes::getFlopDivisor(Operation *op) const {
  auto it = flopDivisor.find(op);
  return it == flopDivisor.end() ? 1 : it->second;
}

SmallVector<Type> LocalSizes::getResultTypes() const {
  SmallVector<Type> types;
  if (!body || body.isExternal())
    return types;
  for (Value v : body.getBody().front().getTerminator()->getOperands())
    types.push_back(getLocalType(v));
  return types;
}

void LocalSizes::set(Value value, Type type) {
  if (type && type != value.getType() &&
      getElementDivisor(value.getType(), type) > 1)
    local[value] = type;
}

void LocalSizes::visit(Operation *op) {
  if (auto annotate = dyn_cast<AnnotateOp>(op)) {
    Operation *yield = annotate.getBody().front().getTerminator();
    for (auto [result, value] :
         llvm::zip(annotate->getResults(), yield->getOperands()))
      set(result, getLocalType(value));
    return;
  }
  if (!llvm::any_of(op->getOperands(),
                    [&](Value v) { return local.contains(v); }))
    return;

  if (auto collective = dyn_cast<CollectiveOp>(op)) {
    // The partial sums of a row-parallel product are all-reduced in place;
    // all-to-alls (experts) and the sequence-parallel gathers and scatters
    // are taken as whole.
    if (collective.getKind() == CollectiveKind::AllReduce &&
        collective.getValue().getType() == collective.getType())
      set(collective.getResult(), getLocalType(collective.getValue()));
    return;
  }
  // Everything else follows its distribution rule; an op without one, or
  // one whose rule rejects these types, is taken as whole.
  std::optional<DistributionRule> rule = DistributionRule::get(op);
  if (!rule)
    return;
  SmallVector<Type> operands;
  for (Value operand : op->getOperands())
    operands.push_back(getLocalType(operand));
  LocalForm form;
  if (failed(rule->inferLocalForm(operands, form)))
    return;
  for (auto [result, type] : llvm::zip(op->getResults(), form.resultTypes))
    set(result, type);
  // The FLOPs divide as the op's cost at one device's types says; work
  // that is not smaller there (experts: the tokens after the all-to-all
  // multiply by what the experts divide) keeps its global figures.
  SmallVector<Type> results;
  for (Value result : op->getResults())
    results.push_back(getLocalType(result));
  double global = rule->getGlobalCost().flops();
  double perDevice = rule->getCost(operands, results).flops();
  if (perDevice > 0 && perDevice < global)
    flopDivisor[op] = std::max<int64_t>(1, std::llround(global / perDevice));
}
