//===- BatchedMatmulToLinalg.cpp - The other matmul/linear shapes ---------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The matmul and linear shapes that ConvertToKernels.cpp's 2-D patterns do
// not take, so that no forward GEMM runs the f64 reference:
//
//  - piper.matmul with lhs of rank > 2: a rank-2 rhs is a weight shared by
//    the batch (leading dims collapsed, one linalg.matmul, as linear); an rhs
//    of lhs's rank has its batch dims collapsed with lhs's into one
//    linalg.batch_matmul;
//  - piper.linear of a vector x [K]: x as [1, K], one linalg.matmul;
//  - piper.vjp of such a matmul: dA = dY B^T and dB = A^T dY as
//    linalg.batch_matmul with a transposing indexing map (a shared rhs is a
//    batch of one over the collapsed rows; dB then sums over them inside
//    the GEMM). The 2-D matmul VJP stays the BLAS kernel (BlasVjp.cpp).
//
// --piper-matmul-to-blas turns every one of these GEMMs into BLAS calls.
//
//===----------------------------------------------------------------------===//

#include "piper/Conversion/Passes.h"
#include "piper/Dialect/Piper/IR/PiperOps.h"

#include "KernelPatterns.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/DialectConversion.h"

using namespace mlir;
using namespace mlir::piper;

Value mlir::piper::buildBatchMatmul(OpBuilder &b, Location loc, Value lhs,
                                    Value rhs, bool transA, bool transB,
                                    Type resultElt) {
  // An f32 x bf16 product (attention's f32 probabilities and bf16 values)
  // widens its bf16 operand, exactly: GEMM kernels take one input type.
  Type le = cast<RankedTensorType>(lhs.getType()).getElementType();
  Type re = cast<RankedTensorType>(rhs.getType()).getElementType();
  if (le != re) {
    Type wide = cast<FloatType>(le).getWidth() > cast<FloatType>(re).getWidth()
                    ? le
                    : re;
    lhs = castTensor(b, loc, lhs, wide);
    rhs = castTensor(b, loc, rhs, wide);
  }
  auto lt = cast<RankedTensorType>(lhs.getType());
  auto rt = cast<RankedTensorType>(rhs.getType());
  int64_t m = lt.getDimSize(transA ? 2 : 1);
  int64_t n = rt.getDimSize(transB ? 1 : 2);
  auto outType = RankedTensorType::get({lt.getDimSize(0), m, n}, resultElt);
  Value empty = tensor::EmptyOp::create(b, loc, outType.getShape(), resultElt);
  Value zero =
      arith::ConstantOp::create(b, loc, b.getFloatAttr(resultElt, 0.0));
  Value init =
      linalg::FillOp::create(b, loc, ValueRange{zero}, ValueRange{empty})
          .getResult(0);
  SmallVector<NamedAttribute> attrs;
  if (transA || transB) {
    // (batch, m, n, k), as linalg.batch_matmul's default maps.
    MLIRContext *ctx = b.getContext();
    AffineExpr d0, d1, d2, d3;
    bindDims(ctx, d0, d1, d2, d3);
    auto map = [&](ArrayRef<AffineExpr> r) {
      return AffineMapAttr::get(AffineMap::get(4, 0, r, ctx));
    };
    attrs.push_back(b.getNamedAttr(
        "indexing_maps",
        b.getArrayAttr({map(transA ? ArrayRef<AffineExpr>{d0, d3, d1}
                                   : ArrayRef<AffineExpr>{d0, d1, d3}),
                        map(transB ? ArrayRef<AffineExpr>{d0, d2, d3}
                                   : ArrayRef<AffineExpr>{d0, d3, d2}),
                        map({d0, d1, d2})})));
  }
  return linalg::BatchMatmulOp::create(b, loc, TypeRange{outType},
                                       ValueRange{lhs, rhs}, ValueRange{init},
                                       attrs)
      .getResult(0);
}

