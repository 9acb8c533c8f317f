//===- TieParameters.cpp - parameters shared by several device groups -----===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// A parameter read by chunks that live on different device groups (a tied
// embedding and LM head: stage 0 and the last stage) gets one gradient
// contribution per group. Autodiff sums them and the optimizer updates the
// parameter in derived nodes that carry no chunk tag, so no `place`
// directive selects them. Left alone, partitioning would refuse them; placed
// on one group by hand, the other group would keep reading the value of
// step 1 for ever.
//
// Before partitioning, every such unplaced node (the sum of contributions,
// their accumulation over microbatches, the update) is placed on each group
// it serves: the first copy keeps the node, the others are clones named
// `<node>@{group}` with `copy_of = "<node>"`. Every copy sums the same
// contributions in the same order (each missing one comes by a transfer),
// so all copies compute bit-identical gradients, parameters and optimizer
// state: an all-reduce over the groups that hold the parameter followed by
// the same update on each, as Piper's `place` does for tied weights.
// Partitioning then writes the step's results from every copy, so each
// group's next step reads the updated value. A placed update read by other
// groups (bidirectional DualPipe's mirrored stages) is copied the same way,
// with the collectives around it on its group (ZeRO's reduce-scatter and
// all-gather over dp).
//
//===----------------------------------------------------------------------===//

#include "piper/Dialect/Piper/Transforms/Programs.h"

#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;
using namespace mlir::piper;

namespace {

using Groups = llvm::SmallSetVector<DictionaryAttr, 2>;

class Tier {
public:
  Tier(func::FuncOp step, DAGOp dag) : step(step), dag(dag) {}
  LogicalResult run();

private:
  /// The device groups that `node`'s result values live on or are used on.
  const Groups &groupsOf(Operation *node);
  /// The groups a value lives on: its producer's, or for a parameter the
  /// groups of the placed tasks that read it.
  void addGroupsOfValue(Value value, Groups &groups);
  /// `value` as available on `group`: itself, a copy's result, or a
  /// transfer inserted before `consumer`.
  Value onGroup(Value value, DictionaryAttr group, Operation *consumer);
  StringAttr transferStream();
  /// Places `node` on the first of `served` and a copy on each other group,
  /// each reading its operands on its own group.
  void copyOnto(Operation *node, const Groups &served);

  func::FuncOp step;
  DAGOp dag;
  /// Unplaced nodes (tasks and accumulates) -> the groups they serve.
  DenseMap<Operation *, Groups> groups;
  /// Parameter argument -> groups of placed tasks that read it.
  DenseMap<Value, Groups> readers;
  /// (node, group) -> its copy on that group.
  DenseMap<std::pair<Operation *, Attribute>, Operation *> copies;
  /// (value, destination group) -> the transfer that brings it there.
  DenseMap<std::pair<Value, Attribute>, TransferOp> transfers;
  StringAttr stream;
};

/// The group a placed node's results live on, or null.
DictionaryAttr placedGroup(Operation *node) {
  if (auto task = dyn_cast<TaskOp>(node))
    return task.getDevicesAttr();
  if (auto transfer = dyn_cast<TransferOp>(node))
    return transfer.getTo();
  if (auto collective = dyn_cast<CollectiveOp>(node))
    return collective.getDevicesAttr();
  return nullptr;
}

/// A node this rewrite may place: an accumulate, a collective with no
/// device group of its own (a data-parallel reduction or gather runs where
/// its operand lives), or an unplaced derived
/// task (backward or update) that carries no chunk tag but the microbatch.
/// A forward task, or one a chunk tag selects, is the user's to place:
/// forgetting it stays an error of partitioning.
bool isUnplaced(Operation *node) {
  if (auto task = dyn_cast<TaskOp>(node))
    return !task.getDevicesAttr() && task.getPass() != PassKind::F &&
           llvm::all_of(task.getTags(), [](NamedAttribute tag) {
             return tag.getName() == "MB";
           });
  if (auto collective = dyn_cast<CollectiveOp>(node))
    return !collective.getDevicesAttr();
  return isa<AccumulateOp>(node);
}

} // namespace

void Tier::addGroupsOfValue(Value value, Groups &out) {
  if (auto arg = dyn_cast<BlockArgument>(value)) {
    if (auto it = readers.find(value); it != readers.end())
      out.insert(it->second.begin(), it->second.end());
    return;
  }
  Operation *def = value.getDefiningOp();
  if (!def || def->getParentOp() != dag)
    return;
  if (DictionaryAttr group = placedGroup(def)) {
    out.insert(group);
    return;
  }
  if (isUnplaced(def)) {
    const Groups &inner = groupsOf(def);
    out.insert(inner.begin(), inner.end());
    return;
  }
}

const Groups &Tier::groupsOf(Operation *node) {
  if (auto it = groups.find(node); it != groups.end())
    return it->second;
  Groups found;
  groups[node]; // a cycle (refused later by partitioning) ends here
  for (Value operand : node->getOperands())
    addGroupsOfValue(operand, found);
  return groups[node] = std::move(found);
}

StringAttr Tier::transferStream() {
  if (!stream) {
    auto existing = dag.getBody().getOps<TransferOp>();
    stream = existing.empty() ? StringAttr::get(dag.getContext(), "pp")
                              : (*existing.begin()).getStreamAttr();
  }
  return stream;
}

