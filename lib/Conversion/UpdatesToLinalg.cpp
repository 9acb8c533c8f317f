//===- UpdatesToLinalg.cpp - Optimizer updates as linalg.generic ----------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// piper.sgd_update and piper.adamw_update are elementwise over a parameter,
// its gradient and its state: each is one linalg.generic (identity maps,
// all loops parallel, one result per new tensor), so every target tiles,
// vectorises and maps it like any elementwise kernel.
//
// Each element is computed as lib/Reference/Optimizers.cpp computes it: the
// same expressions with the same association, in f64 from the stored
// elements, the moments used unrounded within the step, each result
// rounded once to the element type. So f64 plans reproduce the interpreter
// and f32 plans its --precision=f32 mode (up to the compiler's freedom to
// contract a multiply-add). The update reads and writes 5 to 7 tensors per
// element and does a few flops, so it is bound by memory traffic, not by
// the f64 arithmetic.
//
// The learning rate is an input of the step, not a constant: each update
// reads it once, outside its loop, from the runtime (piper_step_lr, which
// returns what the driver set for the running step; plan_abi.h), so
// schedules run without recompiling; the `lr` attribute is only the
// default the driver is given in plan.json. The other attributes are
// compile-time constants (a zero weight decay or momentum drops its terms,
// as the reference's branches do). AdamW's bias
// corrections 1 - beta^step come from the rank-0 i64 step once, outside
// the loop (math.powf is the C library's pow, as in the reference). The
// step is >= 1 by construction (the optimizer pass adds 1 to a count that
// starts at 0); the reference's "step must be >= 1" error has no run-time
// counterpart here.
//
//===----------------------------------------------------------------------===//

#include "KernelPatterns.h"

#include "piper/Conversion/Passes.h"
#include "piper/Dialect/Piper/IR/PiperOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/DialectConversion.h"

using namespace mlir;
using namespace mlir::piper;

namespace {

/// Scalar f64 arithmetic in a linalg body.
struct F64 {
  OpBuilder &b;
  Location loc;

  Type type() const { return b.getF64Type(); }
  Value constant(double v) const {
    return arith::ConstantOp::create(b, loc, b.getF64FloatAttr(v));
  }
  /// A stored element widened to f64.
  Value load(Value v) const {
    return v.getType() == type() ? v : arith::ExtFOp::create(b, loc, type(), v);
  }
  /// An f64 result rounded once to `elt`.
  Value store(Value v, Type elt) const {
    return elt == type() ? v : arith::TruncFOp::create(b, loc, elt, v);
  }
  Value add(Value x, Value y) const {
    return arith::AddFOp::create(b, loc, x, y);
  }
  Value sub(Value x, Value y) const {
    return arith::SubFOp::create(b, loc, x, y);
  }
  Value mul(Value x, Value y) const {
    return arith::MulFOp::create(b, loc, x, y);
  }
  Value div(Value x, Value y) const {
    return arith::DivFOp::create(b, loc, x, y);
  }
};

/// One linalg.generic over the same-shaped `inputs` with `numResults`
/// results of the inputs' type; `fn` maps the input elements to the result
/// elements.
SmallVector<Value> buildUpdate(
    OpBuilder &b, Location loc, ValueRange inputs, unsigned numResults,
    function_ref<SmallVector<Value>(OpBuilder &, Location, ValueRange)> fn) {
  auto type = cast<RankedTensorType>(inputs.front().getType());
  SmallVector<Value> inits;
  for (unsigned i = 0; i < numResults; ++i)
    inits.push_back(tensor::EmptyOp::create(b, loc, type.getShape(),
                                            type.getElementType()));
  SmallVector<AffineMap> maps(inputs.size() + numResults,
                              b.getMultiDimIdentityMap(type.getRank()));
  SmallVector<utils::IteratorType> iterators(type.getRank(),
                                             utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      b, loc, SmallVector<Type>(numResults, type), inputs, inits, maps,
      iterators, [&](OpBuilder &nb, Location nl, ValueRange args) {
        linalg::YieldOp::create(nb, nl,
                                fn(nb, nl, args.take_front(inputs.size())));
      });
  return SmallVector<Value>(generic.getResults());
}

/// The running step's learning rate: a call of the runtime's
/// `double piper_step_lr(void)` (declared once in the module).
Value stepLearningRate(ConversionPatternRewriter &rewriter, Operation *op) {
  constexpr StringLiteral name = "piper_step_lr";
  auto module = op->getParentOfType<ModuleOp>();
  auto fn = module.lookupSymbol<func::FuncOp>(name);
  if (!fn) {
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPointToEnd(module.getBody());
    fn = func::FuncOp::create(
        rewriter, module.getLoc(), name,
        rewriter.getFunctionType({}, {rewriter.getF64Type()}));
    fn.setPrivate();
  }
  return func::CallOp::create(rewriter, op->getLoc(), fn, ValueRange{})
      .getResult(0);
}

/// Whether the operands are static float tensors (the element type's
/// support is the same as the other kernels': kernelFloatType).
LogicalResult checkOperands(Operation *op) {
  if (failed(kernelFloatType(op, /*report=*/true)))
    return failure();
  if (!cast<RankedTensorType>(op->getOperand(0).getType()).hasStaticShape())
    return op->emitError() << "the native lowering needs static shapes";
  return success();
}

/// piper.sgd_update -> one generic: ref::sgdStep per element.
struct SgdUpdateToLinalg : OpConversionPattern<SgdUpdateOp> {
  SgdUpdateToLinalg(MLIRContext *context)
      : OpConversionPattern(context, /*benefit=*/2) {}

