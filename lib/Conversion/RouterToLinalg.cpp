//===- RouterToLinalg.cpp - The MoE top-k router as linalg ----------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// ref::router (lib/Reference/Router.cpp) in linalg: the logits x w are a
// linalg.matmul (one BLAS call), the softmax over experts four row
// generics (max, exp, sum, divide), and the top-k selection k reductions
// over the experts.
//
// Top-k. The reference sorts the experts of a token by the strict total
// order "probability descending, then expert index ascending" and keeps
// the first k. Choice j is therefore the largest expert in that order
// among those strictly after choice j-1, which a reduction over the experts
// finds from choice j-1's (probability, index) alone: k reductions, each a
// linalg.generic with no state but the previous choice. Because the order
// is total, the reduction is associative and commutative (the body breaks
// ties by index itself rather than by visiting order), so tiling or
// splitting it (a GPU mapping) gives the same experts; equal probabilities
// (e.g. a zero router weight) pick the lower expert first, exactly as the
// interpreter does.
//
// Everything runs in the compute type (the element type, f32 for bf16):
// the chosen set is the one the interpreter picks unless two probabilities
// differ by less than that type's rounding.
//
//===----------------------------------------------------------------------===//

#include "CommCalls.h"
#include "KernelPatterns.h"
#include "MoELinalg.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::piper;
using namespace mlir::piper::moe;

namespace {

constexpr utils::IteratorType kPar = utils::IteratorType::parallel;
constexpr utils::IteratorType kRed = utils::IteratorType::reduction;

/// The softmax of each row of `logits` [T, E], in `ct` (ref softmaxRow:
/// exp(x - max) / sum).
Value softmaxRows(OpBuilder &b, Location loc, Value logits, FloatType ct) {
  auto type = cast<RankedTensorType>(logits.getType());
  int64_t t = type.getDimSize(0), e = type.getDimSize(1);
  AffineMap id = loopMap(b, 2, {0, 1}), row = loopMap(b, 2, {0});
  Value lowest = arith::ConstantOp::create(
      b, loc,
      b.getFloatAttr(ct, APFloat::getInf(ct.getFloatSemantics(), true)));
  Value max = buildGeneric(
      b, loc, logits, filled(b, loc, {t}, ct, lowest), {id, row}, {kPar, kRed},
      [&](OpBuilder &nb, Location nl, ValueRange a) -> Value {
        return arith::MaximumFOp::create(nb, nl, castScalar(nb, nl, a[0], ct),
                                         a[1]);
      });
  Value empty = tensor::EmptyOp::create(b, loc, ArrayRef<int64_t>{t, e}, ct);
  Value exps =
      buildGeneric(b, loc, {logits, max}, empty, {id, row, id}, {kPar, kPar},
                   [&](OpBuilder &nb, Location nl, ValueRange a) -> Value {
                     Value x = castScalar(nb, nl, a[0], ct);
                     return math::ExpOp::create(
                         nb, nl, arith::SubFOp::create(nb, nl, x, a[1]));
                   });
  Value sum = buildGeneric(
      b, loc, exps, filled(b, loc, {t}, ct, floatConstant(b, loc, ct, 0.0)),
      {id, row}, {kPar, kRed},
      [](OpBuilder &nb, Location nl, ValueRange a) -> Value {
        return arith::AddFOp::create(nb, nl, a[1], a[0]);
      });
  return buildGeneric(b, loc, {exps, sum}, empty, {id, row, id}, {kPar, kPar},
                      [](OpBuilder &nb, Location nl, ValueRange a) -> Value {
                        return arith::DivFOp::create(nb, nl, a[0], a[1]);
                      });
}

/// Choice j of every token, as (probability [T], expert [T] i64): the
/// first expert in the order (probability descending, index ascending)
/// that comes strictly after choice j-1 (`prevProb`, `prevIndex`; null for
/// choice 0).
std::pair<Value, Value> nextChoice(OpBuilder &b, Location loc, Value probs,
                                   Value prevProb, Value prevIndex) {
  auto type = cast<RankedTensorType>(probs.getType());
  int64_t t = type.getDimSize(0);
  Type ct = type.getElementType();
  AffineMap id = loopMap(b, 2, {0, 1}), row = loopMap(b, 2, {0});
  SmallVector<Value> inputs = {probs};
  SmallVector<AffineMap> maps = {id};
  if (prevProb) {
    inputs.append({prevProb, prevIndex});
    maps.append({row, row});
  }
  maps.append({row, row});
  // Index -1 marks "nothing taken yet", so the initial probability is moot.
  Value bestProb = filled(b, loc, {t}, ct, floatConstant(b, loc, ct, 0.0));
  Value bestIndex =
      filled(b, loc, {t}, b.getI64Type(), i64Constant(b, loc, -1));
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{bestProb.getType(), bestIndex.getType()}, inputs,
      ValueRange{bestProb, bestIndex}, maps, {kPar, kRed},
      [&](OpBuilder &nb, Location nl, ValueRange a) {
        using arith::CmpFPredicate;
        using arith::CmpIPredicate;
        Value p = a[0], best = a[a.size() - 2], bestAt = a.back();
        Value i = arith::IndexCastOp::create(
            nb, nl, nb.getI64Type(), linalg::IndexOp::create(nb, nl, 1));
        auto cmpf = [&](CmpFPredicate pred, Value x, Value y) -> Value {
          return arith::CmpFOp::create(nb, nl, pred, x, y);
        };
        auto cmpi = [&](CmpIPredicate pred, Value x, Value y) -> Value {
          return arith::CmpIOp::create(nb, nl, pred, x, y);
        };
        auto orOf = [&](Value x, Value y) -> Value {
          return arith::OrIOp::create(nb, nl, x, y);
        };
        auto andOf = [&](Value x, Value y) -> Value {
          return arith::AndIOp::create(nb, nl, x, y);
        };
        // (p, i) precedes (q, j) in the order: p > q, or p == q and i < j.
        auto precedes = [&](Value p1, Value i1, Value p2, Value i2) {
          return orOf(cmpf(CmpFPredicate::OGT, p1, p2),
                      andOf(cmpf(CmpFPredicate::OEQ, p1, p2),
                            cmpi(CmpIPredicate::slt, i1, i2)));
        };
        Value take =
            orOf(cmpi(CmpIPredicate::slt, bestAt, i64Constant(nb, nl, 0)),
                 precedes(p, i, best, bestAt));
        if (prevProb)
          take = andOf(take, precedes(a[1], a[2], p, i));
        Value newBest = arith::SelectOp::create(nb, nl, take, p, best);
        Value newAt = arith::SelectOp::create(nb, nl, take, i, bestAt);
        linalg::YieldOp::create(nb, nl, ValueRange{newBest, newAt});
      });
  return {generic.getResult(0), generic.getResult(1)};
}

