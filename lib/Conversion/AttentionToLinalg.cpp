//===- AttentionToLinalg.cpp - Causal attention and its VJP in linalg -----===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// piper.attention (q, k, v [B, S, D], D = H * Dh, head h the channels
// [h Dh, (h+1) Dh)) and its piper.vjp w.r.t. q, k and v as linalg on
// tensors, per head batch n = b H + h. Grouped-query attention (k, v with
// Hkv < H heads) first repeats each key/value head for its H / Hkv query
// heads (a linalg.broadcast) and sums their gradients back (linalg.reduce):
//
//   split:    x [B, S, D] -> [B, S, H, Dh] -> [B, H, S, Dh] -> [B H, S, Dh]
//   scores:   S = Q K^T                      (batch_matmul, K transposed)
//   probs:    P = softmax_j<=i(scale S)      (row max, exp, row sum, divide;
//             masked entries are exactly 0)
//   forward:  O = P V, merged back to [B, S, D]
//   backward: dV = P^T dO, dP = dO V^T, dS = scale P (dP - rowsum(dP P)),
//             dQ = dS K, dK = dS^T Q
//
// The five GEMMs are linalg.batch_matmul (with transposing indexing maps
// where an operand is used transposed), which --piper-matmul-to-blas turns
// into BLAS calls (BatchMatmulToBlas.cpp); the softmax and its VJP are
// linalg.generic over [B H, S, S] with the causal mask from linalg.index.
// The head split is a copy of O(B S D) elements per operand, against
// O(B S^2 D) for the GEMMs. Scores, probabilities and their gradients are
// kept in f32 when the element type is narrower (bf16); the result is
// rounded once at the merge.
//
// Each lowering is a private function per shape, head count, element type
// (and, for a VJP, set of gradients), `piper_attention[_vjp<wrt>]_<B>x<S>x
// <D>_h<H>_<t>`, that every layer of that shape calls: the generated loops
// then exist once per plan instead of once per layer.
//
// The VJP recomputes P rather than saving it from the forward: P is
// [B H, S, S], S/Dh times the size of q, and recomputing costs one GEMM
// and the softmax.
//
//===----------------------------------------------------------------------===//

#include "piper/Conversion/Passes.h"
#include "piper/Dialect/Piper/IR/PiperOps.h"

#include "KernelPatterns.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/DialectConversion.h"

#include <cmath>

using namespace mlir;
using namespace mlir::piper;

namespace {

/// The sizes of one attention and the types it computes in.
struct AttentionShape {
  int64_t batch, seq, heads, headDim;
  /// Key/value heads (grouped-query attention: fewer than `heads`).
  int64_t kvHeads;
  /// The element type of q, k, v and the result.
  FloatType elt;
  /// Scores, probabilities and their gradients: f32 for narrower types.
  FloatType acc;