  LogicalResult
  matchAndRewrite(SgdUpdateOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (failed(checkOperands(op)))
      return failure();
    double momentum = op.getMomentum().convertToDouble();
    double weightDecay = op.getWeightDecay().convertToDouble();
    Type elt = op.getParam().getType().getElementType();
    Value lr = stepLearningRate(rewriter, op);
    SmallVector<Value> results = buildUpdate(
        rewriter, op.getLoc(),
        {adaptor.getParam(), adaptor.getGrad(), adaptor.getMomentumBuffer()}, 2,
        [&](OpBuilder &b, Location loc, ValueRange a) {
          F64 f{b, loc};
          Value x = f.load(a[0]), g = f.load(a[1]), buf = f.load(a[2]);
          if (weightDecay != 0.0)
            g = f.add(g, f.mul(f.constant(weightDecay), x));
          if (momentum != 0.0) {
            buf = f.add(f.mul(f.constant(momentum), buf), g);
            g = buf;
          }
          x = f.sub(x, f.mul(lr, g));
          return SmallVector<Value>{f.store(x, elt), f.store(buf, elt)};
        });
    rewriter.replaceOp(op, results);
    return success();
  }
};

/// piper.adamw_update -> the bias corrections from the step, then one
/// generic: ref::adamwStep per element.
struct AdamWUpdateToLinalg : OpConversionPattern<AdamWUpdateOp> {
  AdamWUpdateToLinalg(MLIRContext *context)
      : OpConversionPattern(context, /*benefit=*/2) {}

  LogicalResult
  matchAndRewrite(AdamWUpdateOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (failed(checkOperands(op)))
      return failure();
    double beta1 = op.getBeta1().convertToDouble();
    double beta2 = op.getBeta2().convertToDouble();
    double eps = op.getEps().convertToDouble();
    double weightDecay = op.getWeightDecay().convertToDouble();
    Type elt = op.getParam().getType().getElementType();
    Location loc = op.getLoc();

    // bias_i = 1 - beta_i^t, t the step as f64 (ref::adamwStep).
    F64 outer{rewriter, loc};
    Value step = tensor::ExtractOp::create(rewriter, loc, adaptor.getStep(),
                                           ValueRange{});
    Value t = arith::SIToFPOp::create(rewriter, loc, outer.type(), step);
    auto bias = [&](double beta) {
      return outer.sub(
          outer.constant(1.0),
          math::PowFOp::create(rewriter, loc, outer.constant(beta), t));
    };
    Value bias1 = bias(beta1), bias2 = bias(beta2);
    // lr * weight_decay once, as the reference's left-to-right product.
    Value lr = stepLearningRate(rewriter, op);
    Value lrDecay = outer.mul(lr, outer.constant(weightDecay));

    SmallVector<Value> results = buildUpdate(
        rewriter, loc,
        {adaptor.getParam(), adaptor.getGrad(), adaptor.getExpAvg(),
         adaptor.getExpAvgSq()},
        3, [&](OpBuilder &b, Location l, ValueRange a) {
          F64 f{b, l};
          Value x = f.load(a[0]), g = f.load(a[1]);
          // param -= lr * weight_decay * param, (lr * wd) first as in C++.
          x = f.sub(x, f.mul(lrDecay, x));
          Value m = f.add(f.mul(f.constant(beta1), f.load(a[2])),
                          f.mul(f.constant(1.0 - beta1), g));
          Value v = f.add(f.mul(f.constant(beta2), f.load(a[3])),
                          f.mul(f.mul(f.constant(1.0 - beta2), g), g));
          Value mHat = f.div(m, bias1);
          Value vHat = f.div(v, bias2);
          Value denom =
              f.add(math::SqrtOp::create(b, l, vHat), f.constant(eps));
          x = f.sub(x, f.div(f.mul(lr, mHat), denom));
          return SmallVector<Value>{f.store(x, elt), f.store(m, elt),
                                    f.store(v, elt)};
        });
    rewriter.replaceOp(op, results);
    return success();
  }
};

} // namespace

void mlir::piper::populateUpdatesToLinalgPatterns(RewritePatternSet &patterns) {
  patterns.add<SgdUpdateToLinalg, AdamWUpdateToLinalg>(patterns.getContext());
}
