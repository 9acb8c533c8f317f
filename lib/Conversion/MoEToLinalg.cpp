//===- MoEToLinalg.cpp - MoE ops and their VJPs as linalg -----------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The mixture-of-experts ops (PiperNNOps.td) without kernel calls, as
// lib/Reference/MoE.cpp, ExpertFFN.cpp and Router.cpp (RouterToLinalg.cpp)
// define them:
//
//  - expert_ffn: three linalg.batch_matmul (gate, up, down; one batch per
//    expert) around the SwiGLU generic of SwigluOp's own scalar rule; its
//    VJP batch_matmuls with transposed operands materialised by
//    linalg.transpose, so every batched GEMM is the plain form a BLAS
//    pattern takes (until one exists, --piper-lower-to-llvm lowers
//    batch_matmul to loops: correct, slower);
//  - dispatch, combine and their VJPs: gathers. The slot rule (pair (t, j)
//    takes the next free slot of expert indices[t, j], pairs in order) is a
//    running count per expert, a sequential scan that no linalg.generic
//    expresses (a generic's outputs are indexed by its loops, not by data,
//    and a prefix count as a reduction would be O(pairs^2)), so it is one
//    tensor-level scf.for over the T k pairs with tensor.extract/insert:
//    O(T k) scalar work, still target-independent IR and no runtime call
//    (buildSlots, the only place the rule is written, as assignSlots is in
//    the reference). It yields each pair's slot and each slot's pair; every
//    data movement is then a parallel linalg.generic that reads through
//    those maps with tensor.extract (a gather), summing over a token's
//    choices j in ascending order from 0 as the reference does;
//  - router: RouterToLinalg.cpp.
//
// Indices outside [0, E) (the reference reports them as an error) cannot
// come from piper.router; should hand-written IR supply one, its pair is
// dropped like an overflowing one, so no access leaves a tensor.
//
//===----------------------------------------------------------------------===//

#include "KernelPatterns.h"
#include "MoELinalg.h"

#include "CommCalls.h"

#include "piper/Conversion/Passes.h"
#include "piper/Dialect/Piper/IR/PiperOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/DialectConversion.h"

using namespace mlir;
using namespace mlir::piper;
using namespace mlir::piper::moe;

//===----------------------------------------------------------------------===//
// Builders (MoELinalg.h)
//===----------------------------------------------------------------------===//

Value mlir::piper::moe::toIndex(OpBuilder &b, Location loc, Value v) {
  return arith::IndexCastOp::create(b, loc, b.getIndexType(), v);
}

Value mlir::piper::moe::filled(OpBuilder &b, Location loc,
                               ArrayRef<int64_t> shape, Type elt, Value value) {
  Value empty = tensor::EmptyOp::create(b, loc, shape, elt);
  return linalg::FillOp::create(b, loc, ValueRange{value}, ValueRange{empty})
      .getResult(0);
}

AffineMap mlir::piper::moe::loopMap(OpBuilder &b, unsigned numLoops,
                                    ArrayRef<unsigned> dims) {
  return AffineMap::getMultiDimMapWithTargets(numLoops, dims, b.getContext());
}

Value mlir::piper::moe::buildGeneric(
    OpBuilder &b, Location loc, ValueRange inputs, Value init,
    ArrayRef<AffineMap> maps, ArrayRef<utils::IteratorType> iterators,
    function_ref<Value(OpBuilder &, Location, ValueRange)> fn) {
  return linalg::GenericOp::create(
             b, loc, init.getType(), inputs, init, maps, iterators,
             [&](OpBuilder &nb, Location nl, ValueRange args) {
               linalg::YieldOp::create(nb, nl, fn(nb, nl, args));
             })
      .getResult(0);
}

