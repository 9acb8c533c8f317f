//===- MixedPrecision.cpp - bf16 compute with f32 master weights ----------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Rewrites an f32 model under a precision policy. Ops are visited in block
// order (chunk bodies before their `piper.annotate`'s results are re-typed),
// so every operand already has its final type when its user is rewritten:
// an operand whose element type is not the one its op computes in gets a
// `piper.cast`, made once per (value, type, block) and placed right after
// the value's definition (or at the top of the block for a value from an
// enclosing one), so a parameter used by several ops of a chunk is
// converted once. Nothing but types and casts changes, so autodiff, the
// DAG builder and the strategy see an ordinary model.
//
//===----------------------------------------------------------------------===//

#include "piper/Dialect/Piper/Transforms/MixedPrecision.h"

#include "piper/Dialect/Piper/IR/PiperOps.h"
#include "piper/Dialect/Piper/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"

namespace mlir::piper {
#define GEN_PASS_DEF_PIPERMIXEDPRECISION
#include "piper/Dialect/Piper/Transforms/Passes.h.inc"
} // namespace mlir::piper

using namespace mlir;
using namespace mlir::piper;

//===----------------------------------------------------------------------===//
// The policy
//===----------------------------------------------------------------------===//

StringRef mlir::piper::stringifyFloatKind(FloatKind kind) {
  return kind == FloatKind::F32 ? "f32" : "bf16";
}

FloatType mlir::piper::getFloatType(MLIRContext *context, FloatKind kind) {
  if (kind == FloatKind::F32)
    return Float32Type::get(context);
  return BFloat16Type::get(context);
}

std::optional<PrecisionPolicy>
mlir::piper::parsePrecisionPolicy(StringRef precision, StringRef gradReduce,
                                  std::string &error) {
  PrecisionPolicy policy;
  if (precision == "bf16-mixed") {
    policy.compute = FloatKind::BF16;
  } else if (precision != "f32") {
    error =
        ("unknown precision '" + precision + "'; expected f32 or bf16-mixed")
            .str();
    return std::nullopt;
  }
  if (gradReduce == "bf16") {
    // The gradient of a master weight is the cast of its bf16 copy's
    // cotangent, made inside the backward task; reducing in bf16 needs the
    // cast moved after the reduction, which the DAG builder does not do.
    error = "grad-reduce-dtype 'bf16' is not supported yet: a parameter's "
            "gradient is cast to f32 inside its backward task, before any "
            "reduction; use f32";
    return std::nullopt;
  }
  if (!gradReduce.empty() && gradReduce != "f32") {
    error =
        ("unknown grad-reduce-dtype '" + gradReduce + "'; expected f32 or bf16")
            .str();
    return std::nullopt;
  }
  return policy;
}

bool mlir::piper::hasPrecisionCasts(func::FuncOp fn) {
  return fn.walk([](CastOp) { return WalkResult::interrupt(); })
      .wasInterrupted();
}

//===----------------------------------------------------------------------===//
// Checks
//===----------------------------------------------------------------------===//

namespace {

/// The element type of a float tensor type, or null.
FloatType floatElement(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor ? dyn_cast<FloatType>(tensor.getElementType()) : FloatType();
}

/// Ops of a differentiated step or a DAG: the policy applies to the model.
bool isAfterAutodiff(Operation *op) {
  return isa<VJPOp, SgdUpdateOp, AdamWUpdateOp, DAGOp, TaskOp, TransferOp,
             CollectiveOp, MicrobatchOp, AccumulateOp>(op);
}

/// A forward NN op: a Piper op with a distribution rule.
bool isNNOp(Operation *op) {
  return isa<DistributionOpInterface>(op) && !isAfterAutodiff(op);
}

/// Ops the rewrite passes through: chunks, terminators, float sources.
bool isStructural(Operation *op) {
  return isa<AnnotateOp, YieldOp, func::ReturnOp, arith::ConstantOp>(op);
}

/// Checks that `fn` is an f32 forward model of Piper ops.
LogicalResult checkModel(func::FuncOp fn) {
  for (BlockArgument arg : fn.getArguments())
    if (FloatType element = floatElement(arg.getType());
        element && !element.isF32())
      return emitError(arg.getLoc())
             << "piper-mixed-precision: argument #" << arg.getArgNumber()
             << " of @" << fn.getSymName() << " has type " << arg.getType()
             << "; the pass rewrites f32 models";
  WalkResult walk = fn.walk([&](Operation *op) {
    if (isAfterAutodiff(op)) {
      op->emitError() << "piper-mixed-precision: '" << op->getName()
                      << "' belongs to a differentiated step; run "
                         "--piper-mixed-precision on the model, before "
                         "--piper-autodiff";
      return WalkResult::interrupt();
    }
    bool usesFloats = llvm::any_of(op->getOperandTypes(), floatElement) ||
                      llvm::any_of(op->getResultTypes(), floatElement);
    if (usesFloats && !isNNOp(op) && !isStructural(op)) {
      op->emitError() << "piper-mixed-precision: '" << op->getName()
                      << "' is not a Piper NN op; its precision cannot be "
                         "chosen";
      return WalkResult::interrupt();
    }
    for (Type type :
         llvm::concat<Type>(SmallVector<Type>(op->getOperandTypes()),
                            SmallVector<Type>(op->getResultTypes())))
      if (FloatType element = floatElement(type); element && !element.isF32()) {
        op->emitError() << "piper-mixed-precision: '" << op->getName()
                        << "' uses " << type
                        << "; the pass rewrites f32 models (and runs once)";
        return WalkResult::interrupt();
      }
    return WalkResult::advance();
  });
  return failure(walk.wasInterrupted());
}

//===----------------------------------------------------------------------===//
// Rewrite
//===----------------------------------------------------------------------===//

class Rewriter {
public:
  Rewriter(const PrecisionPolicy &policy, MLIRContext *context)
      : compute(getFloatType(context, policy.compute)),
        loss(getFloatType(context, policy.loss)) {}

