//===- BuildDAG.cpp - Build the global training DAG -----------------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Turns a training step (a function whose top level is a sequence of chunks:
// forward, BI, BW and UPD) into a `piper.dag` of `piper.task` nodes, one per
// top-level chunk, each calling its chunk body outlined into a private
// function. Derived work outside every chunk (its pass on `piper.pass`)
// becomes untagged tasks, one per maximal run. Constants are cloned into
// the bodies that use them rather than becoming edges. Data edges are the
// SSA values between tasks; no temporal edges are added: scheduling is the
// job of `order` directives.
//
//===----------------------------------------------------------------------===//

#include "piper/Dialect/Piper/IR/PiperOps.h"
#include "piper/Dialect/Piper/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::piper {
#define GEN_PASS_DEF_PIPERBUILDDAG
#include "piper/Dialect/Piper/Transforms/Passes.h.inc"
} // namespace mlir::piper

using namespace mlir;
using namespace mlir::piper;

namespace {

/// `BW{PP=1,EP=3}`: the pass and the chunk's own tags, keys sorted (as in
/// the dictionary).
std::string nodeName(PassKind pass, DictionaryAttr tags) {
  return (stringifyPassKind(pass) + formatTags(tags.getValue())).str();
}

/// Symbol-safe form of a node name: `step.BW.PP1.EP3`.
std::string bodyName(StringRef function, PassKind pass, DictionaryAttr tags) {
  std::string name = (function + "." + stringifyPassKind(pass)).str();
  for (NamedAttribute tag : tags) {
    name += "." + tag.getName().getValue().str();
    if (auto integer = dyn_cast<IntegerAttr>(tag.getValue()))
      name += std::to_string(integer.getInt());
    else if (auto string = dyn_cast<StringAttr>(tag.getValue()))
      name += string.getValue().str();
  }
  return name;
}

/// Replaces each pair of BI and BW tasks with the same tags by one B task
/// whose body calls the two outlined bodies in turn: what BI hands to BW
/// stays inside, everything else either produces is a result.
void fuseBackward(DAGOp dag, SymbolTable &symbols) {
  MLIRContext *ctx = dag.getContext();
  llvm::DenseMap<DictionaryAttr, SmallVector<TaskOp>> weightParts;
  for (auto task : dag.getBody().getOps<TaskOp>())
    if (task.getPass() == PassKind::BW)
      weightParts[task.getTags()].push_back(task);
  // Collected first: fusing erases tasks.
  SmallVector<TaskOp> inputParts;
  for (auto task : dag.getBody().getOps<TaskOp>())
    if (task.getPass() == PassKind::BI)
      inputParts.push_back(task);
  for (TaskOp inputPart : inputParts) {
    auto it = weightParts.find(inputPart.getTags());
    if (it == weightParts.end() || it->second.size() != 1)
      continue;
    TaskOp weightPart = it->second.front();
    llvm::SetVector<Value> inputs;
    inputs.insert(inputPart.getInputs().begin(), inputPart.getInputs().end());
    for (Value input : weightPart.getInputs())
      if (input.getDefiningOp() != inputPart)
        inputs.insert(input);
    SmallVector<Value> outputs;
    for (Value output : inputPart.getOutputs())
      if (llvm::any_of(output.getUsers(),
                       [&](Operation *user) { return user != weightPart; }))
        outputs.push_back(output);
    llvm::append_range(outputs, weightPart.getOutputs());

    OpBuilder moduleBuilder(symbols.getOp()->getContext());
    moduleBuilder.setInsertionPointToEnd(
        &symbols.getOp()->getRegion(0).front());
    auto biBody = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
        inputPart, inputPart.getCalleeAttr());
    std::string name = biBody.getSymName().str();
    if (size_t at = name.find(".BI"); at != std::string::npos)
      name.replace(at, 3, ".B");
    auto body = func::FuncOp::create(
        moduleBuilder, inputPart.getLoc(), name,
        FunctionType::get(ctx, ValueRange(inputs.getArrayRef()).getTypes(),
                          ValueRange(outputs).getTypes()));
    body.setPrivate();
    symbols.insert(body);
    OpBuilder b = OpBuilder::atBlockEnd(body.addEntryBlock());
    IRMapping mapping;
    for (auto [value, arg] : llvm::zip(inputs, body.getArguments()))
      mapping.map(value, arg);
    auto callInputPart = func::CallOp::create(
        b, inputPart.getLoc(), inputPart.getCalleeAttr(),
        inputPart.getOutputs().getTypes(),
        llvm::map_to_vector(inputPart.getInputs(),
                            [&](Value v) { return mapping.lookup(v); }));
    mapping.map(inputPart.getOutputs(), callInputPart.getResults());
    auto callWeightPart = func::CallOp::create(
        b, weightPart.getLoc(), weightPart.getCalleeAttr(),
        weightPart.getOutputs().getTypes(),
        llvm::map_to_vector(weightPart.getInputs(),
                            [&](Value v) { return mapping.lookup(v); }));
    mapping.map(weightPart.getOutputs(), callWeightPart.getResults());
    func::ReturnOp::create(b, inputPart.getLoc(),
                           llvm::map_to_vector(outputs, [&](Value v) {
                             return mapping.lookup(v);
                           }));

    std::string nodeName = inputPart.getName().str();
    if (StringRef(nodeName).starts_with("BI"))
      nodeName.erase(1, 1);
    OpBuilder taskBuilder(inputPart);
    auto fused = TaskOp::create(
        taskBuilder, inputPart.getLoc(), ValueRange(outputs).getTypes(),
        taskBuilder.getStringAttr(nodeName), FlatSymbolRefAttr::get(body),
        inputs.getArrayRef(), inputPart.getTags(),
        PassKindAttr::get(ctx, PassKind::B), taskBuilder.getStrArrayAttr({}),
        /*devices=*/DictionaryAttr());
    for (auto [output, result] : llvm::zip(outputs, fused.getOutputs()))
      output.replaceUsesWithIf(
          result, [&](OpOperand &use) { return use.getOwner() != weightPart; });
    weightPart->erase();
    inputPart->erase();
  }
}

