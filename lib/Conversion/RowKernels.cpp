//===- RowKernels.cpp - Builders of row-wise linalg kernels ---------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "RowKernels.h"
#include "KernelPatterns.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/IR/Verifier.h"

#include <limits>

using namespace mlir;
using namespace mlir::piper;
using namespace mlir::piper::rows;

//===----------------------------------------------------------------------===//
// Generic row kernels
//===----------------------------------------------------------------------===//

/// The indexing map of `index` over `numLoops` loops.
static AffineMap mapOf(Index index, unsigned numLoops, MLIRContext *context) {
  switch (index) {
  case Index::Whole:
    return AffineMap::getMultiDimIdentityMap(numLoops, context);
  case Index::Row:
    return AffineMap::get(numLoops, 0, getAffineDimExpr(0, context));
  case Index::Col:
    assert(numLoops == 2 && "a column needs two loops");
    return AffineMap::get(numLoops, 0, getAffineDimExpr(1, context));
  case Index::None:
    return AffineMap::get(numLoops, 0, context);
  }
  llvm_unreachable("unknown row-kernel index");
}

/// The shape of a result indexed by `index` over `loops`.
static SmallVector<int64_t> shapeOf(Index index, ArrayRef<int64_t> loops) {
  switch (index) {
  case Index::Whole:
    return SmallVector<int64_t>(loops);
  case Index::Row:
    return {loops[0]};
  case Index::Col:
    return {loops[1]};
  case Index::None:
    return {};
  }
  llvm_unreachable("unknown row-kernel index");
}

SmallVector<Value> rows::build(OpBuilder &b, Location loc,
                               ArrayRef<int64_t> loops, ArrayRef<In> ins,
                               Index outIndex, ArrayRef<Out> outs, Body body) {
  MLIRContext *context = b.getContext();
  unsigned numLoops = loops.size();
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  for (const In &in : ins) {
    inputs.push_back(in.value);
    maps.push_back(mapOf(in.index, numLoops, context));
  }
  AffineMap outMap = mapOf(outIndex, numLoops, context);
  SmallVector<int64_t> shape = shapeOf(outIndex, loops);
  SmallVector<Value> inits;
  SmallVector<Type> types;
  for (const Out &out : outs) {
    Value init = tensor::EmptyOp::create(b, loc, shape, out.elementType);
    if (outIndex != Index::Whole)
      init = linalg::FillOp::create(
                 b, loc,
                 ValueRange{floatConstant(b, loc, out.elementType, out.init)},
                 ValueRange{init})
                 .getResult(0);
    inits.push_back(init);
    types.push_back(init.getType());
    maps.push_back(outMap);
  }
  // The loops the results do not index are reduced.
  SmallVector<utils::IteratorType> iterators;
  for (unsigned d = 0; d < numLoops; ++d)
    iterators.push_back(outMap.isFunctionOfDim(d)
                            ? utils::IteratorType::parallel
                            : utils::IteratorType::reduction);
  auto generic = linalg::GenericOp::create(
      b, loc, types, inputs, inits, maps, iterators,
      [&](OpBuilder &nb, Location nl, ValueRange args) {
        SmallVector<Value> yields = body(nb, nl, args.take_front(ins.size()),
                                         args.drop_front(ins.size()));
        linalg::YieldOp::create(nb, nl, yields);
      });
  return SmallVector<Value>(generic.getResults());
}

Value rows::build1(
    OpBuilder &b, Location loc, ArrayRef<int64_t> loops, ArrayRef<In> ins,
    Index outIndex, Out out,
    function_ref<Value(OpBuilder &, Location, ValueRange, Value)> body) {
  return build(b, loc, loops, ins, outIndex, {out},
               [&](OpBuilder &nb, Location nl, ValueRange args,
                   ValueRange accs) -> SmallVector<Value> {
                 return {body(nb, nl, args, accs.front())};
               })
      .front();
}

//===----------------------------------------------------------------------===//
// Element types and shapes
//===----------------------------------------------------------------------===//

Value rows::widen(OpBuilder &b, Location loc, Value scalar, Type type) {
  if (scalar.getType() == type)
    return scalar;
  return arith::ExtFOp::create(b, loc, type, scalar);
}

Value rows::narrow(OpBuilder &b, Location loc, Value scalar, Type type) {
  if (scalar.getType() == type)
    return scalar;
  return arith::TruncFOp::create(b, loc, type, scalar);
}

/// The leading dims of a rank-`rank` tensor as one, the last on its own.
static SmallVector<ReassociationIndices> rowReassociation(int64_t rank) {
  ReassociationIndices lead;
  for (int64_t i = 0; i < rank - 1; ++i)
    lead.push_back(i);
  return {lead, {rank - 1}};
}

Value rows::asRows(OpBuilder &b, Location loc, Value x) {
  auto type = cast<RankedTensorType>(x.getType());
  int64_t rank = type.getRank();
  if (rank == 2)
    return x;
  if (rank == 1)
    return tensor::ExpandShapeOp::create(
        b, loc,
        RankedTensorType::get({1, type.getDimSize(0)}, type.getElementType()),
        x, ArrayRef<ReassociationIndices>{{0, 1}});
  return tensor::CollapseShapeOp::create(b, loc, x, rowReassociation(rank));
}

Value rows::fromRows(OpBuilder &b, Location loc, Value rows, Type type) {
  int64_t rank = cast<RankedTensorType>(type).getRank();
  if (rank == 2)
    return rows;
  if (rank == 1)
    return tensor::CollapseShapeOp::create(
        b, loc, type, rows, ArrayRef<ReassociationIndices>{{0, 1}});
  return tensor::ExpandShapeOp::create(b, loc, type, rows,
                                       rowReassociation(rank));
}