  void runOnBlock(Block &block);

private:
  /// `value` as a tensor of `element`, for a user in `block`.
  Value castTo(Value value, FloatType element, Block &block);
  void rewriteNNOp(Operation *op);

  FloatType compute, loss;
  DenseMap<std::tuple<Value, Type, Block *>, Value> casts;
  /// The last cast made at the top of each block.
  DenseMap<Block *, Operation *> openingCasts;
};

Value Rewriter::castTo(Value value, FloatType element, Block &block) {
  FloatType current = floatElement(value.getType());
  if (!current || current == element)
    return value;
  auto type = cast<RankedTensorType>(value.getType()).clone(element);
  Value &cached = casts[{value, type, &block}];
  if (cached)
    return cached;
  OpBuilder b(value.getContext());
  Operation *def = value.getDefiningOp();
  // Casts of values from outside the block open it, in order of first use.
  bool local = def && def->getBlock() == &block;
  Operation *&lastOpening = openingCasts[&block];
  if (local)
    b.setInsertionPointAfter(def);
  else if (lastOpening)
    b.setInsertionPointAfter(lastOpening);
  else
    b.setInsertionPointToStart(&block);
  auto castOp = CastOp::create(b, value.getLoc(), type, value);
  if (!local)
    lastOpening = castOp;
  cached = castOp;
  return cached;
}

void Rewriter::rewriteNNOp(Operation *op) {
  // The loss op computes in the loss type and returns it; everything else
  // computes in the compute type.
  FloatType element = isa<CrossEntropyOp>(op) ? loss : compute;
  for (OpOperand &operand : op->getOpOperands())
    operand.set(castTo(operand.get(), element, *op->getBlock()));
  for (OpResult result : op->getResults())
    if (floatElement(result.getType()))
      result.setType(cast<RankedTensorType>(result.getType()).clone(element));
}

void Rewriter::runOnBlock(Block &block) {
  for (Operation &op : llvm::make_early_inc_range(block)) {
    if (isa<CastOp>(op))
      continue; // Made by this rewrite.
    if (auto chunk = dyn_cast<AnnotateOp>(op)) {
      Block &body = chunk.getBody().front();
      runOnBlock(body);
      for (auto [result, yielded] :
           llvm::zip(chunk.getResults(), body.getTerminator()->getOperands()))
        result.setType(yielded.getType());
    } else if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      auto fn = ret->getParentOfType<func::FuncOp>();
      for (auto [operand, type] :
           llvm::zip(ret->getOpOperands(), fn.getFunctionType().getResults()))
        if (FloatType element = floatElement(type))
          operand.set(castTo(operand.get(), element, block));
    } else if (isNNOp(&op)) {
      rewriteNNOp(&op);
    }
  }
}

} // namespace

LogicalResult mlir::piper::applyPrecisionPolicy(func::FuncOp fn,
                                                const PrecisionPolicy &policy) {
  if (!policy.isMixed() || fn.isExternal())
    return success();
  if (failed(checkModel(fn)))
    return failure();
  Rewriter(policy, fn.getContext()).runOnBlock(fn.getBody().front());
  return success();
}

//===----------------------------------------------------------------------===//
// Pass
//===----------------------------------------------------------------------===//

namespace {

struct MixedPrecisionPass
    : public piper::impl::PiperMixedPrecisionBase<MixedPrecisionPass> {
  using PiperMixedPrecisionBase::PiperMixedPrecisionBase;

  void runOnOperation() override {
    std::string error;
    std::optional<PrecisionPolicy> policy =
        parsePrecisionPolicy(precision, gradReduceDtype, error);
    if (!policy) {
      getOperation().emitError() << "piper-mixed-precision: " << error;
      return signalPassFailure();
    }
    for (auto fn : getOperation().getOps<func::FuncOp>())
      if (failed(applyPrecisionPolicy(fn, *policy)))
        return signalPassFailure();
  }
};

} // namespace
