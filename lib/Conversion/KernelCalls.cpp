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
using KernelOps =
    OpList<ReshapeOp, TransposeOp, RouterOp, DispatchOp, ExpertFfnOp, CombineOp,
           SgdUpdateOp, AdamWUpdateOp>;

StringRef suffix(FloatType t) { return t.isF32() ? "f32" : "f64"; }

/// The permutation packed 4 bits per dim for the transpose kernels.
int64_t packPermutation(ArrayRef<int64_t> perm) {
  int64_t packed = 0;
  for (auto [i, p] : llvm::enumerate(perm))
    packed |= p << (4 * i);
  return packed;
}

/// The scalar operands of `op`'s kernel, from its attributes.
SmallVector<Value> kernelScalars(Operation *op, OpBuilder &b) {
  Location loc = op->getLoc();
  auto i64Attr = [&](StringRef key) {
    auto a = op->getAttrOfType<IntegerAttr>(key);
    return i64Constant(b, loc, a ? a.getInt() : 0);
  };
  auto f64s = [&](ArrayRef<FloatAttr> attrs) {
    SmallVector<Value> values;
    for (FloatAttr a : attrs)
      values.push_back(f64Constant(b, loc, a.getValueAsDouble()));
    return values;
  };
  if (isa<RouterOp>(op))
    return {i64Attr("top_k")};
  if (isa<DispatchOp>(op))
    return {i64Attr("capacity")};
  if (auto t = dyn_cast<TransposeOp>(op))
    return {i64Constant(b, loc, packPermutation(t.getPermutation()))};
  if (auto sgd = dyn_cast<SgdUpdateOp>(op))
    return f64s(
        {sgd.getLrAttr(), sgd.getMomentumAttr(), sgd.getWeightDecayAttr()});
  if (auto adamw = dyn_cast<AdamWUpdateOp>(op))
    return f64s({adamw.getLrAttr(), adamw.getBeta1Attr(), adamw.getBeta2Attr(),
                 adamw.getEpsAttr(), adamw.getWeightDecayAttr()});
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
  if (mnemonic == "router" || mnemonic == "dispatch") {
    StringRef key = mnemonic == "router" ? "top_k" : "capacity";
    auto a = attrs ? attrs.getAs<IntegerAttr>(key) : IntegerAttr();
    if (!a)
      return op.emitError()
             << "forward_attrs lacks the integer '" << key << "'";
    return SmallVector<Value>{i64Constant(b, loc, a.getInt())};
  }
  if (mnemonic == "transpose") {
    auto perm = attrs ? attrs.getAs<DenseI64ArrayAttr>("permutation")
                      : DenseI64ArrayAttr();
    if (!perm)
      return op.emitError() << "forward_attrs lacks the array 'permutation'";
    return SmallVector<Value>{
        i64Constant(b, loc, packPermutation(perm.asArrayRef()))};
  }
  return SmallVector<Value>{};
}

/// piper.vjp -> one kernel call per `wrt` index.
struct VJPToKernels : OpConversionPattern<VJPOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(VJPOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    // AttentionToLinalg.cpp lowers these and reports their errors.
    if (op.getOp() == AttentionOp::getOperationName())
      return failure();
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
        "matmul",   "linear",     "reshape", "transpose",
        "router",   "dispatch",   "expert_ffn", "combine"};
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
         isa<AnnotateOp, VJPOp, AddOp, SubOp, MulOp, AttentionOp,
             ElementwiseOpInterface, SoftmaxOp, RmsNormOp, LayerNormOp,
             EmbeddingOp, CrossEntropyOp>(op);
}

void mlir::piper::populateKernelCallPatterns(RewritePatternSet &patterns) {
  KernelOps::addPerOp<KernelCall>(patterns);
  patterns.add<VJPToKernels>(patterns.getContext());
}
