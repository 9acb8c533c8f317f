//===- ElementwiseToLinalg.cpp - Elementwise rules as linalg.generic ------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// An op with an ElementwiseOpInterface needs no kernel of its own on any
// target: its forward is a linalg.generic whose payload is the op's
// `buildScalar`, and each gradient of its piper.vjp one whose payload is
// `dy * buildPartial(x, wrt)`. Both read their operands at the same index
// (identity maps, all loops parallel), so tiling, vectorisation and the GPU
// mapping treat them like any other elementwise kernel.
//
//===----------------------------------------------------------------------===//

#include "piper/Conversion/Passes.h"
#include "piper/Dialect/Piper/IR/PiperOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace mlir::piper;

namespace {

/// An elementwise linalg.generic over `inputs` (all of `type`'s shape)
/// computing `payload` from the scalar inputs.
Value buildElementwiseGeneric(
    OpBuilder &b, Location loc, RankedTensorType type, ValueRange inputs,
    function_ref<Value(OpBuilder &, Location, ValueRange)> payload) {
  Value init =
      tensor::EmptyOp::create(b, loc, type.getShape(), type.getElementType());
  SmallVector<AffineMap> maps(inputs.size() + 1,
                              b.getMultiDimIdentityMap(type.getRank()));
  SmallVector<utils::IteratorType> iterators(type.getRank(),
                                             utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      b, loc, type, inputs, ValueRange{init}, maps, iterators,
      [&](OpBuilder &nb, Location nl, ValueRange args) {
        linalg::YieldOp::create(nb, nl, payload(nb, nl, args.drop_back()));
      });
  return generic.getResult(0);
}

/// Whether every value is a static ranked float tensor of `type`.
bool allOfType(ValueRange values, Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor && tensor.hasStaticShape() &&
         isa<FloatType>(tensor.getElementType()) &&
         llvm::all_of(values.getTypes(), [&](Type t) { return t == type; });
}

/// The forward: one generic with the op's scalar function.
struct ElementwiseForward
    : OpInterfaceRewritePattern<ElementwiseOpInterface> {
  using OpInterfaceRewritePattern::OpInterfaceRewritePattern;

  LogicalResult matchAndRewrite(ElementwiseOpInterface op,
                                PatternRewriter &rewriter) const override {
    Operation *raw = op.getOperation();
    if (raw->getNumResults() != 1 ||
        !allOfType(raw->getOperands(), raw->getResult(0).getType()))
      return rewriter.notifyMatchFailure(op, "operands differ in type");
    const ElementwiseOpInterface::Concept *rule =
        raw->getName().getInterface<ElementwiseOpInterface>();
    Value result = buildElementwiseGeneric(
        rewriter, op.getLoc(),
        cast<RankedTensorType>(raw->getResult(0).getType()),
        raw->getOperands(), [&](OpBuilder &b, Location loc, ValueRange x) {
          return rule->buildScalar(b, loc, x);
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// The VJP: per gradient, one generic computing dy * d(result)/d(x_wrt).
struct ElementwiseVJP : OpRewritePattern<VJPOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(VJPOp op,
                                PatternRewriter &rewriter) const override {
    const ElementwiseOpInterface::Concept *rule =
        ElementwiseOpInterface::lookupElementwise(op.getOp(), getContext());
    if (!rule)
      return rewriter.notifyMatchFailure(op, "not an elementwise rule");
    if (op.getCotangents().size() != 1 || op.getPrimals().empty())
      return rewriter.notifyMatchFailure(op, "expects one cotangent");
    Value dy = op.getCotangents().front();
    SmallVector<Value> inputs(op.getPrimals());
    if (!allOfType(inputs, dy.getType()))
      return rewriter.notifyMatchFailure(op, "primals differ in type");
    inputs.push_back(dy);
    unsigned numPrimals = op.getPrimals().size();
    SmallVector<Value> gradients;
    for (int64_t wrt : op.getWrt())
      gradients.push_back(buildElementwiseGeneric(
          rewriter, op.getLoc(), cast<RankedTensorType>(dy.getType()), inputs,
          [&](OpBuilder &b, Location loc, ValueRange args) {
            Value partial =
                rule->buildPartial(b, loc, args.take_front(numPrimals), wrt);
            return arith::MulFOp::create(b, loc, args.back(), partial)
                .getResult();
          }));
    rewriter.replaceOp(op, gradients);
    return success();
  }
};

} // namespace

void mlir::piper::populateElementwiseToLinalgPatterns(
    RewritePatternSet &patterns) {
  patterns.add<ElementwiseForward, ElementwiseVJP>(patterns.getContext());
}
