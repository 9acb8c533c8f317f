//===- LocalBodies.cpp - Task bodies on a device's local types ------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "LocalBodies.h"
#include "CommCalls.h"
#include "KernelPatterns.h"
#include "MeshGroups.h"

#include "piper/Conversion/ReplicaLayout.h"
#include "piper/Dialect/Piper/IR/PiperDistributionRule.h"

using namespace mlir;
using namespace mlir::piper;

namespace {

/// [E, C, ...] to [E / n, n C, ...]; null if E does not divide.
RankedTensorType expertSide(RankedTensorType type, int64_t n) {
  if (type.getRank() < 2 || type.getDimSize(0) % n != 0)
    return nullptr;
  SmallVector<int64_t> shape(type.getShape());
  shape[0] /= n;
  shape[1] *= n;
  return RankedTensorType::get(shape, type.getElementType());
}

class Retyper {
public:
  Retyper(func::FuncOp clone, func::FuncOp body, MeshOp mesh, Operation *at)
      : clone(clone), body(body), mesh(mesh), at(at) {}

  LogicalResult run(ArrayRef<Type> argTypes);

private:
  bool changed(Value v) const { return v.getType() != original.lookup(v); }
  LogicalResult lowerCollective(CollectiveOp op);
  /// Replaces collective `op` by a call of shim `name` (operand, a fresh
  /// `out`, the communicator `index`, then `last`).
  void replaceByShim(CollectiveOp op, const std::string &name, Type out,
                     int64_t index,
                     function_ref<Value(OpBuilder &, Location)> last);
  LogicalResult retype(Operation *op);
  InFlightDiagnostic error(Operation *op) {
    InFlightDiagnostic diag = at->emitError();
    diag.attachNote(op->getLoc()) << "in the body, here";
    return diag;
  }
  StringRef launchName() {
    if (auto launch = dyn_cast<LaunchOp>(at))
      return launch.getName();
    return body.getSymName();
  }