  RankedTensorType headsType(Type t) const {
    return RankedTensorType::get({batch * heads, seq, headDim}, t);
  }
  RankedTensorType squareType() const {
    return RankedTensorType::get({batch * heads, seq, seq}, acc);
  }
  RankedTensorType rowType() const {
    return RankedTensorType::get({batch * heads, seq}, acc);
  }
};

/// The shape of an attention on `q` with `heads` heads, or a located error
/// on `op` (the op's verifier checks the forward; a piper.vjp's
/// forward_attrs are checked only here).
FailureOr<AttentionShape> attentionShape(Operation *op, Value q, int64_t heads,
                                         int64_t kvHeads) {
  auto type = dyn_cast<RankedTensorType>(q.getType());
  if (!type || type.getRank() != 3 || !type.hasStaticShape())
    return op->emitError() << "the native lowering of attention needs q of a "
                              "static [B, S, D] tensor type, got "
                           << q.getType();
  int64_t hidden = type.getDimSize(2);
  if (heads < 1 || hidden % heads != 0)
    return op->emitError() << "num_heads " << heads
                           << " does not divide the hidden size " << hidden;
  if (kvHeads < 1 || heads % kvHeads != 0)
    return op->emitError() << "num_kv_heads " << kvHeads
                           << " does not divide num_heads " << heads;
  auto elt = cast<FloatType>(type.getElementType());
  FloatType acc = accumulatorType(elt);
  return AttentionShape{type.getDimSize(0),
                        type.getDimSize(1),
                        heads,
                        hidden / heads,
                        kvHeads,
                        elt,
                        acc};
}

/// A tensor of `type` filled with `value`.
Value filled(OpBuilder &b, Location loc, RankedTensorType type, double value) {
  Value empty =
      tensor::EmptyOp::create(b, loc, type.getShape(), type.getElementType());
  Value c =
      floatConstant(b, loc, cast<FloatType>(type.getElementType()), value);
  return linalg::FillOp::create(b, loc, ValueRange{c}, ValueRange{empty})
      .getResult(0);
}

/// x [B, S, D] -> [B H, S, Dh], heads outermost.
Value splitHeads(OpBuilder &b, Location loc, Value x, const AttentionShape &s) {
  auto expanded =
      RankedTensorType::get({s.batch, s.seq, s.heads, s.headDim}, s.elt);
  Value e =
      tensor::ExpandShapeOp::create(b, loc, expanded, x, {{0}, {1}, {2, 3}});
  Value init = tensor::EmptyOp::create(
      b, loc, ArrayRef<int64_t>{s.batch, s.heads, s.seq, s.headDim}, s.elt);
  Value t = linalg::TransposeOp::create(b, loc, e, init,
                                        ArrayRef<int64_t>{0, 2, 1, 3})
                .getResult()
                .front();
  return tensor::CollapseShapeOp::create(b, loc, t, {{0, 1}, {2}, {3}});
}

/// Grouped-query k or v [B, S, Hkv Dh] -> [B, S, H Dh], each key/value head
/// repeated for the H / Hkv query heads of its group (repeat_interleave);
/// x itself when every query head has its own.
Value repeatKV(OpBuilder &b, Location loc, Value x, const AttentionShape &s) {
  if (s.kvHeads == s.heads)
    return x;
  int64_t group = s.heads / s.kvHeads;
  auto elt = cast<RankedTensorType>(x.getType()).getElementType();
  auto split =
      RankedTensorType::get({s.batch, s.seq, s.kvHeads, s.headDim}, elt);
  Value e = tensor::ExpandShapeOp::create(
      b, loc, split, x, ArrayRef<ReassociationIndices>{{0}, {1}, {2, 3}});
  Value init = tensor::EmptyOp::create(
      b, loc, ArrayRef<int64_t>{s.batch, s.seq, s.kvHeads, group, s.headDim},
      elt);
  Value wide =
      linalg::BroadcastOp::create(b, loc, e, init, ArrayRef<int64_t>{3})
          .getResult()
          .front();
  return tensor::CollapseShapeOp::create(
      b, loc, wide, ArrayRef<ReassociationIndices>{{0}, {1}, {2, 3, 4}});
}

/// The transpose of repeatKV: a gradient [B, S, H Dh] summed over the query
/// heads of each group to [B, S, Hkv Dh].
Value sumGroups(OpBuilder &b, Location loc, Value x, const AttentionShape &s) {
  if (s.kvHeads == s.heads)
    return x;
  int64_t group = s.heads / s.kvHeads;
  auto elt =
      cast<FloatType>(cast<RankedTensorType>(x.getType()).getElementType());
  auto split =
      RankedTensorType::get({s.batch, s.seq, s.kvHeads, group, s.headDim}, elt);
  Value e = tensor::ExpandShapeOp::create(
      b, loc, split, x, ArrayRef<ReassociationIndices>{{0}, {1}, {2, 3, 4}});
  auto sumType =
      RankedTensorType::get({s.batch, s.seq, s.kvHeads, s.headDim}, elt);
  Value init = filled(b, loc, sumType, 0.0);
  Value sum = linalg::ReduceOp::create(
                  b, loc, ValueRange{e}, ValueRange{init}, ArrayRef<int64_t>{3},
                  [](OpBuilder &nb, Location nl, ValueRange args) {
                    Value v = arith::AddFOp::create(nb, nl, args[1], args[0]);
                    linalg::YieldOp::create(nb, nl, v);
                  })
                  .getResult(0);
  return tensor::CollapseShapeOp::create(
      b, loc, sum, ArrayRef<ReassociationIndices>{{0}, {1}, {2, 3}});
}

/// The inverse of splitHeads, rounding to the element type once if the
/// heads were computed wider.
Value mergeHeads(OpBuilder &b, Location loc, Value x, const AttentionShape &s,
                 RankedTensorType resultType, bool sumKV = false) {
  auto wide = cast<RankedTensorType>(x.getType()).getElementType();
  auto expanded =
      RankedTensorType::get({s.batch, s.heads, s.seq, s.headDim}, wide);
  Value e =
      tensor::ExpandShapeOp::create(b, loc, expanded, x, {{0, 1}, {2}, {3}});
  Value init = tensor::EmptyOp::create(
      b, loc, ArrayRef<int64_t>{s.batch, s.seq, s.heads, s.headDim}, wide);
  Value t = linalg::TransposeOp::create(b, loc, e, init,
                                        ArrayRef<int64_t>{0, 2, 1, 3})
                .getResult()
                .front();
  auto flatType =
      RankedTensorType::get({s.batch, s.seq, s.heads * s.headDim}, wide);
  Value merged =
      tensor::CollapseShapeOp::create(b, loc, flatType, t, {{0}, {1}, {2, 3}});
  if (sumKV)
    merged = sumGroups(b, loc, merged, s);
  if (wide == resultType.getElementType())
    return merged;
  return buildElementwise(
      b, loc, merged, resultType,
      [&](OpBuilder &nb, Location nl, ValueRange a) {
        return arith::TruncFOp::create(nb, nl, s.elt, a[0]).getResult();
      });
}

/// Whether column j of row i is visible under the causal mask (j <= i),
/// inside a generic over (n, i, j).
Value causalVisible(OpBuilder &b, Location loc) {
  Value i = linalg::IndexOp::create(b, loc, 1);
  Value j = linalg::IndexOp::create(b, loc, 2);
  return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ule, j, i);
}

