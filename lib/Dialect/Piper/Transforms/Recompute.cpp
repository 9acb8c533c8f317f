//===- Recompute.cpp - Activation recomputation on the DAG ----------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// A recomputed forward node keeps none of the activations its backward
// reads (or, in selective mode, none of those the selected ops compute):
// an `R` node re-runs the forward ops from the chunk's saved inputs right
// before the backward. Because R is an ordinary task calling an ordinary
// body, every later level sees it without special cases: the memory plan
// counts its outputs from R to the backward and the chunk inputs it reads
// as saved activations, the simulator costs its FLOPs, partitioning makes
// it a launch and the native lowering compiles its body from the same
// forward kernels.
//
//===----------------------------------------------------------------------===//

#include "piper/Dialect/Piper/Transforms/Recompute.h"
#include "piper/Analysis/TagFilter.h"
#include "piper/Dialect/Piper/Transforms/ScheduleDAG.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace mlir::piper;

namespace {

bool isBackwardPass(PassKind pass) {
  return pass == PassKind::B || pass == PassKind::BI || pass == PassKind::BW;
}

/// The ops of `block` in program order, looking through chunks
/// (`piper.annotate` only groups ops; a recompute body is flat).
void collectOps(Block &block, SmallVectorImpl<Operation *> &ops) {
  for (Operation &op : block.without_terminator()) {
    if (auto chunk = dyn_cast<AnnotateOp>(op)) {
      collectOps(chunk.getBody().front(), ops);
      continue;
    }
    ops.push_back(&op);
  }
}

/// The value a chunk result stands for: its yield's operand, recursively.
Value resolve(Value value) {
  while (auto chunk = value.getDefiningOp<AnnotateOp>()) {
    Operation *yield = chunk.getBody().front().getTerminator();
    value = yield->getOperand(cast<OpResult>(value).getResultNumber());
  }
  return value;
}

/// Values `op` reads: its operands and what its regions capture.
SmallVector<Value> usedValues(Operation *op) {
  llvm::SetVector<Value> used(op->operand_begin(), op->operand_end());
  if (op->getNumRegions())
    getUsedValuesDefinedAbove(op->getRegions(), used);
  return llvm::map_to_vector(used, resolve);
}

/// "[attention, swiglu]", or "the whole chunk" for no kinds.
std::string describeKinds(ArrayRef<std::string> kinds) {
  if (kinds.empty())
    return "the whole chunk";
  return "ops [" + llvm::join(kinds, ", ") + "]";
}

/// Replaces `forward` by a copy returning only the outputs something still
/// reads (the recomputed activations no longer leave it). The copy calls a
/// body returning only those; microbatch copies share it.
TaskOp dropUnusedOutputs(TaskOp forward, func::FuncOp body,
                         SymbolTable &symbols,
                         llvm::StringMap<func::FuncOp> &trimmedBodies) {
  SmallVector<unsigned> kept;
  for (auto [i, output] : llvm::enumerate(forward.getOutputs()))
    if (!output.use_empty())
      kept.push_back(i);
  if (kept.size() == forward.getNumResults())
    return forward;
  std::string key = llvm::join(
      llvm::map_range(kept, [](unsigned i) { return std::to_string(i); }), ",");
  std::string name = (body.getSymName() + ".kept").str();
  std::string keptOf = (body.getSymName() + ":" + key).str();
  func::FuncOp &trimmed = trimmedBodies[keptOf];
  if (!trimmed) {
    trimmed = body.clone();
    trimmed.setSymName(name);
    trimmed->setAttr("kept_of", StringAttr::get(body.getContext(), keptOf));
    symbols.insert(trimmed, std::next(Block::iterator(body)));
    auto ret = cast<func::ReturnOp>(trimmed.getBody().front().getTerminator());
    SmallVector<Value> operands = llvm::map_to_vector(
        kept, [&](unsigned i) { return ret.getOperand(i); });
    ret->setOperands(operands);
    trimmed.setType(FunctionType::get(body.getContext(),
                                      body.getArgumentTypes(),
                                      ValueRange(operands).getTypes()));
  }
  OpBuilder b(forward);
  SmallVector<Type> types = llvm::map_to_vector(
      kept, [&](unsigned i) { return forward.getResult(i).getType(); });
  auto copy = TaskOp::create(
      b, forward.getLoc(), types, forward.getNameAttr(),
      FlatSymbolRefAttr::get(trimmed), forward.getInputs(), forward.getTags(),
      forward.getPassAttr(), forward.getAfterAttr(), forward.getDevicesAttr());
  copy->setDiscardableAttrs(forward->getDiscardableAttrDictionary());
  copy.setOverlapAttr(forward.getOverlapAttr());
  copy.setSmShareAttr(forward.getSmShareAttr());
  for (auto [j, i] : llvm::enumerate(kept))
    forward.getResult(i).replaceAllUsesWith(copy.getResult(j));
  forward->erase();
  return copy;
}

} // namespace

