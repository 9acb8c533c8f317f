//===- ConvertToKernels.cpp - Piper ops to linalg and kernel calls --------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// --piper-convert-to-kernels (Passes.td), on tensors, before bufferization,
// one pattern per op kind:
//
//  - piper.annotate regions are inlined (tags matter to the DAG, not here);
//  - add/sub/mul and arith.addi (the AdamW step count) become elementwise
//    linalg.generic here; 2-D matmul and linear (leading dims of x
//    collapsed) linalg.fill + linalg.matmul (+ a broadcast bias add), which
//    --piper-matmul-to-blas later turns into one BLAS call;
//  - every other op and VJP has its pattern in a *ToLinalg.cpp file
//    (elementwise interface ops, attention, batched matmuls, norms,
//    softmax, losses, layout, MoE, optimizer updates), all linalg and
//    tensor ops;
//  - only the VJPs of 2-D matmul and linear call the C-ABI kernel library
//    (KernelCalls.cpp: BLAS with transposes). One-shot bufferization then
//    sees ordinary buffer code.
//
// Kernel calls are named after the op and the element type of its float
// tensors (Kernels.h documents the ABI); scalar attributes follow the
// buffers as f64 or i64. Types do not change, so there is no type converter.
//
//===----------------------------------------------------------------------===//

#include "CommCalls.h"
#include "ConversionDriver.h"
#include "KernelPatterns.h"

#include "piper/Conversion/Passes.h"
#include "piper/Dialect/Piper/IR/PiperDialect.h"
#include "piper/Dialect/Piper/IR/PiperOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/DialectConversion.h"

namespace mlir::piper {
#define GEN_PASS_DEF_CONVERTTOKERNELSPASS
#include "piper/Conversion/Passes.h.inc"
} // namespace mlir::piper

using namespace mlir;
using namespace mlir::piper;

FailureOr<FloatType> mlir::piper::kernelFloatType(Operation *op, bool report) {
  auto check = [&](Type type) -> std::optional<FloatType> {
    auto tensor = dyn_cast<RankedTensorType>(type);
    auto elt =
        tensor ? dyn_cast<FloatType>(tensor.getElementType()) : FloatType();
    // An integer tensor (ids, labels) does not pick the kernel.
    return elt ? std::optional<FloatType>(elt) : std::nullopt;
  };
  std::optional<FloatType> found;
  for (Type t : op->getOperandTypes())
    if ((found = check(t)))
      break;
  if (!found)
    for (Type t : op->getResultTypes())
      if ((found = check(t)))
        break;
  if (!found)
    return report ? op->emitError() << "has no float tensor to pick a kernel by"
                  : failure();
  if (!found->isF32() && !found->isF64() && !found->isBF16())
    return report ? op->emitError() << "element type " << *found
                                    << " is not supported by the native "
                                       "lowering (f32, f64 and bf16 are)"
                  : failure();
  return *found;
}

namespace {

/// piper.annotate -> its region's ops, in place.
struct InlineAnnotate : OpConversionPattern<AnnotateOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(AnnotateOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Block &body = op.getBody().front();
    Operation *yield = body.getTerminator();
    SmallVector<Value> values(yield->getOperands());
    rewriter.eraseOp(yield);
    rewriter.inlineBlockBefore(&body, op);
    rewriter.replaceOp(op, values);
    return success();
  }
};

/// The scalar computation of an elementwise op, on `a` (its operands'
/// elements) of element type `elt`.
template <typename OpTy>
Value scalarBody(OpBuilder &b, Location loc, ValueRange a, FloatType elt) {
  if constexpr (std::is_same_v<OpTy, AddOp>)
    return arith::AddFOp::create(b, loc, a[0], a[1]);
  else if constexpr (std::is_same_v<OpTy, SubOp>)
    return arith::SubFOp::create(b, loc, a[0], a[1]);
  else {
    static_assert(std::is_same_v<OpTy, MulOp>);
    return arith::MulFOp::create(b, loc, a[0], a[1]);
  }
}

/// add/sub/mul -> an elementwise linalg.generic (the activations, which
/// have an ElementwiseOpInterface, lower from it: ElementwiseToLinalg.cpp).
template <typename OpTy>
struct ElementwiseToLinalg : OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;
  using OpAdaptor = typename OpTy::Adaptor;

  LogicalResult
  matchAndRewrite(OpTy op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    FailureOr<FloatType> elt = kernelFloatType(op, /*report=*/true);
    if (failed(elt))
      return failure();
    Value r = buildElementwise(
        rewriter, op.getLoc(), adaptor.getOperands(), op.getType(),
        [&](OpBuilder &b, Location loc, ValueRange a) {
          return computeWidened(b, loc, a, *elt, [&](ValueRange w) {
            return scalarBody<OpTy>(b, loc, w, *elt);
          });
        });
    rewriter.replaceOp(op, r);
    return success();
  }
};

/// arith.addi on tensors (the AdamW step count) -> linalg.generic.
struct AddIToLinalg : OpConversionPattern<arith::AddIOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(arith::AddIOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Value r = buildElementwise(
        rewriter, op.getLoc(), adaptor.getOperands(), op.getType(),
        [](OpBuilder &b, Location loc, ValueRange a) {
          return arith::AddIOp::create(b, loc, a[0], a[1]);
        });
    rewriter.replaceOp(op, r);
    return success();
  }
};