struct BuildDAGPass : public piper::impl::PiperBuildDAGBase<BuildDAGPass> {
  using Base::Base;
  LogicalResult build(func::FuncOp fn);

  void runOnOperation() override {
    SmallVector<func::FuncOp> steps;
    for (auto fn : getOperation().getOps<func::FuncOp>())
      if (!fn.isExternal() && !fn.getBody().getOps<AnnotateOp>().empty())
        steps.push_back(fn);
    if (steps.empty()) {
      // Located at the first function with a body (the model the user
      // meant), not at the module's unknown location.
      Operation *at = getOperation();
      for (auto fn : getOperation().getOps<func::FuncOp>())
        if (!fn.isExternal()) {
          at = fn;
          break;
        }
      at->emitError()
          << "piper-build-dag: no function has chunks (piper.annotate) to "
             "turn into DAG nodes";
      return signalPassFailure();
    }
    for (func::FuncOp fn : steps)
      if (failed(build(fn)))
        return signalPassFailure();
  }
};

LogicalResult BuildDAGPass::build(func::FuncOp fn) {
  if (!fn.getBody().hasOneBlock())
    return fn.emitError() << "piper-build-dag: @" << fn.getSymName()
                          << " has several blocks";
  MLIRContext *ctx = fn.getContext();
  Block &entry = fn.getBody().front();
  auto returnOp = cast<func::ReturnOp>(entry.getTerminator());
  OpBuilder moduleBuilder(fn);
  moduleBuilder.setInsertionPointAfter(fn);
  SymbolTable symbols(fn->getParentOp());

  // Group the top level into units: a chunk, or a maximal run of loose
  // non-constant ops of one pass. Constants are not units.
  struct Unit {
    SmallVector<Operation *> ops;
    PassKind pass;
    DictionaryAttr tags;
    Location loc;
  };
  SmallVector<Unit> units;
  for (Operation &op : entry.without_terminator()) {
    if (auto chunk = dyn_cast<AnnotateOp>(op)) {
      units.push_back({{chunk},
                       chunk.getPass().value_or(PassKind::F),
                       chunk.getTags(),
                       chunk.getLoc()});
      continue;
    }
    if (op.hasTrait<OpTrait::ConstantLike>())
      continue;
    auto passAttr =
        op.getAttrOfType<PassKindAttr>(PiperDialect::getPassAttrName());
    PassKind pass = passAttr ? passAttr.getValue() : PassKind::F;
    if (!units.empty() && units.back().tags.empty() &&
        !isa<AnnotateOp>(units.back().ops.front()) &&
        units.back().pass == pass) {
      units.back().ops.push_back(&op);
      continue;
    }
    units.push_back({{&op}, pass, DictionaryAttr::get(ctx), op.getLoc()});
  }

  // Outline each unit; the task replaces it in the function body.
  llvm::StringMap<unsigned> nameCount;
  SmallVector<TaskOp> tasks;
  for (Unit &unit : units) {
    // Results used outside the unit, and values it uses from outside.
    DenseSet<Operation *> inside(unit.ops.begin(), unit.ops.end());
    SmallVector<Value> outputs;
    for (Operation *op : unit.ops)
      for (Value result : op->getResults())
        if (llvm::any_of(result.getUsers(), [&](Operation *user) {
              return !inside.contains(user);
            }))
          outputs.push_back(result);
    llvm::SetVector<Value> captured;
    for (Operation *op : unit.ops)
      op->walk([&](Operation *nested) {
        for (Value operand : nested->getOperands()) {
          Operation *def = operand.getDefiningOp();
          bool local = def && (inside.contains(def) ||
                               llvm::any_of(unit.ops, [&](Operation *u) {
                                 return u->isProperAncestor(def);
                               }));
          if (!local)
            captured.insert(operand);
        }
      });
    SmallVector<Value> inputs;
    SmallVector<Value> constants;
    for (Value value : captured) {
      Operation *def = value.getDefiningOp();
      if (def && def->hasTrait<OpTrait::ConstantLike>())
        constants.push_back(value);
      else
        inputs.push_back(value);
    }

    std::string base = bodyName(fn.getSymName(), unit.pass, unit.tags);
    std::string name = nodeName(unit.pass, unit.tags);
    if (unsigned n = nameCount[name]++) {
      base += "." + std::to_string(n);
      name += "#" + std::to_string(n);
    }
    auto body = func::FuncOp::create(
        moduleBuilder, unit.loc, base,
        FunctionType::get(ctx, ValueRange(inputs).getTypes(),
                          ValueRange(outputs).getTypes()));
    body.setPrivate();
    symbols.insert(body); // uniquifies the symbol if needed
    Block *bodyBlock = body.addEntryBlock();
    OpBuilder b = OpBuilder::atBlockEnd(bodyBlock);
    IRMapping mapping;
    for (auto [value, arg] : llvm::zip(inputs, bodyBlock->getArguments()))
      mapping.map(value, arg);
    for (Value constant : constants)
      mapping.map(constant, b.clone(*constant.getDefiningOp())->getResult(0));
    for (Operation *op : unit.ops)
      b.clone(*op, mapping);
    SmallVector<Value> returned;
    for (Value output : outputs) {
      // A chunk's results are its yield's operands inside the body.
      if (auto chunk = dyn_cast<AnnotateOp>(output.getDefiningOp()))
        returned.push_back(mapping.lookup(output));
      else
        returned.push_back(mapping.lookup(output));
    }
    func::ReturnOp::create(b, unit.loc, returned);

    OpBuilder taskBuilder(unit.ops.front());
    auto task = TaskOp::create(
        taskBuilder, unit.loc, ValueRange(outputs).getTypes(),
        b.getStringAttr(name), FlatSymbolRefAttr::get(body), inputs, unit.tags,
        PassKindAttr::get(ctx, unit.pass), b.getStrArrayAttr({}),
        /*devices=*/DictionaryAttr());
    for (auto [output, result] : llvm::zip(outputs, task.getOutputs()))
      output.replaceAllUsesWith(result);
    for (Operation *op : llvm::reverse(unit.ops))
      op->erase();
    tasks.push_back(task);
  }

  // Wrap the tasks in a DAG whose results are the function's.
  OpBuilder b(returnOp);
  auto dag = DAGOp::create(b, fn.getLoc(), returnOp.getOperandTypes());
  Block *dagBlock = b.createBlock(&dag.getBody());
  for (TaskOp task : tasks)
    task->moveBefore(dagBlock, dagBlock->end());
  b.setInsertionPointToEnd(dagBlock);
  DAGYieldOp::create(b, fn.getLoc(), returnOp.getOperands());
  returnOp->setOperands(dag.getResults());
  if (fuseBackward)
    ::fuseBackward(dag, symbols);
  // Constants no task captured any more are dead.
  for (Operation &op : llvm::make_early_inc_range(entry))
    if (op.hasTrait<OpTrait::ConstantLike>() && op.use_empty())
      op.erase();
  return success();
}

} // namespace