namespace {

/// What a recompute re-runs: the saved outputs it replaces (indices into the
/// forward's outputs), the body ops computing them in program order, and
/// the values those ops read from outside (the chunk's saved inputs).
struct Slice {
  SmallVector<unsigned> redirected;
  SmallVector<Operation *> ordered;
  llvm::SetVector<Value> frontier;
};

/// The slice of `entry` (a forward body returning through `ret`) that
/// recomputes the `saved` outputs coming from ops of `opKinds` (all ops when
/// empty, with the reshapes of their results); an empty `redirected` when
/// none does.
Slice selectSlice(Block &entry, func::ReturnOp ret, ArrayRef<unsigned> saved,
                  ArrayRef<std::string> opKinds) {
  SmallVector<Operation *> ops;
  collectOps(entry, ops);
  DenseSet<Operation *> allowed;
  for (Operation *op : ops) {
    bool ok = opKinds.empty() || op->hasTrait<OpTrait::ConstantLike>() ||
              llvm::is_contained(opKinds, op->getName().stripDialect().str());
    if (!ok && isa<ReshapeOp>(op))
      if (Operation *def = resolve(op->getOperand(0)).getDefiningOp())
        ok = allowed.contains(def) && !def->hasTrait<OpTrait::ConstantLike>();
    if (ok)
      allowed.insert(op);
  }
  Slice slice;
  SmallVector<Operation *> worklist;
  for (unsigned i : saved) {
    Operation *def = resolve(ret.getOperand(i)).getDefiningOp();
    if (def && allowed.contains(def) &&
        !def->hasTrait<OpTrait::ConstantLike>()) {
      slice.redirected.push_back(i);
      worklist.push_back(def);
    }
  }
  DenseSet<Operation *> inSlice;
  while (!worklist.empty()) {
    Operation *op = worklist.pop_back_val();
    if (!inSlice.insert(op).second)
      continue;
    for (Value used : usedValues(op))
      if (Operation *def = used.getDefiningOp(); def && allowed.contains(def))
        worklist.push_back(def);
  }
  for (Operation *op : ops) {
    if (!inSlice.contains(op))
      continue;
    slice.ordered.push_back(op);
    for (Value used : usedValues(op))
      if (Operation *def = used.getDefiningOp(); !def || !inSlice.contains(def))
        slice.frontier.insert(used);
  }
  return slice;
}

/// The body an R node calls: `slice` flattened, from its frontier to the
/// redirected values. Microbatch copies with the same selection share one,
/// found again by its `recompute_of` key.
func::FuncOp getRecomputeBody(func::FuncOp body, func::ReturnOp ret,
                              const Slice &slice, ArrayRef<std::string> kinds,
                              SymbolTable &symbols) {
  MLIRContext *ctx = body.getContext();
  std::string indices =
      llvm::join(llvm::map_range(slice.redirected,
                                 [](unsigned i) { return std::to_string(i); }),
                 ",");
  std::string key =
      (body.getSymName() + ":" + llvm::join(kinds, ",") + ":" + indices).str();
  for (auto fn : symbols.getOp()->getRegion(0).getOps<func::FuncOp>())
    if (auto of = fn->getAttrOfType<StringAttr>("recompute_of");
        of && of.getValue() == key)
      return fn;
  SmallVector<Value> results = llvm::map_to_vector(
      slice.redirected, [&](unsigned i) { return resolve(ret.getOperand(i)); });
  OpBuilder mb(body);
  mb.setInsertionPointAfter(body);
  auto rBody = func::FuncOp::create(
      mb, body.getLoc(), (body.getSymName() + ".R").str(),
      FunctionType::get(ctx,
                        ValueRange(slice.frontier.getArrayRef()).getTypes(),
                        ValueRange(results).getTypes()));
  rBody.setPrivate();
  rBody->setAttr("recompute_of", StringAttr::get(ctx, key));
  symbols.insert(rBody); // uniquifies the name if needed
  OpBuilder b = OpBuilder::atBlockEnd(rBody.addEntryBlock());
  IRMapping mapping;
  for (auto [value, arg] : llvm::zip(slice.frontier, rBody.getArguments()))
    mapping.map(value, arg);
  for (Operation *op : slice.ordered) {
    // Chunk results the op reads stand for their yields' operands.
    for (Value operand : op->getOperands())
      if (operand != resolve(operand))
        mapping.map(operand, mapping.lookup(resolve(operand)));
    b.clone(*op, mapping);
  }
  func::ReturnOp::create(
      b, body.getLoc(),
      llvm::map_to_vector(results, [&](Value v) { return mapping.lookup(v); }));
  return rBody;
}

/// The earliest, by `position` (in the DAG's order), of the users of
/// `values` that `isConsumer` accepts.
TaskOp firstConsumer(const DenseMap<Operation *, unsigned> &position,
                     ArrayRef<Value> values,
                     function_ref<bool(Operation *)> isConsumer) {
  TaskOp first;
  for (Value value : values)
    for (Operation *user : value.getUsers())
      if (isConsumer(user) &&
          (!first || position.lookup(user) < position.lookup(first)))
        first = cast<TaskOp>(user);
  return first;
}

} // namespace

