//===- Optimizer.cpp - Append optimizer updates to a training step --------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Turns a differentiated model (loss + gradients) into a full training step:
// the optimizer state becomes function arguments and results, and each
// parameter's update runs in a `pass = UPD` chunk carrying the tags of the
// forward chunk that uses the parameter, so that directives place and
// schedule updates next to the stage that owns the weight. Weight decay is
// per parameter group (piper-rt/train.h's DecayRule): by default biases and
// norm gains (rank < 2) do not decay.
//
//===----------------------------------------------------------------------===//

#include "piper-rt/train.h"
#include "piper/Dialect/Piper/IR/PiperOps.h"
#include "piper/Dialect/Piper/Transforms/ChunkUtils.h"
#include "piper/Dialect/Piper/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

namespace mlir::piper {
#define GEN_PASS_DEF_PIPEROPTIMIZER
#include "piper/Dialect/Piper/Transforms/Passes.h.inc"
} // namespace mlir::piper

using namespace mlir;
using namespace mlir::piper;

namespace {

/// Forward chunks enclosing `op`, outermost first.
ChunkPath forwardPathOf(Operation *op) {
  ChunkPath path;
  for (auto chunk = op->getParentOfType<AnnotateOp>(); chunk;
       chunk = chunk->getParentOfType<AnnotateOp>())
    path.insert(path.begin(), chunk);
  return path;
}

/// The innermost forward chunk path common to every forward use of `param`:
/// where its update belongs. Uses in derived (backward) chunks don't count.
ChunkPath updatePathOf(BlockArgument param) {
  std::optional<ChunkPath> common;
  for (Operation *user : param.getUsers()) {
    ChunkPath path = forwardPathOf(user);
    if (llvm::any_of(path, [](AnnotateOp c) {
          return c.getPass().value_or(PassKind::F) != PassKind::F;
        }))
      continue;
    narrowToCommonPrefix(common, path);
  }
  return common.value_or(ChunkPath());
}

struct OptimizerPass
    : public mlir::piper::impl::PiperOptimizerBase<OptimizerPass> {
  using PiperOptimizerBase::PiperOptimizerBase;

  LogicalResult updateFunction(func::FuncOp fn);

  /// The weight decay of parameter `name` of type `type`: the option's (or
  /// the optimizer's default) unless the no-decay rule excludes it.
  double weightDecayOf(StringRef name, Type type) const {
    double decay = weightDecay < 0
                       ? ::piper::train::defaultWeightDecay(optimizer)
                       : double(weightDecay);
    int64_t rank = cast<ShapedType>(type).getRank();
    return ::piper::train::decays(decayRule, name.str(), rank) ? decay : 0.0;
  }

  ::piper::train::DecayRule decayRule;

  void runOnOperation() override {
    if (optimizer != "sgd" && optimizer != "adamw") {
      getOperation().emitError() << "piper-optimizer: unknown optimizer '"
                                 << optimizer << "'; expected sgd or adamw";
      return signalPassFailure();
    }
    std::string error;
    if (!::piper::train::parseDecayRule(noDecay, decayRule, error)) {
      getOperation().emitError() << "piper-optimizer: " << error;
      return signalPassFailure();
    }
    bool any = false;
    for (auto fn : getOperation().getOps<func::FuncOp>()) {
      if (fn.isExternal() ||
          !llvm::any_of(llvm::seq(fn.getNumResults()), [&](unsigned i) {
            return fn.getResultAttr(i, PiperDialect::getGradAttrName());
          }))
        continue;
      any = true;
      if (failed(updateFunction(fn)))
        return signalPassFailure();
    }
    if (!any) {
      getOperation().emitError()
          << "piper-optimizer: no function returns gradients (piper.grad); "
             "run piper-autodiff first";
      signalPassFailure();
    }
  }
};

LogicalResult OptimizerPass::updateFunction(func::FuncOp fn) {
  MLIRContext *ctx = fn.getContext();
  auto returnOp = cast<func::ReturnOp>(fn.getBody().front().getTerminator());
  bool adamw = optimizer == "adamw";

  // Parameters by name, and each gradient result.
  llvm::StringMap<BlockArgument> params;
  for (BlockArgument arg : fn.getArguments())
    if (auto param = fn.getArgAttrOfType<ParamAttr>(
            arg.getArgNumber(), PiperDialect::getParamAttrName()))
      params[param.getName().getValue()] = arg;
  struct Update {
    BlockArgument param;
    StringAttr name;
    Value grad;
    ChunkPath path;
  };
  SmallVector<Update> updates;
  SmallVector<Value> kept;
  SmallVector<DictionaryAttr> keptAttrs;
  for (unsigned i = 0, e = fn.getNumResults(); i < e; ++i) {
    auto name =
        fn.getResultAttrOfType<StringAttr>(i, PiperDialect::getGradAttrName());
    if (!name) {
      kept.push_back(returnOp.getOperand(i));
      keptAttrs.push_back(fn.getResultAttrDict(i) ? fn.getResultAttrDict(i)
                                                  : DictionaryAttr::get(ctx));
      continue;
    }
    BlockArgument param = params.lookup(name.getValue());
    updates.push_back(
        {param, name, returnOp.getOperand(i), updatePathOf(param)});
  }

  // Group updates by chunk (pre-order of forward chunks) so every chunk's
  // updates are contiguous at every nesting depth.
  DenseMap<Operation *, unsigned> preorder;
  fn.walk<WalkOrder::PreOrder>(
      [&](AnnotateOp chunk) { preorder.try_emplace(chunk, preorder.size()); });
  auto key = [&](const Update &u) {
    return llvm::map_to_vector(u.path,
                               [&](AnnotateOp c) { return preorder[c]; });
  };
  llvm::stable_sort(updates, [&](const Update &a, const Update &b) {
    return key(a) < key(b);
  });

  // State arguments, appended after the existing ones.
  auto stepType = RankedTensorType::get({}, IntegerType::get(ctx, 64));
  SmallVector<StringRef> slots =
      adamw ? SmallVector<StringRef>{"exp_avg", "exp_avg_sq", "step"}
            : SmallVector<StringRef>{"momentum_buffer"};
  auto stateAttr = [&](StringAttr name, StringRef slot) {
    return DictionaryAttr::get(
        ctx, {NamedAttribute(
                 StringAttr::get(ctx, PiperDialect::getStateAttrName()),
                 OptStateAttr::get(ctx, name, StringAttr::get(ctx, slot)))});
  };
  DenseMap<std::pair<unsigned, unsigned>, BlockArgument> stateArgs;
  for (auto [u, update] : llvm::enumerate(updates)) {
    for (auto [s, slot] : llvm::enumerate(slots)) {
      Type type = slot == "step" ? Type(stepType) : update.param.getType();
      unsigned index = fn.getNumArguments();
      if (failed(fn.insertArgument(index, type, stateAttr(update.name, slot),
                                   update.param.getLoc())))
        return failure();
      stateArgs[{unsigned(u), unsigned(s)}] = fn.getArgument(index);
    }
  }

  OpBuilder b(returnOp);
  DenseMap<Operation *, ChunkPath> paths;
  SmallVector<Operation *> emitted;
  struct Recorder : OpBuilder::Listener {
    void notifyOperationInserted(Operation *op,
                                 OpBuilder::InsertPoint) override {
      ops->push_back(op);
      (*paths)[op] = *path;
    }
    SmallVector<Operation *> *ops;
    DenseMap<Operation *, ChunkPath> *paths;
    const ChunkPath *path;
  } recorder;
  recorder.ops = &emitted;
  recorder.paths = &paths;
  b.setListener(&recorder);

  SmallVector<Value> results(kept);
  SmallVector<DictionaryAttr> resultAttrs(keptAttrs);
  auto f64 = [&](double v) { return b.getF64FloatAttr(v); };
  for (auto [u, update] : llvm::enumerate(updates)) {
    recorder.path = &update.path;
    Location loc = update.param.getLoc();
    unsigned index = u;
    auto state = [&](unsigned s) { return stateArgs[{index, s}]; };
    SmallVector<Value> outs;
    if (adamw) {
      Value one = arith::ConstantOp::create(
          b, loc, DenseElementsAttr::get(stepType, b.getI64IntegerAttr(1)));
      Value step = arith::AddIOp::create(b, loc, state(2), one);
      Type t = update.param.getType();
      auto op = AdamWUpdateOp::create(
          b, loc, TypeRange{t, t, t}, update.param, update.grad, state(0),
          state(1), step, f64(lr), f64(beta1), f64(beta2), f64(eps),
          f64(weightDecayOf(update.name.getValue(), t)));
      outs = {op.getNewParam(), op.getNewExpAvg(), op.getNewExpAvgSq(), step};
    } else {
      Type t = update.param.getType();
      auto op = SgdUpdateOp::create(
          b, loc, TypeRange{t, t}, update.param, update.grad, state(0), f64(lr),
          f64(momentum), f64(weightDecayOf(update.name.getValue(), t)));
      outs = {op.getNewParam(), op.getNewMomentumBuffer()};
    }
    results.push_back(outs[0]);
    resultAttrs.push_back(DictionaryAttr::get(
        ctx, {NamedAttribute(
                 StringAttr::get(ctx, PiperDialect::getUpdatedAttrName()),
                 update.name)}));
    for (auto [s, slot] : llvm::enumerate(slots)) {
      results.push_back(outs[s + 1]);
      resultAttrs.push_back(stateAttr(update.name, slot));
    }
  }
  b.setListener(nullptr);

  returnOp->setOperands(results);
  formChunks(emitted, paths, [](Operation *) { return PassKind::UPD; });
  fn.setFunctionType(FunctionType::get(ctx, fn.getArgumentTypes(),
                                       returnOp->getOperandTypes()));
  fn.setAllResultAttrs(resultAttrs);
  return success();
}

} // namespace
