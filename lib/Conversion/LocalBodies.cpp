//===- LocalBodies.cpp - Task bodies on a device's local types ------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "LocalBodies.h"
#include "CommCalls.h"

#include "piper/Conversion/ReplicaLayout.h"
#include "piper/Dialect/Piper/IR/PiperOps.h"

using namespace mlir;
using namespace mlir::piper;

namespace {

/// The product of the sizes of `axes` of `mesh`.
int64_t groupSize(ArrayAttr axes, MeshOp mesh) {
  int64_t size = 1;
  for (MeshAxisAttr axis : mesh.getAxisList())
    if (llvm::any_of(axes, [&](Attribute a) {
          return cast<StringAttr>(a).getValue() == axis.getName();
        }))
      size *= axis.getSize();
  return size;
}

/// [E, C, ...] to [E / n, n C, ...]; null if E does not divide.
RankedTensorType expertSide(RankedTensorType type, int64_t n) {
  if (type.getRank() < 2 || type.getDimSize(0) % n != 0)
    return nullptr;
  SmallVector<int64_t> shape(type.getShape());
  shape[0] /= n;
  shape[1] *= n;
  return RankedTensorType::get(shape, type.getElementType());
}

/// Whether `op` computes elementwise on operands of one type.
bool isElementwise(Operation *op) {
  return isa<AddOp, SubOp, MulOp, ReluOp, GeluOp, SiluOp, SwigluOp>(op) ||
         op->hasTrait<OpTrait::SameOperandsAndResultType>();
}

/// The tensors an optimizer update reads and writes elementwise.
SmallVector<Value> updateOperands(Operation *op) {
  if (auto adamw = dyn_cast<AdamWUpdateOp>(op))
    return {adamw.getParam(), adamw.getGrad(), adamw.getExpAvg(),
            adamw.getExpAvgSq()};
  if (auto sgd = dyn_cast<SgdUpdateOp>(op))
    return {sgd.getParam(), sgd.getGrad(), sgd.getMomentumBuffer()};
  return {};
}

/// How many times smaller `local`'s last dim is than `global`'s, the other
/// dims equal (a tensor-parallel split of channels); 0 if not such a split.
int64_t channelSplit(Type global, Type local) {
  auto g = dyn_cast<RankedTensorType>(global);
  auto l = dyn_cast<RankedTensorType>(local);
  if (!g || !l || g.getRank() != l.getRank() || g.getRank() == 0)
    return 0;
  for (int64_t d = 0; d + 1 < g.getRank(); ++d)
    if (g.getDimSize(d) != l.getDimSize(d))
      return 0;
  int64_t gl = g.getShape().back(), ll = l.getShape().back();
  if (ll <= 0 || gl % ll != 0)
    return 0;
  return gl / ll;
}

/// `type` with its last dim divided by `factor` (null if it does not divide).
RankedTensorType splitChannels(Type type, int64_t factor) {
  auto t = cast<RankedTensorType>(type);
  SmallVector<int64_t> shape(t.getShape());
  if (shape.empty() || shape.back() % factor != 0)
    return nullptr;
  shape.back() /= factor;
  return RankedTensorType::get(shape, t.getElementType());
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
  /// All of `values` must share one type; it is returned (null on error).
  Type commonType(Operation *op, ArrayRef<Value> values);
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

Type Retyper::commonType(Operation *op, ArrayRef<Value> values) {
  Type type = values.front().getType();
  for (Value v : values)
    if (v.getType() != type) {
      error(op) << "cannot run '" << launchName() << "' on local types: '"
                << op->getName() << "' in @" << body.getSymName()
                << " would mix " << type << " and " << v.getType();
      return nullptr;
    }
  return type;
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

  if (auto vjp = dyn_cast<VJPOp>(op)) {
    for (auto [wrt, result] : llvm::zip(vjp.getWrt(), vjp.getResults()))
      result.setType(vjp.getPrimals()[wrt].getType());
    // Attention over split channels runs on its share of the heads.
    if (vjp.getOp() == AttentionOp::getOperationName()) {
      Value q = vjp.getPrimals().front();
      int64_t factor = channelSplit(original.lookup(q), q.getType());
      auto heads = vjp.getForwardAttrs().getAs<IntegerAttr>("num_heads");
      if (factor > 1 && heads) {
        if (heads.getInt() % factor != 0)
          return error(op) << "cannot run '" << launchName()
                           << "' on local types: " << heads.getInt()
                           << " attention heads do not split " << factor
                           << " ways";
        NamedAttrList attrs(vjp.getForwardAttrs());
        attrs.set("num_heads",
                  IntegerAttr::get(heads.getType(), heads.getInt() / factor));
        vjp.setForwardAttrsAttr(attrs.getDictionary(op->getContext()));
      }
    }
    return success();
  }
  // Tensor parallelism (Megatron): column-split weights give split channels,
  // which reshapes keep on the last dim and attention splits by heads;
  // row-split weights take split channels to a partial sum of the whole.
  if (auto linear = dyn_cast<LinearOp>(op)) {
    auto x = cast<RankedTensorType>(linear.getX().getType());
    auto w = cast<RankedTensorType>(linear.getW().getType());
    if (x.getShape().back() != w.getDimSize(0))
      return error(op) << "cannot run '" << launchName()
                       << "' on local types: 'piper.linear' in @"
                       << body.getSymName() << " multiplies " << x << " by "
                       << w;
    SmallVector<int64_t> shape(x.getShape());
    shape.back() = w.getShape().back();
    linear.getResult().setType(
        RankedTensorType::get(shape, x.getElementType()));
    return success();
  }
  if (auto reshape = dyn_cast<ReshapeOp>(op)) {
    // Only leading dims may be regrouped: the split channels stay the last
    // dim, whole, so every device keeps the same channels of every row.
    auto in = cast<RankedTensorType>(original.lookup(reshape.getX()));
    auto out = cast<RankedTensorType>(original.lookup(reshape.getResult()));
    int64_t factor = channelSplit(in, reshape.getX().getType());
    RankedTensorType type =
        factor > 1 && in.getShape().back() == out.getShape().back()
            ? splitChannels(out, factor)
            : nullptr;
    if (!type)
      return error(op)
             << "cannot run '" << launchName()
             << "' on local types: 'piper.reshape' in @" << body.getSymName()
             << " of " << reshape.getX().getType()
             << " (only regrouping the leading dims of split channels is "
                "followed)";
    reshape.getResult().setType(type);
    return success();
  }
  if (auto attention = dyn_cast<AttentionOp>(op)) {
    Type type =
        commonType(op, {attention.getQ(), attention.getK(), attention.getV()});
    if (!type)
      return failure();
    int64_t factor = channelSplit(original.lookup(attention.getQ()), type);
    if (factor < 1 || attention.getNumHeads() % factor != 0)
      return error(op) << "cannot run '" << launchName()
                       << "' on local types: 'piper.attention' in @"
                       << body.getSymName() << " has "
                       << attention.getNumHeads()
                       << " heads, which do not split over its operands "
                       << type;
    attention.setNumHeads(attention.getNumHeads() / factor);
    attention.getResult().setType(cast<RankedTensorType>(type));
    return success();
  }
  if (auto ffn = dyn_cast<ExpertFfnOp>(op)) {
    ffn.getResult().setType(ffn.getBuf().getType());
    return success();
  }
  SmallVector<Value> operands = updateOperands(op);
  if (operands.empty() && isElementwise(op))
    operands.assign(op->operand_begin(), op->operand_end());
  if (!operands.empty()) {
    Type type = commonType(op, operands);
    if (!type)
      return failure();
    for (Value result : op->getResults())
      if (isa<RankedTensorType>(result.getType()))
        result.setType(type);
    return success();
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
      commSuffix(op, op.getValue().getType(), /*allowInteger=*/false);
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
  int64_t members = groupSize(op.getAxes(), mesh);
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
  Value result =
      callShim(builder, loc, module, name, {op.getValue()}, {out},
               {i64Constant(builder, loc, index), last(builder, loc)})
          .front();
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

FailureOr<func::FuncOp> mlir::piper::cloneLocalBody(func::FuncOp body,
                                                    ArrayRef<Type> argTypes,
                                                    MeshOp mesh,
                                                    Operation *at) {
  auto module = body->getParentOfType<ModuleOp>();
  // A fresh name: `<body>.local`, `<body>.local_1`, ...
  std::string name = (body.getSymName() + ".local").str();
  for (int i = 1; module.lookupSymbol(name); ++i)
    name = (body.getSymName() + ".local_" + Twine(i)).str();
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