struct Recomputer::State {
  explicit State(ModuleOp module) : symbols(module) {
    module.walk([&](TaskOp task) {
      if (auto of = task->getAttrOfType<StringAttr>(kRecomputesAttrName))
        recomputedBy[{task->getParentOp(), of}] = task.getName();
    });
    for (auto fn : module.getOps<func::FuncOp>())
      if (auto of = fn->getAttrOfType<StringAttr>("kept_of"))
        trimmedBodies[of.getValue()] = fn;
  }
  SymbolTable symbols;
  /// (DAG, forward name) -> the name of the node recomputing it.
  DenseMap<std::pair<Operation *, StringAttr>, StringRef> recomputedBy;
  /// Bodies trimmed to the outputs still read, by "body:kept indices".
  llvm::StringMap<func::FuncOp> trimmedBodies;
  /// Per DAG, each node's position in its topological order (empty on a
  /// cycle).
  DenseMap<Operation *, DenseMap<Operation *, unsigned>> positions;

  const DenseMap<Operation *, unsigned> &positionsIn(DAGOp dag) {
    auto [it, inserted] = positions.try_emplace(dag);
    if (inserted)
      if (FailureOr<SmallVector<Operation *>> order = getTopologicalOrder(dag);
          succeeded(order))
        for (auto [i, node] : llvm::enumerate(*order))
          it->second[node] = i;
    return it->second;
  }
};

Recomputer::Recomputer(ModuleOp module)
    : state(std::make_unique<State>(module)) {}
Recomputer::~Recomputer() = default;

TaskOp
mlir::piper::recomputeForward(TaskOp forward, ArrayRef<std::string> opKinds,
                              function_ref<InFlightDiagnostic()> emitError) {
  return Recomputer(forward->getParentOfType<ModuleOp>())
      .recompute(forward, opKinds, emitError);
}

