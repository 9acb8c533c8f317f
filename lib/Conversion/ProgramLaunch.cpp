//===- ProgramLaunch.cpp - piper.launch to calls of bodies ----------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// A launch becomes a call of its body, bracketed by the trace hooks
// piper_trace_begin/end(index) (the launch's index among the program's
// launches; plan.json lists their names in that order). Each operand is what
// the device holds:
//
//  - under expert parallelism a launch whose operands have local types other
//    than its body's (split expert weights, expert-side activations), or
//    whose body holds collectives, calls a clone of the body re-typed for
//    them (LocalBodies.h);
//  - a ZeRO-3 parameter a compute body receives ungathered is one it does
//    not read (replicate gathers every parameter whose value is needed): it
//    gets a zero-filled tensor of the whole type;
//  - an update fed flat shards runs a clone of its body on chunk types
//    (ZeroUpdate.h), a whole parameter it updates being cut to this member's
//    chunk first (ZeRO-1/2); what it computes on chunks stays a shard.
//
// With batch replicas an update must apply a reduced gradient, or each
// replica's parameters drift apart.
//
//===----------------------------------------------------------------------===//

#include "ClipGradNorm.h"
#include "CommCalls.h"
#include "LocalBodies.h"
#include "ProgramPatterns.h"
#include "ZeroUpdate.h"

#include "piper/Dialect/Piper/Transforms/EvalPrograms.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::piper;

namespace {

using Groups = SmallVector<SmallVector<unsigned>>;

struct LaunchPattern : ProgramOpPattern<LaunchOp> {
  using ProgramOpPattern::ProgramOpPattern;

  LogicalResult
  matchAndRewrite(LaunchOp launch, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = launch.getLoc();
    Value id = i64Constant(rewriter, loc,
                           launchTraceIndex(launch, lowering.launchIndex++));
    callShim(rewriter, loc, lowering.module, "piper_trace_begin", {}, {}, {id});
    FailureOr<SmallVector<Value>> results =
        lowerCall(launch, adaptor.getInputs(), rewriter);
    if (failed(results))
      return failure();
    callShim(rewriter, loc, lowering.module, "piper_trace_end", {}, {}, {id});
    lowering.replace(rewriter, launch, *results);
    return success();
  }

private:
  /// The call of the body (or a clone of it) on `operands`.
  FailureOr<SmallVector<Value>>
  lowerCall(LaunchOp launch, ValueRange operands,
            ConversionPatternRewriter &rewriter) const {
    auto callee = lowering.symbols.lookup<func::FuncOp>(launch.getCallee());
    if (!callee)
      return launch.emitError()
             << "body @" << launch.getCallee() << " not found";
    bool update = isUpdateBody(callee);
    if (update && lowering.layout.batchReplicas > 1 &&
        failed(checkReduced(launch, callee, operands)))
      return failure();
    SmallVector<Value> clipped(operands);
    if (update && clipsGradNorm(lowering.module)) {
      FailureOr<Groups> groups = updateGroups(callee, launch);
      if (failed(groups))
        return failure();
      SmallVector<unsigned> grads, params;
      for (ArrayRef<unsigned> group : *groups) {
        params.push_back(group[0]);
        grads.push_back(group[1]);
      }
      if (failed(clipUpdateGradients(launch, grads, params, clipped, lowering,
                                     rewriter)))
        return failure();
      operands = clipped;
    }
    bool anyShard = llvm::any_of(
        operands, [&](Value v) { return lowering.shards.count(v) > 0; });
    if (!anyShard)
      return callOnLocalTypes(launch, callee, operands, rewriter);
    if (!update)
      return callWithZeros(launch, callee, operands, rewriter);
    return callUpdateOnChunks(launch, callee, operands, rewriter);
  }

  /// Every gradient an update applies comes out of a reduction.
  LogicalResult checkReduced(LaunchOp launch, func::FuncOp callee,
                             ValueRange operands) const {
    FailureOr<Groups> groups = updateGroups(callee, launch);
    if (failed(groups))
      return failure();
    for (ArrayRef<unsigned> group : *groups)
      if (!lowering.reduced.count(operands[group[1]]))
        return launch.emitError()
               << "update '" << launch.getName() << "' applies a gradient ("
               << "argument #" << group[1] << " of @" << callee.getSymName()
               << ") that no collective reduces over the batch axes ["
               << llvm::join(lowering.layout.batchAxes, ", ")
               << "]; replicate every updated parameter over them";
    return success();
  }

