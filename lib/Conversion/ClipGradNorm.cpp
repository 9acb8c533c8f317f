//===- ClipGradNorm.cpp - Global gradient-norm clipping in programs -------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// ClipGradNorm.h. The reordering is safe for the host's execution model: one
// thread runs a program's instructions in order, compute "streams" complete
// as they run, and a nonblocking collective's output is read only after a
// wait for a record after it on its stream. Moving an instruction later
// never lets it run before what it depends on; a record moves after any
// update-dependent communication before it on its stream, so it still
// covers every operation it covered, and a wait moves with its record.
// Records and waits that need not move stay where they are: the waits that
// complete the gradients' reductions must precede the first update, where
// the norm is taken.
// Every member of a communicator runs the same program, so the collectives
// of one communicator keep one order on all of them.
//
//===----------------------------------------------------------------------===//

#include "ClipGradNorm.h"

#include "CommCalls.h"
#include "ZeroUpdate.h"

#include "piper/Dialect/Piper/Transforms/PlanAnnotations.h"
#include "piper/Dialect/Piper/Transforms/Programs.h"

#include "llvm/ADT/StringSet.h"

using namespace mlir;
using namespace mlir::piper;

bool mlir::piper::clipsGradNorm(ModuleOp module) {
  auto bound = module->getAttrOfType<FloatAttr>(kClipGradNormAttrName);
  return bound && bound.getValueAsDouble() > 0.0;
}

namespace {

/// Whether `launch` runs an optimizer update body.
bool isUpdateLaunch(LaunchOp launch, ModuleOp module) {
  auto callee = module.lookupSymbol<func::FuncOp>(launch.getCallee());
  return callee && isUpdateBody(callee);
}

/// The stream an instruction runs on (empty for input/output).
StringRef streamOf(Operation *op) {
  if (auto attr = op->getAttrOfType<StringAttr>("stream"))
    return attr.getValue();
  return {};
}

} // namespace

void mlir::piper::orderUpdatesLast(ProgramOp program) {
  auto module = program->getParentOfType<ModuleOp>();
  Block &body = program.getBody().front();
  DenseSet<Operation *> late;
  llvm::StringSet<> lateStreams;
  DenseSet<int64_t> lateEvents;
  for (Operation &op : body) {
    bool isLate = false;
    if (auto launch = dyn_cast<LaunchOp>(op))
      isLate = isUpdateLaunch(launch, module);
    if (auto record = dyn_cast<RecordOp>(op))
      isLate = lateStreams.contains(record.getStream());
    else if (auto wait = dyn_cast<WaitOp>(op))
      isLate = lateEvents.contains(wait.getEvent());
    isLate |= llvm::any_of(op.getOperands(), [&](Value v) {
      Operation *def = v.getDefiningOp();
      return def && late.contains(def);
    });
    if (!isLate)
      continue;
    late.insert(&op);
    // Only communication runs behind the host's back: a record after a late
    // one on its stream must still cover it. A compute stream's record means
    // "done" wherever it stands, since the host runs compute in order.
    if (isa<CommOp, SendOp, RecvOp>(op))
      lateStreams.insert(streamOf(&op));
    if (auto record = dyn_cast<RecordOp>(op))
      lateEvents.insert(record.getEvent());
  }
  SmallVector<Operation *> moved;
  for (Operation &op : body)
    if (late.contains(&op))
      moved.push_back(&op);
  for (Operation *op : moved)
    op->moveBefore(&body, body.end());
}

namespace {

/// 1 / (devices of the program that hold the same elements of an update's
/// gradient): the product of the sizes of the mesh axes the role leaves
/// free, over those along which the devices hold different elements (a
/// ZeRO chunk's group, a split parameter's axes).
double gradientWeight(LaunchOp launch, unsigned param, Value grad,
                      ProgramLowering &lowering) {
  llvm::StringSet<> distinct;
  if (auto it = lowering.shards.find(grad); it != lowering.shards.end())
    for (const std::string &axis : it->second.axes)
      distinct.insert(axis);
  if (auto input = launch.getInputs()[param].getDefiningOp<InputOp>())
    if (auto it = lowering.layout.argSplits.find(input.getIndex());
        it != lowering.layout.argSplits.end())
      for (const DimSplit &dim : it->second.dims)
        for (const std::string &axis : dim.axes)
          distinct.insert(axis);
  DictionaryAttr role = lowering.program.getRole();
  double replicas = 1.0;
  for (MeshAxisAttr axis : lowering.mesh.getAxisList()) {
    StringRef name = axis.getName().getValue();
    if (!role.get(name) && !distinct.contains(name))
      replicas *= static_cast<double>(axis.getSize());
  }
  return 1.0 / replicas;
}

/// A call of piper_clip_finish (declared once in `module`) at `builder`'s
/// insertion point.
func::CallOp finishCall(ModuleOp module, Location loc, OpBuilder &builder) {
  static constexpr StringLiteral name = "piper_clip_finish";
  auto fn = module.lookupSymbol<func::FuncOp>(name);
  if (!fn) {
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointToEnd(module.getBody());
    fn = func::FuncOp::create(builder, module.getLoc(), name,
                              builder.getFunctionType({}, {}));
    fn.setPrivate();
  }
  return func::CallOp::create(builder, loc, fn, ValueRange{});
}

} // namespace

LogicalResult mlir::piper::clipUpdateGradients(
    LaunchOp launch, ArrayRef<unsigned> grads, ArrayRef<unsigned> params,
    SmallVectorImpl<Value> &operands, ProgramLowering &lowering,
    ConversionPatternRewriter &rewriter) {
  Location loc = launch.getLoc();
  if (!lowering.clipFinish)
    lowering.clipFinish = finishCall(lowering.module, loc, rewriter);
  for (auto [grad, param] : llvm::zip_equal(grads, params)) {
    Value value = operands[grad];
    auto type = cast<RankedTensorType>(value.getType());
    FailureOr<StringRef> suffix =
        commSuffix(launch, type, /*allowInteger=*/false);
    if (failed(suffix))
      return failure();
    // A copy of a tied parameter's update (another device group's) holds
    // the same gradient as the original, which counts it.
    if (!launch->hasAttr(kCopyOfAttrName)) {
      // Before the finish: every update's gradients are final there.
      OpBuilder::InsertionGuard guard(rewriter);
      rewriter.setInsertionPoint(lowering.clipFinish);
      double weight = gradientWeight(launch, param, value, lowering);
      callShim(rewriter, loc, lowering.module,
               ("piper_clip_accumulate_" + *suffix).str(), {value}, {},
               {f64Constant(rewriter, loc, weight)});
    }
    Value clipped =
        callShim(rewriter, loc, lowering.module,
                 ("piper_clip_scale_" + *suffix).str(), {value}, {type}, {})
            .front();
    if (auto it = lowering.shards.find(value); it != lowering.shards.end()) {
      FlatShard shard = it->second;
      lowering.shards[clipped] = shard;
    }
    if (lowering.reduced.count(value))
      lowering.reduced.insert(clipped);
    operands[grad] = clipped;
  }
  return success();
}

void mlir::piper::finishClipWithoutUpdates(func::FuncOp fn) {
  if (!fn)
    return;
  Operation *ret = fn.getBody().front().getTerminator();
  OpBuilder builder(ret);
  finishCall(fn->getParentOfType<ModuleOp>(), fn.getLoc(), builder);
}
