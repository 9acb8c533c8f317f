//===- LayoutToLinalg.cpp - reshape and transpose as tensor/linalg ops ----===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The layout ops move elements and compute nothing, so they need no kernel:
//
//  - piper.reshape is a tensor.collapse_shape or tensor.expand_shape where
//    the new shape regroups neighbouring dims (every reshape the model
//    generators emit: [B, S, H] <-> [B S, H], head splits), which
//    bufferizes to a view of the same buffer; any other reshape (e.g.
//    [2, 6] -> [3, 4]) collapses to 1-D and expands from there;
//  - piper.transpose is linalg.transpose;
//  - their piper.vjp (hand-written IR only: autodiff differentiates both
//    into the inverse layout op) are the inverse reshape and the transpose
//    by the inverse permutation.
//
//===----------------------------------------------------------------------===//

#include "KernelPatterns.h"

#include "piper/Conversion/Passes.h"
#include "piper/Dialect/Piper/IR/PiperOps.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"
#include "mlir/Transforms/DialectConversion.h"

using namespace mlir;
using namespace mlir::piper;

Value mlir::piper::buildTranspose(OpBuilder &b, Location loc, Value x,
                                  ArrayRef<int64_t> permutation) {
  auto type = cast<RankedTensorType>(x.getType());
  SmallVector<int64_t> shape;
  for (int64_t p : permutation)
    shape.push_back(type.getDimSize(p));
  Value init = tensor::EmptyOp::create(b, loc, shape, type.getElementType());
  return linalg::TransposeOp::create(b, loc, x, init, permutation)
      .getResult()
      .front();
}

namespace {

/// `x` under the static shape of `to` (same element count, checked by the
/// callers): a regrouping of dims where one exists, else tensor.reshape.
Value buildReshape(OpBuilder &b, Location loc, Value x, RankedTensorType to) {
  auto from = cast<RankedTensorType>(x.getType());
  if (from == to)
    return x;
  if (from.getRank() != to.getRank()) {
    if (std::optional<SmallVector<ReassociationIndices>> groups =
            getReassociationIndicesForReshape(from, to)) {
      if (from.getRank() > to.getRank())
        return tensor::CollapseShapeOp::create(b, loc, to, x, *groups);
      return tensor::ExpandShapeOp::create(b, loc, to, x, *groups);
    }
  }
  // No regrouping of neighbouring dims gives `to` (e.g. [2, 6] -> [3, 4]):
  // through 1-D, both steps regroupings. Unlike tensor.reshape this needs
  // no shape operand and stays a view of a contiguous buffer (memref.reshape
  // needs an identity layout and bufferization would copy a strided one).
  Value flat = tensor::CollapseShapeOp::create(
      b, loc,
      RankedTensorType::get({from.getNumElements()}, from.getElementType()), x,
      getReassociationIndicesForCollapse(from.getShape(),
                                         {from.getNumElements()})
          .value());
  return tensor::ExpandShapeOp::create(
      b, loc, to, flat,
      getReassociationIndicesForCollapse(to.getShape(), {to.getNumElements()})
          .value());
}

/// Whether both types are static and hold the same number of elements.
bool sameStaticSize(RankedTensorType a, RankedTensorType b) {
  return a.hasStaticShape() && b.hasStaticShape() &&
         a.getNumElements() == b.getNumElements();
}

/// piper.reshape -> collapse_shape / expand_shape / tensor.reshape.
struct ReshapeToLinalg : OpConversionPattern<ReshapeOp> {
  ReshapeToLinalg(MLIRContext *context)
      : OpConversionPattern(context, /*benefit=*/2) {}

  LogicalResult
  matchAndRewrite(ReshapeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto to = cast<RankedTensorType>(op.getType());
    if (!sameStaticSize(cast<RankedTensorType>(op.getX().getType()), to))
      return op.emitError() << "the native lowering needs static shapes of "
                               "one element count";
    rewriter.replaceOp(op,
                       buildReshape(rewriter, op.getLoc(), adaptor.getX(), to));
    return success();
  }
};

/// piper.transpose -> linalg.transpose.
struct TransposeToLinalg : OpConversionPattern<TransposeOp> {
  TransposeToLinalg(MLIRContext *context)
      : OpConversionPattern(context, /*benefit=*/2) {}

