//===- KernelCalls.cpp - Piper ops to calls of the kernel library ---------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The ops linalg does not express cleanly become calls of the C-ABI kernel
// library (include/piper/Kernels/Kernels.h): `piper_k_<op>_<t>(operands...,
// results..., scalars...)`, and for piper.vjp one call per `wrt` index,
// `piper_k_vjp_<op>_<wrt>_<t>(primals..., cotangent, result, scalars...)`.
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

/// The piper ops a kernel implements, each through KernelCall.
template <typename... Ops> struct OpList {
  static bool contains(Operation *op) { return isa<Ops...>(op); }
  template <typename Pattern>
  static void addPerOp(RewritePatternSet &patterns) {
    (patterns.add<Pattern>(Ops::getOperationName(), patterns.getContext()),
     ...);
  }
};
using KernelOps = OpList<MatmulOp, LinearOp, SoftmaxOp, RmsNormOp, LayerNormOp,
                         AttentionOp, EmbeddingOp, CrossEntropyOp>;

StringRef suffix(FloatType t) { return t.isF32() ? "f32" : "f64"; }

/// The scalar operands of `op`'s kernel, from its attributes.
SmallVector<Value> kernelScalars(Operation *op, OpBuilder &b) {
  Location loc = op->getLoc();
  auto f64Attr = [&](StringRef key, double fallback) {
    if (auto a = op->getAttrOfType<FloatAttr>(key))
      return f64Constant(b, loc, a.getValueAsDouble());
    return f64Constant(b, loc, fallback);
  };
  auto i64Attr = [&](StringRef key) {
    auto a = op->getAttrOfType<IntegerAttr>(key);
    return i64Constant(b, loc, a ? a.getInt() : 0);
  };
  if (isa<RmsNormOp>(op))
    return {f64Attr("epsilon", 1e-6)};
  if (isa<LayerNormOp>(op))
    return {f64Attr("epsilon", 1e-5)};
  if (isa<AttentionOp>(op))
    return {i64Attr("num_heads")};
  return {};
}

/// An op with a kernel -> piper_k_<op>_<t>(operands, results, scalars).
struct KernelCall : ConversionPattern {
  KernelCall(StringRef rootName, MLIRContext *context)
      : ConversionPattern(rootName, /*benefit=*/1, context) {}

  LogicalResult
  matchAndRewrite(Operation *op, ArrayRef<Value> operands,
                  ConversionPatternRewriter &rewriter) const override {
    FailureOr<FloatType> elt = kernelFloatType(op, /*report=*/true);
    if (failed(elt))
      return failure();
    std::string base = op->getName().stripDialect().str();
    if (auto linear = dyn_cast<LinearOp>(op); linear && linear.getBias())
      base = "linear_bias";
    SmallVector<Value> scalars = kernelScalars(op, rewriter);
    std::string name = "piper_k_" + base + "_" + suffix(*elt).str();
    rewriter.replaceOp(op, callShim(rewriter, op->getLoc(),
                                    op->getParentOfType<ModuleOp>(), name,
                                    operands, op->getResultTypes(), scalars));
    return success();
  }
};

/// The scalar operands of the VJP kernels of forward op `mnemonic`, from
/// the op's forward_attrs.
FailureOr<SmallVector<Value>> vjpScalars(VJPOp op, StringRef mnemonic,
                                         OpBuilder &b) {
  Location loc = op.getLoc();
  DictionaryAttr attrs = op.getForwardAttrs();
  auto floatAttr = [&](StringRef key, double fallback) {
    if (auto a = attrs ? attrs.getAs<FloatAttr>(key) : FloatAttr())
      return a.getValueAsDouble();
    return fallback;
  };
  if (mnemonic == "rmsnorm")
    return SmallVector<Value>{f64Constant(b, loc, floatAttr("epsilon", 1e-6))};
  if (mnemonic == "layernorm")
    return SmallVector<Value>{f64Constant(b, loc, floatAttr("epsilon", 1e-5))};
  if (mnemonic == "attention") {
    auto a = attrs ? attrs.getAs<IntegerAttr>("num_heads") : IntegerAttr();
    if (!a)
      return op.emitError() << "forward_attrs lacks the integer 'num_heads'";
    return SmallVector<Value>{i64Constant(b, loc, a.getInt())};
  }
  return SmallVector<Value>{};
}

/// piper.vjp -> one kernel call per `wrt` index.
struct VJPToKernels : OpConversionPattern<VJPOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(VJPOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
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
    FailureOr<SmallVector<Value>> scalars = vjpScalars(op, mnemonic, rewriter);
    if (failed(scalars))
      return failure();
    // The ops whose VJP is a kernel call (elementwise ops' VJPs are
    // generated from their ElementwiseOpInterface; add, sub and mul
    // differentiate into piper ops).
    static const llvm::StringSet<> known = {
        "matmul",    "linear",    "softmax",   "rmsnorm",
        "layernorm", "attention", "embedding", "cross_entropy"};
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
                                 result.getType(), *scalars)
                            .front());
    }
    rewriter.replaceOp(op, results);
    return success();
  }
};

} // namespace

bool mlir::piper::hasKernelPattern(Operation *op) {
  return KernelOps::contains(op) ||
         isa<AnnotateOp, VJPOp, AddOp, SubOp, MulOp, ElementwiseOpInterface>(
             op) ||
         isa<ReshapeOp, TransposeOp>(op) ||                       // Layout
         isa<RouterOp, DispatchOp, ExpertFfnOp, CombineOp>(op) || // MoE
         isa<SgdUpdateOp, AdamWUpdateOp>(op);                     // Updates
}

bool mlir::piper::hasLinalgVJP(StringRef name) {
  static const llvm::StringSet<> linalg = {
      "piper.reshape", "piper.transpose",                     // Layout
      "piper.router",  "piper.dispatch",  "piper.expert_ffn", // MoE
      "piper.combine"};
  return linalg.contains(name);
}

void mlir::piper::populateKernelCallPatterns(RewritePatternSet &patterns) {
  KernelOps::addPerOp<KernelCall>(patterns);
  patterns.add<VJPToKernels>(patterns.getContext());
}
