//===- Autodiff.cpp - Reverse-mode autodiff with a BI/BW split ------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Appends the backward pass to a model function in three steps:
//
//  1. Forward analysis: which values depend on parameters (only those need
//     cotangents) and which depend on data (their cotangents are "input
//     gradients" that earlier chunks wait for).
//  2. Reverse sweep: every forward op, innermost chunk first and in reverse
//     order, emits its VJP (VJPOpInterface) at the end of the function,
//     remembering the chunk path it was emitted for. Cotangents of a value
//     with several uses are summed.
//  3. Chunking: the ops emitted for a forward chunk are split into BI (the
//     backward slice of data-dependent values' cotangents) and BW (the rest,
//     which only parameter gradients need), and each part is wrapped in a
//     `piper.annotate` with the forward chunk's tags and `pass = BI`/`BW`.
//     BI never uses BW, so BI can always be placed first.
//
//===----------------------------------------------------------------------===//

#include "piper/Dialect/Piper/Transforms/Autodiff.h"
#include "piper/Dialect/Piper/IR/PiperOps.h"
#include "piper/Dialect/Piper/Transforms/ChunkUtils.h"
#include "piper/Dialect/Piper/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::piper {
#define GEN_PASS_DEF_PIPERAUTODIFF
#include "piper/Dialect/Piper/Transforms/Passes.h.inc"
} // namespace mlir::piper

using namespace mlir;
using namespace mlir::piper;

namespace {

/// Records every op the VJP rules create, with the chunk path current at
/// creation time.
struct Recorder : public OpBuilder::Listener {
  void notifyOperationInserted(Operation *op, OpBuilder::InsertPoint) override {
    ops.push_back(op);
    paths[op] = path;
  }
  SmallVector<Operation *> ops;
  DenseMap<Operation *, ChunkPath> paths;
  ChunkPath path;
};

bool isFloatTensor(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor && isa<FloatType>(tensor.getElementType());
}

class Differentiator {
public:
  explicit Differentiator(func::FuncOp fn) : fn(fn), builder(fn.getContext()) {}

  LogicalResult run();

private:
  void analyzeForward(Block &block);
  LogicalResult sweep(Block &block);
  void addCotangent(Value value, Value cotangent);
  Value getCotangent(Value value);
  void sumLeavingCotangents(AnnotateOp chunk,
                            const DenseMap<Value, size_t> &partsBefore);
  void classify();
  Value expose(Value value);
  void exposeSavedActivations();

