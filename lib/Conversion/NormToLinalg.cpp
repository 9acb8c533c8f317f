//===- NormToLinalg.cpp - RMSNorm, LayerNorm and VJPs as linalg.generic ---===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Both norms work on rows of the last dim, x [R, H] (RowKernels.h). Each
// lowering first computes the per-row statistics (a reduction over H, then a
// tiny kernel over [R]: rmsnorm's scale s = 1 / sqrt(mean(x^2) + eps);
// layernorm's mean, then its scale from the centred second pass, which is
// exact where a one-pass E[x^2] - E[x]^2 cancels), then one elementwise
// kernel that reads them per row and the weights per column. The VJPs
// recompute the statistics from x, as the reference does, so BI and BW can
// run apart; a piper.vjp with several `wrt` shares them. Weight gradients
// are column reductions (sum over rows). A grouped RMSNorm (w shorter than
// the rows: per-head q/k norms) first reshapes x to rows of w's size.
// Arithmetic follows lib/Reference
// (Norms.cpp) operation by operation, so f64 plans agree with the
// interpreter to rounding.
//
//===----------------------------------------------------------------------===//

#include "KernelPatterns.h"
#include "RowKernels.h"

#include "piper/Dialect/Piper/IR/PiperOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/DialectConversion.h"

using namespace mlir;
using namespace mlir::piper;
using namespace mlir::piper::rows;

namespace {

// The defaults of RmsNormOp's and LayerNormOp's `epsilon` (PiperNNOps.td):
// an attribute at its default value may be absent from forward_attrs.
constexpr double kRmsNormEpsilon = 1e-6;
constexpr double kLayerNormEpsilon = 1e-5;

/// What every norm kernel reads: x as rows [R, H], the accumulator type and
/// the loop sizes.
/// A grouped RMSNorm (w [G] shorter than the rows, the per-head q/k norm)
/// works on rows of G channels: [R, H] -> [R H / G, G], contiguous, so only
/// a reshape.
Value asGroups(OpBuilder &b, Location loc, Value rows, int64_t group) {
  auto type = cast<RankedTensorType>(rows.getType());
  int64_t r = type.getDimSize(0), h = type.getDimSize(1);
  if (group <= 0 || group == h)
    return rows;
  auto split =
      RankedTensorType::get({r, h / group, group}, type.getElementType());
  Value x3 = tensor::ExpandShapeOp::create(
      b, loc, split, rows, ArrayRef<ReassociationIndices>{{0}, {1, 2}});
  return tensor::CollapseShapeOp::create(
      b, loc, x3, ArrayRef<ReassociationIndices>{{0, 1}, {2}});
}

/// The inverse of asGroups, back to rows of `rowsType`'s width.
Value fromGroups(OpBuilder &b, Location loc, Value groups,
                 RankedTensorType rowsType) {
  auto type = cast<RankedTensorType>(groups.getType());
  if (type.getShape() == rowsType.getShape())
    return groups;
  int64_t r = rowsType.getDimSize(0), g = type.getDimSize(1);
  auto split = RankedTensorType::get({r, rowsType.getDimSize(1) / g, g},
                                     type.getElementType());
  Value x3 = tensor::ExpandShapeOp::create(
      b, loc, split, groups, ArrayRef<ReassociationIndices>{{0, 1}, {2}});
  return tensor::CollapseShapeOp::create(
      b, loc, x3, ArrayRef<ReassociationIndices>{{0}, {1, 2}});
}

/// The size of w's dim 0: RMSNorm's group.
int64_t groupOf(Value w) {
  return cast<RankedTensorType>(w.getType()).getDimSize(0);
}

struct Rows {
  Value x;
  FloatType acc;
  SmallVector<int64_t, 2> loops;
  /// x's rows before grouping ([R, H]).
  RankedTensorType rowsType;