Value Tier::onGroup(Value value, DictionaryAttr group, Operation *consumer) {
  Operation *def = value.getDefiningOp();
  if (!def || def->getParentOp() != dag)
    return value; // step arguments are read where they are used
  if (Operation *copy = copies.lookup({def, group}))
    return copy->getResult(cast<OpResult>(value).getResultNumber());
  // Where the value lives: a node given copies keeps its results on the
  // first group it serves; an accumulate left alone sums where its first
  // value lives.
  DictionaryAttr from = placedGroup(def);
  if (!from && isUnplaced(def) && !groupsOf(def).empty())
    from = groupsOf(def).front();
  if (!from || from == group)
    return value;
  TransferOp &transfer = transfers[{value, group}];
  if (!transfer) {
    OpBuilder builder(consumer);
    std::string name = (getNodeName(def) + "#" +
                        Twine(cast<OpResult>(value).getResultNumber()) + "->" +
                        formatDeviceGroup(group))
                           .str();
    transfer = TransferOp::create(builder, consumer->getLoc(), value.getType(),
                                  builder.getStringAttr(name), value, from,
                                  group, transferStream());
  }
  return transfer.getResult();
}

void Tier::copyOnto(Operation *node, const Groups &served) {
  // Clone before rewiring: every copy starts from the original operands.
  SmallVector<Operation *> nodeCopies{node};
  for (DictionaryAttr group : llvm::drop_begin(served)) {
    OpBuilder builder(node);
    builder.setInsertionPointAfter(nodeCopies.back());
    Operation *copy = builder.clone(*node);
    // Node names are unique in the DAG.
    std::string name =
        (getNodeName(node) + "@" + formatDeviceGroup(group)).str();
    copy->setAttr(kCopyOfAttrName,
                  StringAttr::get(copy->getContext(), getNodeName(node)));
    if (auto task = dyn_cast<TaskOp>(copy))
      task.setName(name);
    else if (auto accumulate = dyn_cast<AccumulateOp>(copy))
      accumulate.setName(name);
    else
      cast<CollectiveOp>(copy).setName(name);
    nodeCopies.push_back(copy);
  }
  for (auto [copy, group] : llvm::zip(nodeCopies, served)) {
    if (auto task = dyn_cast<TaskOp>(copy))
      task.setDevicesAttr(group);
    else if (auto collective = dyn_cast<CollectiveOp>(copy);
             collective && collective.getDevicesAttr())
      collective.setDevicesAttr(group);
    copies[{node, group}] = copy;
  }
  for (auto [copy, group] : llvm::zip(nodeCopies, served))
    for (OpOperand &use : copy->getOpOperands())
      use.set(onGroup(use.get(), group, copy));
}

LogicalResult Tier::run() {
  Block &body = dag.getBody().front();
  bool anyPlaced = false;
  for (auto task : body.getOps<TaskOp>())
    if (DictionaryAttr devices = task.getDevicesAttr()) {
      anyPlaced = true;
      for (Value input : task.getInputs())
        if (auto arg = dyn_cast<BlockArgument>(input);
            arg && arg.getOwner()->getParentOp() == step &&
            step.getArgAttr(arg.getArgNumber(),
                            PiperDialect::getParamAttrName()))
          readers[input].insert(devices);
    }
  if (!anyPlaced)
    return success();
  for (auto transfer : body.getOps<TransferOp>())
    transfers[{transfer.getValue(), transfer.getTo()}] = transfer;

  // In DAG order, so a node's unplaced producers have their copies first.
  SmallVector<Operation *> unplaced;
  for (Operation &node : body.without_terminator())
    if (isUnplaced(&node) && !groupsOf(&node).empty())
      unplaced.push_back(&node);
  DenseSet<Operation *> wasUnplaced(unplaced.begin(), unplaced.end());
  for (Operation *node : unplaced) {
    Groups served = groupsOf(node);
    // Accumulates and collectives of placed tasks' results stay where
    // they are (`place` and `replicate` put them there).
    if (!isa<TaskOp>(node) && llvm::none_of(node->getOperands(), [&](Value v) {
          return wasUnplaced.contains(v.getDefiningOp());
        }))
      continue;
    copyOnto(node, served);
  }
  // A placed update whose parameters other groups also read (the mirrored
  // copies of a stage under bidirectional DualPipe): every reader group
  // gets a copy, fed the accumulated gradient by a transfer.
  SmallVector<TaskOp> updates;
  for (auto task : body.getOps<TaskOp>())
    if (task.getPass() == PassKind::UPD && task.getDevicesAttr() &&
        !task->hasAttr(kCopyOfAttrName) && !wasUnplaced.contains(task))
      updates.push_back(task);
  for (TaskOp update : updates) {
    Groups served;
    served.insert(update.getDevicesAttr());
    for (Value input : update.getInputs())
      if (auto it = readers.find(input); it != readers.end())
        served.insert(it->second.begin(), it->second.end());
    if (served.size() <= 1)
      continue;
    // Under data parallelism the update sits between collectives on its
    // group (ZeRO's reduce-scatter of the gradient, all-gather of the
    // update): each copy gets its own, so a copy reduces the whole
    // accumulated gradient (transferred) and gathers what it updated.
    DictionaryAttr home = update.getDevicesAttr();
    auto onHome = [&](Operation *node) {
      auto collective = dyn_cast_or_null<CollectiveOp>(node);
      return collective && collective.getDevicesAttr() == home &&
             !collective->hasAttr(kCopyOfAttrName);
    };
    llvm::SmallSetVector<Operation *, 8> before, after;
    for (Value input : update.getInputs())
      if (onHome(input.getDefiningOp()))
        before.insert(input.getDefiningOp());
    for (Value result : update->getResults())
      for (Operation *user : result.getUsers())
        if (onHome(user))
          after.insert(user);
    for (Operation *collective : before)
      copyOnto(collective, served);
    copyOnto(update, served);
    for (Operation *collective : after)
      copyOnto(collective, served);
  }
  return success();
}

LogicalResult mlir::piper::tieSharedParameters(func::FuncOp step, DAGOp dag) {
  return Tier(step, dag).run();
}