/// The [T, k] tensor whose column j is `columns[j]` [T]: one generic
/// selecting by the column index (an insert_slice per column would
/// bufferize to strided copies).
Value stackColumns(OpBuilder &b, Location loc, ArrayRef<Value> columns) {
  auto type = cast<RankedTensorType>(columns.front().getType());
  int64_t t = type.getDimSize(0), k = columns.size();
  Value init = tensor::EmptyOp::create(b, loc, ArrayRef<int64_t>{t, k},
                                       type.getElementType());
  SmallVector<AffineMap> maps(columns.size(), loopMap(b, 2, {0}));
  maps.push_back(loopMap(b, 2, {0, 1}));
  return buildGeneric(b, loc, columns, init, maps, {kPar, kPar},
                      [&](OpBuilder &nb, Location nl, ValueRange a) {
                        Value j = linalg::IndexOp::create(nb, nl, 1);
                        Value v = a[0];
                        for (int64_t c = 1; c < k; ++c) {
                          Value isC = arith::CmpIOp::create(
                              nb, nl, arith::CmpIPredicate::eq, j,
                              arith::ConstantIndexOp::create(nb, nl, c));
                          v = arith::SelectOp::create(nb, nl, isC, a[c], v);
                        }
                        return v;
                      });
}

} // namespace

Routing mlir::piper::moe::buildRouting(OpBuilder &b, Location loc, Value x,
                                       Value w, int64_t k) {
  auto xType = cast<RankedTensorType>(x.getType());
  auto wType = cast<RankedTensorType>(w.getType());
  auto elt = cast<FloatType>(xType.getElementType());
  FloatType ct = accumulatorType(elt);
  int64_t t = xType.getDimSize(0), e = wType.getDimSize(1);
  Value logits =
      buildMatmul(b, loc, x, w, Value(), RankedTensorType::get({t, e}, elt));
  Routing r;
  r.probs = softmaxRows(b, loc, logits, ct);
  SmallVector<Value> probs, indices;
  Value prob, index;
  for (int64_t j = 0; j < k; ++j) {
    std::tie(prob, index) = nextChoice(b, loc, r.probs, prob, index);
    probs.push_back(prob);
    indices.push_back(index);
  }
  r.chosen = stackColumns(b, loc, probs);
  r.indices = stackColumns(b, loc, indices);
  // The sum of the chosen probabilities, in choice order from 0.
  r.chosenSum = buildGeneric(
      b, loc, r.chosen, filled(b, loc, {t}, ct, floatConstant(b, loc, ct, 0)),
      {loopMap(b, 2, {0, 1}), loopMap(b, 2, {0})}, {kPar, kRed},
      [](OpBuilder &nb, Location nl, ValueRange a) -> Value {
        return arith::AddFOp::create(nb, nl, a[1], a[0]);
      });
  return r;
}