/// A generic over (n, i, j) of [N, S, S] `inputs` and [N, S] `rowInputs`
/// (read at (n, i)): a [N, S, S] result when `reduce` is null, else the
/// [N, S] fold `reduce(acc, fn(...))` from `init`.
Value squareGeneric(
    OpBuilder &b, Location loc, ValueRange inputs, ValueRange rowInputs,
    const AttentionShape &s,
    function_ref<Value(OpBuilder &, Location, ValueRange)> fn,
    function_ref<Value(OpBuilder &, Location, Value, Value)> reduce = nullptr,
    double init = 0.0) {
  MLIRContext *ctx = b.getContext();
  AffineMap square = AffineMap::getMultiDimIdentityMap(3, ctx);
  AffineMap row =
      AffineMap::get(3, 0, {b.getAffineDimExpr(0), b.getAffineDimExpr(1)}, ctx);
  SmallVector<Value> ins(inputs);
  llvm::append_range(ins, rowInputs);
  SmallVector<AffineMap> maps(inputs.size(), square);
  maps.append(rowInputs.size(), row);
  maps.push_back(reduce ? row : square);
  RankedTensorType outType = reduce ? s.rowType() : s.squareType();
  Value out = reduce
                  ? filled(b, loc, outType, init)
                  : tensor::EmptyOp::create(b, loc, outType.getShape(), s.acc)
                        .getResult();
  using utils::IteratorType;
  SmallVector<IteratorType> iterators = {
      IteratorType::parallel, IteratorType::parallel,
      reduce ? IteratorType::reduction : IteratorType::parallel};
  return linalg::GenericOp::create(
             b, loc, outType, ins, ValueRange{out}, maps, iterators,
             [&](OpBuilder &nb, Location nl, ValueRange args) {
               Value v = fn(nb, nl, args.drop_back());
               if (reduce)
                 v = reduce(nb, nl, args.back(), v);
               linalg::YieldOp::create(nb, nl, v);
             })
      .getResult(0);
}