namespace {

constexpr utils::IteratorType kPar = utils::IteratorType::parallel;
constexpr utils::IteratorType kRed = utils::IteratorType::reduction;

//===----------------------------------------------------------------------===//
// Slots, dispatch and combine
//===----------------------------------------------------------------------===//

/// Where the pairs go: `slot` [T, k] i64, the slot of pair (t, j) or -1 if
/// it is dropped; `pair` [E, C] i64, the pair t k + j in slot (e, s) or -1
/// if the slot is empty.
struct Slots {
  Value slot, pair;
};

/// The slot rule of PiperNNOps.td (ref assignSlots) for `indices` [T, k]
/// over `experts` experts of `capacity` slots.
Slots buildSlots(OpBuilder &b, Location loc, Value indices, int64_t experts,
                 int64_t capacity) {
  auto type = cast<RankedTensorType>(indices.getType());
  int64_t t = type.getDimSize(0), k = type.getDimSize(1);
  Type i64 = b.getI64Type();
  Value flat = tensor::CollapseShapeOp::create(
      b, loc, indices, ArrayRef<ReassociationIndices>{{0, 1}});
  Value counts = filled(b, loc, {experts}, i64, i64Constant(b, loc, 0));
  Value slots = tensor::EmptyOp::create(b, loc, ArrayRef<int64_t>{t * k}, i64);
  Value pairs =
      filled(b, loc, {experts, capacity}, i64, i64Constant(b, loc, -1));
  Value lb = arith::ConstantIndexOp::create(b, loc, 0);
  Value ub = arith::ConstantIndexOp::create(b, loc, t * k);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  // Pairs in order t ascending, then j ascending: earlier pairs win slots.
  auto loop = scf::ForOp::create(
      b, loc, lb, ub, one, ValueRange{counts, slots, pairs},
      [&](OpBuilder &nb, Location nl, Value p, ValueRange state) {
        using arith::CmpIPredicate;
        auto c = [&](int64_t v) { return i64Constant(nb, nl, v); };
        auto select = [&](Value cond, Value x, Value y) -> Value {
          return arith::SelectOp::create(nb, nl, cond, x, y);
        };
        Value e = tensor::ExtractOp::create(nb, nl, flat, p);
        Value valid = arith::AndIOp::create(
            nb, nl, arith::CmpIOp::create(nb, nl, CmpIPredicate::sge, e, c(0)),
            arith::CmpIOp::create(nb, nl, CmpIPredicate::slt, e, c(experts)));
        Value ei = toIndex(nb, nl, select(valid, e, c(0)));
        Value n = tensor::ExtractOp::create(nb, nl, state[0], ei);
        Value next = select(valid, arith::AddIOp::create(nb, nl, n, c(1)), n);
        Value newCounts = tensor::InsertOp::create(nb, nl, next, state[0], ei);
        Value kept = arith::AndIOp::create(
            nb, nl, valid,
            arith::CmpIOp::create(nb, nl, CmpIPredicate::slt, n, c(capacity)));
        Value newSlots = tensor::InsertOp::create(
            nb, nl, select(kept, n, c(-1)), state[1], p);
        // Slot (e, n) learns its pair; a dropped pair rewrites slot (e, 0)
        // with what it holds (no branch, no out-of-range index).
        Value si = toIndex(nb, nl, select(kept, n, c(0)));
        Value held =
            tensor::ExtractOp::create(nb, nl, state[2], ValueRange{ei, si});
        Value pair = arith::IndexCastOp::create(nb, nl, nb.getI64Type(), p);
        Value newPairs = tensor::InsertOp::create(
            nb, nl, select(kept, pair, held), state[2], ValueRange{ei, si});
        scf::YieldOp::create(nb, nl, ValueRange{newCounts, newSlots, newPairs});
      });
  Slots s;
  s.slot = tensor::ExpandShapeOp::create(
      b, loc, RankedTensorType::get({t, k}, i64), loop.getResult(1),
      ArrayRef<ReassociationIndices>{{0, 1}});
  s.pair = loop.getResult(2);
  return s;
}

/// In a body over the pairs: whether `slot` keeps its pair, and the
/// (expert, slot) indices to read, clamped to (0, 0) for a dropped pair.
struct SlotRef {
  Value kept, expert, slot;
};
SlotRef slotRef(OpBuilder &b, Location loc, Value slot, Value expert) {
  Value zero = i64Constant(b, loc, 0);
  Value kept =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, slot, zero);
  return {kept,
          toIndex(b, loc, arith::SelectOp::create(b, loc, kept, expert, zero)),
          toIndex(b, loc, arith::SelectOp::create(b, loc, kept, slot, zero))};
}