/// linear with x of rank >= 2 -> linalg.matmul (+ bias); other linears are
/// kernel calls.
struct LinearToLinalg : OpConversionPattern<LinearOp> {
  LinearToLinalg(MLIRContext *context)
      : OpConversionPattern(context, /*benefit=*/2) {}

  LogicalResult
  matchAndRewrite(LinearOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (cast<RankedTensorType>(op.getX().getType()).getRank() < 2 ||
        failed(kernelFloatType(op, /*report=*/false)))
      return failure();
    rewriter.replaceOp(op, buildMatmul(rewriter, op.getLoc(), adaptor.getX(),
                                       adaptor.getW(), adaptor.getBias(),
                                       op.getType()));
    return success();
  }
};

/// 2-D matmul -> linalg.matmul; other matmuls are kernel calls.
struct MatmulToLinalg : OpConversionPattern<MatmulOp> {
  MatmulToLinalg(MLIRContext *context)
      : OpConversionPattern(context, /*benefit=*/2) {}

  LogicalResult
  matchAndRewrite(MatmulOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (cast<RankedTensorType>(op.getLhs().getType()).getRank() != 2 ||
        cast<RankedTensorType>(op.getRhs().getType()).getRank() != 2 ||
        failed(kernelFloatType(op, /*report=*/false)))
      return failure();
    rewriter.replaceOp(op,
                       buildMatmul(rewriter, op.getLoc(), adaptor.getLhs(),
                                   adaptor.getRhs(), Value(), op.getType()));
    return success();
  }
};

/// Any other op: a piper op without a kernel, or an op of a dialect the
/// native lowering does not handle, gets a located error.
struct RejectUnsupported : ConversionPattern {
  RejectUnsupported(MLIRContext *context)
      : ConversionPattern(MatchAnyOpTypeTag(), /*benefit=*/0, context) {}

  LogicalResult matchAndRewrite(Operation *op, ArrayRef<Value>,
                                ConversionPatternRewriter &) const override {
    if (!isa_and_nonnull<PiperDialect>(op->getDialect()))
      return op->emitError()
             << "unsupported operation '" << op->getName()
             << "' in a chunk body: the native lowering handles piper NN "
                "ops, piper.vjp, optimizer updates, arith, math, tensor and "
                "func ops";
    // Ops with a pattern report their own errors.
    if (hasKernelPattern(op) || failed(kernelFloatType(op, /*report=*/true)))
      return failure();
    return op->emitError() << "unsupported operation '" << op->getName()
                           << "' in a chunk body: the native lowering has no "
                              "kernel for it";
  }
};

struct ConvertToKernelsPass
    : mlir::piper::impl::ConvertToKernelsPassBase<ConvertToKernelsPass> {
  void runOnOperation() override {
    MLIRContext *context = &getContext();
    RewritePatternSet patterns(context);
    populateConvertToKernelsPatterns(patterns);
    ConversionTarget target(*context);
    configureConvertToKernelsTarget(target);
    if (failed(applyLowering(getOperation(), target, std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace

void mlir::piper::populateConvertToKernelsPatterns(
    RewritePatternSet &patterns) {
  MLIRContext *context = patterns.getContext();
  patterns.add<InlineAnnotate, ElementwiseToLinalg<AddOp>,
               ElementwiseToLinalg<SubOp>, ElementwiseToLinalg<MulOp>,
               AddIToLinalg, LinearToLinalg, MatmulToLinalg, RejectUnsupported>(
      context);
  populateElementwiseToLinalgPatterns(patterns);
  populateAttentionToLinalgPatterns(patterns);
  populateRopeToLinalgPatterns(patterns);
  populateBatchedMatmulToLinalgPatterns(patterns);
  populateNormToLinalgPatterns(patterns);
  populateSoftmaxToLinalgPatterns(patterns);
  populateLossToLinalgPatterns(patterns);
  populateLayoutToLinalgPatterns(patterns);
  populateMoEToLinalgPatterns(patterns);
  populateUpdatesToLinalgPatterns(patterns);
  populateCastToLinalgPatterns(patterns);
  populateKernelCallPatterns(patterns);
}

void mlir::piper::configureConvertToKernelsTarget(ConversionTarget &target) {
  target.addLegalOp<ModuleOp>();
  target.addLegalDialect<arith::ArithDialect,
                         bufferization::BufferizationDialect, func::FuncDialect,
                         linalg::LinalgDialect, math::MathDialect,
                         memref::MemRefDialect, tensor::TensorDialect>();
  // The embedding VJP's loop over tokens (LossToLinalg.cpp) and the MoE
  // slot assignment (MoEToLinalg.cpp).
  target.addLegalOp<scf::ForOp, scf::YieldOp>();
  target.addDynamicallyLegalOp<arith::AddIOp>(
      [](arith::AddIOp op) { return !isa<RankedTensorType>(op.getType()); });
  // Only function bodies are lowered (a module may still hold meshes).
  auto outsideFunctions = [](Operation *op) {
    return !op->getParentOfType<func::FuncOp>();
  };
  target.addDynamicallyLegalDialect<PiperDialect>(outsideFunctions);
  target.markUnknownOpDynamicallyLegal(outsideFunctions);
}