Value rows::flatten(OpBuilder &b, Location loc, Value t) {
  auto type = cast<RankedTensorType>(t.getType());
  int64_t rank = type.getRank();
  if (rank == 1)
    return t;
  if (rank == 0)
    return tensor::ExpandShapeOp::create(
        b, loc, RankedTensorType::get({1}, type.getElementType()), t,
        ArrayRef<ReassociationIndices>{});
  ReassociationIndices all;
  for (int64_t i = 0; i < rank; ++i)
    all.push_back(i);
  return tensor::CollapseShapeOp::create(b, loc, t,
                                         ArrayRef<ReassociationIndices>{all});
}

//===----------------------------------------------------------------------===//
// Shared steps
//===----------------------------------------------------------------------===//

Value rows::rowMax(OpBuilder &b, Location loc, Value x) {
  auto type = cast<RankedTensorType>(x.getType());
  Type elt = type.getElementType();
  return build1(b, loc, type.getShape(), {{x, Index::Whole}}, Index::Row,
                {elt, -std::numeric_limits<double>::infinity()},
                [](OpBuilder &nb, Location nl, ValueRange in, Value acc) {
                  return arith::MaximumFOp::create(nb, nl, in[0], acc);
                });
}

Value rows::rowExp(OpBuilder &b, Location loc, Value x, Value m) {
  auto type = cast<RankedTensorType>(x.getType());
  FloatType acc = accumulatorType(type.getElementType());
  return build1(b, loc, type.getShape(), {{x, Index::Whole}, {m, Index::Row}},
                Index::Whole, {acc},
                [&](OpBuilder &nb, Location nl, ValueRange in, Value) -> Value {
                  Value d =
                      arith::SubFOp::create(nb, nl, widen(nb, nl, in[0], acc),
                                            widen(nb, nl, in[1], acc));
                  return math::ExpOp::create(nb, nl, d);
                });
}

//===----------------------------------------------------------------------===//
// Errors
//===----------------------------------------------------------------------===//

/// Replaces `op`'s results by empty tensors of their types (dynamic sizes
/// 0); fails when a result is not a ranked tensor.
static LogicalResult
replaceByPlaceholders(Operation *op, ConversionPatternRewriter &rewriter) {
  SmallVector<Value> placeholders;
  for (Type type : op->getResultTypes()) {
    auto tensor = dyn_cast<RankedTensorType>(type);
    if (!tensor)
      return failure();
    SmallVector<Value> sizes;
    for (int64_t i = 0; i < tensor.getRank(); ++i)
      if (tensor.isDynamicDim(i))
        sizes.push_back(
            arith::ConstantIndexOp::create(rewriter, op->getLoc(), 0));
    placeholders.push_back(
        tensor::EmptyOp::create(rewriter, op->getLoc(), tensor, sizes));
  }
  rewriter.replaceOp(op, placeholders);
  return success();
}

LogicalResult rows::reject(Operation *op, ConversionPatternRewriter &rewriter,
                           const Twine &message) {
  op->emitError(message);
  return replaceByPlaceholders(op, rewriter);
}

FloatType rows::checkedElementType(Operation *op,
                                   ConversionPatternRewriter &rewriter) {
  FailureOr<FloatType> elt = kernelFloatType(op, /*report=*/true);
  if (failed(elt)) {
    (void)replaceByPlaceholders(op, rewriter);
    return {};
  }
  auto types =
      llvm::concat<const Type>(op->getOperandTypes(), op->getResultTypes());
  for (Type type : types)
    if (auto shaped = dyn_cast<ShapedType>(type);
        shaped && !shaped.hasStaticShape()) {
      op->emitError() << "the native lowering needs static shapes, got "
                      << type;
      (void)replaceByPlaceholders(op, rewriter);
      return {};
    }
  return *elt;
}

bool rows::checkVJP(VJPOp op, ConversionPatternRewriter &rewriter) {
  if (op.getCotangents().size() != 1) {
    (void)reject(op, rewriter,
                 "expected one cotangent, got " +
                     Twine(op.getCotangents().size()));
    return false;
  }
  for (int64_t wrt : op.getWrt())
    if (!isa<FloatType>(getElementTypeOrSelf(op.getPrimals()[wrt]))) {
      (void)reject(op, rewriter,
                   "there is no gradient with respect to operand #" +
                       Twine(wrt) + " of " + op.getOp());
      return false;
    }
  // The forward op's verifier checks the primals (and the cotangent as its
  // result) exactly as it checks the forward op itself.
  OperationState state(op.getLoc(), op.getOp());
  state.addOperands(op.getPrimals());
  state.addTypes(op.getCotangents().getTypes());
  state.addAttributes(op.getForwardAttrs().getValue());
  Operation *forward = Operation::create(state);
  LogicalResult verified = verify(forward, /*verifyRecursively=*/false);
  forward->erase();
  if (succeeded(verified))
    return true;
  (void)replaceByPlaceholders(op, rewriter);
  return false;
}

//===----------------------------------------------------------------------===//
// Attributes
//===----------------------------------------------------------------------===//

double mlir::piper::forwardFloatAttr(Operation *op, StringRef key,
                                     double fallback) {
  FloatAttr attr;
  if (auto vjp = dyn_cast<VJPOp>(op))
    attr = vjp.getForwardAttrs().getAs<FloatAttr>(key);
  else
    attr = op->getAttrOfType<FloatAttr>(key);
  return attr ? attr.getValueAsDouble() : fallback;
}
