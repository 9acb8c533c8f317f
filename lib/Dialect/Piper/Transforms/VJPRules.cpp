//===- VJPRules.cpp - Vector-Jacobian products of piper NN ops ------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Linear ops (add, sub, mul, reshape, transpose, cast, rope) differentiate
// into other piper ops. Every other op differentiates into one `piper.vjp` per
// operand, executed by the op's reference VJP: one op per operand is what lets
// the autodiff pass separate input-gradient (BI) from weight-gradient (BW) work
// by dependence alone.
//
//===----------------------------------------------------------------------===//

#include "piper/Dialect/Piper/IR/PiperOps.h"
#include "piper/Dialect/Piper/Transforms/Autodiff.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace mlir::piper;

namespace {

/// A zero tensor of `type`, standing in for a missing result cotangent.
Value buildZeros(OpBuilder &b, Location loc, Type type) {
  auto tensorType = cast<RankedTensorType>(type);
  auto zero = b.getZeroAttr(tensorType.getElementType());
  return arith::ConstantOp::create(b, loc,
                                   DenseElementsAttr::get(tensorType, zero));
}

bool isFloatTensor(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor && isa<FloatType>(tensor.getElementType());
}

} // namespace

/// `piper.vjp` for each needed operand, over the op's float results.
LogicalResult mlir::piper::buildGenericVJP(
    Operation *op, OpBuilder &b, ArrayRef<Value> resultCotangents,
    ArrayRef<bool> needed, SmallVectorImpl<Value> &operandCotangents) {
  SmallVector<Value> cotangents;
  for (auto [result, cotangent] :
       llvm::zip(op->getResults(), resultCotangents)) {
    if (!isFloatTensor(result.getType()))
      continue;
    cotangents.push_back(
        cotangent ? cotangent : buildZeros(b, op->getLoc(), result.getType()));
  }
  if (cotangents.empty())
    return op->emitError() << "cannot differentiate: no float results";
  for (auto [index, operand] : llvm::enumerate(op->getOperands())) {
    if (!needed[index])
      continue;
    auto vjp = VJPOp::create(
        b, op->getLoc(), TypeRange{operand.getType()},
        op->getName().getStringRef(), ArrayRef<int64_t>{int64_t(index)},
        op->getOperands(), cotangents, op->getAttrDictionary());
    operandCotangents[index] = vjp.getGradients().front();
  }
  return success();
}