namespace {

bool allStatic(TypeRange types) {
  return llvm::all_of(
      types, [](Type t) { return cast<RankedTensorType>(t).hasStaticShape(); });
}

/// `x` of rank r >= 2 as rank 3: its leading r - 2 dims collapsed (or a
/// unit batch dim in front when `shared`: the rows of all of them as one
/// matrix, [1, prod(leading) * rows, cols]).
Value asBatch(OpBuilder &b, Location loc, Value x, bool shared) {
  auto type = cast<RankedTensorType>(x.getType());
  int64_t rank = type.getRank();
  if (shared) {
    ReassociationIndices rows;
    for (int64_t i = 0; i < rank - 1; ++i)
      rows.push_back(i);
    if (rank > 2)
      x = tensor::CollapseShapeOp::create(
          b, loc, x, ArrayRef<ReassociationIndices>{rows, {rank - 1}});
    auto flat = cast<RankedTensorType>(x.getType());
    return tensor::ExpandShapeOp::create(
        b, loc,
        RankedTensorType::get({1, flat.getDimSize(0), flat.getDimSize(1)},
                              flat.getElementType()),
        x, ArrayRef<ReassociationIndices>{{0, 1}, {2}});
  }
  if (rank == 3)
    return x;
  ReassociationIndices lead;
  for (int64_t i = 0; i < rank - 2; ++i)
    lead.push_back(i);
  return tensor::CollapseShapeOp::create(
      b, loc, x, ArrayRef<ReassociationIndices>{lead, {rank - 2}, {rank - 1}});
}

/// The rank-3 `x` back to `type` (same element count): collapsed to its
/// rows and columns first when its batch dim is not `type`'s leading dims.
Value fromBatch(OpBuilder &b, Location loc, Value x, RankedTensorType type) {
  auto xt = cast<RankedTensorType>(x.getType());
  if (xt == type)
    return x;
  Value flat = tensor::CollapseShapeOp::create(
      b, loc, x, ArrayRef<ReassociationIndices>{{0, 1}, {2}});
  int64_t rank = type.getRank();
  if (rank == 2)
    return flat;
  ReassociationIndices rows;
  for (int64_t i = 0; i < rank - 1; ++i)
    rows.push_back(i);
  return tensor::ExpandShapeOp::create(
      b, loc, type, flat, ArrayRef<ReassociationIndices>{rows, {rank - 1}});
}

/// matmul with lhs of rank > 2 -> linalg.matmul or linalg.batch_matmul.
struct BatchedMatmulForward : OpConversionPattern<MatmulOp> {
  BatchedMatmulForward(MLIRContext *context)
      : OpConversionPattern(context, /*benefit=*/2) {}

  LogicalResult
  matchAndRewrite(MatmulOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto lhsType = cast<RankedTensorType>(op.getLhs().getType());
    auto rhsType = cast<RankedTensorType>(op.getRhs().getType());
    if (lhsType.getRank() <= 2 ||
        failed(kernelFloatType(op, /*report=*/false)) ||
        !allStatic(op->getOperandTypes()))
      return failure();
    Location loc = op.getLoc();
    auto type = cast<RankedTensorType>(op.getType());
    if (rhsType.getRank() == 2) {
      rewriter.replaceOp(op, buildMatmul(rewriter, loc, adaptor.getLhs(),
                                         adaptor.getRhs(), Value(), type));
      return success();
    }
    Value out = buildBatchMatmul(
        rewriter, loc, asBatch(rewriter, loc, adaptor.getLhs(), false),
        asBatch(rewriter, loc, adaptor.getRhs(), false), false, false,
        type.getElementType());
    if (type.getRank() > 3) {
      ReassociationIndices lead;
      for (int64_t i = 0; i < type.getRank() - 2; ++i)
        lead.push_back(i);
      out = tensor::ExpandShapeOp::create(
          rewriter, loc, type, out,
          ArrayRef<ReassociationIndices>{
              lead, {type.getRank() - 2}, {type.getRank() - 1}});
    }
    rewriter.replaceOp(op, out);
    return success();
  }
};

/// linear of a vector x [K] -> x as [1, K], linalg.matmul (+ bias).
struct VectorLinearForward : OpConversionPattern<LinearOp> {
  VectorLinearForward(MLIRContext *context)
      : OpConversionPattern(context, /*benefit=*/2) {}