Value mlir::piper::moe::buildRouterWeights(OpBuilder &b, Location loc,
                                           const Routing &r, Type elt) {
  auto type = cast<RankedTensorType>(r.chosen.getType());
  Value init = tensor::EmptyOp::create(b, loc, type.getShape(), elt);
  return buildGeneric(
      b, loc, {r.chosen, r.chosenSum}, init,
      {loopMap(b, 2, {0, 1}), loopMap(b, 2, {0}), loopMap(b, 2, {0, 1})},
      {kPar, kPar}, [&](OpBuilder &nb, Location nl, ValueRange a) -> Value {
        return castScalar(nb, nl, arith::DivFOp::create(nb, nl, a[0], a[1]),
                          elt);
      });
}

Value mlir::piper::moe::buildRouterLogitsCotangent(OpBuilder &b, Location loc,
                                                   const Routing &r,
                                                   Value dWeights, Type elt) {
  // ref logitsCotangent, with S the chosen sum and c_j the choices:
  //   dot = sum_j dWeights_j p_{c_j} / S,
  //   dp_i = (dWeights_j - dot) / S where i = c_j, else 0,
  //   dz_i = p_i (dp_i - sum_l p_l dp_l).
  auto probsType = cast<RankedTensorType>(r.probs.getType());
  auto ct = cast<FloatType>(probsType.getElementType());
  int64_t t = probsType.getDimSize(0);
  Value zero = floatConstant(b, loc, ct, 0.0);
  AffineMap tj = loopMap(b, 2, {0, 1}), row = loopMap(b, 2, {0});
  Value dot = buildGeneric(
      b, loc, {dWeights, r.chosen, r.chosenSum}, filled(b, loc, {t}, ct, zero),
      {tj, tj, row, row}, {kPar, kRed},
      [&](OpBuilder &nb, Location nl, ValueRange a) -> Value {
        Value dw = castScalar(nb, nl, a[0], ct);
        Value term = arith::DivFOp::create(
            nb, nl, arith::MulFOp::create(nb, nl, dw, a[1]), a[2]);
        return arith::AddFOp::create(nb, nl, a[3], term);
      });
  // dp over (t, i, j): the one j with c_j == i contributes, others add 0.
  AffineMap tij = loopMap(b, 3, {0, 2}), ti = loopMap(b, 3, {0, 1}),
            t3 = loopMap(b, 3, {0});
  Value dp = buildGeneric(
      b, loc, {r.indices, dWeights, dot, r.chosenSum},
      filled(b, loc, probsType.getShape(), ct, zero), {tij, tij, t3, t3, ti},
      {kPar, kPar, kRed}, [&](OpBuilder &nb, Location nl, ValueRange a) {
        Value i = arith::IndexCastOp::create(
            nb, nl, nb.getI64Type(), linalg::IndexOp::create(nb, nl, 1));
        Value hit =
            arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::eq, a[0], i);
        Value dw = castScalar(nb, nl, a[1], ct);
        Value v = arith::DivFOp::create(
            nb, nl, arith::SubFOp::create(nb, nl, dw, a[2]), a[3]);
        return arith::AddFOp::create(
            nb, nl, a[4],
            arith::SelectOp::create(nb, nl, hit, v,
                                    floatConstant(nb, nl, ct, 0.0)));
      });
  Value pdp = buildGeneric(
      b, loc, {r.probs, dp}, filled(b, loc, {t}, ct, zero), {tj, tj, row},
      {kPar, kRed}, [](OpBuilder &nb, Location nl, ValueRange a) -> Value {
        return arith::AddFOp::create(nb, nl, a[2],
                                     arith::MulFOp::create(nb, nl, a[0], a[1]));
      });
  Value init = tensor::EmptyOp::create(b, loc, probsType.getShape(), elt);
  return buildGeneric(
      b, loc, {r.probs, dp, pdp}, init, {tj, tj, row, tj}, {kPar, kPar},
      [&](OpBuilder &nb, Location nl, ValueRange a) -> Value {
        Value diff = arith::SubFOp::create(nb, nl, a[1], a[2]);
        return castScalar(nb, nl, arith::MulFOp::create(nb, nl, a[0], diff),
                          elt);
      });
}