  Rows(OpBuilder &b, Location loc, Value input, int64_t group = 0)
      : x(asRows(b, loc, input)) {
    rowsType = cast<RankedTensorType>(x.getType());
    x = asGroups(b, loc, x, group);
    auto type = cast<RankedTensorType>(x.getType());
    acc = accumulatorType(type.getElementType());
    loops.assign(type.getShape().begin(), type.getShape().end());
  }
  int64_t h() const { return loops[1]; }
  ArrayRef<int64_t> rowLoop() const {
    return ArrayRef<int64_t>(loops).take_front();
  }
};

/// 1 / sqrt(stat / H + eps) for each row's statistic `stat` [R].
Value scaleFrom(OpBuilder &b, Location loc, const Rows &r, Value stat,
                double eps) {
  return build1(
      b, loc, r.rowLoop(), {{stat, Index::Whole}}, Index::Whole, {r.acc},
      [&](OpBuilder &nb, Location nl, ValueRange in, Value) {
        Value m = arith::DivFOp::create(
            nb, nl, in[0], floatConstant(nb, nl, r.acc, double(r.h())));
        Value v =
            arith::AddFOp::create(nb, nl, m, floatConstant(nb, nl, r.acc, eps));
        Value root = math::SqrtOp::create(nb, nl, v);
        return arith::DivFOp::create(nb, nl, floatConstant(nb, nl, r.acc, 1.0),
                                     root);
      });
}

/// The row sums of `f(x)` for x [R, H], in the accumulator type.
Value rowSum(OpBuilder &b, Location loc, const Rows &r, ArrayRef<In> ins,
             function_ref<Value(OpBuilder &, Location, ValueRange)> f) {
  return build1(b, loc, r.loops, ins, Index::Row, {r.acc, 0.0},
                [&](OpBuilder &nb, Location nl, ValueRange in, Value sum) {
                  return arith::AddFOp::create(nb, nl, sum, f(nb, nl, in));
                });
}

/// The column sums (over the rows) of `f`, rounded to `elt`: a weight's
/// gradient [H].
Value colSum(OpBuilder &b, Location loc, const Rows &r, ArrayRef<In> ins,
             Type elt,
             function_ref<Value(OpBuilder &, Location, ValueRange)> f) {
  Value sum = build1(b, loc, r.loops, ins, Index::Col, {r.acc, 0.0},
                     [&](OpBuilder &nb, Location nl, ValueRange in, Value acc) {
                       return arith::AddFOp::create(nb, nl, acc, f(nb, nl, in));
                     });
  return castTensor(b, loc, sum, elt);
}

/// The operands' elements in the accumulator type.
SmallVector<Value> wide(OpBuilder &b, Location loc, ValueRange in, Type acc) {
  SmallVector<Value> values;
  for (Value v : in)
    values.push_back(widen(b, loc, v, acc));
  return values;
}

//===----------------------------------------------------------------------===//
// RMSNorm
//===----------------------------------------------------------------------===//

/// s = 1 / sqrt(sum(x^2) / H + eps) per row.
Value rmsScale(OpBuilder &b, Location loc, const Rows &r, double eps) {
  Value sumSq = rowSum(b, loc, r, {{r.x, Index::Whole}},
                       [&](OpBuilder &nb, Location nl, ValueRange in) {
                         Value x = widen(nb, nl, in[0], r.acc);
                         return arith::MulFOp::create(nb, nl, x, x);
                       });
  return scaleFrom(b, loc, r, sumSq, eps);
}

/// y = x s w.
struct RmsNormToLinalg : OpConversionPattern<RmsNormOp> {
  RmsNormToLinalg(MLIRContext *context)
      : OpConversionPattern(context, /*benefit=*/2) {}