  func::FuncOp clone, body;
  MeshOp mesh;
  Operation *at;
  /// Every value's type in the body the DAG called.
  DenseMap<Value, Type> original;
};

LogicalResult Retyper::run(ArrayRef<Type> argTypes) {
  clone.walk([&](Operation *op) {
    for (Value result : op->getResults())
      original[result] = result.getType();
    for (Region &region : op->getRegions())
      for (Block &block : region)
        for (BlockArgument arg : block.getArguments())
          original[arg] = arg.getType();
  });
  Block &entry = clone.getBody().front();
  for (auto [arg, type] : llvm::zip(entry.getArguments(), argTypes))
    arg.setType(type);
  // Post-order: operands are typed before their users, the ops of an
  // annotate before the annotate.
  SmallVector<Operation *> ops;
  clone.walk([&](Operation *op) {
    if (op != clone.getOperation())
      ops.push_back(op);
  });
  for (Operation *op : ops) {
    LogicalResult result = success();
    if (auto collective = dyn_cast<CollectiveOp>(op))
      result = lowerCollective(collective);
    else
      result = retype(op);
    if (failed(result))
      return failure();
  }
  auto ret = cast<func::ReturnOp>(entry.getTerminator());
  clone.setFunctionType(
      FunctionType::get(clone.getContext(), argTypes, ret.getOperandTypes()));
  return success();
}

LogicalResult Retyper::retype(Operation *op) {
  if (isa<YieldOp, func::ReturnOp>(op))
    return success();
  if (auto annotate = dyn_cast<AnnotateOp>(op)) {
    Operation *yield = annotate.getBody().front().getTerminator();
    for (auto [result, value] :
         llvm::zip(annotate->getResults(), yield->getOperands()))
      result.setType(value.getType());
    return success();
  }
  auto changedOperand =
      llvm::find_if(op->getOperands(), [&](Value v) { return changed(v); });
  if (changedOperand == op->getOperands().end())
    return success();

  // The op's distribution rule gives its per-device form (local result
  // types; attention's share of the heads) or says why it cannot run.
  bool explained = false;
  auto explain = [&]() {
    explained = true;
    InFlightDiagnostic diag = error(op);
    diag << "cannot run '" << launchName() << "' on local types: '"
         << op->getName() << "' in @" << body.getSymName() << " ";
    return diag;
  };
  if (std::optional<DistributionRule> rule = DistributionRule::get(op)) {
    SmallVector<Type> locals(op->getOperandTypes());
    SmallVector<Type> globals;
    for (Value operand : op->getOperands())
      globals.push_back(original.lookup(operand));
    LocalForm form;
    if (succeeded(rule->inferLocalForm(locals, form, explain, globals))) {
      rule->applyLocalForm(form);
      return success();
    }
    if (explained)
      return failure();
  }
  Value v = *changedOperand;
  return error(op) << "cannot run '" << launchName() << "' on local types: '"
                   << op->getName() << "' in @" << body.getSymName()
                   << " reads " << v.getType() << " where the body has "
                   << original.lookup(v)
                   << " (only all_to_all, piper.vjp, piper.expert_ffn, "
                      "piper.linear, piper.reshape, piper.attention, "
                      "elementwise ops and updates follow local types)";
}

LogicalResult Retyper::lowerCollective(CollectiveOp op) {
  if (op.getKind() != CollectiveKind::AllToAll &&
      op.getKind() != CollectiveKind::AllReduce)
    return error(op) << "cannot lower '" << op.getName() << "' in @"
                     << body.getSymName() << ": only all_to_all (expert "
                     << "parallelism) and all_reduce (tensor parallelism) "
                     << "are lowered inside bodies, not "
                     << stringifyCollectiveKind(op.getKind());
  auto index = op->getAttrOfType<IntegerAttr>(kCommIndexAttrName);
  if (!index)
    return error(op) << "cannot lower '" << op.getName()
                     << "': no communicator index (piper-compile numbers "
                        "them)";
  FailureOr<StringRef> suffix =
      commSuffix(op, wireType(op.getValue().getType()), /*allowInteger=*/false);
  if (failed(suffix))
    return failure();
  if (op.getKind() == CollectiveKind::AllReduce) {
    // Tensor parallelism's partial sums: a plain sum over the group, not a
    // gradient mean (no 1/R).
    Type type = op.getValue().getType();
    replaceByShim(
        op, ("piper_comm_all_reduce_" + *suffix).str(), type, index.getInt(),
        [](OpBuilder &b, Location loc) { return f64Constant(b, loc, 1.0); });
    return success();
  }
  auto tokenSide = cast<RankedTensorType>(original.lookup(op.getResult()));
  int64_t members = meshGroupSize(op.getAxes(), mesh);
  RankedTensorType experts = expertSide(tokenSide, members);
  if (!experts)
    return error(op) << "cannot lower '" << op.getName() << "': its buffer "
                     << tokenSide << " does not split into " << members
                     << " expert groups along dim 0";
  Type in = op.getValue().getType();
  // Unchanged operand: to the experts' owners; expert-side: back.
  int64_t direction;
  Type out;
  if (!changed(op.getValue())) {
    direction = 0;
    out = experts;
  } else if (in == experts) {
    direction = 1;
    out = tokenSide;
  } else {
    return error(op) << "cannot lower '" << op.getName() << "': its operand is "
                     << in << ", neither token-side " << tokenSide
                     << " nor expert-side " << experts;
  }
  replaceByShim(op, ("piper_comm_all_to_all_" + *suffix).str(), out,
                index.getInt(), [&](OpBuilder &b, Location loc) {
                  return i64Constant(b, loc, direction);
                });
  return success();
}

void Retyper::replaceByShim(CollectiveOp op, const std::string &name, Type out,
                            int64_t index,
                            function_ref<Value(OpBuilder &, Location)> last) {
  OpBuilder builder(op);
  Location loc = op.getLoc();
  auto module = clone->getParentOfType<ModuleOp>();
  // bf16 travels as f32 (wireType): tensor parallelism's partial sums add
  // in f32 and round once; an all-to-all gives back the same bf16 values.
  RankedTensorType wire = wireType(out);
  Value in = castTensor(builder, loc, op.getValue(), wire.getElementType());
  Value result =
      callShim(builder, loc, module, name, {in}, {wire},
               {i64Constant(builder, loc, index), last(builder, loc)})
          .front();
  result = castTensor(builder, loc, result,
                      cast<RankedTensorType>(out).getElementType());
  // The call stands for the collective: what it held in the global view.
  original[result] = original.lookup(op.getResult());
  op.getResult().replaceAllUsesWith(result);
  op.erase();
}

} // namespace

bool mlir::piper::hasBodyCollectives(func::FuncOp body) {
  return body.walk([](CollectiveOp) { return WalkResult::interrupt(); })
      .wasInterrupted();
}

std::string mlir::piper::freshBodyName(func::FuncOp body, StringRef suffix) {
  auto module = body->getParentOfType<ModuleOp>();
  std::string name = (body.getSymName() + suffix).str();
  for (int i = 1; module.lookupSymbol(name); ++i)
    name = (body.getSymName() + suffix + "_" + Twine(i)).str();
  return name;
}

FailureOr<func::FuncOp> mlir::piper::cloneLocalBody(func::FuncOp body,
                                                    ArrayRef<Type> argTypes,
                                                    MeshOp mesh,
                                                    Operation *at) {
  std::string name = freshBodyName(body, ".local");
  OpBuilder builder(body);
  builder.setInsertionPointAfter(body);
  auto clone = cast<func::FuncOp>(builder.clone(*body.getOperation()));
  clone.setSymName(name);
  clone.setPrivate();
  if (failed(Retyper(clone, body, mesh, at).run(argTypes))) {
    clone.erase();
    return failure();
  }
  return clone;
}
