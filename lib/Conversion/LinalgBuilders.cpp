//===- LinalgBuilders.cpp - Elementwise ops and GEMMs in linalg -----------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "KernelPatterns.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::piper;

Value mlir::piper::buildElementwise(
    OpBuilder &b, Location loc, ValueRange inputs, Type resultType,
    function_ref<Value(OpBuilder &, Location, ValueRange)> fn) {
  auto type = cast<RankedTensorType>(resultType);
  Value init =
      tensor::EmptyOp::create(b, loc, type.getShape(), type.getElementType());
  SmallVector<AffineMap> maps(inputs.size() + 1,
                              b.getMultiDimIdentityMap(type.getRank()));
  SmallVector<utils::IteratorType> iterators(type.getRank(),
                                             utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      b, loc, type, inputs, ValueRange{init}, maps, iterators,
      [&](OpBuilder &nb, Location nl, ValueRange args) {
        Value v = fn(nb, nl, args.drop_back());
        linalg::YieldOp::create(nb, nl, v);
      });
  return generic.getResult(0);
}

/// out [M, N] + bias [N] broadcast over the rows.
static Value addBias(OpBuilder &b, Location loc, Value out, Value bias,
                     RankedTensorType flatType) {
  Value empty = tensor::EmptyOp::create(b, loc, flatType.getShape(),
                                        flatType.getElementType());
  AffineMap id = b.getMultiDimIdentityMap(2);
  AffineMap col = AffineMap::get(2, 0, {b.getAffineDimExpr(1)}, b.getContext());
  return linalg::GenericOp::create(
             b, loc, flatType, ValueRange{out, bias}, ValueRange{empty},
             ArrayRef<AffineMap>{id, col, id},
             ArrayRef<utils::IteratorType>{utils::IteratorType::parallel,
                                           utils::IteratorType::parallel},
             [&](OpBuilder &nb, Location nl, ValueRange args) {
               Value s = arith::AddFOp::create(nb, nl, args[0], args[1]);
               linalg::YieldOp::create(nb, nl, s);
             })
      .getResult(0);
}

Value mlir::piper::buildMatmul(OpBuilder &b, Location loc, Value x, Value w,
                               Value bias, Type resultType) {
  auto xType = cast<RankedTensorType>(x.getType());
  auto wType = cast<RankedTensorType>(w.getType());
  auto outType = cast<RankedTensorType>(resultType);
  // A bf16 GEMM accumulates (and adds its bias) in f32 and rounds once.
  Type resultElt = outType.getElementType();
  Type elt = accumulatorType(resultElt);
  int64_t rank = xType.getRank();
  Value x2 = x;
  SmallVector<ReassociationIndices> reassoc;
  if (rank > 2) {
    ReassociationIndices lead;
    for (int64_t i = 0; i < rank - 1; ++i)
      lead.push_back(i);
    reassoc = {lead, {rank - 1}};
    x2 = tensor::CollapseShapeOp::create(b, loc, x, reassoc);
  }
  int64_t m = cast<RankedTensorType>(x2.getType()).getDimSize(0);
  int64_t n = wType.getDimSize(1);
  auto flatType = RankedTensorType::get({m, n}, elt);
  Value init = tensor::EmptyOp::create(b, loc, flatType.getShape(), elt);
  Value zero = arith::ConstantOp::create(b, loc, b.getFloatAttr(elt, 0.0));
  Value filled =
      linalg::FillOp::create(b, loc, ValueRange{zero}, ValueRange{init})
          .getResult(0);
  Value out = linalg::MatmulOp::create(b, loc, TypeRange{flatType},
                                       ValueRange{x2, w}, ValueRange{filled})
                  .getResult(0);
  if (bias)
    out = addBias(b, loc, out, castTensor(b, loc, bias, elt), flatType);
  out = castTensor(b, loc, out, resultElt);
  if (rank > 2)
    out = tensor::ExpandShapeOp::create(b, loc, outType, out, reassoc);
  return out;
}

FloatType mlir::piper::accumulatorType(Type elementType) {
  auto type = cast<FloatType>(elementType);
  return type.getWidth() < 32 ? Float32Type::get(type.getContext()) : type;
}

Value mlir::piper::castScalar(OpBuilder &b, Location loc, Value v, Type to) {
  auto from = cast<FloatType>(v.getType());
  if (from == to)
    return v;
  if (from.getWidth() < cast<FloatType>(to).getWidth())
    return arith::ExtFOp::create(b, loc, to, v);
  return arith::TruncFOp::create(b, loc, to, v);
}

Value mlir::piper::castTensor(OpBuilder &b, Location loc, Value t, Type elt) {
  auto type = cast<RankedTensorType>(t.getType());
  if (type.getElementType() == elt)
    return t;
  return buildElementwise(b, loc, t, type.clone(elt),
                          [&](OpBuilder &nb, Location nl, ValueRange a) {
                            return castScalar(nb, nl, a[0], elt);
                          });
}

Value mlir::piper::computeWidened(OpBuilder &b, Location loc, ValueRange args,
                                  Type elt,
                                  function_ref<Value(ValueRange)> fn) {
  FloatType acc = accumulatorType(elt);
  if (acc == elt)
    return fn(args);
  SmallVector<Value> wide;
  for (Value v : args)
    wide.push_back(isa<FloatType>(v.getType()) ? castScalar(b, loc, v, acc)
                                               : v);
  return castScalar(b, loc, fn(wide), elt);
}

Value mlir::piper::floatConstant(OpBuilder &b, Location loc, Type type,
                                 double value) {
  return arith::ConstantOp::create(b, loc, b.getFloatAttr(type, value));
}