/// In a body over the slots: whether `pair` is a pair, and its token and
/// choice (t, j) as indices, clamped to (0, 0) for an empty slot.
struct PairRef {
  Value valid, token, choice;
};
PairRef pairRef(OpBuilder &b, Location loc, Value pair, int64_t k) {
  Value zero = i64Constant(b, loc, 0), kv = i64Constant(b, loc, k);
  Value valid =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, pair, zero);
  Value p = arith::SelectOp::create(b, loc, valid, pair, zero);
  return {valid, toIndex(b, loc, arith::DivSIOp::create(b, loc, p, kv)),
          toIndex(b, loc, arith::RemSIOp::create(b, loc, p, kv))};
}

/// dispatch: buffer[e, s, :] = x[t, :] for the pair (t, j) in slot (e, s).
Value buildDispatch(OpBuilder &b, Location loc, Value x, const Slots &slots,
                    int64_t k, RankedTensorType resultType) {
  Type elt = resultType.getElementType();
  Value init = tensor::EmptyOp::create(b, loc, resultType.getShape(), elt);
  return buildGeneric(
      b, loc, slots.pair, init,
      {loopMap(b, 3, {0, 1}), loopMap(b, 3, {0, 1, 2})}, {kPar, kPar, kPar},
      [&](OpBuilder &nb, Location nl, ValueRange a) {
        PairRef p = pairRef(nb, nl, a[0], k);
        Value h = linalg::IndexOp::create(nb, nl, 2);
        Value v = tensor::ExtractOp::create(nb, nl, x, ValueRange{p.token, h});
        return arith::SelectOp::create(nb, nl, p.valid, v,
                                       floatConstant(nb, nl, elt, 0.0));
      });
}

/// A [T, H] sum over each token's kept choices j (ascending, from 0) of
/// `term(kept slot)`, over loops (t, h, j); `inputs` are read at (t, j).
Value sumOverChoices(
    OpBuilder &b, Location loc, ValueRange inputs, int64_t tokens,
    int64_t hidden, FloatType ct, Type elt,
    function_ref<Value(OpBuilder &, Location, ValueRange, Value h)> term) {
  SmallVector<AffineMap> maps(inputs.size(), loopMap(b, 3, {0, 2}));
  maps.push_back(loopMap(b, 3, {0, 1}));
  Value sum = buildGeneric(
      b, loc, inputs,
      filled(b, loc, {tokens, hidden}, ct, floatConstant(b, loc, ct, 0.0)),
      maps, {kPar, kPar, kRed}, [&](OpBuilder &nb, Location nl, ValueRange a) {
        Value h = linalg::IndexOp::create(nb, nl, 1);
        return arith::AddFOp::create(nb, nl, a.back(),
                                     term(nb, nl, a.drop_back(), h));
      });
  return castTensor(b, loc, sum, elt);
}

/// The dispatch VJP: dx[t, :] = sum over kept choices of dOut[e, s, :].
Value buildDispatchVJP(OpBuilder &b, Location loc, Value indices, Value dOut,
                       const Slots &slots, RankedTensorType dxType) {
  auto elt = cast<FloatType>(dxType.getElementType());
  FloatType ct = accumulatorType(elt);
  return sumOverChoices(
      b, loc, {slots.slot, indices}, dxType.getDimSize(0), dxType.getDimSize(1),
      ct, elt, [&](OpBuilder &nb, Location nl, ValueRange a, Value h) -> Value {
        SlotRef s = slotRef(nb, nl, a[0], a[1]);
        Value v = tensor::ExtractOp::create(nb, nl, dOut,
                                            ValueRange{s.expert, s.slot, h});
        return arith::SelectOp::create(nb, nl, s.kept,
                                       castScalar(nb, nl, v, ct),
                                       floatConstant(nb, nl, ct, 0.0));
      });
}