/// P = softmax over j <= i of scale q_i . k_j, per head batch, from the
/// split q and k: the row max is taken over visible scores, masked entries
/// are exactly 0 (as the reference, which never visits them).
Value causalProbs(OpBuilder &b, Location loc, Value qh, Value kh,
                  const AttentionShape &s) {
  Value scores = buildBatchMatmul(b, loc, qh, kh, /*transA=*/false,
                                  /*transB=*/true, s.acc);
  // scale > 0, so max(scale x) = scale max(x): the scale is applied once,
  // inside the exponent.
  Value scale = floatConstant(b, loc, s.acc,
                              1.0 / std::sqrt(static_cast<double>(s.headDim)));
  Value negInf = floatConstant(b, loc, s.acc, -INFINITY);
  Value zero = floatConstant(b, loc, s.acc, 0.0);
  auto add = [](OpBuilder &nb, Location nl, Value a, Value v) -> Value {
    return arith::AddFOp::create(nb, nl, a, v);
  };
  Value rowMax = squareGeneric(
      b, loc, scores, {}, s,
      [&](OpBuilder &nb, Location nl, ValueRange a) -> Value {
        return arith::SelectOp::create(nb, nl, causalVisible(nb, nl), a[0],
                                       negInf);
      },
      [](OpBuilder &nb, Location nl, Value a, Value v) -> Value {
        return arith::MaximumFOp::create(nb, nl, a, v);
      },
      -INFINITY);
  Value exps = squareGeneric(
      b, loc, scores, rowMax, s,
      [&](OpBuilder &nb, Location nl, ValueRange a) -> Value {
        Value d = arith::SubFOp::create(nb, nl, a[0], a[1]);
        Value e = math::ExpOp::create(nb, nl,
                                      arith::MulFOp::create(nb, nl, d, scale));
        return arith::SelectOp::create(nb, nl, causalVisible(nb, nl), e, zero);
      });
  Value rowSum = squareGeneric(
      b, loc, exps, {}, s,
      [](OpBuilder &, Location, ValueRange a) { return a[0]; }, add);
  return squareGeneric(b, loc, exps, rowSum, s,
                       [](OpBuilder &nb, Location nl, ValueRange a) -> Value {
                         return arith::DivFOp::create(nb, nl, a[0], a[1]);
                       });
}

/// dS = scale P (dP - rowsum(dP P)), the softmax VJP taken to the scores
/// (masked entries stay 0: their P is 0).
Value scoreGradient(OpBuilder &b, Location loc, Value probs, Value dProbs,
                    const AttentionShape &s) {
  Value scale = floatConstant(b, loc, s.acc,
                              1.0 / std::sqrt(static_cast<double>(s.headDim)));
  Value dot = squareGeneric(
      b, loc, ValueRange{probs, dProbs}, {}, s,
      [](OpBuilder &nb, Location nl, ValueRange a) -> Value {
        return arith::MulFOp::create(nb, nl, a[0], a[1]);
      },
      [](OpBuilder &nb, Location nl, Value a, Value v) -> Value {
        return arith::AddFOp::create(nb, nl, a, v);
      });
  return squareGeneric(b, loc, ValueRange{probs, dProbs}, dot, s,
                       [&](OpBuilder &nb, Location nl, ValueRange a) -> Value {
                         Value d = arith::SubFOp::create(nb, nl, a[1], a[2]);
                         Value pd = arith::MulFOp::create(nb, nl, a[0], d);
                         return arith::MulFOp::create(nb, nl, pd, scale);
                       });
}

