//===- LossToLinalg.cpp - Cross-entropy, embedding and VJPs in linalg -----===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The two ops that index by token: the loss reads each row's label logit,
// the embedding gathers table rows and its VJP scatters gradients back.
//
// cross_entropy(logits [N, V], labels [N]) = (1/N) sum_n (lse_n - l[n,
// labels_n]) with lse_n = m_n + log sum_v exp(l[n, v] - m_n), m_n the row
// max. The label's logit is picked in the same pass as the exp sum, by
// comparing the column index with the label (a select-add, so no index
// reads out of bounds and the pass stays one vectorisable reduction). Its
// VJP is dLoss / N (softmax(l) - onehot(labels)), from the row softmax of
// SoftmaxToLinalg.cpp.
//
// Ids and labels lie in [0, V) by the ops' contract, which is not verified.
// The reference kernels report a violation; compiled code has no error
// channel, so an id outside the table reads a zero row and contributes no
// gradient, and a label outside the classes picks no logit (never an
// out-of-bounds access).
//
//===----------------------------------------------------------------------===//

#include "KernelPatterns.h"
#include "RowKernels.h"

#include "piper/Dialect/Piper/IR/PiperOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/DialectConversion.h"

using namespace mlir;
using namespace mlir::piper;
using namespace mlir::piper::rows;

namespace {

/// Whether the column index of the innermost loop equals `label` (an
/// integer element).
Value isLabelColumn(OpBuilder &b, Location loc, Value label) {
  Value column = linalg::IndexOp::create(b, loc, 1);
  Value index = arith::IndexCastOp::create(b, loc, b.getIndexType(), label);
  return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, column, index);
}

/// `id` (an integer element) as an index, with whether it lies in [0, rows);
/// the index is 0 when it does not, so that it can always be read.
std::pair<Value, Value> checkedRow(OpBuilder &b, Location loc, Value id,
                                   int64_t rows) {
  Value index = arith::IndexCastOp::create(b, loc, b.getIndexType(), id);
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value size = arith::ConstantIndexOp::create(b, loc, rows);
  Value valid = arith::AndIOp::create(
      b, loc,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, index, zero),
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, index, size));
  return {arith::SelectOp::create(b, loc, valid, index, zero), valid};
}

//===----------------------------------------------------------------------===//
// cross_entropy
//===----------------------------------------------------------------------===//

/// loss = (1/N) sum_n ((m_n + log s_n) - l[n, label_n]).
struct CrossEntropyToLinalg : OpConversionPattern<CrossEntropyOp> {
  CrossEntropyToLinalg(MLIRContext *context)
      : OpConversionPattern(context, /*benefit=*/2) {}

  LogicalResult
  matchAndRewrite(CrossEntropyOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    FloatType elt = checkedElementType(op, rewriter);
    if (!elt)
      return success(); // Reported; see checkedElementType.
    Location loc = op.getLoc();
    Value logits = adaptor.getLogits();
    ArrayRef<int64_t> loops =
        cast<RankedTensorType>(logits.getType()).getShape();
    FloatType acc = accumulatorType(elt);
    Value m = rowMax(rewriter, loc, logits);
    // The exp sum s and the label's logit p of each row, in one pass.
    SmallVector<Value> sp = build(
        rewriter, loc, loops,
        {{logits, Index::Whole},
         {m, Index::Row},
         {adaptor.getLabels(), Index::Row}},
        Index::Row, {{acc, 0.0}, {acc, 0.0}},
        [&](OpBuilder &nb, Location nl, ValueRange in,
            ValueRange sums) -> SmallVector<Value> {
          Value l = widen(nb, nl, in[0], acc);
          Value e = math::ExpOp::create(
              nb, nl,
              arith::SubFOp::create(nb, nl, l, widen(nb, nl, in[1], acc)));
          Value picked =
              arith::SelectOp::create(nb, nl, isLabelColumn(nb, nl, in[2]), l,
                                      floatConstant(nb, nl, acc, 0.0));
          return {arith::AddFOp::create(nb, nl, sums[0], e),
                  arith::AddFOp::create(nb, nl, sums[1], picked)};
        });
    Value total = build1(
        rewriter, loc, loops.take_front(),
        {{m, Index::Whole}, {sp[0], Index::Whole}, {sp[1], Index::Whole}},
        Index::None, {acc, 0.0},
        [&](OpBuilder &nb, Location nl, ValueRange in, Value sum) {
          Value lse = arith::AddFOp::create(nb, nl, widen(nb, nl, in[0], acc),
                                            math::LogOp::create(nb, nl, in[1]));
          return arith::AddFOp::create(
              nb, nl, sum, arith::SubFOp::create(nb, nl, lse, in[2]));
        });
    double n = double(loops[0]);
    rewriter.replaceOp(
        op, buildElementwise(rewriter, loc, total, op.getType(),
                             [&](OpBuilder &nb, Location nl, ValueRange in) {
                               Value mean = arith::DivFOp::create(
                                   nb, nl, in[0],
                                   floatConstant(nb, nl, acc, n));
                               return narrow(nb, nl, mean, elt);
                             }));
    return success();
  }
};

