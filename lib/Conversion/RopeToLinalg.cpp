//===- RopeToLinalg.cpp - Rotary position embedding in linalg -------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// piper.rope on x [B, S, N Dh] as linalg on tensors:
//
//   tables:  cos, sin [S, R/2] of a = (s + offset) / theta^(2c / R)
//            (one generic; R = rotary_dim, Dh without it)
//   halves:  x -> [B, S, N, 2, R/2], the low and high halves as slices
//            (R = Dh; with R < Dh, partialRope: one generic over the heads
//            that reads each channel's partner, channels R.. unchanged)
//   rotate:  one generic over [B, S, N, 2, half] writing lo' = lo cos -
//            hi sin or hi' = hi cos + lo sin by the pair index (sin
//            negated for `inverse`), collapsed back to [B, S, N Dh]
//
// The tables cost S Dh/2 pow/cos/sin against B S N Dh multiply-adds, so they
// are computed once per call instead of per element. The arithmetic is the
// reference's (Rope.cpp) operation by operation, so f64 plans agree with
// the interpreter to rounding; bf16 computes in f32 and rounds once.
//
//===----------------------------------------------------------------------===//

#include "KernelPatterns.h"

#include "piper/Dialect/Piper/IR/PiperOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/DialectConversion.h"

using namespace mlir;
using namespace mlir::piper;