  LogicalResult
  matchAndRewrite(RmsNormOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    FloatType elt = checkedElementType(op, rewriter);
    if (!elt)
      return success(); // Reported; see checkedElementType.
    Location loc = op.getLoc();
    Rows r(rewriter, loc, adaptor.getX(), groupOf(adaptor.getW()));
    Value s = rmsScale(rewriter, loc, r,
                       forwardFloatAttr(op, "epsilon", kRmsNormEpsilon));
    Value y = build1(
        rewriter, loc, r.loops,
        {{r.x, Index::Whole}, {s, Index::Row}, {adaptor.getW(), Index::Col}},
        Index::Whole, {elt},
        [&](OpBuilder &nb, Location nl, ValueRange in, Value) {
          SmallVector<Value> a = wide(nb, nl, in, r.acc);
          Value xs = arith::MulFOp::create(nb, nl, a[0], a[1]);
          return narrow(nb, nl, arith::MulFOp::create(nb, nl, xs, a[2]), elt);
        });
    rewriter.replaceOp(op, fromRows(rewriter, loc,
                                    fromGroups(rewriter, loc, y, r.rowsType),
                                    op.getType()));
    return success();
  }
};

/// dx = s (dy w - x s^2 mean(dy w x)) and dw = sum over rows of dy x s.
SmallVector<Value> rmsNormVJP(OpBuilder &b, Location loc, VJPOp op,
                              ValueRange primals, Value cotangent, Type elt) {
  Value w = primals[1];
  Rows r(b, loc, primals[0], groupOf(w));
  Value dy = asGroups(b, loc, asRows(b, loc, cotangent), groupOf(w));
  Value s =
      rmsScale(b, loc, r, forwardFloatAttr(op, "epsilon", kRmsNormEpsilon));
  SmallVector<Value> gradients;
  for (int64_t wrt : op.getWrt()) {
    if (wrt == 1) {
      gradients.push_back(colSum(
          b, loc, r, {{dy, Index::Whole}, {r.x, Index::Whole}, {s, Index::Row}},
          elt, [&](OpBuilder &nb, Location nl, ValueRange in) -> Value {
            SmallVector<Value> a = wide(nb, nl, in, r.acc);
            Value dx = arith::MulFOp::create(nb, nl, a[0], a[1]);
            return arith::MulFOp::create(nb, nl, dx, a[2]);
          }));
      continue;
    }
    // d s / d x_j = -s^3 x_j / H, hence the correction term.
    Value dot = rowSum(
        b, loc, r, {{dy, Index::Whole}, {w, Index::Col}, {r.x, Index::Whole}},
        [&](OpBuilder &nb, Location nl, ValueRange in) -> Value {
          SmallVector<Value> a = wide(nb, nl, in, r.acc);
          Value g = arith::MulFOp::create(nb, nl, a[0], a[1]);
          return arith::MulFOp::create(nb, nl, g, a[2]);
        });
    Value dx = build1(
        b, loc, r.loops,
        {{r.x, Index::Whole},
         {dy, Index::Whole},
         {w, Index::Col},
         {s, Index::Row},
         {dot, Index::Row}},
        Index::Whole, {elt},
        [&](OpBuilder &nb, Location nl, ValueRange in, Value) {
          SmallVector<Value> a = wide(nb, nl, in, r.acc);
          Value x = a[0], s = a[3];
          Value g = arith::MulFOp::create(nb, nl, a[1], a[2]);
          Value meanDot = arith::DivFOp::create(
              nb, nl, a[4], floatConstant(nb, nl, r.acc, double(r.h())));
          Value xss = arith::MulFOp::create(
              nb, nl, arith::MulFOp::create(nb, nl, x, s), s);
          Value c = arith::MulFOp::create(nb, nl, xss, meanDot);
          Value d = arith::SubFOp::create(nb, nl, g, c);
          return narrow(nb, nl, arith::MulFOp::create(nb, nl, s, d), elt);
        });
    gradients.push_back(fromRows(b, loc, fromGroups(b, loc, dx, r.rowsType),
                                 primals[0].getType()));
  }
  return gradients;
}

//===----------------------------------------------------------------------===//
// LayerNorm
//===----------------------------------------------------------------------===//

/// The mean and the scale 1 / sqrt(var + eps) of each row, var the biased
/// variance from the centred second pass.
struct LayerStats {
  Value mean, scale;
};

LayerStats layerStats(OpBuilder &b, Location loc, const Rows &r, double eps) {
  Value sum = rowSum(b, loc, r, {{r.x, Index::Whole}},
                     [&](OpBuilder &nb, Location nl, ValueRange in) {
                       return widen(nb, nl, in[0], r.acc);
                     });
  Value mean =
      build1(b, loc, r.rowLoop(), {{sum, Index::Whole}}, Index::Whole, {r.acc},
             [&](OpBuilder &nb, Location nl, ValueRange in, Value) {
               return arith::DivFOp::create(
                   nb, nl, in[0], floatConstant(nb, nl, r.acc, double(r.h())));
             });
  Value var = rowSum(b, loc, r, {{r.x, Index::Whole}, {mean, Index::Row}},
                     [&](OpBuilder &nb, Location nl, ValueRange in) {
                       Value d = arith::SubFOp::create(
                           nb, nl, widen(nb, nl, in[0], r.acc), in[1]);
                       return arith::MulFOp::create(nb, nl, d, d);
                     });
  return {mean, scaleFrom(b, loc, r, var, eps)};
}

/// (x - mean) s, the normalised element, from the widened x, mean and s.
Value xhat(OpBuilder &b, Location loc, Value x, Value mean, Value s) {
  return arith::MulFOp::create(b, loc, arith::SubFOp::create(b, loc, x, mean),
                               s);
}

/// y = (x - mean) s w + b.
struct LayerNormToLinalg : OpConversionPattern<LayerNormOp> {
  LayerNormToLinalg(MLIRContext *context)
      : OpConversionPattern(context, /*benefit=*/2) {}