  LogicalResult
  matchAndRewrite(LinearOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto xType = cast<RankedTensorType>(op.getX().getType());
    if (xType.getRank() != 1 || failed(kernelFloatType(op, /*report=*/false)) ||
        !allStatic(op->getOperandTypes()))
      return failure();
    Location loc = op.getLoc();
    auto type = cast<RankedTensorType>(op.getType());
    auto rowType =
        RankedTensorType::get({1, xType.getDimSize(0)}, xType.getElementType());
    Value row =
        tensor::ExpandShapeOp::create(rewriter, loc, rowType, adaptor.getX(),
                                      ArrayRef<ReassociationIndices>{{0, 1}});
    Value out = buildMatmul(
        rewriter, loc, row, adaptor.getW(), adaptor.getBias(),
        RankedTensorType::get({1, type.getDimSize(0)}, type.getElementType()));
    rewriter.replaceOpWithNewOp<tensor::CollapseShapeOp>(
        op, type, out, ArrayRef<ReassociationIndices>{{0, 1}});
    return success();
  }
};

/// piper.vjp of a matmul with lhs of rank > 2 -> dA = dY B^T, dB = A^T dY.
struct BatchedMatmulVJP : OpConversionPattern<VJPOp> {
  BatchedMatmulVJP(MLIRContext *context)
      : OpConversionPattern(context, /*benefit=*/2) {}

  LogicalResult
  matchAndRewrite(VJPOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    ValueRange primals = adaptor.getPrimals();
    if (op.getOp() != MatmulOp::getOperationName() || primals.size() != 2 ||
        adaptor.getCotangents().size() != 1 ||
        failed(kernelFloatType(op, /*report=*/false)))
      return rewriter.notifyMatchFailure(op, "not a matmul VJP");
    Value a = primals[0], b = primals[1], dy = adaptor.getCotangents()[0];
    auto aType = cast<RankedTensorType>(a.getType());
    auto bType = cast<RankedTensorType>(b.getType());
    if (aType.getRank() <= 2 ||
        (bType.getRank() != 2 && bType.getRank() != aType.getRank()) ||
        !allStatic(TypeRange{a.getType(), b.getType(), dy.getType()}))
      return rewriter.notifyMatchFailure(op, "a 2-D matmul: a BLAS kernel");
    // A weight shared by the batch: one product over all rows.
    bool shared = bType.getRank() == 2;
    Location loc = op.getLoc();
    Type elt = aType.getElementType();
    Value a3 = asBatch(rewriter, loc, a, shared);
    Value dy3 = asBatch(rewriter, loc, dy, shared);
    Value b3 =
        shared ? tensor::ExpandShapeOp::create(
                     rewriter, loc,
                     RankedTensorType::get(
                         {1, bType.getDimSize(0), bType.getDimSize(1)}, elt),
                     b, ArrayRef<ReassociationIndices>{{0, 1}, {2}})
                     .getResult()
               : asBatch(rewriter, loc, b, false);
    SmallVector<Value> gradients;
    for (int64_t wrt : op.getWrt()) {
      Value g =
          wrt == 0 ? buildBatchMatmul(rewriter, loc, dy3, b3, false, true, elt)
                   : buildBatchMatmul(rewriter, loc, a3, dy3, true, false, elt);
      gradients.push_back(
          fromBatch(rewriter, loc, g, wrt == 0 ? aType : bType));
    }
    rewriter.replaceOp(op, gradients);
    return success();
  }
};

} // namespace

void mlir::piper::populateBatchedMatmulToLinalgPatterns(
    RewritePatternSet &patterns) {
  patterns.add<BatchedMatmulForward, VectorLinearForward, BatchedMatmulVJP>(
      patterns.getContext());
}