namespace {

/// The cos and sin tables [S, half] (sin negated when `inverse`) in `acc`,
/// row s at position s + `offset`.
std::pair<Value, Value> angleTables(OpBuilder &b, Location loc, int64_t seq,
                                    int64_t offset, int64_t half, double theta,
                                    bool inverse, FloatType acc) {
  auto type = RankedTensorType::get({seq, half}, acc);
  Value empty = tensor::EmptyOp::create(b, loc, type.getShape(), acc);
  AffineMap id = AffineMap::getMultiDimIdentityMap(2, b.getContext());
  SmallVector<utils::IteratorType> iterators(2, utils::IteratorType::parallel);
  auto tables = linalg::GenericOp::create(
      b, loc, TypeRange{type, type}, ValueRange{}, ValueRange{empty, empty},
      ArrayRef<AffineMap>{id, id}, iterators,
      [&](OpBuilder &nb, Location nl, ValueRange) {
        auto toFloat = [&](Value index) -> Value {
          Value i = arith::IndexCastOp::create(nb, nl, nb.getI64Type(), index);
          return arith::SIToFPOp::create(nb, nl, acc, i);
        };
        Value pos = linalg::IndexOp::create(nb, nl, 0);
        if (offset != 0)
          pos = arith::AddIOp::create(
              nb, nl, pos, arith::ConstantIndexOp::create(nb, nl, offset));
        Value s = toFloat(pos);
        Value c = toFloat(linalg::IndexOp::create(nb, nl, 1));
        // inv = 1 / theta^((2c) / R), a = s inv: PyTorch's tables.
        Value exponent = arith::DivFOp::create(
            nb, nl,
            arith::MulFOp::create(nb, nl, floatConstant(nb, nl, acc, 2.0), c),
            floatConstant(nb, nl, acc, double(2 * half)));
        Value power = math::PowFOp::create(
            nb, nl, floatConstant(nb, nl, acc, theta), exponent);
        Value inv = arith::DivFOp::create(
            nb, nl, floatConstant(nb, nl, acc, 1.0), power);
        Value a = arith::MulFOp::create(nb, nl, s, inv);
        Value sn = math::SinOp::create(nb, nl, a);
        if (inverse)
          sn = arith::NegFOp::create(nb, nl, sn);
        linalg::YieldOp::create(nb, nl,
                                ValueRange{math::CosOp::create(nb, nl, a), sn});
      });
  return {tables.getResult(0), tables.getResult(1)};
}

/// Partial rotary (R = `rot` < Dh): one generic over the heads [B, S, N, Dh]
/// whose body reads each rotated channel's partner (c +- R/2) and its
/// table entries with tensor.extract and passes channels R.. through.
/// Slicing the rotated channels out and inserting them back would bufferize
/// to a strided copy (a memrefCopy call the plan cannot resolve).
Value partialRope(OpBuilder &b, Location loc, Value x, RankedTensorType type,
                  int64_t headDim, int64_t rot, Value cosT, Value sinT,
                  FloatType acc, FloatType elt) {
  int64_t heads = type.getDimSize(2) / headDim, half = rot / 2;
  auto headsType = RankedTensorType::get(
      {type.getDimSize(0), type.getDimSize(1), heads, headDim}, elt);
  Value x4 = tensor::ExpandShapeOp::create(
      b, loc, headsType, x, ArrayRef<ReassociationIndices>{{0}, {1}, {2, 3}});
  AffineMap id = AffineMap::getMultiDimIdentityMap(4, b.getContext());
  Value empty = tensor::EmptyOp::create(b, loc, headsType.getShape(), elt);
  SmallVector<utils::IteratorType> iterators(4, utils::IteratorType::parallel);
  Value out =
      linalg::GenericOp::create(
          b, loc, TypeRange{headsType}, ValueRange{x4}, ValueRange{empty},
          ArrayRef<AffineMap>{id, id}, iterators,
          [&](OpBuilder &nb, Location nl, ValueRange a) {
            auto index = [&](int64_t v) -> Value {
              return arith::ConstantIndexOp::create(nb, nl, v);
            };
            auto cmp = [&](arith::CmpIPredicate p, Value l, Value r) -> Value {
              return arith::CmpIOp::create(nb, nl, p, l, r);
            };
            Value bi = linalg::IndexOp::create(nb, nl, 0);
            Value si = linalg::IndexOp::create(nb, nl, 1);
            Value ni = linalg::IndexOp::create(nb, nl, 2);
            Value d = linalg::IndexOp::create(nb, nl, 3);
            Value isLo = cmp(arith::CmpIPredicate::ult, d, index(half));
            Value isRot = cmp(arith::CmpIPredicate::ult, d, index(rot));
            // Pair index c and partner channel; pass-through channels read
            // in-bounds placeholders (c = 0, themselves) and keep x.
            Value dMinus = arith::SubIOp::create(nb, nl, d, index(half));
            Value dPlus = arith::AddIOp::create(nb, nl, d, index(half));
            Value c = arith::SelectOp::create(
                nb, nl, isLo, d,
                arith::SelectOp::create(nb, nl, isRot, dMinus, index(0)));
            Value partnerIdx = arith::SelectOp::create(
                nb, nl, isLo, dPlus,
                arith::SelectOp::create(nb, nl, isRot, dMinus, d));
            Value self = castScalar(nb, nl, a[0], acc);
            Value partner =
                castScalar(nb, nl,
                           tensor::ExtractOp::create(
                               nb, nl, x4, ValueRange{bi, si, ni, partnerIdx}),
                           acc);
            Value cs =
                tensor::ExtractOp::create(nb, nl, cosT, ValueRange{si, c});
            Value sn =
                tensor::ExtractOp::create(nb, nl, sinT, ValueRange{si, c});
            // lo cos + (-hi) sin and hi cos + lo sin, as the full form.
            Value signedPartner = arith::SelectOp::create(
                nb, nl, isLo, arith::NegFOp::create(nb, nl, partner), partner);
            Value rotated = arith::AddFOp::create(
                nb, nl, arith::MulFOp::create(nb, nl, self, cs),
                arith::MulFOp::create(nb, nl, signedPartner, sn));
            Value v = arith::SelectOp::create(nb, nl, isRot, rotated, self);
            linalg::YieldOp::create(nb, nl, castScalar(nb, nl, v, elt));
          })
          .getResult(0);
  return tensor::CollapseShapeOp::create(
      b, loc, type, out, ArrayRef<ReassociationIndices>{{0}, {1}, {2, 3}});
}

struct RopeToLinalg : OpConversionPattern<RopeOp> {
  RopeToLinalg(MLIRContext *context)
      : OpConversionPattern(context, /*benefit=*/2) {}