  LogicalResult
  matchAndRewrite(LayerNormOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    FloatType elt = checkedElementType(op, rewriter);
    if (!elt)
      return success(); // Reported; see checkedElementType.
    Location loc = op.getLoc();
    Rows r(rewriter, loc, adaptor.getX());
    LayerStats st = layerStats(
        rewriter, loc, r, forwardFloatAttr(op, "epsilon", kLayerNormEpsilon));
    Value y = build1(
        rewriter, loc, r.loops,
        {{r.x, Index::Whole},
         {st.mean, Index::Row},
         {st.scale, Index::Row},
         {adaptor.getW(), Index::Col},
         {adaptor.getB(), Index::Col}},
        Index::Whole, {elt},
        [&](OpBuilder &nb, Location nl, ValueRange in, Value) {
          SmallVector<Value> a = wide(nb, nl, in, r.acc);
          Value n = xhat(nb, nl, a[0], a[1], a[2]);
          Value nw = arith::MulFOp::create(nb, nl, n, a[3]);
          return narrow(nb, nl, arith::AddFOp::create(nb, nl, nw, a[4]), elt);
        });
    rewriter.replaceOp(op, fromRows(rewriter, loc, y, op.getType()));
    return success();
  }
};

/// dx = s (g - mean(g) - xhat mean(g xhat)) with g = dy w; dw = sum over
/// rows of dy xhat; db = sum over rows of dy.
SmallVector<Value> layerNormVJP(OpBuilder &b, Location loc, VJPOp op,
                                ValueRange primals, Value cotangent, Type elt) {
  Rows r(b, loc, primals[0]);
  Value w = primals[1];
  Value dy = asRows(b, loc, cotangent);
  LayerStats st =
      layerStats(b, loc, r, forwardFloatAttr(op, "epsilon", kLayerNormEpsilon));
  SmallVector<Value> gradients;
  for (int64_t wrt : op.getWrt()) {
    if (wrt == 1) {
      gradients.push_back(
          colSum(b, loc, r,
                 {{dy, Index::Whole},
                  {r.x, Index::Whole},
                  {st.mean, Index::Row},
                  {st.scale, Index::Row}},
                 elt, [&](OpBuilder &nb, Location nl, ValueRange in) -> Value {
                   SmallVector<Value> a = wide(nb, nl, in, r.acc);
                   Value c = arith::SubFOp::create(nb, nl, a[1], a[2]);
                   Value dc = arith::MulFOp::create(nb, nl, a[0], c);
                   return arith::MulFOp::create(nb, nl, dc, a[3]);
                 }));
      continue;
    }
    if (wrt == 2) {
      gradients.push_back(
          colSum(b, loc, r, {{dy, Index::Whole}}, elt,
                 [&](OpBuilder &nb, Location nl, ValueRange in) {
                   return widen(nb, nl, in[0], r.acc);
                 }));
      continue;
    }
    // The row sums of g and of g xhat, in one pass.
    SmallVector<In> ins = {{r.x, Index::Whole},
                           {dy, Index::Whole},
                           {w, Index::Col},
                           {st.mean, Index::Row},
                           {st.scale, Index::Row}};
    SmallVector<Value> sums =
        build(b, loc, r.loops, ins, Index::Row, {{r.acc, 0.0}, {r.acc, 0.0}},
              [&](OpBuilder &nb, Location nl, ValueRange in,
                  ValueRange acc) -> SmallVector<Value> {
                SmallVector<Value> a = wide(nb, nl, in, r.acc);
                Value g = arith::MulFOp::create(nb, nl, a[1], a[2]);
                Value gc = arith::MulFOp::create(
                    nb, nl, g, arith::SubFOp::create(nb, nl, a[0], a[3]));
                Value gx = arith::MulFOp::create(nb, nl, gc, a[4]);
                return {arith::AddFOp::create(nb, nl, acc[0], g),
                        arith::AddFOp::create(nb, nl, acc[1], gx)};
              });
    ins.push_back({sums[0], Index::Row});
    ins.push_back({sums[1], Index::Row});
    Value dx = build1(
        b, loc, r.loops, ins, Index::Whole, {elt},
        [&](OpBuilder &nb, Location nl, ValueRange in, Value) {
          SmallVector<Value> a = wide(nb, nl, in, r.acc);
          Value invH = floatConstant(nb, nl, r.acc, 1.0 / double(r.h()));
          Value s = a[4];
          Value g = arith::MulFOp::create(nb, nl, a[1], a[2]);
          Value meanG = arith::MulFOp::create(nb, nl, a[5], invH);
          Value meanGXhat = arith::MulFOp::create(nb, nl, a[6], invH);
          Value n = xhat(nb, nl, a[0], a[3], s);
          Value d = arith::SubFOp::create(
              nb, nl, arith::SubFOp::create(nb, nl, g, meanG),
              arith::MulFOp::create(nb, nl, n, meanGXhat));
          return narrow(nb, nl, arith::MulFOp::create(nb, nl, s, d), elt);
        });
    gradients.push_back(fromRows(b, loc, dx, primals[0].getType()));
  }
  return gradients;
}

/// piper.vjp of rmsnorm or layernorm -> one gradient per `wrt`, sharing the
/// row statistics.
struct NormVJPToLinalg : OpConversionPattern<VJPOp> {
  NormVJPToLinalg(MLIRContext *context)
      : OpConversionPattern(context, /*benefit=*/2) {}

  LogicalResult
  matchAndRewrite(VJPOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    bool rms = op.getOp() == RmsNormOp::getOperationName();
    if (!rms && op.getOp() != LayerNormOp::getOperationName())
      return rewriter.notifyMatchFailure(op, "not a norm VJP");
    FloatType elt;
    if (!checkVJP(op, rewriter) || !(elt = checkedElementType(op, rewriter)))
      return success(); // Reported; see checkVJP.
    Value dy = adaptor.getCotangents()[0];
    rewriter.replaceOp(op, rms ? rmsNormVJP(rewriter, op.getLoc(), op,
                                            adaptor.getPrimals(), dy, elt)
                               : layerNormVJP(rewriter, op.getLoc(), op,
                                              adaptor.getPrimals(), dy, elt));
    return success();
  }
};

} // namespace

void mlir::piper::populateNormToLinalgPatterns(RewritePatternSet &patterns) {
  patterns.add<RmsNormToLinalg, LayerNormToLinalg, NormVJPToLinalg>(
      patterns.getContext());
}
