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
// (identity maps, all loops parallel; buildElementwise, shared with the
// other elementwise lowerings), so tiling, vectorisation and the GPU mapping
// treat them like any other elementwise kernel.
//
//===----------------------------------------------------------------------===//

#include "piper/Conversion/Passes.h"
#include "piper/Dialect/Piper/IR/PiperOps.h"

#include "KernelPatterns.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Transforms/DialectConversion.h"

using namespace mlir;
using namespace mlir::piper;

namespace {

/// Whether every value is a static ranked float tensor of `type`.
bool allOfType(ValueRange values, Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor && tensor.hasStaticShape() &&
         isa<FloatType>(tensor.getElementType()) &&
         llvm::all_of(values.getTypes(), [&](Type t) { return t == type; });
}

// Both patterns outrank the kernel-call patterns (benefit 2): a piper.vjp of
// an elementwise op is lowered from its rule before the generic VJP pattern
// looks for a kernel of that name.

/// The forward: one generic with the op's scalar function.
struct ElementwiseForward
    : OpInterfaceConversionPattern<ElementwiseOpInterface> {
  ElementwiseForward(MLIRContext *context)
      : OpInterfaceConversionPattern(context, /*benefit=*/2) {}

  LogicalResult
  matchAndRewrite(ElementwiseOpInterface op, ArrayRef<Value> operands,
                  ConversionPatternRewriter &rewriter) const override {
    Operation *raw = op.getOperation();
    // Native kernels run in f32, f64 and bf16 (computed in f32).
    FailureOr<FloatType> elt = kernelFloatType(raw, /*report=*/true);
    if (failed(elt))
      return failure();
    if (raw->getNumResults() != 1 ||
        !allOfType(operands, raw->getResult(0).getType()))
      return op->emitError() << "the native lowering of an elementwise op "
                                "needs operands and a result of one static "
                                "float tensor type";
    const ElementwiseOpInterface::Concept *rule =
        raw->getName().getInterface<ElementwiseOpInterface>();
    Value result = buildElementwise(
        rewriter, op.getLoc(), operands, raw->getResult(0).getType(),
        [&](OpBuilder &b, Location loc, ValueRange x) {
          return computeWidened(b, loc, x, *elt, [&](ValueRange w) {
            return rule->buildScalar(b, loc, w);
          });
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// The VJP: per gradient, one generic computing dy * d(result)/d(x_wrt).
struct ElementwiseVJP : OpConversionPattern<VJPOp> {
  ElementwiseVJP(MLIRContext *context)
      : OpConversionPattern(context, /*benefit=*/2) {}

  LogicalResult
  matchAndRewrite(VJPOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    const ElementwiseOpInterface::Concept *rule =
        ElementwiseOpInterface::lookupElementwise(op.getOp(), getContext());
    if (!rule)
      return rewriter.notifyMatchFailure(op, "not an elementwise rule");
    FailureOr<FloatType> elt = kernelFloatType(op, /*report=*/true);
    if (failed(elt))
      return failure();
    ValueRange primals = adaptor.getPrimals();
    if (adaptor.getCotangents().size() != 1 || primals.empty())
      return op.emitError()
             << "piper.vjp of " << op.getOp() << ": expected 1 cotangent, got "
             << adaptor.getCotangents().size();
    Value dy = adaptor.getCotangents().front();
    if (!allOfType(primals, dy.getType()))
      return op.emitError() << "piper.vjp of " << op.getOp()
                            << ": the primals and the cotangent must have one "
                               "static float tensor type";
    SmallVector<Value> inputs(primals);
    inputs.push_back(dy);
    SmallVector<Value> gradients;
    for (int64_t wrt : op.getWrt())
      gradients.push_back(buildElementwise(
          rewriter, op.getLoc(), inputs, dy.getType(),
          [&](OpBuilder &b, Location loc, ValueRange args) -> Value {
            return computeWidened(b, loc, args, *elt, [&](ValueRange w) {
              Value partial = rule->buildPartial(b, loc, w.drop_back(), wrt);
              return arith::MulFOp::create(b, loc, w.back(), partial);
            });
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