/// Calls the private function `name` of the module, with `args` and
/// `resultTypes`, building its body with `body` the first time: one copy of
/// an attention per shape rather than per layer. Inlined, the generated
/// loops of a 4-layer GPT doubled its compile time (10.6 -> 19.1 s, in the
/// LLVM backend).
ValueRange callOutlined(ConversionPatternRewriter &rewriter, Operation *op,
                        StringRef name, ValueRange args, TypeRange resultTypes,
                        function_ref<SmallVector<Value>(ValueRange)> body) {
  auto module = op->getParentOfType<ModuleOp>();
  Location loc = op->getLoc();
  auto fn = module.lookupSymbol<func::FuncOp>(name);
  if (!fn) {
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPointToEnd(module.getBody());
    fn = func::FuncOp::create(
        rewriter, loc, name,
        rewriter.getFunctionType(args.getTypes(), resultTypes));
    fn.setPrivate();
    SmallVector<Location> locs(args.size(), loc);
    Block *entry =
        rewriter.createBlock(&fn.getBody(), {}, args.getTypes(), locs);
    rewriter.setInsertionPointToStart(entry);
    func::ReturnOp::create(rewriter, loc, body(entry->getArguments()));
  }
  return func::CallOp::create(rewriter, loc, fn, args).getResults();
}

/// The outlined function's name: its kind, shape, heads and element type.
std::string outlinedName(StringRef kind, const AttentionShape &s) {
  std::string name;
  llvm::raw_string_ostream os(name);
  os << "piper_" << kind << "_" << s.batch << "x" << s.seq << "x"
     << s.heads * s.headDim << "_h" << s.heads;
  if (s.kvHeads != s.heads)
    os << "_kv" << s.kvHeads;
  os << "_" << s.elt;
  return name;
}

/// piper.attention -> the forward above.
struct AttentionForward : OpConversionPattern<AttentionOp> {
  AttentionForward(MLIRContext *context)
      : OpConversionPattern(context, /*benefit=*/2) {}

  LogicalResult
  matchAndRewrite(AttentionOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (failed(kernelFloatType(op, /*report=*/true)))
      return failure();
    FailureOr<AttentionShape> s =
        attentionShape(op, adaptor.getQ(), op.getNumHeads(),
                       op.getNumKvHeads().value_or(op.getNumHeads()));
    if (failed(s))
      return failure();
    Location loc = op.getLoc();
    auto body = [&](ValueRange args) -> SmallVector<Value> {
      Value qh = splitHeads(rewriter, loc, args[0], *s);
      Value kh =
          splitHeads(rewriter, loc, repeatKV(rewriter, loc, args[1], *s), *s);
      Value vh =
          splitHeads(rewriter, loc, repeatKV(rewriter, loc, args[2], *s), *s);
      Value probs = causalProbs(rewriter, loc, qh, kh, *s);
      Value out =
          buildBatchMatmul(rewriter, loc, probs, vh, false, false, s->acc);
      return {mergeHeads(rewriter, loc, out, *s, op.getType())};
    };
    rewriter.replaceOp(op,
                       callOutlined(rewriter, op, outlinedName("attention", *s),
                                    adaptor.getOperands(), op.getType(), body));
    return success();
  }
};

/// piper.vjp "piper.attention" -> dq, dk, dv as above, sharing P and dS
/// between the requested gradients.
struct AttentionVJP : OpConversionPattern<VJPOp> {
  AttentionVJP(MLIRContext *context)
      : OpConversionPattern(context, /*benefit=*/2) {}

