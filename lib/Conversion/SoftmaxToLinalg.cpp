//===- SoftmaxToLinalg.cpp - Softmax and its VJP as linalg.generic --------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// piper.softmax over the last dim, in four linalg.generic ops over the rows
// [R, N]: the row max m, e = exp(x - m), the row sum s of e, e / s. That is
// the decomposition of upstream's linalg.softmax, built here directly:
// LLVM 22 has no pass that decomposes linalg.softmax (only the transform
// op), its decomposition computes in the element type (bf16 must sum in
// f32), and attention needs the same builder with masked rows. The VJP
// recomputes y from x (piper.vjp carries the primal, not the output) and
// adds two kernels: the row dot d = sum dy y and dx = y (dy - d).
//
//===----------------------------------------------------------------------===//

#include "KernelPatterns.h"
#include "RowKernels.h"

#include "piper/Dialect/Piper/IR/PiperOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Transforms/DialectConversion.h"

using namespace mlir;
using namespace mlir::piper;
using namespace mlir::piper::rows;

Value rows::softmaxRows(OpBuilder &b, Location loc, Value x, Type resultType) {
  ArrayRef<int64_t> shape = cast<RankedTensorType>(x.getType()).getShape();
  Value e = rowExp(b, loc, x, rowMax(b, loc, x));
  Type acc = cast<RankedTensorType>(e.getType()).getElementType();
  Value s = build1(b, loc, shape, {{e, Index::Whole}}, Index::Row, {acc, 0.0},
                   [](OpBuilder &nb, Location nl, ValueRange in, Value sum) {
                     return arith::AddFOp::create(nb, nl, sum, in[0]);
                   });
  return build1(
      b, loc, shape, {{e, Index::Whole}, {s, Index::Row}}, Index::Whole,
      {resultType}, [&](OpBuilder &nb, Location nl, ValueRange in, Value) {
        return narrow(nb, nl, arith::DivFOp::create(nb, nl, in[0], in[1]),
                      resultType);
      });
}

Value rows::softmaxGradRows(OpBuilder &b, Location loc, Value y, Value dy,
                            Type resultType) {
  auto type = cast<RankedTensorType>(dy.getType());
  FloatType acc = accumulatorType(type.getElementType());
  Value dot =
      build1(b, loc, type.getShape(), {{y, Index::Whole}, {dy, Index::Whole}},
             Index::Row, {acc, 0.0},
             [&](OpBuilder &nb, Location nl, ValueRange in, Value sum) {
               Value p =
                   arith::MulFOp::create(nb, nl, widen(nb, nl, in[1], acc),
                                         widen(nb, nl, in[0], acc));
               return arith::AddFOp::create(nb, nl, sum, p);
             });
  return build1(
      b, loc, type.getShape(),
      {{y, Index::Whole}, {dy, Index::Whole}, {dot, Index::Row}}, Index::Whole,
      {resultType}, [&](OpBuilder &nb, Location nl, ValueRange in, Value) {
        Value d =
            arith::SubFOp::create(nb, nl, widen(nb, nl, in[1], acc), in[2]);
        Value g = arith::MulFOp::create(nb, nl, widen(nb, nl, in[0], acc), d);
        return narrow(nb, nl, g, resultType);
      });
}

Value mlir::piper::buildRowSoftmax(OpBuilder &b, Location loc, Value x) {
  auto type = cast<RankedTensorType>(x.getType());
  Value y = softmaxRows(b, loc, asRows(b, loc, x), type.getElementType());
  return fromRows(b, loc, y, type);
}

Value mlir::piper::buildRowSoftmaxGrad(OpBuilder &b, Location loc, Value y,
                                       Value dy) {
  auto type = cast<RankedTensorType>(dy.getType());
  Value dx = softmaxGradRows(b, loc, asRows(b, loc, y), asRows(b, loc, dy),
                             type.getElementType());
  return fromRows(b, loc, dx, type);
}

namespace {

/// piper.softmax -> the four kernels of buildRowSoftmax.
struct SoftmaxToLinalg : OpConversionPattern<SoftmaxOp> {
  SoftmaxToLinalg(MLIRContext *context)
      : OpConversionPattern(context, /*benefit=*/2) {}

  LogicalResult
  matchAndRewrite(SoftmaxOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (!checkedElementType(op, rewriter))
      return success(); // Reported; see checkedElementType.
    rewriter.replaceOp(op,
                       buildRowSoftmax(rewriter, op.getLoc(), adaptor.getX()));
    return success();
  }
};

/// piper.vjp of piper.softmax -> y = softmax(x) kept in the accumulator
/// type, then dx = y (dy - sum dy y).
struct SoftmaxVJPToLinalg : OpConversionPattern<VJPOp> {
  SoftmaxVJPToLinalg(MLIRContext *context)
      : OpConversionPattern(context, /*benefit=*/2) {}

  LogicalResult
  matchAndRewrite(VJPOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (op.getOp() != SoftmaxOp::getOperationName())
      return rewriter.notifyMatchFailure(op, "not a softmax VJP");
    FloatType elt;
    if (!checkVJP(op, rewriter) || !(elt = checkedElementType(op, rewriter)))
      return success(); // Reported; see checkVJP.
    Location loc = op.getLoc();
    Value x = asRows(rewriter, loc, adaptor.getPrimals()[0]);
    Value dy = asRows(rewriter, loc, adaptor.getCotangents()[0]);
    Value y = softmaxRows(rewriter, loc, x, accumulatorType(elt));
    Value dx = softmaxGradRows(rewriter, loc, y, dy, elt);
    rewriter.replaceOp(op,
                       fromRows(rewriter, loc, dx, op.getResult(0).getType()));
    return success();
  }
};

} // namespace

void mlir::piper::populateSoftmaxToLinalgPatterns(RewritePatternSet &patterns) {
  patterns.add<SoftmaxToLinalg, SoftmaxVJPToLinalg>(patterns.getContext());
}