/// combine: result[t, :] = sum over kept choices of weights[t, j] y[e, s, :].
Value buildCombine(OpBuilder &b, Location loc, Value y, Value weights,
                   Value indices, const Slots &slots,
                   RankedTensorType resultType) {
  auto elt = cast<FloatType>(resultType.getElementType());
  FloatType ct = accumulatorType(elt);
  return sumOverChoices(
      b, loc, {slots.slot, indices, weights}, resultType.getDimSize(0),
      resultType.getDimSize(1), ct, elt,
      [&](OpBuilder &nb, Location nl, ValueRange a, Value h) -> Value {
        SlotRef s = slotRef(nb, nl, a[0], a[1]);
        Value v = tensor::ExtractOp::create(nb, nl, y,
                                            ValueRange{s.expert, s.slot, h});
        Value term = arith::MulFOp::create(nb, nl, castScalar(nb, nl, a[2], ct),
                                           castScalar(nb, nl, v, ct));
        return arith::SelectOp::create(nb, nl, s.kept, term,
                                       floatConstant(nb, nl, ct, 0.0));
      });
}

/// combine's VJP w.r.t. y: dY[e, s, :] = weights[t, j] dOut[t, :] for the
/// pair (t, j) in slot (e, s), 0 for an empty slot.
Value buildCombineVJPY(OpBuilder &b, Location loc, Value weights, Value dOut,
                       const Slots &slots, int64_t k, RankedTensorType dyType) {
  auto elt = cast<FloatType>(dyType.getElementType());
  FloatType ct = accumulatorType(elt);
  Value init = tensor::EmptyOp::create(b, loc, dyType.getShape(), elt);
  return buildGeneric(
      b, loc, slots.pair, init,
      {loopMap(b, 3, {0, 1}), loopMap(b, 3, {0, 1, 2})}, {kPar, kPar, kPar},
      [&](OpBuilder &nb, Location nl, ValueRange a) {
        PairRef p = pairRef(nb, nl, a[0], k);
        Value h = linalg::IndexOp::create(nb, nl, 2);
        Value w = tensor::ExtractOp::create(nb, nl, weights,
                                            ValueRange{p.token, p.choice});
        Value d =
            tensor::ExtractOp::create(nb, nl, dOut, ValueRange{p.token, h});
        Value v = arith::MulFOp::create(nb, nl, castScalar(nb, nl, w, ct),
                                        castScalar(nb, nl, d, ct));
        return arith::SelectOp::create(nb, nl, p.valid,
                                       castScalar(nb, nl, v, elt),
                                       floatConstant(nb, nl, elt, 0.0));
      });
}

/// combine's VJP w.r.t. weights: dW[t, j] = y[e, s, :] . dOut[t, :] for a
/// kept pair, else 0; loops (t, j, h).
Value buildCombineVJPWeights(OpBuilder &b, Location loc, Value y, Value indices,
                             Value dOut, const Slots &slots,
                             RankedTensorType dwType) {
  auto elt = cast<FloatType>(dwType.getElementType());
  FloatType ct = accumulatorType(elt);
  Value zero = floatConstant(b, loc, ct, 0.0);
  AffineMap tj = loopMap(b, 3, {0, 1});
  Value dot = buildGeneric(
      b, loc, {slots.slot, indices, dOut},
      filled(b, loc, dwType.getShape(), ct, zero),
      {tj, tj, loopMap(b, 3, {0, 2}), tj}, {kPar, kPar, kRed},
      [&](OpBuilder &nb, Location nl, ValueRange a) -> Value {
        SlotRef s = slotRef(nb, nl, a[0], a[1]);
        Value h = linalg::IndexOp::create(nb, nl, 2);
        Value v = tensor::ExtractOp::create(nb, nl, y,
                                            ValueRange{s.expert, s.slot, h});
        Value term = arith::MulFOp::create(nb, nl, castScalar(nb, nl, v, ct),
                                           castScalar(nb, nl, a[2], ct));
        return arith::AddFOp::create(
            nb, nl, a[3],
            arith::SelectOp::create(nb, nl, s.kept, term,
                                    floatConstant(nb, nl, ct, 0.0)));
      });
  return castTensor(b, loc, dot, elt);
}

//===----------------------------------------------------------------------===//
// Expert FFN
//===----------------------------------------------------------------------===//