/// dLogits = (softmax(logits) - onehot(labels)) dLoss / N.
Value crossEntropyVJP(OpBuilder &b, Location loc, Value logits, Value labels,
                      Value dLoss, FloatType elt) {
  ArrayRef<int64_t> loops = cast<RankedTensorType>(logits.getType()).getShape();
  FloatType acc = accumulatorType(elt);
  Value y = softmaxRows(b, loc, logits, acc);
  return build1(
      b, loc, loops,
      {{y, Index::Whole}, {labels, Index::Row}, {dLoss, Index::None}},
      Index::Whole, {elt},
      [&](OpBuilder &nb, Location nl, ValueRange in, Value) {
        Value p = in[0];
        Value hit =
            arith::SubFOp::create(nb, nl, p, floatConstant(nb, nl, acc, 1.0));
        Value g = arith::SelectOp::create(nb, nl, isLabelColumn(nb, nl, in[1]),
                                          hit, p);
        Value scale =
            arith::DivFOp::create(nb, nl, widen(nb, nl, in[2], acc),
                                  floatConstant(nb, nl, acc, double(loops[0])));
        return narrow(nb, nl, arith::MulFOp::create(nb, nl, g, scale), elt);
      });
}

//===----------------------------------------------------------------------===//
// embedding
//===----------------------------------------------------------------------===//

/// out[t, j] = table[ids[t], j] over the flattened ids, a gather through
/// tensor.extract in a parallel generic.
struct EmbeddingToLinalg : OpConversionPattern<EmbeddingOp> {
  EmbeddingToLinalg(MLIRContext *context)
      : OpConversionPattern(context, /*benefit=*/2) {}

  LogicalResult
  matchAndRewrite(EmbeddingOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    FloatType elt = checkedElementType(op, rewriter);
    if (!elt)
      return success(); // Reported; see checkedElementType.
    Location loc = op.getLoc();
    Value table = adaptor.getTable();
    auto tableType = cast<RankedTensorType>(table.getType());
    Value ids = flatten(rewriter, loc, adaptor.getIds());
    int64_t tokens = cast<RankedTensorType>(ids.getType()).getDimSize(0);
    Value rows =
        build1(rewriter, loc, {tokens, tableType.getDimSize(1)},
               {{ids, Index::Row}}, Index::Whole, {elt},
               [&](OpBuilder &nb, Location nl, ValueRange in, Value) {
                 auto [row, valid] =
                     checkedRow(nb, nl, in[0], tableType.getDimSize(0));
                 Value column = linalg::IndexOp::create(nb, nl, 1);
                 Value v = tensor::ExtractOp::create(nb, nl, table,
                                                     ValueRange{row, column});
                 return arith::SelectOp::create(
                     nb, nl, valid, v, floatConstant(nb, nl, elt, 0.0));
               });
    rewriter.replaceOp(op, fromRows(rewriter, loc, rows, op.getType()));
    return success();
  }
};

