//===- LocalSizes.cpp - What one device holds of a task body --------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "piper/Analysis/LocalSizes.h"

#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;
using namespace mlir::piper;

namespace {

/// Whether `op` computes elementwise on operands of one type (as the native
/// lowering's re-typer decides).
bool isElementwise(Operation *op) {
  return isa<AddOp, SubOp, MulOp, ReluOp, GeluOp, SiluOp, SwigluOp>(op) ||
         op->hasTrait<OpTrait::SameOperandsAndResultType>();
}

/// The same, for the op a `piper.vjp` differentiates.
bool isElementwiseName(StringRef name, MLIRContext *context) {
  std::optional<RegisteredOperationName> info =
      RegisteredOperationName::lookup(name, context);
  if (!info)
    return false;
  return info->getStringRef() == AddOp::getOperationName() ||
         info->getStringRef() == SubOp::getOperationName() ||
         info->getStringRef() == MulOp::getOperationName() ||
         info->getStringRef() == ReluOp::getOperationName() ||
         info->getStringRef() == GeluOp::getOperationName() ||
         info->getStringRef() == SiluOp::getOperationName() ||
         info->getStringRef() == SwigluOp::getOperationName() ||
         info->hasTrait<OpTrait::SameOperandsAndResultType>();
}

/// How many times smaller `local`'s last dim is than `global`'s (1 if not).
int64_t lastDimSplit(Type global, Type local) {
  auto g = dyn_cast<RankedTensorType>(global);
  auto l = dyn_cast<RankedTensorType>(local);
  if (!g || !l || g.getRank() != l.getRank() || g.getRank() == 0)
    return 1;
  int64_t gl = g.getShape().back(), ll = l.getShape().back();
  if (ShapedType::isDynamic(gl) || ShapedType::isDynamic(ll) || ll <= 0 ||
      gl % ll != 0)
    return 1;
  return gl / ll;
}

/// `type` with its last dim divided by `factor` (`type` if it does not
/// divide).
Type splitLastDim(Type type, int64_t factor) {
  auto t = dyn_cast<RankedTensorType>(type);
  if (factor <= 1 || !t || t.getRank() == 0 ||
      ShapedType::isDynamic(t.getShape().back()) ||
      t.getShape().back() % factor != 0)
    return type;
  SmallVector<int64_t> shape(t.getShape());
  shape.back() /= factor;
  return RankedTensorType::get(shape, t.getElementType());
}

} // namespace

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
  auto setFlops = [&](int64_t divisor) {
    if (divisor > 1)
      flopDivisor[op] = divisor;
  };

  if (auto collective = dyn_cast<CollectiveOp>(op)) {
    // The partial sums of a row-parallel product are all-reduced in place;
    // all-to-alls (experts) and the sequence-parallel gathers and scatters
    // are taken as whole.
    if (collective.getKind() == CollectiveKind::AllReduce &&
        collective.getValue().getType() == collective.getType())
      set(collective.getResult(), getLocalType(collective.getValue()));
    return;
  }
  if (auto vjp = dyn_cast<VJPOp>(op)) {
    for (auto [wrt, result] : llvm::zip(vjp.getWrt(), vjp.getResults()))
      set(result, getLocalType(vjp.getPrimals()[wrt]));
    StringRef name = vjp.getOp();
    auto primals = vjp.getPrimals();
    if (name == LinearOp::getOperationName() && primals.size() >= 2)
      setFlops(getDivisor(primals[1]));
    else if (name == AttentionOp::getOperationName() && !primals.empty())
      setFlops(getDivisor(primals.front()));
    else if (isElementwiseName(name, op->getContext())) {
      int64_t divisor = 1;
      for (Value primal : primals)
        divisor = std::max(divisor, getDivisor(primal));
      setFlops(divisor);
    }
    return;
  }
  if (auto linear = dyn_cast<LinearOp>(op)) {
    // The output's channels follow w's last dim; the product is w's share.
    int64_t channels =
        lastDimSplit(linear.getW().getType(), getLocalType(linear.getW()));
    set(linear.getResult(), splitLastDim(linear.getType(), channels));
    setFlops(getDivisor(linear.getW()));
    return;
  }
  if (auto reshape = dyn_cast<ReshapeOp>(op)) {
    // Only regrouping the leading dims keeps the split channels.
    auto in = dyn_cast<RankedTensorType>(reshape.getX().getType());
    auto out = dyn_cast<RankedTensorType>(reshape.getType());
    int64_t factor =
        lastDimSplit(reshape.getX().getType(), getLocalType(reshape.getX()));
    if (in && out && in.getRank() > 0 && out.getRank() > 0 &&
        in.getShape().back() == out.getShape().back())
      set(reshape.getResult(), splitLastDim(out, factor));
    return;
  }
  if (auto attention = dyn_cast<AttentionOp>(op)) {
    set(attention.getResult(), getLocalType(attention.getQ()));
    setFlops(getDivisor(attention.getQ()));
    return;
  }
  if (isa<ExpertFfnOp>(op))
    return;
  // Optimizer updates follow the parameter; elementwise ops the operand
  // split most.
  Value source;
  if (auto adamw = dyn_cast<AdamWUpdateOp>(op))
    source = adamw.getParam();
  else if (auto sgd = dyn_cast<SgdUpdateOp>(op))
    source = sgd.getParam();
  else if (isElementwise(op))
    for (Value operand : op->getOperands())
      if (!source || getDivisor(operand) > getDivisor(source))
        source = operand;
  if (!source)
    return;
  Type type = getLocalType(source);
  int64_t divisor = 1;
  for (Value result : op->getResults())
    if (result.getType() == source.getType()) {
      set(result, type);
      divisor = std::max(divisor, getDivisor(result));
    }
  setFlops(divisor);
}