  func::FuncOp fn;
  OpBuilder builder;
  Recorder recorder;
  DenseSet<Value> dependsOnParams, dependsOnData;
  /// Cotangent contributions per value, summed when first read so that the
  /// sum lands in the chunk defining the value (not in whichever use's chunk
  /// happened to contribute last).
  DenseMap<Value, SmallVector<Value, 1>> cotangents;
  DenseSet<Operation *> inputGradientOps;
};

void Differentiator::analyzeForward(Block &block) {
  for (Operation &op : block.without_terminator()) {
    if (auto annotate = dyn_cast<AnnotateOp>(op)) {
      Block &body = annotate.getBody().front();
      analyzeForward(body);
      for (auto [result, yielded] : llvm::zip(
               annotate.getResults(), body.getTerminator()->getOperands())) {
        if (dependsOnParams.contains(yielded))
          dependsOnParams.insert(result);
        if (dependsOnData.contains(yielded))
          dependsOnData.insert(result);
      }
      continue;
    }
    bool params = llvm::any_of(
        op.getOperands(), [&](Value v) { return dependsOnParams.contains(v); });
    bool data = llvm::any_of(
        op.getOperands(), [&](Value v) { return dependsOnData.contains(v); });
    for (Value result : op.getResults()) {
      if (params)
        dependsOnParams.insert(result);
      if (data)
        dependsOnData.insert(result);
    }
  }
}

void Differentiator::addCotangent(Value value, Value cotangent) {
  cotangents[value].push_back(cotangent);
}

Value Differentiator::getCotangent(Value value) {
  auto it = cotangents.find(value);
  if (it == cotangents.end())
    return {};
  SmallVector<Value, 1> &parts = it->second;
  Value sum = parts.front();
  for (Value part : llvm::drop_begin(parts))
    sum = AddOp::create(builder, value.getLoc(), sum.getType(), sum, part);
  parts.assign({sum});
  return sum;
}

/// Several contributions the backward of `chunk` made to the cotangent of
/// a value defined outside it (a stage's input read by both a residual and
/// a norm) are summed inside that backward, so one value, not one per use,
/// crosses to the defining chunk: with pipeline stages, one transfer.
void Differentiator::sumLeavingCotangents(
    AnnotateOp chunk, const DenseMap<Value, size_t> &partsBefore) {
  Region &inside = chunk.getBody();
  for (auto &[value, parts] : cotangents) {
    if (inside.isAncestor(value.getParentRegion()))
      continue;
    size_t before = partsBefore.lookup(value);
    if (parts.size() < before + 2)
      continue;
    Value sum = parts[before];
    for (Value part : llvm::drop_begin(parts, before + 1))
      sum = AddOp::create(builder, value.getLoc(), sum.getType(), sum, part);
    parts.resize(before);
    parts.push_back(sum);
  }
}

LogicalResult Differentiator::sweep(Block &block) {
  for (Operation &op : llvm::reverse(block.without_terminator())) {
    if (auto annotate = dyn_cast<AnnotateOp>(op)) {
      Operation *yield = annotate.getBody().front().getTerminator();
      for (auto [result, yielded] :
           llvm::zip(annotate.getResults(), yield->getOperands()))
        // Hand the parts over unsummed: the sum then lands inside the chunk
        // (where the yielded value is read), not between chunks.
        if (auto it = cotangents.find(result); it != cotangents.end()) {
          SmallVector<Value, 1> parts = it->second;
          for (Value part : parts)
            addCotangent(yielded, part);
        }
      recorder.path.push_back(annotate);
      DenseMap<Value, size_t> partsBefore;
      for (auto &[value, parts] : cotangents)
        partsBefore[value] = parts.size();
      LogicalResult swept = sweep(annotate.getBody().front());
      if (succeeded(swept))
        sumLeavingCotangents(annotate, partsBefore);
      recorder.path.pop_back();
      if (failed(swept))
        return failure();
      continue;
    }

    if (op.getNumRegions() != 0) {
      // Only piper.annotate regions are understood; silently skipping a
      // region that uses a parameter would give it a zero gradient.
      bool usesParams = false;
      op.walk([&](Operation *inner) {
        usesParams |= llvm::any_of(inner->getOperands(), [&](Value v) {
          return dependsOnParams.contains(v);
        });
      });
      if (usesParams)
        return op.emitError() << "cannot differentiate '" << op.getName()
                              << "': region ops other than piper.annotate "
                                 "are not supported";
    }

    SmallVector<Value> resultCotangents;
    for (Value result : op.getResults())
      resultCotangents.push_back(getCotangent(result));
    if (llvm::all_of(resultCotangents, [](Value v) { return !v; }))
      continue;
    SmallVector<bool> needed;
    for (Value operand : op.getOperands())
      needed.push_back(isFloatTensor(operand.getType()) &&
                       dependsOnParams.contains(operand));
    if (llvm::none_of(needed, [](bool b) { return b; }))
      continue;

    SmallVector<Value> operandCotangents(op.getNumOperands());
    if (auto vjp = dyn_cast<VJPOpInterface>(op)) {
      if (failed(vjp.buildVJP(builder, resultCotangents, needed,
                              operandCotangents)))
        return failure();
    } else if (isa<ElementwiseOpInterface>(op)) {
      if (failed(buildGenericVJP(&op, builder, resultCotangents, needed,
                                 operandCotangents)))
        return failure();
    } else {
      return op.emitError() << "cannot differentiate '" << op.getName()
                            << "': it has no VJP rule (models are written "
                               "with piper ops)";
    }
    for (auto [operand, cotangent] :
         llvm::zip(op.getOperands(), operandCotangents))
      if (cotangent)
        addCotangent(operand, cotangent);
  }
  return success();
}

/// BI = every emitted op that the cotangent of some data-dependent value
/// needs; what remains only feeds parameter gradients (BW).
void Differentiator::classify() {
  DenseSet<Operation *> emitted(recorder.ops.begin(), recorder.ops.end());
  SmallVector<Operation *> worklist;
  for (auto &[value, parts] : cotangents)
    if (dependsOnData.contains(value))
      for (Value cotangent : parts)
        if (Operation *def = cotangent.getDefiningOp();
            def && emitted.contains(def))
          worklist.push_back(def);
  while (!worklist.empty()) {
    Operation *op = worklist.pop_back_val();
    if (!inputGradientOps.insert(op).second)
      continue;
    for (Value operand : op->getOperands())
      if (Operation *def = operand.getDefiningOp();
          def && emitted.contains(def))
        worklist.push_back(def);
  }
}

/// Makes `value`, defined inside forward chunks, visible at function level
/// by yielding it from each enclosing chunk: the backward pass reads it (a
/// saved activation), and the DAG will see the edge from F to B.
Value Differentiator::expose(Value value) {
  auto chunk = dyn_cast<AnnotateOp>(value.getParentRegion()->getParentOp());
  if (!chunk)
    return value;
  auto yield = cast<YieldOp>(chunk.getBody().front().getTerminator());
  for (auto [index, yielded] : llvm::enumerate(yield.getOperands()))
    if (yielded == value)
      return expose(chunk.getResult(index));

  // Results are fixed at creation: rebuild the chunk with one more.
  OpBuilder b(chunk);
  SmallVector<Type> types = llvm::to_vector(chunk.getResultTypes());
  types.push_back(value.getType());
  auto grown = AnnotateOp::create(b, chunk.getLoc(), types, chunk.getTags(),
                                  chunk.getPassAttr());
  grown.getBody().takeBody(chunk.getBody());
  yield->insertOperands(yield->getNumOperands(), value);
  chunk->replaceAllUsesWith(grown.getResults().drop_back());
  chunk->erase();
  return expose(grown.getResults().back());
}

void Differentiator::exposeSavedActivations() {
  // A parameter's low-precision working copy (piper.cast of the parameter,
  // --piper-mixed-precision) is cast again where the backward reads it,
  // once per backward block, instead of being saved: a saved copy would
  // live from the forward to the backward of every microbatch in flight
  // (under 1F1B, a stage's weights in bf16 times the microbatches in
  // flight), and under ZeRO-3 the backward gathers the parameter anyway.
  DenseMap<std::pair<Value, Block *>, Value> recast;
  for (Operation *op : recorder.ops) {
    for (OpOperand &use : op->getOpOperands()) {
      Region *defined = use.get().getParentRegion();
      if (defined->isAncestor(op->getParentRegion()))
        continue;
      auto cast = use.get().getDefiningOp<CastOp>();
      auto param = cast ? dyn_cast<BlockArgument>(cast.getX()) : nullptr;
      if (param && param.getOwner() == &fn.getBody().front() &&
          dependsOnParams.contains(param)) {
        Block *block = op->getBlock();
        Value &copy = recast[{use.get(), block}];
        if (!copy) {
          OpBuilder b = OpBuilder::atBlockBegin(block);
          copy = b.clone(*cast)->getResult(0);
        }
        use.set(copy);
        continue;
      }
      use.set(expose(use.get()));
    }
  }
}

LogicalResult Differentiator::run() {
  if (!fn.getBody().hasOneBlock())
    return fn.emitError() << "autodiff: @" << fn.getSymName()
                          << " has several blocks; models are a single "
                             "block of piper ops and chunks";
  auto returnOp = cast<func::ReturnOp>(fn.getBody().front().getTerminator());
  if (returnOp.getNumOperands() != 1 ||
      !isFloatTensor(returnOp.getOperand(0).getType()) ||
      cast<RankedTensorType>(returnOp.getOperand(0).getType()).getRank() != 0)
    return fn.emitError() << "autodiff: @" << fn.getSymName()
                          << " must return a single scalar loss such as "
                             "tensor<f32>";

  SmallVector<BlockArgument> params;
  for (BlockArgument arg : fn.getArguments()) {
    if (fn.getArgAttrOfType<ParamAttr>(arg.getArgNumber(),
                                       PiperDialect::getParamAttrName())) {
      params.push_back(arg);
      dependsOnParams.insert(arg);
    } else {
      dependsOnData.insert(arg);
    }
  }
  analyzeForward(fn.getBody().front());

  builder.setListener(&recorder);
  builder.setInsertionPoint(returnOp);
  Value loss = returnOp.getOperand(0);
  auto lossType = cast<RankedTensorType>(loss.getType());
  cotangents[loss].push_back(arith::ConstantOp::create(
      builder, fn.getLoc(),
      DenseElementsAttr::get(
          lossType, builder.getFloatAttr(lossType.getElementType(), 1.0))));
  if (failed(sweep(fn.getBody().front())))
    return failure();

  SmallVector<Value> results{loss};
  for (BlockArgument param : params) {
    // Sum a parameter's contributions inside the chunk they all come from
    // (e.g. a weight used twice in one layer); otherwise between chunks.
    recorder.path.clear();
    if (auto it = cotangents.find(param); it != cotangents.end()) {
      std::optional<ChunkPath> common;
      for (Value part : it->second)
        narrowToCommonPrefix(common,
                             recorder.paths.lookup(part.getDefiningOp()));
      recorder.path = common.value_or(ChunkPath());
    }
    Value gradient = getCotangent(param);
    if (!gradient) {
      auto type = cast<RankedTensorType>(param.getType());
      gradient = arith::ConstantOp::create(
          builder, fn.getLoc(),
          DenseElementsAttr::get(type,
                                 builder.getZeroAttr(type.getElementType())));
    }
    results.push_back(gradient);
  }
  recorder.path.clear();
  builder.setListener(nullptr);
  // Return the gradients before chunking, so that chunks yield them.
  returnOp->setOperands(results);

  classify();
  // BI first: nothing in BI uses BW, and earlier chunks' BI wait for it.
  formChunks(recorder.ops, recorder.paths, [&](Operation *op) {
    return inputGradientOps.contains(op) ? PassKind::BI : PassKind::BW;
  });
  exposeSavedActivations();

  SmallVector<Type> resultTypes = llvm::to_vector(returnOp->getOperandTypes());
  SmallVector<DictionaryAttr> oldResultAttrs;
  fn.getAllResultAttrs(oldResultAttrs);
  fn.setFunctionType(
      FunctionType::get(fn.getContext(), fn.getArgumentTypes(), resultTypes));
  MLIRContext *ctx = fn.getContext();
  SmallVector<Attribute> resultAttrs{
      oldResultAttrs.empty() ? DictionaryAttr::get(ctx) : oldResultAttrs[0]};
  for (BlockArgument param : params) {
    auto attr = fn.getArgAttrOfType<ParamAttr>(
        param.getArgNumber(), PiperDialect::getParamAttrName());
    resultAttrs.push_back(DictionaryAttr::get(
        ctx,
        {NamedAttribute(StringAttr::get(ctx, PiperDialect::getGradAttrName()),
                        attr.getName())}));
  }
  fn.setAllResultAttrs(resultAttrs);
  return success();
}

struct AutodiffPass : public piper::impl::PiperAutodiffBase<AutodiffPass> {
  void runOnOperation() override {
    bool any = false;
    for (auto fn : getOperation().getOps<func::FuncOp>()) {
      if (fn.isExternal() ||
          llvm::none_of(fn.getArguments(), [&](BlockArgument arg) {
            return fn.getArgAttr(arg.getArgNumber(),
                                 PiperDialect::getParamAttrName());
          }))
        continue;
      any = true;
      if (failed(differentiate(fn)))
        return signalPassFailure();
    }
    if (!any) {
      getOperation().emitError()
          << "autodiff: no function with piper.param arguments to "
             "differentiate";
      signalPassFailure();
    }
  }
};

} // namespace

LogicalResult mlir::piper::differentiate(func::FuncOp fn) {
  return Differentiator(fn).run();
}