  LogicalResult
  matchAndRewrite(VJPOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (op.getOp() != AttentionOp::getOperationName())
      return rewriter.notifyMatchFailure(op, "not an attention VJP");
    if (failed(kernelFloatType(op, /*report=*/true)))
      return failure();
    DictionaryAttr attrs = op.getForwardAttrs();
    auto heads = attrs ? attrs.getAs<IntegerAttr>("num_heads") : IntegerAttr();
    if (!heads)
      return op.emitError() << "forward_attrs lacks the integer 'num_heads'";
    ValueRange primals = adaptor.getPrimals();
    if (primals.size() != 3 || adaptor.getCotangents().size() != 1)
      return op.emitError()
             << "piper.vjp of piper.attention: expected 3 "
                "primals and 1 cotangent, got "
             << primals.size() << " and " << adaptor.getCotangents().size();
    Value dy = adaptor.getCotangents().front();
    auto kvHeads = attrs.getAs<IntegerAttr>("num_kv_heads");
    if (primals[0].getType() != dy.getType() ||
        primals[1].getType() != primals[2].getType() ||
        (!kvHeads && primals[1].getType() != dy.getType()))
      return op.emitError() << "piper.vjp of piper.attention: q, k, v and "
                               "the cotangent must have one type (k and v "
                               "their own with num_kv_heads)";
    FailureOr<AttentionShape> s =
        attentionShape(op, primals[0], heads.getInt(),
                       kvHeads ? kvHeads.getInt() : heads.getInt());
    if (failed(s))
      return failure();

    Location loc = op.getLoc();
    // Autodiff emits one piper.vjp per gradient. Those of one attention (same
    // primals, cotangent and heads, later in this block) share P and dS, so
    // the first one lowers them all, in one call.
    SmallVector<VJPOp> group = {op};
    for (Operation *next = op->getNextNode(); next; next = next->getNextNode())
      if (auto other = dyn_cast<VJPOp>(next))
        if (other.getOp() == op.getOp() &&
            llvm::equal(other.getPrimals(), op.getPrimals()) &&
            llvm::equal(other.getCotangents(), op.getCotangents()) &&
            other.getForwardAttrs() == op.getForwardAttrs())
          group.push_back(other);
    SmallVector<int64_t> wrts;
    for (VJPOp member : group)
      llvm::append_range(wrts, member.getWrt());
    llvm::sort(wrts);
    wrts.erase(llvm::unique(wrts), wrts.end());
    auto wants = [&](int64_t i) { return llvm::is_contained(wrts, i); };
    auto body = [&](ValueRange args) -> SmallVector<Value> {
      Value qh = splitHeads(rewriter, loc, args[0], *s);
      Value kh =
          splitHeads(rewriter, loc, repeatKV(rewriter, loc, args[1], *s), *s);
      Value dyh = splitHeads(rewriter, loc, args[3], *s);
      Value probs = causalProbs(rewriter, loc, qh, kh, *s);
      Value dq, dk, dv;
      if (wants(2))
        dv = buildBatchMatmul(rewriter, loc, probs, dyh, /*transA=*/true, false,
                              s->acc);
      if (wants(0) || wants(1)) {
        Value vh =
            splitHeads(rewriter, loc, repeatKV(rewriter, loc, args[2], *s), *s);
        Value dProbs = buildBatchMatmul(rewriter, loc, dyh, vh, false,
                                        /*transB=*/true, s->acc);
        Value dScores = scoreGradient(rewriter, loc, probs, dProbs, *s);
        if (wants(0))
          dq = buildBatchMatmul(rewriter, loc, dScores, kh, false, false,
                                s->acc);
        if (wants(1))
          dk = buildBatchMatmul(rewriter, loc, dScores, qh, /*transA=*/true,
                                false, s->acc);
      }
      SmallVector<Value> gradients;
      for (int64_t wrt : wrts)
        gradients.push_back(mergeHeads(
            rewriter, loc,
            wrt == 0   ? dq
            : wrt == 1 ? dk
                       : dv,
            *s, cast<RankedTensorType>(primals[wrt].getType()), wrt > 0));
      return gradients;
    };
    std::string kind = "attention_vjp";
    for (int64_t wrt : wrts)
      kind += std::to_string(wrt);
    SmallVector<Value> args(primals);
    args.push_back(dy);
    SmallVector<Type> types;
    for (int64_t wrt : wrts)
      types.push_back(primals[wrt].getType());
    ValueRange gradients =
        callOutlined(rewriter, op, outlinedName(kind, *s), args, types, body);
    for (VJPOp member : group) {
      SmallVector<Value> results;
      for (int64_t wrt : member.getWrt())
        results.push_back(gradients[llvm::find(wrts, wrt) - wrts.begin()]);
      rewriter.replaceOp(member, results);
    }
    return success();
  }
};

} // namespace

void mlir::piper::populateAttentionToLinalgPatterns(
    RewritePatternSet &patterns) {
  patterns.add<AttentionForward, AttentionVJP>(patterns.getContext());
}