  LogicalResult
  matchAndRewrite(RopeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    FailureOr<FloatType> elt = kernelFloatType(op, /*report=*/true);
    if (failed(elt))
      return failure();
    auto type = cast<RankedTensorType>(adaptor.getX().getType());
    if (!type.hasStaticShape())
      return op.emitError() << "the native lowering of rope needs a static "
                               "type, got "
                            << type;
    Location loc = op.getLoc();
    int64_t batch = type.getDimSize(0), seq = type.getDimSize(1);
    int64_t headDim = op.getHeadDim();
    int64_t rot = op.getRotaryDim().value_or(headDim), half = rot / 2;
    int64_t heads = type.getDimSize(2) / headDim;
    FloatType acc = accumulatorType(*elt);
    auto [cosT, sinT] =
        angleTables(rewriter, loc, seq, op.getOffset(), half,
                    op.getTheta().convertToDouble(), op.getInverse(), acc);

    if (rot != headDim) {
      rewriter.replaceOp(op, partialRope(rewriter, loc, adaptor.getX(), type,
                                         headDim, rot, cosT, sinT, acc, *elt));
      return success();
    }
    auto pairsType = RankedTensorType::get({batch, seq, heads, 2, half}, *elt);
    Value pairs = tensor::ExpandShapeOp::create(
        rewriter, loc, pairsType, adaptor.getX(),
        ArrayRef<ReassociationIndices>{{0}, {1}, {2, 3, 4}});
    auto halfType = RankedTensorType::get({batch, seq, heads, half}, *elt);
    SmallVector<OpFoldResult> offsets(5, rewriter.getIndexAttr(0));
    SmallVector<OpFoldResult> sizes = {
        rewriter.getIndexAttr(batch), rewriter.getIndexAttr(seq),
        rewriter.getIndexAttr(heads), rewriter.getIndexAttr(1),
        rewriter.getIndexAttr(half)};
    SmallVector<OpFoldResult> strides(5, rewriter.getIndexAttr(1));
    auto slice = [&](int64_t which) -> Value {
      offsets[3] = rewriter.getIndexAttr(which);
      return tensor::ExtractSliceOp::create(rewriter, loc, halfType, pairs,
                                            offsets, sizes, strides);
    };
    Value lo = slice(0), hi = slice(1);

    // One generic over the result's pairs [B, S, N, 2, half]: index 3
    // picks which of the pair's two rotated values to write (a select
    // rather than two results inserted back, which would bufferize to
    // copies through memrefCopy).
    MLIRContext *ctx = rewriter.getContext();
    auto dim = [&](unsigned d) { return rewriter.getAffineDimExpr(d); };
    AffineMap halfMap =
        AffineMap::get(5, 0, {dim(0), dim(1), dim(2), dim(4)}, ctx);
    AffineMap table = AffineMap::get(5, 0, {dim(1), dim(4)}, ctx);
    AffineMap id = AffineMap::getMultiDimIdentityMap(5, ctx);
    Value empty =
        tensor::EmptyOp::create(rewriter, loc, pairsType.getShape(), *elt);
    SmallVector<utils::IteratorType> iterators(5,
                                               utils::IteratorType::parallel);
    Value rotated =
        linalg::GenericOp::create(
            rewriter, loc, TypeRange{pairsType}, ValueRange{lo, hi, cosT, sinT},
            ValueRange{empty},
            ArrayRef<AffineMap>{halfMap, halfMap, table, table, id}, iterators,
            [&](OpBuilder &nb, Location nl, ValueRange a) {
              Value l = castScalar(nb, nl, a[0], acc);
              Value h = castScalar(nb, nl, a[1], acc);
              Value c = a[2], s = a[3];
              // lo cos + (-hi) sin and hi cos + lo sin, rounded as
              // x cos + rotate_half(x) sin is.
              Value newLo = arith::AddFOp::create(
                  nb, nl, arith::MulFOp::create(nb, nl, l, c),
                  arith::MulFOp::create(nb, nl,
                                        arith::NegFOp::create(nb, nl, h), s));
              Value newHi = arith::AddFOp::create(
                  nb, nl, arith::MulFOp::create(nb, nl, h, c),
                  arith::MulFOp::create(nb, nl, l, s));
              Value which = linalg::IndexOp::create(nb, nl, 3);
              Value isLo = arith::CmpIOp::create(
                  nb, nl, arith::CmpIPredicate::eq, which,
                  arith::ConstantIndexOp::create(nb, nl, 0));
              Value v = arith::SelectOp::create(nb, nl, isLo, newLo, newHi);
              linalg::YieldOp::create(nb, nl, castScalar(nb, nl, v, *elt));
            })
            .getResult(0);
    rewriter.replaceOpWithNewOp<tensor::CollapseShapeOp>(
        op, type, rotated, ArrayRef<ReassociationIndices>{{0}, {1}, {2, 3, 4}});
    return success();
  }
};

} // namespace

void mlir::piper::populateRopeToLinalgPatterns(RewritePatternSet &patterns) {
  patterns.add<RopeToLinalg>(patterns.getContext());
}