  /// The body itself, or (split expert weights, expert-side activations,
  /// in-body collectives) a clone of it on the operands' local types.
  FailureOr<SmallVector<Value>>
  callOnLocalTypes(LaunchOp launch, func::FuncOp callee, ValueRange operands,
                   ConversionPatternRewriter &rewriter) const {
    Location loc = launch.getLoc();
    SmallVector<Type> argTypes(operands.getTypes());
    if (TypeRange(argTypes) == callee.getArgumentTypes() &&
        !hasBodyCollectives(callee))
      return SmallVector<Value>(
          func::CallOp::create(rewriter, loc, callee.getSymName(),
                               launch.getResultTypes(), operands)
              .getResults());
    func::FuncOp &local = lowering.localBodies[{
        callee.getOperation(), rewriter.getFunctionType(argTypes, {})}];
    if (!local) {
      FailureOr<func::FuncOp> clone =
          cloneLocalBody(callee, argTypes, lowering.mesh, launch);
      if (failed(clone))
        return failure();
      local = *clone;
    }
    return SmallVector<Value>(
        func::CallOp::create(rewriter, loc, local, operands).getResults());
  }

  /// A compute body given ZeRO-3 parameters ungathered: it does not read
  /// them (replicate gathers every parameter whose value is needed), so it
  /// runs as a clone without those arguments. Zero-filled stand-ins of the
  /// whole type would allocate and fill the parameters' bytes at every such
  /// launch (each weight-gradient bucket takes every parameter of its
  /// node). Where the body does read one (a body replicate did not see),
  /// it gets a zero-filled tensor of what its chunks flatten, as before.
  FailureOr<SmallVector<Value>>
  callWithZeros(LaunchOp launch, func::FuncOp callee, ValueRange operands,
                ConversionPatternRewriter &rewriter) const {
    Location loc = launch.getLoc();
    SmallVector<Value> args;
    std::vector<unsigned> dropped;
    Block &entry = callee.getBody().front();
    for (auto [i, operand] : llvm::enumerate(operands)) {
      auto it = lowering.shards.find(operand);
      if (it == lowering.shards.end()) {
        args.push_back(operand);
        continue;
      }
      if (entry.getArgument(i).use_empty()) {
        dropped.push_back(i);
        continue;
      }
      auto type = cast<RankedTensorType>(callee.getArgumentTypes()[i]);
      ArrayRef<int64_t> shape = it->second.shape;
      if (shape.empty())
        shape = type.getShape();
      Value empty =
          tensor::EmptyOp::create(rewriter, loc, shape, type.getElementType());
      Value zero = arith::ConstantOp::create(
          rewriter, loc, rewriter.getZeroAttr(type.getElementType()));
      args.push_back(
          linalg::FillOp::create(rewriter, loc, zero, empty).result());
    }
    if (dropped.empty())
      return callOnLocalTypes(launch, callee, args, rewriter);
    func::FuncOp &pruned =
        lowering.prunedBodies[{callee.getOperation(), dropped}];
    if (!pruned) {
      // As cloneLocalBody: bodies are outside what the conversion rewrites.
      OpBuilder builder(callee);
      builder.setInsertionPointAfter(callee);
      std::string name = freshBodyName(callee, ".pruned");
      pruned = cast<func::FuncOp>(builder.clone(*callee));
      pruned.setSymName(name);
      pruned.setPrivate();
      BitVector erase(callee.getNumArguments());
      for (unsigned i : dropped)
        erase.set(i);
      if (failed(pruned.eraseArguments(erase)))
        return launch.emitError() << "cannot drop the unread ZeRO-3 "
                                     "arguments of @"
                                  << callee.getSymName();
    }
    return callOnLocalTypes(launch, pruned, args, rewriter);
  }

  /// An update fed shards: every operand of an update touching a shard is
  /// cut to the same member's chunk, and a clone of the body runs on chunks.
  FailureOr<SmallVector<Value>>
  callUpdateOnChunks(LaunchOp launch, func::FuncOp callee, ValueRange operands,
                     ConversionPatternRewriter &rewriter) const {
    FailureOr<Groups> groups = updateGroups(callee, launch);
    if (failed(groups))
      return failure();
    SmallVector<Value> args(operands);
    for (ArrayRef<unsigned> group : *groups)
      if (failed(shardGroup(launch, group, args, rewriter)))
        return failure();
    // Every argument as the device holds it: chunks, split parts (experts),
    // whole tensors.
    SmallVector<Type> argTypes(ValueRange(args).getTypes());
    FailureOr<func::FuncOp> clone = cloneUpdateBody(callee, argTypes, launch);
    if (failed(clone))
      return failure();
    auto call = func::CallOp::create(rewriter, launch.getLoc(), *clone, args);
    recordUpdatedShards(*clone, call, args);
    return SmallVector<Value>(call.getResults());
  }