/// acc + lhs rhs per batch ([B, M, K] x [B, K, N]); acc defaults to zeros.
Value batchMatmul(OpBuilder &b, Location loc, Value lhs, Value rhs,
                  Value acc = Value()) {
  if (!acc) {
    auto l = cast<RankedTensorType>(lhs.getType());
    auto r = cast<RankedTensorType>(rhs.getType());
    Type elt = l.getElementType();
    acc = filled(b, loc, {l.getDimSize(0), l.getDimSize(1), r.getDimSize(2)},
                 elt, floatConstant(b, loc, elt, 0.0));
  }
  return linalg::BatchMatmulOp::create(b, loc, TypeRange{acc.getType()},
                                       ValueRange{lhs, rhs}, ValueRange{acc})
      .getResult(0);
}

/// The last two dims of a batch of matrices swapped.
Value transposed(OpBuilder &b, Location loc, Value batch) {
  return buildTranspose(b, loc, batch, {0, 2, 1});
}

/// The expert FFN's VJP for the gradients `wrt` (ref expertFfnBackward*):
/// gate = buf wg, up = buf wu, dAct = dOut wd^T, dGate and dUp the SwiGLU
/// partials times dAct; dBuf = dGate wg^T + dUp wu^T, dWg = buf^T dGate,
/// dWu = buf^T dUp, dWd = act^T dOut.
SmallVector<Value> buildExpertFfnVJP(OpBuilder &b, Location loc,
                                     ValueRange primals, Value dOut,
                                     ArrayRef<int64_t> wrt) {
  Value buf = primals[0], wg = primals[1], wu = primals[2], wd = primals[3];
  Value gate = batchMatmul(b, loc, buf, wg), up = batchMatmul(b, loc, buf, wu);
  Value dAct = batchMatmul(b, loc, dOut, transposed(b, loc, wd));
  auto partial = [&](unsigned operand) {
    return buildElementwise(
        b, loc, {gate, up, dAct}, gate.getType(),
        [&](OpBuilder &nb, Location nl, ValueRange a) -> Value {
          Value d = SwigluOp::buildPartial(nb, nl, a.take_front(2), operand);
          return arith::MulFOp::create(nb, nl, a[2], d);
        });
  };
  Value dGate, dUp, bufT;
  auto need = [&](Value &v, auto make) -> Value {
    if (!v)
      v = make();
    return v;
  };
  SmallVector<Value> grads;
  for (int64_t w : wrt) {
    auto mkGate = [&] { return partial(0); };
    auto mkUp = [&] { return partial(1); };
    auto mkBufT = [&] { return transposed(b, loc, buf); };
    if (w == 0) {
      Value first =
          batchMatmul(b, loc, need(dGate, mkGate), transposed(b, loc, wg));
      grads.push_back(
          batchMatmul(b, loc, need(dUp, mkUp), transposed(b, loc, wu), first));
    } else if (w == 1) {
      grads.push_back(
          batchMatmul(b, loc, need(bufT, mkBufT), need(dGate, mkGate)));
    } else if (w == 2) {
      grads.push_back(batchMatmul(b, loc, need(bufT, mkBufT), need(dUp, mkUp)));
    } else {
      Value act =
          buildElementwise(b, loc, {gate, up}, gate.getType(),
                           [](OpBuilder &nb, Location nl, ValueRange a) {
                             return SwigluOp::buildScalar(nb, nl, a);
                           });
      grads.push_back(batchMatmul(b, loc, transposed(b, loc, act), dOut));
    }
  }
  return grads;
}

//===----------------------------------------------------------------------===//
// Patterns
//===----------------------------------------------------------------------===//

/// The checks every MoE pattern makes: a supported float type and static
/// shapes.
LogicalResult checkMoE(Operation *op) {
  if (failed(kernelFloatType(op, /*report=*/true)))
    return failure();
  auto isStatic = [](Type t) {
    return cast<RankedTensorType>(t).hasStaticShape();
  };
  if (!llvm::all_of(op->getOperandTypes(), isStatic) ||
      !llvm::all_of(op->getResultTypes(), isStatic))
    return op->emitError() << "the native lowering needs static shapes";
  return success();
}

