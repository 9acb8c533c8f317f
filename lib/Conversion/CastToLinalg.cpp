//===- CastToLinalg.cpp - piper.cast as an elementwise linalg.generic -----===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// piper.cast (--piper-mixed-precision's conversions between the f32 master
// copies and the bf16 compute copies, and their VJPs) becomes one
// elementwise linalg.generic whose body is arith.truncf (narrowing: round to
// nearest even, the interpreter's rule) or arith.extf (widening: exact).
// Like every elementwise kernel it is then fused with its neighbours, tiled
// and vectorised; --piper-expand-bf16 turns the bf16 conversions into
// integer arithmetic before LLVM (no libgcc/compiler-rt helper is needed).
//
//===----------------------------------------------------------------------===//

#include "KernelPatterns.h"

#include "piper/Dialect/Piper/IR/PiperOps.h"

#include "mlir/Transforms/DialectConversion.h"

using namespace mlir;
using namespace mlir::piper;

namespace {

/// piper.cast %x : tensor<..xA> -> tensor<..xB> -> linalg.generic with
/// truncf/extf.
struct CastToLinalg : OpConversionPattern<CastOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(CastOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    // f32, f64 and bf16 (the op's verifier) are all kernel types.
    auto from = cast<RankedTensorType>(op.getX().getType());
    auto to = cast<RankedTensorType>(op.getType());
    if (!from.hasStaticShape())
      return op.emitError() << "the native lowering of a cast needs a static "
                               "shape, not "
                            << from;
    rewriter.replaceOp(op, castTensor(rewriter, op.getLoc(), adaptor.getX(),
                                      to.getElementType()));
    return success();
  }
};

} // namespace

void mlir::piper::populateCastToLinalgPatterns(RewritePatternSet &patterns) {
  patterns.add<CastToLinalg>(patterns.getContext());
}