  /// Cuts the whole tensors among `args[group]` to the chunk of the group's
  /// shards, if any of them is a shard.
  LogicalResult shardGroup(LaunchOp launch, ArrayRef<unsigned> group,
                           SmallVectorImpl<Value> &args,
                           ConversionPatternRewriter &rewriter) const {
    const FlatShard *shard = nullptr;
    for (unsigned i : group)
      if (auto it = lowering.shards.find(args[i]); it != lowering.shards.end())
        shard = &it->second;
    if (!shard)
      return success();
    FlatShard groupShard = *shard;
    for (unsigned i : group) {
      Value &operand = args[i];
      if (auto it = lowering.shards.find(operand);
          it != lowering.shards.end()) {
        if (it->second.axes != groupShard.axes ||
            it->second.chunk != groupShard.chunk)
          return launch.emitError()
                 << "update '" << launch.getName()
                 << "' mixes flat shards of different groups or sizes";
        continue;
      }
      FailureOr<Value> chunk =
          shardWhole(launch, operand, groupShard, rewriter);
      if (failed(chunk))
        return failure();
      operand = *chunk;
      lowering.shards[operand] = groupShard;
    }
    return success();
  }

  /// This member's chunk of a whole tensor (ZeRO-1/2's replicated
  /// parameter), through piper_comm_shard_<t>(in, out, comm).
  FailureOr<Value> shardWhole(LaunchOp launch, Value operand,
                              const FlatShard &groupShard,
                              ConversionPatternRewriter &rewriter) const {
    Location loc = launch.getLoc();
    auto type = cast<RankedTensorType>(operand.getType());
    if (type.getNumElements() != groupShard.numel)
      return launch.emitError()
             << "update '" << launch.getName() << "' gets " << type
             << " beside shards of a " << groupShard.numel << "-element tensor";
    FailureOr<StringRef> suffix =
        commSuffix(launch, type, /*allowInteger=*/false);
    if (failed(suffix))
      return failure();
    int64_t comm = communicatorOf(groupShard.axes);
    if (comm < 0)
      return launch.emitError() << "no communicator over the ZeRO group of "
                                   "an operand of '"
                                << launch.getName() << "'";
    return callShim(rewriter, loc, lowering.module,
                    ("piper_comm_shard_" + *suffix).str(), {operand},
                    {chunkType(groupShard, type)},
                    {i64Constant(rewriter, loc, comm)})
        .front();
  }

  /// The first communicator of the plan's list over `axes`; -1 if none.
  int64_t communicatorOf(ArrayRef<std::string> axes) const {
    auto list =
        lowering.module->getAttrOfType<ArrayAttr>(kCommunicatorsAttrName);
    if (!list)
      return -1;
    for (auto [k, entry] : llvm::enumerate(list)) {
      SmallVector<std::string> names;
      for (Attribute a : cast<ArrayAttr>(cast<ArrayAttr>(entry)[0]))
        names.push_back(cast<StringAttr>(a).str());
      if (ArrayRef<std::string>(names) == axes)
        return k;
    }
    return -1;
  }

  /// A result an update computes on chunks is a shard of that update's
  /// group.
  void recordUpdatedShards(func::FuncOp clone, func::CallOp call,
                           ArrayRef<Value> args) const {
    auto ret = cast<func::ReturnOp>(clone.getBody().front().getTerminator());
    for (auto [k, value] : llvm::enumerate(ret.getOperands())) {
      // Through the annotations around it (expert blocks nest in stages).
      Value source = value;
      while (auto annotate = source.getDefiningOp<AnnotateOp>())
        source = annotate.getBody().front().getTerminator()->getOperand(
            cast<OpResult>(source).getResultNumber());
      Operation *def = source.getDefiningOp();
      if (!def || !isa<AdamWUpdateOp, SgdUpdateOp>(def))
        continue;
      auto param = cast<BlockArgument>(def->getOperand(0));
      auto it = lowering.shards.find(args[param.getArgNumber()]);
      if (it != lowering.shards.end()) {
        FlatShard shard = it->second;
        lowering.shards[call.getResult(k)] = shard;
      }
    }
  }
};

} // namespace

void mlir::piper::populateProgramLaunchPatterns(ProgramTypeConverter &converter,
                                                RewritePatternSet &patterns,
                                                ProgramLowering &lowering) {
  patterns.add<LaunchPattern>(converter, patterns.getContext(), lowering);
}