/// `k` must be in [1, E] for the top-k reductions to find k experts.
LogicalResult checkTopK(Operation *op, int64_t k, Value w) {
  int64_t e = cast<RankedTensorType>(w.getType()).getDimSize(1);
  if (k < 1 || k > e)
    return op->emitError() << "top_k = " << k << " must be in [1, " << e
                           << "] (the number of experts)";
  return success();
}

struct RouterToLinalg : OpConversionPattern<RouterOp> {
  RouterToLinalg(MLIRContext *context)
      : OpConversionPattern(context, /*benefit=*/2) {}

  LogicalResult
  matchAndRewrite(RouterOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    int64_t k = op.getTopK();
    if (failed(checkMoE(op)) || failed(checkTopK(op, k, op.getW())))
      return failure();
    Routing r =
        buildRouting(rewriter, op.getLoc(), adaptor.getX(), adaptor.getW(), k);
    Value weights = buildRouterWeights(
        rewriter, op.getLoc(), r, op.getWeights().getType().getElementType());
    rewriter.replaceOp(op, {weights, r.indices});
    return success();
  }
};

struct DispatchToLinalg : OpConversionPattern<DispatchOp> {
  DispatchToLinalg(MLIRContext *context)
      : OpConversionPattern(context, /*benefit=*/2) {}

  LogicalResult
  matchAndRewrite(DispatchOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (failed(checkMoE(op)))
      return failure();
    auto type = cast<RankedTensorType>(op.getType());
    Value indices = adaptor.getIndices();
    Slots slots = buildSlots(rewriter, op.getLoc(), indices, type.getDimSize(0),
                             type.getDimSize(1));
    int64_t k = cast<RankedTensorType>(indices.getType()).getDimSize(1);
    rewriter.replaceOp(op, buildDispatch(rewriter, op.getLoc(), adaptor.getX(),
                                         slots, k, type));
    return success();
  }
};

struct ExpertFfnToLinalg : OpConversionPattern<ExpertFfnOp> {
  ExpertFfnToLinalg(MLIRContext *context)
      : OpConversionPattern(context, /*benefit=*/2) {}

  LogicalResult
  matchAndRewrite(ExpertFfnOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (failed(checkMoE(op)))
      return failure();
    Location loc = op.getLoc();
    Value buf = adaptor.getBuf();
    Value gate = batchMatmul(rewriter, loc, buf, adaptor.getWGate());
    Value up = batchMatmul(rewriter, loc, buf, adaptor.getWUp());
    Value act = buildElementwise(rewriter, loc, {gate, up}, gate.getType(),
                                 [](OpBuilder &nb, Location nl, ValueRange a) {
                                   return SwigluOp::buildScalar(nb, nl, a);
                                 });
    rewriter.replaceOp(op, batchMatmul(rewriter, loc, act, adaptor.getWDown()));
    return success();
  }
};

struct CombineToLinalg : OpConversionPattern<CombineOp> {
  CombineToLinalg(MLIRContext *context)
      : OpConversionPattern(context, /*benefit=*/2) {}

  LogicalResult
  matchAndRewrite(CombineOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (failed(checkMoE(op)))
      return failure();
    auto yType = cast<RankedTensorType>(op.getY().getType());
    Slots slots = buildSlots(rewriter, op.getLoc(), adaptor.getIndices(),
                             yType.getDimSize(0), yType.getDimSize(1));
    rewriter.replaceOp(op, buildCombine(rewriter, op.getLoc(), adaptor.getY(),
                                        adaptor.getWeights(),
                                        adaptor.getIndices(), slots,
                                        cast<RankedTensorType>(op.getType())));
    return success();
  }
};

/// piper.vjp of router, dispatch, expert_ffn and combine.
struct MoEVJPToLinalg : OpConversionPattern<VJPOp> {
  MoEVJPToLinalg(MLIRContext *context)
      : OpConversionPattern(context, /*benefit=*/2) {}