namespace {

/// The generic rule, for ops whose backward is an opaque reference VJP.
template <typename OpTy>
struct GenericVJPModel
    : public VJPOpInterface::ExternalModel<GenericVJPModel<OpTy>, OpTy> {
  LogicalResult buildVJP(Operation *op, OpBuilder &b,
                         ArrayRef<Value> resultCotangents,
                         ArrayRef<bool> needed,
                         SmallVectorImpl<Value> &operandCotangents) const {
    return buildGenericVJP(op, b, resultCotangents, needed, operandCotangents);
  }
};

struct AddVJPModel : public VJPOpInterface::ExternalModel<AddVJPModel, AddOp> {
  LogicalResult buildVJP(Operation *op, OpBuilder &b,
                         ArrayRef<Value> resultCotangents,
                         ArrayRef<bool> needed,
                         SmallVectorImpl<Value> &operandCotangents) const {
    for (unsigned i = 0; i < 2; ++i)
      if (needed[i])
        operandCotangents[i] = resultCotangents[0];
    return success();
  }
};

struct SubVJPModel : public VJPOpInterface::ExternalModel<SubVJPModel, SubOp> {
  LogicalResult buildVJP(Operation *op, OpBuilder &b,
                         ArrayRef<Value> resultCotangents,
                         ArrayRef<bool> needed,
                         SmallVectorImpl<Value> &operandCotangents) const {
    Value dy = resultCotangents[0];
    if (needed[0])
      operandCotangents[0] = dy;
    if (needed[1])
      operandCotangents[1] =
          SubOp::create(b, op->getLoc(), dy.getType(),
                        buildZeros(b, op->getLoc(), dy.getType()), dy);
    return success();
  }
};

struct MulVJPModel : public VJPOpInterface::ExternalModel<MulVJPModel, MulOp> {
  LogicalResult buildVJP(Operation *op, OpBuilder &b,
                         ArrayRef<Value> resultCotangents,
                         ArrayRef<bool> needed,
                         SmallVectorImpl<Value> &operandCotangents) const {
    Value dy = resultCotangents[0];
    for (unsigned i = 0; i < 2; ++i)
      if (needed[i])
        operandCotangents[i] = MulOp::create(b, op->getLoc(), dy.getType(), dy,
                                             op->getOperand(1 - i));
    return success();
  }
};

struct ReshapeVJPModel
    : public VJPOpInterface::ExternalModel<ReshapeVJPModel, ReshapeOp> {
  LogicalResult buildVJP(Operation *op, OpBuilder &b,
                         ArrayRef<Value> resultCotangents,
                         ArrayRef<bool> needed,
                         SmallVectorImpl<Value> &operandCotangents) const {
    if (needed[0])
      operandCotangents[0] = ReshapeOp::create(
          b, op->getLoc(), op->getOperand(0).getType(), resultCotangents[0]);
    return success();
  }
};

struct TransposeVJPModel
    : public VJPOpInterface::ExternalModel<TransposeVJPModel, TransposeOp> {
  LogicalResult buildVJP(Operation *op, OpBuilder &b,
                         ArrayRef<Value> resultCotangents,
                         ArrayRef<bool> needed,
                         SmallVectorImpl<Value> &operandCotangents) const {
    if (!needed[0])
      return success();
    auto transpose = cast<TransposeOp>(op);
    ArrayRef<int64_t> perm = transpose.getPermutation();
    SmallVector<int64_t> inverse(perm.size());
    for (auto [i, p] : llvm::enumerate(perm))
      inverse[p] = i;
    operandCotangents[0] =
        TransposeOp::create(b, op->getLoc(), op->getOperand(0).getType(),
                            resultCotangents[0], inverse);
    return success();
  }
};

/// The cotangent cast back to the operand's type: the gradient of an f32
/// master weight used through its bf16 copy arrives in f32.
struct CastVJPModel
    : public VJPOpInterface::ExternalModel<CastVJPModel, CastOp> {
  LogicalResult buildVJP(Operation *op, OpBuilder &b,
                         ArrayRef<Value> resultCotangents,
                         ArrayRef<bool> needed,
                         SmallVectorImpl<Value> &operandCotangents) const {
    if (needed[0])
      operandCotangents[0] = CastOp::create(
          b, op->getLoc(), op->getOperand(0).getType(), resultCotangents[0]);
    return success();
  }
};

/// RoPE rotates each pair of channels by an angle: its Jacobian is that
/// rotation, whose transpose is the rotation by minus the angle, the same
/// op with `inverse` toggled.
struct RopeVJPModel
    : public VJPOpInterface::ExternalModel<RopeVJPModel, RopeOp> {
  LogicalResult buildVJP(Operation *op, OpBuilder &b,
                         ArrayRef<Value> resultCotangents,
                         ArrayRef<bool> needed,
                         SmallVectorImpl<Value> &operandCotangents) const {
    auto rope = cast<RopeOp>(op);
    if (!needed[0])
      return success();
    // Same attributes (head_dim, theta, offset, rotary_dim), inverse
    // toggled: the pass-through channels' Jacobian is the identity, which
    // the inverse rotation also leaves them.
    auto vjp = RopeOp::create(b, op->getLoc(), TypeRange{rope.getType()},
                              ValueRange{resultCotangents[0]}, op->getAttrs());
    vjp.setInverse(!rope.getInverse());
    operandCotangents[0] = vjp;
    return success();
  }
};

template <typename... OpTys> void attachGeneric(MLIRContext *ctx) {
  (OpTys::template attachInterface<GenericVJPModel<OpTys>>(*ctx), ...);
}

} // namespace

void mlir::piper::registerVJPInterfaceExternalModels(
    DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, PiperDialect *) {
    AddOp::attachInterface<AddVJPModel>(*ctx);
    SubOp::attachInterface<SubVJPModel>(*ctx);
    MulOp::attachInterface<MulVJPModel>(*ctx);
    ReshapeOp::attachInterface<ReshapeVJPModel>(*ctx);
    TransposeOp::attachInterface<TransposeVJPModel>(*ctx);
    CastOp::attachInterface<CastVJPModel>(*ctx);
    RopeOp::attachInterface<RopeVJPModel>(*ctx);
    attachGeneric<MatmulOp, LinearOp, ReluOp, GeluOp, SiluOp, SwigluOp,
                  SoftmaxOp, RmsNormOp, LayerNormOp, AttentionOp, EmbeddingOp,
                  CrossEntropyOp, RouterOp, DispatchOp, ExpertFfnOp, CombineOp>(
        ctx);
  });
}

bool mlir::piper::vjpNeedsPrimal(StringRef forwardOp, int64_t wrt,
                                 unsigned primal) {
  // d(x W)/dx needs W, d(x W)/dW needs x; the bias gradient needs neither.
  if (forwardOp == LinearOp::getOperationName())
    return (wrt == 0 && primal == 1) || (wrt == 1 && primal == 0);
  if (forwardOp == MatmulOp::getOperationName())
    return (wrt == 0 && primal == 1) || (wrt == 1 && primal == 0);
  // The norm weight's gradient needs only the normalised input.
  if (forwardOp == RmsNormOp::getOperationName() ||
      forwardOp == LayerNormOp::getOperationName())
    return wrt == 0 ? primal <= 1 : primal == 0;
  // The table's gradient scatters the cotangent by the ids.
  if (forwardOp == EmbeddingOp::getOperationName())
    return primal == 1;
  return true;
}
