//===- KernelCalls.cpp - Piper VJPs to calls of the kernel library --------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Every forward op lowers to linalg (*ToLinalg.cpp). What is left for the
// C-ABI kernel library (include/piper/Kernels/Kernels.h) are the VJPs of
// 2-D matmul and linear, which are BLAS calls with transposes there: one
// call per `wrt` index, `piper_k_vjp_<op>_<wrt>_<t>(primals..., cotangent,
// result)`.
//
//===----------------------------------------------------------------------===//

#include "CommCalls.h"
#include "KernelPatterns.h"

#include "piper/Dialect/Piper/IR/PiperOps.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Transforms/DialectConversion.h"
#include "llvm/ADT/StringSet.h"

using namespace mlir;
using namespace mlir::piper;

namespace {

StringRef suffix(FloatType t) {
  return t.isF32() ? "f32" : t.isBF16() ? "bf16" : "f64";
}

/// piper.vjp of matmul/linear -> one kernel call per `wrt` index.
struct VJPToKernels : OpConversionPattern<VJPOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(VJPOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    // The linalg patterns lower these and report their own errors.
    if (hasLinalgVJP(op.getOp()))
      return rewriter.notifyMatchFailure(op, "lowered to linalg");
    FailureOr<FloatType> elt = kernelFloatType(op, /*report=*/true);
    if (failed(elt))
      return failure();
    StringRef mnemonic = op.getOp();
    mnemonic.consume_front("piper.");
    SmallVector<Value> primals(adaptor.getPrimals());
    // The linear VJPs take x and w; dBias needs only dy.
    if (mnemonic == "linear" && primals.size() == 3)
      primals.pop_back();
    if (op.getCotangents().size() != 1)
      return op.emitError()
             << "expected one cotangent, got " << op.getCotangents().size();
    // Elementwise ops' VJPs are generated from their ElementwiseOpInterface;
    // add, sub and mul differentiate into piper ops.
    static const llvm::StringSet<> known = {"matmul", "linear"};
    if (!known.contains(mnemonic))
      return op.emitError()
             << "no kernel for the VJP of '" << op.getOp() << "'";
    SmallVector<Value> operands(primals);
    operands.push_back(adaptor.getCotangents()[0]);
    auto module = op->getParentOfType<ModuleOp>();
    SmallVector<Value> results;
    for (auto [wrt, result] : llvm::zip(op.getWrt(), op.getResults())) {
      std::string name =
          ("piper_k_vjp_" + mnemonic + "_" + Twine(wrt) + "_" + suffix(*elt))
              .str();
      results.push_back(callShim(rewriter, op.getLoc(), module, name, operands,
                                 result.getType(), /*scalars=*/{})
                            .front());
    }
    rewriter.replaceOp(op, results);
    return success();
  }
};

} // namespace

bool mlir::piper::hasKernelPattern(Operation *op) {
  // Not matmul/linear: the shapes their linalg patterns cannot build get
  // the fallback's error.
  return isa<AnnotateOp, VJPOp, AddOp, SubOp, MulOp, ElementwiseOpInterface,
             CastOp>(op) ||
         isa<AttentionOp, SoftmaxOp, RmsNormOp, LayerNormOp, EmbeddingOp,
             CrossEntropyOp>(op) ||                               // Rows
         isa<RopeOp>(op) ||                                       // RoPE
         isa<ReshapeOp, TransposeOp>(op) ||                       // Layout
         isa<RouterOp, DispatchOp, ExpertFfnOp, CombineOp>(op) || // MoE
         isa<SgdUpdateOp, AdamWUpdateOp>(op);                     // Updates
}

bool mlir::piper::hasLinalgVJP(StringRef name) {
  static const llvm::StringSet<> linalg = {
      "piper.attention", "piper.softmax",   "piper.rmsnorm",
      "piper.layernorm", "piper.embedding", "piper.cross_entropy", // Rows
      "piper.reshape",   "piper.transpose",                        // Layout
      "piper.router",    "piper.dispatch",  "piper.expert_ffn",
      "piper.combine"}; // MoE
  return linalg.contains(name);
}

void mlir::piper::populateKernelCallPatterns(RewritePatternSet &patterns) {
  patterns.add<VJPToKernels>(patterns.getContext());
}