TaskOp Recomputer::recompute(TaskOp forward, ArrayRef<std::string> opKinds,
                             function_ref<InFlightDiagnostic()> emitError) {
  MLIRContext *ctx = forward.getContext();
  if (forward.getPass() != PassKind::F) {
    emitError() << "recompute acts on forward nodes (pass F), got '"
                << forward.getName() << "'";
    return {};
  }
  for (const std::string &kind : opKinds)
    if (!RegisteredOperationName::lookup("piper." + kind, ctx)) {
      emitError() << "unknown op kind '" << kind
                  << "': expected a piper op name without its prefix, such "
                     "as \"attention\"";
      return {};
    }
  auto dag = forward->getParentOfType<DAGOp>();
  if (auto it = state->recomputedBy.find({dag, forward.getNameAttr()});
      it != state->recomputedBy.end()) {
    emitError() << "node '" << forward.getName()
                << "' is already recomputed by '" << it->second << "'";
    return {};
  }
  auto body = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
      forward, forward.getCalleeAttr());
  if (!body || body.isExternal() || !body.getBody().hasOneBlock()) {
    emitError() << "node '" << forward.getName()
                << "' has no body to recompute";
    return {};
  }

  // The backward nodes of the forward's device group that read its outputs.
  auto isConsumer = [&](Operation *user) {
    auto task = dyn_cast<TaskOp>(user);
    return task && isBackwardPass(task.getPass()) && !isRecomputeTask(task) &&
           task.getDevicesAttr() == forward.getDevicesAttr();
  };
  Block &entry = body.getBody().front();
  auto ret = cast<func::ReturnOp>(entry.getTerminator());
  SmallVector<unsigned> saved;
  for (auto [i, output] : llvm::enumerate(forward.getOutputs()))
    if (llvm::any_of(output.getUsers(), isConsumer))
      saved.push_back(i);
  if (saved.empty()) {
    emitError() << "node '" << forward.getName()
                << "' has no backward node that reads its activations: "
                   "there is nothing to recompute";
    return {};
  }
  Slice slice = selectSlice(entry, ret, saved, opKinds);
  if (slice.redirected.empty()) {
    emitError() << "recompute of '" << forward.getName() << "' with "
                << describeKinds(opKinds)
                << " recomputes nothing: no activation its backward reads "
                   "comes from those ops";
    return {};
  }

  // R's inputs: the forward's inputs, or outputs it still saves.
  SmallVector<Value> inputs;
  for (Value value : slice.frontier) {
    if (auto arg = dyn_cast<BlockArgument>(value);
        arg && arg.getOwner() == &entry) {
      inputs.push_back(forward.getInputs()[arg.getArgNumber()]);
      continue;
    }
    auto returned = llvm::find_if(ret.getOperands(),
                                  [&](Value v) { return resolve(v) == value; });
    if (returned == ret.getOperands().end()) {
      emitError() << "recompute of '" << forward.getName() << "' with "
                  << describeKinds(opKinds) << " needs a value of '"
                  << value.getDefiningOp()->getName()
                  << "' that the forward does not save; recompute the "
                     "whole chunk instead";
      return {};
    }
    inputs.push_back(
        forward.getResult(std::distance(ret.getOperands().begin(), returned)));
  }

  SymbolTable &symbols = state->symbols;
  func::FuncOp rBody = getRecomputeBody(body, ret, slice, opKinds, symbols);
  SmallVector<Value> redirected = llvm::map_to_vector(
      slice.redirected, [&](unsigned i) { return forward.getResult(i); });
  const DenseMap<Operation *, unsigned> &position = state->positionsIn(dag);
  TaskOp first;
  if (!position.empty())
    first = firstConsumer(position, redirected, isConsumer);
  if (!first) {
    emitError() << "the DAG's data and temporal edges form a cycle";
    return {};
  }

  // R runs when the first backward consumer could, right before it. A
  // ZeRO-3 parameter is gathered again for R rather than kept gathered
  // from the forward.
  OpBuilder b(first);
  for (Value &input : inputs)
    if (auto gather = input.getDefiningOp<CollectiveOp>();
        gather && gather.getKind() == CollectiveKind::AllGather) {
      auto again = cast<CollectiveOp>(b.clone(*gather));
      again.setName((gather.getName() + " for R").str());
      input = again.getResult();
    }
  std::string name = ("R" + forward.getName().drop_front(1)).str();
  auto recompute = TaskOp::create(
      b, forward.getLoc(), rBody.getResultTypes(), b.getStringAttr(name),
      FlatSymbolRefAttr::get(rBody), inputs, forward.getTags(),
      PassKindAttr::get(ctx, PassKind::B), first.getAfterAttr(),
      forward.getDevicesAttr());
  recompute->setAttr(kRecomputesAttrName, forward.getNameAttr());
  state->recomputedBy[{dag, forward.getNameAttr()}] = recompute.getName();
  for (auto [j, value] : llvm::enumerate(redirected))
    value.replaceUsesWithIf(recompute.getResult(j), [&](OpOperand &use) {
      return isConsumer(use.getOwner());
    });
  SmallVector<Attribute> after(first.getAfter().begin(),
                               first.getAfter().end());
  after.push_back(recompute.getNameAttr());
  first.setAfterAttr(b.getArrayAttr(after));
  dropUnusedOutputs(forward, body, symbols, state->trimmedBodies);
  return recompute;
}

FailureOr<unsigned> mlir::piper::applyRecompute(ModuleOp module,
                                                DictionaryAttr filter,
                                                ArrayRef<std::string> opKinds) {
  FailureOr<TagFilter> matcher =
      TagFilter::get(filter, [&] { return module.emitError(); });
  if (failed(matcher))
    return failure();
  unsigned made = 0;
  Recomputer recomputer(module);
  for (TaskOp task : matcher->collectNodes(module)) {
    if (task.getPass() != PassKind::F)
      continue;
    if (!recomputer.recompute(task, opKinds, [&] { return task.emitError(); }))
      return failure();
    ++made;
  }
  if (!made) {
    module.emitError() << "filter " << filter
                       << " selects no forward node to recompute";
    return failure();
  }
  return made;
}