  LogicalResult
  matchAndRewrite(TransposeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (!cast<RankedTensorType>(op.getType()).hasStaticShape())
      return op.emitError() << "the native lowering needs static shapes";
    rewriter.replaceOp(op, buildTranspose(rewriter, op.getLoc(), adaptor.getX(),
                                          op.getPermutation()));
    return success();
  }
};

/// The inverse of `perm` if it is a permutation of `rank` dims.
std::optional<SmallVector<int64_t>> invert(ArrayRef<int64_t> perm,
                                           int64_t rank) {
  if (static_cast<int64_t>(perm.size()) != rank)
    return std::nullopt;
  SmallVector<int64_t> inverse(rank, -1);
  for (auto [i, p] : llvm::enumerate(perm)) {
    if (p < 0 || p >= rank || inverse[p] != -1)
      return std::nullopt;
    inverse[p] = static_cast<int64_t>(i);
  }
  return inverse;
}

/// piper.vjp of reshape (the inverse reshape of dy) and of transpose (dy
/// transposed by the inverse permutation).
struct LayoutVJPToLinalg : OpConversionPattern<VJPOp> {
  LayoutVJPToLinalg(MLIRContext *context)
      : OpConversionPattern(context, /*benefit=*/2) {}

  LogicalResult
  matchAndRewrite(VJPOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    bool isReshape = op.getOp() == ReshapeOp::getOperationName();
    if (!isReshape && op.getOp() != TransposeOp::getOperationName())
      return rewriter.notifyMatchFailure(op, "not a layout op");
    if (failed(kernelFloatType(op, /*report=*/true)))
      return failure();
    if (adaptor.getPrimals().size() != 1 ||
        adaptor.getCotangents().size() != 1 || op.getWrt().size() != 1)
      return op.emitError() << "piper.vjp of " << op.getOp()
                            << " takes one primal, one cotangent and wrt [0]";
    Value dy = adaptor.getCotangents().front();
    auto dyType = cast<RankedTensorType>(dy.getType());
    auto dxType = cast<RankedTensorType>(op.getResult(0).getType());
    Location loc = op.getLoc();
    if (isReshape) {
      if (!sameStaticSize(dyType, dxType))
        return op.emitError() << "the native lowering needs static shapes of "
                                 "one element count";
      rewriter.replaceOp(op, buildReshape(rewriter, loc, dy, dxType));
      return success();
    }
    DictionaryAttr attrs = op.getForwardAttrs();
    auto perm = attrs ? attrs.getAs<DenseI64ArrayAttr>("permutation")
                      : DenseI64ArrayAttr();
    if (!perm)
      return op.emitError() << "forward_attrs lacks the array 'permutation'";
    std::optional<SmallVector<int64_t>> inverse =
        invert(perm.asArrayRef(), dyType.getRank());
    if (!inverse || !dyType.hasStaticShape())
      return op.emitError() << "forward_attrs' permutation is not a "
                               "permutation of the dims of the static "
                               "cotangent "
                            << dyType;
    SmallVector<int64_t> back;
    for (int64_t d : *inverse)
      back.push_back(dyType.getDimSize(d));
    if (dxType != dyType.clone(back))
      return op.emitError()
             << "the cotangent " << dyType << " transposed back is "
             << dyType.clone(back) << ", not the primal's " << dxType;
    rewriter.replaceOp(op, buildTranspose(rewriter, loc, dy, *inverse));
    return success();
  }
};

} // namespace

void mlir::piper::populateLayoutToLinalgPatterns(RewritePatternSet &patterns) {
  patterns.add<ReshapeToLinalg, TransposeToLinalg, LayoutVJPToLinalg>(
      patterns.getContext());
}