  LogicalResult
  matchAndRewrite(VJPOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    StringRef name = op.getOp();
    // Primal count and the wrt indices with a float gradient.
    unsigned numPrimals;
    int64_t maxWrt;
    if (name == RouterOp::getOperationName())
      std::tie(numPrimals, maxWrt) = std::make_pair(2u, int64_t(1));
    else if (name == DispatchOp::getOperationName())
      std::tie(numPrimals, maxWrt) = std::make_pair(2u, int64_t(0));
    else if (name == ExpertFfnOp::getOperationName())
      std::tie(numPrimals, maxWrt) = std::make_pair(4u, int64_t(3));
    else if (name == CombineOp::getOperationName())
      std::tie(numPrimals, maxWrt) = std::make_pair(3u, int64_t(1));
    else
      return rewriter.notifyMatchFailure(op, "not an MoE op");
    if (failed(checkMoE(op)))
      return failure();
    ValueRange primals = adaptor.getPrimals();
    if (primals.size() != numPrimals || adaptor.getCotangents().size() != 1)
      return op.emitError() << "piper.vjp of " << name << " takes "
                            << numPrimals << " primals and one cotangent";
    for (int64_t w : op.getWrt())
      if (w > maxWrt)
        return op.emitError() << "piper.vjp of " << name
                              << " has no gradient for operand " << w;
    Value dy = adaptor.getCotangents().front();
    Location loc = op.getLoc();
    SmallVector<Value> grads;
    if (name == ExpertFfnOp::getOperationName()) {
      grads = buildExpertFfnVJP(rewriter, loc, primals, dy, op.getWrt());
    } else if (name == RouterOp::getOperationName()) {
      DictionaryAttr attrs = op.getForwardAttrs();
      auto topK = attrs ? attrs.getAs<IntegerAttr>("top_k") : IntegerAttr();
      if (!topK)
        return op.emitError() << "forward_attrs lacks the integer 'top_k'";
      if (failed(checkTopK(op, topK.getInt(), primals[1])))
        return failure();
      Routing r =
          buildRouting(rewriter, loc, primals[0], primals[1], topK.getInt());
      Type elt = cast<RankedTensorType>(dy.getType()).getElementType();
      Value dz = buildRouterLogitsCotangent(rewriter, loc, r, dy, elt);
      auto xType = cast<RankedTensorType>(primals[0].getType());
      auto wType = cast<RankedTensorType>(primals[1].getType());
      for (int64_t w : op.getWrt())
        // dx = dz w^T, dw = x^T dz.
        grads.push_back(
            w == 0
                ? buildMatmul(rewriter, loc, dz,
                              buildTranspose(rewriter, loc, primals[1], {1, 0}),
                              Value(), xType)
                : buildMatmul(rewriter, loc,
                              buildTranspose(rewriter, loc, primals[0], {1, 0}),
                              dz, Value(), wType));
    } else if (name == DispatchOp::getOperationName()) {
      auto dyType = cast<RankedTensorType>(dy.getType());
      Slots slots = buildSlots(rewriter, loc, primals[1], dyType.getDimSize(0),
                               dyType.getDimSize(1));
      grads.push_back(
          buildDispatchVJP(rewriter, loc, primals[1], dy, slots,
                           cast<RankedTensorType>(primals[0].getType())));
    } else {
      auto yType = cast<RankedTensorType>(primals[0].getType());
      int64_t k = cast<RankedTensorType>(primals[2].getType()).getDimSize(1);
      Slots slots = buildSlots(rewriter, loc, primals[2], yType.getDimSize(0),
                               yType.getDimSize(1));
      for (int64_t w : op.getWrt())
        grads.push_back(
            w == 0 ? buildCombineVJPY(rewriter, loc, primals[1], dy, slots, k,
                                      yType)
                   : buildCombineVJPWeights(
                         rewriter, loc, primals[0], primals[2], dy, slots,
                         cast<RankedTensorType>(primals[1].getType())));
    }
    rewriter.replaceOp(op, grads);
    return success();
  }
};

} // namespace

void mlir::piper::populateMoEToLinalgPatterns(RewritePatternSet &patterns) {
  patterns.add<RouterToLinalg, DispatchToLinalg, ExpertFfnToLinalg,
               CombineToLinalg, MoEVJPToLinalg>(patterns.getContext());
}