/// dTable[v, :] = sum of dy[t, :] over the tokens t with ids[t] = v.
///
/// Why a loop: a linalg.generic writes each result element at an affine
/// function of its loops, so the scatter to row ids[t] cannot be its output.
/// Inside linalg, the alternatives compare every token with every row: a
/// reduction over [V, H] x T of select-adds, or a one-hot [V, T] matrix
/// times dy (a GEMM). Both cost V T H (33.5 M multiply-adds at vocab 256,
/// 512 tokens, hidden 256), V times the scatter's work: 256 times here,
/// 150 000 times at a real vocabulary; the one-hot also takes V T memory.
/// An scf.for over the T tokens on tensors instead adds each dy row into its
/// table row: a [1, H] linalg.generic updating an extract_slice of the
/// accumulator, which one-shot bufferization turns into an in-place update
/// of a subview. That is T H adds, in token order, so repeated ids sum in
/// the reference's order. The token loop must stay sequential (two tokens
/// may share a row); the H loop inside is parallel and vectorises.
Value embeddingVJP(OpBuilder &b, Location loc, Value ids, Value dy,
                   RankedTensorType tableType) {
  Type elt = tableType.getElementType();
  FloatType acc = accumulatorType(elt);
  Value flatIds = flatten(b, loc, ids);
  Value dyRows = asRows(b, loc, dy);
  int64_t vocab = tableType.getDimSize(0), h = tableType.getDimSize(1);
  int64_t tokens = cast<RankedTensorType>(flatIds.getType()).getDimSize(0);
  Value zeros = linalg::FillOp::create(
                    b, loc, ValueRange{floatConstant(b, loc, acc, 0.0)},
                    ValueRange{tensor::EmptyOp::create(
                        b, loc, tableType.getShape(), acc)})
                    .getResult(0);
  Value lb = arith::ConstantIndexOp::create(b, loc, 0);
  Value ub = arith::ConstantIndexOp::create(b, loc, tokens);
  Value step = arith::ConstantIndexOp::create(b, loc, 1);
  auto loop = scf::ForOp::create(
      b, loc, lb, ub, step, ValueRange{zeros},
      [&](OpBuilder &nb, Location nl, Value t, ValueRange iter) {
        Value id = tensor::ExtractOp::create(nb, nl, flatIds, ValueRange{t});
        Value row, valid;
        std::tie(row, valid) = checkedRow(nb, nl, id, vocab);
        SmallVector<OpFoldResult> sizes = {nb.getIndexAttr(1),
                                           nb.getIndexAttr(h)};
        SmallVector<OpFoldResult> strides = {nb.getIndexAttr(1),
                                             nb.getIndexAttr(1)};
        SmallVector<OpFoldResult> tableAt = {row, nb.getIndexAttr(0)};
        SmallVector<OpFoldResult> dyAt = {t, nb.getIndexAttr(0)};
        Value target = tensor::ExtractSliceOp::create(nb, nl, iter[0], tableAt,
                                                      sizes, strides);
        Value source = tensor::ExtractSliceOp::create(nb, nl, dyRows, dyAt,
                                                      sizes, strides);
        AffineMap id2 = nb.getMultiDimIdentityMap(2);
        auto add = linalg::GenericOp::create(
            nb, nl, target.getType(), ValueRange{source}, ValueRange{target},
            ArrayRef<AffineMap>{id2, id2},
            ArrayRef<utils::IteratorType>{utils::IteratorType::parallel,
                                          utils::IteratorType::parallel},
            [&](OpBuilder &gb, Location gl, ValueRange args) {
              // A token with an id outside the table adds nothing.
              Value g = arith::SelectOp::create(
                  gb, gl, valid, widen(gb, gl, args[0], acc),
                  floatConstant(gb, gl, acc, 0.0));
              linalg::YieldOp::create(
                  gb, gl,
                  ValueRange{arith::AddFOp::create(gb, gl, args[1], g)});
            });
        Value updated = tensor::InsertSliceOp::create(
            nb, nl, add.getResult(0), iter[0], tableAt, sizes, strides);
        scf::YieldOp::create(nb, nl, updated);
      });
  return castTensor(b, loc, loop.getResult(0), elt);
}

/// piper.vjp of cross_entropy (w.r.t. the logits) or embedding (w.r.t. the
/// table); labels and ids have no gradient.
struct LossVJPToLinalg : OpConversionPattern<VJPOp> {
  LossVJPToLinalg(MLIRContext *context)
      : OpConversionPattern(context, /*benefit=*/2) {}

  LogicalResult
  matchAndRewrite(VJPOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    bool loss = op.getOp() == CrossEntropyOp::getOperationName();
    if (!loss && op.getOp() != EmbeddingOp::getOperationName())
      return rewriter.notifyMatchFailure(op, "not a loss or embedding VJP");
    FloatType elt;
    if (!checkVJP(op, rewriter) || !(elt = checkedElementType(op, rewriter)))
      return success(); // Reported; see checkVJP.
    ValueRange primals = adaptor.getPrimals();
    Value dy = adaptor.getCotangents()[0];
    Location loc = op.getLoc();
    // checkVJP leaves wrt = [0]: operand 1 is the integer one.
    rewriter.replaceOp(
        op,
        loss ? crossEntropyVJP(rewriter, loc, primals[0], primals[1], dy, elt)
             : embeddingVJP(rewriter, loc, primals[1], dy,
                            cast<RankedTensorType>(primals[0].getType())));
    return success();
  }
};

} // namespace

void mlir::piper::populateLossToLinalgPatterns(RewritePatternSet &patterns) {
  patterns.add<CrossEntropyToLinalg, EmbeddingToLinalg, LossVJPToLinalg>(
      patterns.getContext());
}
