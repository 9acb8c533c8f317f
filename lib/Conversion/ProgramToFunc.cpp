//===- ProgramToFunc.cpp - Device programs to functions on tensors --------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// --piper-program-to-func: every `piper.program @p` becomes a public
// `func.func @p` whose arguments are the step arguments the program reads
// (ascending index; a microbatch input becomes a tensor.extract_slice of the
// whole argument, so the host feeds whole global tensors) and whose results
// are the step results it writes (ascending index). Launches become calls of
// the outlined bodies and `piper.sum` an ordered add chain then a scale, as
// the interpreter accumulates. One process runs every stream of a role in
// program order, which the partitioner made a topological order of all
// streams, so records and waits vanish.
//
// Communication becomes calls of piper-run's shims (CommCalls.h). Replicas
// of a role share its program; each device holds the local view of
// ReplicaLayout.h: its share of the batch, flat ZeRO shards of the sharded
// parameters and state. A reduce_scatter yields this member's chunk of the
// gradient; an update fed chunks runs a clone of its body on chunk types
// (ZeroUpdate.h), a whole parameter it updates being cut to this member's
// chunk first (ZeRO-1/2); all_gather turns chunks back into whole tensors.
// A ZeRO-3 parameter a compute body receives ungathered is one it does not
// read (replicate gathers every parameter whose value is needed): it gets a
// zero-filled tensor of the whole type.
//
// Under expert parallelism a launch whose operands have local types other
// than its body's (split expert weights, expert-side activations), or whose
// body holds expert all-to-alls, calls a clone of the body re-typed for
// them, the all-to-alls lowered to shim calls (LocalBodies.h).
//
// The step functions the programs came from (with their DAGs) and the meshes
// are erased, and so are bodies holding collectives that no call is left to;
// other bodies no program calls are left for symbol-dce.
//
//===----------------------------------------------------------------------===//

#include "CommCalls.h"
#include "LocalBodies.h"
#include "ZeroUpdate.h"

#include "piper/Conversion/Passes.h"
#include "piper/Conversion/ReplicaLayout.h"
#include "piper/Dialect/Piper/IR/PiperDialect.h"
#include "piper/Dialect/Piper/IR/PiperOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"

#include <map>

using namespace mlir;
using namespace mlir::piper;

namespace {

/// The world-rank offset from a device of `self` to its peer in `peerRole`:
/// the peer differs only on the roles' axes, and ranks are row-major over
/// the mesh (piper_rt_mesh_rank's order).
FailureOr<int64_t> peerOffset(Operation *op, MeshOp mesh, ProgramOp self,
                              DictionaryAttr peerRole) {
  int64_t offset = 0, stride = 1;
  SmallVector<MeshAxisAttr> axes = mesh.getAxisList();
  for (MeshAxisAttr axis : llvm::reverse(axes)) {
    StringRef name = axis.getName();
    auto peer = peerRole.getAs<IntegerAttr>(name);
    auto mine = self.getRole().getAs<IntegerAttr>(name);
    if (peer && !mine)
      return op->emitError() << "cannot lower '" << op->getName()
                             << "': the peer's role names '" << name
                             << "' but this program's role does not";
    if (peer)
      offset += (peer.getInt() - mine.getInt()) * stride;
    stride *= axis.getSize();
  }
  return offset;
}

/// The step function of the program and the layout of its replicas.
struct Context {
  ModuleOp module;
  SymbolTable &symbols;
  MeshOp mesh;
  func::FuncOp step;
  ReplicaLayout layout;
};

/// Lowers one program into a function, instruction by instruction.
class ProgramLowering {
public:
  ProgramLowering(Context &ctx, ProgramOp program)
      : ctx(ctx), program(program), builder(program) {}

  LogicalResult run();

private:
  LogicalResult lowerInput(InputOp input);
  LogicalResult lowerLaunch(LaunchOp launch);
  LogicalResult lowerSum(SumOp sum);
  LogicalResult lowerTransfer(Operation *op);
  LogicalResult lowerComm(CommOp comm);

  /// A fresh flat-shard type of `shard` with `type`'s elements.
  static RankedTensorType chunkType(const FlatShard &shard, Type type) {
    return RankedTensorType::get({shard.chunk},
                                 cast<RankedTensorType>(type).getElementType());
  }

  Context &ctx;
  ProgramOp program;
  OpBuilder builder;
  /// Program values to the function's.
  IRMapping mapping;
  /// The function's values held as flat shards.
  DenseMap<Value, FlatShard> shards;
  /// The function's values that a gradient reduction produced.
  DenseSet<Value> reduced;
  DenseMap<int64_t, Value> argOf;
  std::map<int64_t, Value> results;
  int64_t launchIndex = 0;
  /// The local clones of bodies, by body and argument types.
  DenseMap<std::pair<Operation *, Type>, func::FuncOp> localBodies;
};

LogicalResult ProgramLowering::run() {
  Block &body = program.getBody().front();
  std::map<int64_t, Type> inputs, outputs;
  for (Operation &op : body) {
    if (auto input = dyn_cast<InputOp>(op)) {
      int64_t index = input.getIndex();
      inputs[index] =
          ctx.layout.localArgType(index, ctx.step.getArgumentTypes()[index]);
    } else if (auto output = dyn_cast<OutputOp>(op)) {
      int64_t index = output.getIndex();
      outputs[index] =
          ctx.layout.localResultType(index, ctx.step.getResultTypes()[index]);
    }
  }
  SmallVector<Type> argTypes, resultTypes;
  SmallVector<int64_t> inputIndices, outputIndices;
  for (auto &[index, type] : inputs) {
    inputIndices.push_back(index);
    argTypes.push_back(type);
  }
  for (auto &[index, type] : outputs) {
    outputIndices.push_back(index);
    resultTypes.push_back(type);
  }

  Location loc = program.getLoc();
  auto fn =
      func::FuncOp::create(builder, loc, program.getSymName(),
                           builder.getFunctionType(argTypes, resultTypes));
  fn->setAttr(kInputsAttrName, builder.getDenseI64ArrayAttr(inputIndices));
  fn->setAttr(kOutputsAttrName, builder.getDenseI64ArrayAttr(outputIndices));
  fn->setAttr(kRoleAttrName, program.getRole());
  // The host calls it through the C interface (descriptor pointers).
  fn->setAttr("llvm.emit_c_interface", builder.getUnitAttr());
  Block *entry = fn.addEntryBlock();
  builder.setInsertionPointToStart(entry);
  for (auto [i, index] : llvm::enumerate(inputIndices)) {
    argOf[index] = entry->getArgument(i);
    auto it = ctx.layout.argShards.find(index);
    if (it != ctx.layout.argShards.end())
      shards[entry->getArgument(i)] = it->second;
  }

  SmallVector<StringRef> streams;
  for (Attribute name : program.getStreams())
    streams.push_back(cast<StringAttr>(name).getValue());
  bool hasComm = !body.getOps<CommOp>().empty();
  for (Operation &op : body) {
    LogicalResult result = success();
    if (auto input = dyn_cast<InputOp>(op)) {
      result = lowerInput(input);
    } else if (auto output = dyn_cast<OutputOp>(op)) {
      Value value = mapping.lookup(output.getValue());
      Type expected = outputs[output.getIndex()];
      if (value.getType() != expected)
        return output.emitError()
               << "step result " << output.getIndex() << " is held as "
               << expected << " by each device, but the program computes "
               << value.getType()
               << " (a ZeRO stage that its collectives do not implement)";
      results[output.getIndex()] = value;
    } else if (auto launch = dyn_cast<LaunchOp>(op)) {
      // Timing hooks for piper-run's trace: the launch's index among the
      // program's launches (plan.json lists their names in that order).
      Value id = i64Constant(builder, launch.getLoc(), launchIndex++);
      callShim(builder, launch.getLoc(), ctx.module, "piper_trace_begin", {},
               {}, {id});
      result = lowerLaunch(launch);
      callShim(builder, launch.getLoc(), ctx.module, "piper_trace_end", {}, {},
               {id});
    } else if (auto sum = dyn_cast<SumOp>(op)) {
      result = lowerSum(sum);
    } else if (isa<RecordOp, WaitOp>(op)) {
      // Only nonblocking collectives make events matter: everything else
      // runs on the host in program order.
      if (!hasComm)
        continue;
      int64_t event = isa<RecordOp>(op) ? cast<RecordOp>(op).getEvent()
                                        : cast<WaitOp>(op).getEvent();
      StringRef stream = isa<RecordOp>(op) ? cast<RecordOp>(op).getStream()
                                           : cast<WaitOp>(op).getStream();
      int64_t index = llvm::find(streams, stream) - streams.begin();
      callShim(builder, op.getLoc(), ctx.module,
               isa<RecordOp>(op) ? "piper_comm_record" : "piper_comm_wait", {},
               {},
               {i64Constant(builder, op.getLoc(), event),
                i64Constant(builder, op.getLoc(), index)});
      continue;
    } else if (isa<SendOp, RecvOp>(op)) {
      result = lowerTransfer(&op);
    } else if (auto comm = dyn_cast<CommOp>(op)) {
      result = lowerComm(comm);
    } else {
      return op.emitError() << "unexpected instruction in a program";
    }
    if (failed(result))
      return failure();
  }

  // The step's results are read when every stream has finished.
  if (hasComm)
    callShim(builder, loc, ctx.module, "piper_comm_sync_all", {}, {}, {});
  SmallVector<Value> returned;
  for (auto &[index, value] : results)
    returned.push_back(value);
  func::ReturnOp::create(builder, loc, returned);
  return success();
}

LogicalResult ProgramLowering::lowerInput(InputOp input) {
  Value whole = argOf[input.getIndex()];
  if (!input.getMicrobatch()) {
    mapping.map(input.getResult(), whole);
    return success();
  }
  if (shards.count(whole))
    return input.emitError() << "a microbatch of a sharded argument";
  if (ctx.layout.argSplits.count(input.getIndex()))
    return input.emitError() << "a microbatch of a split argument";
  // The i-th of n contiguous slices along d, as piper.microbatch reads.
  auto type = cast<RankedTensorType>(input.getType());
  int64_t dim = *input.getDim();
  SmallVector<OpFoldResult> offsets(type.getRank(), builder.getIndexAttr(0));
  SmallVector<OpFoldResult> sizes,
      strides(type.getRank(), builder.getIndexAttr(1));
  for (int64_t size : type.getShape())
    sizes.push_back(builder.getIndexAttr(size));
  offsets[dim] =
      builder.getIndexAttr(*input.getMicrobatch() * type.getDimSize(dim));
  Value slice = tensor::ExtractSliceOp::create(builder, input.getLoc(), type,
                                               whole, offsets, sizes, strides);
  mapping.map(input.getResult(), slice);
  return success();
}

LogicalResult ProgramLowering::lowerLaunch(LaunchOp launch) {
  auto callee = ctx.symbols.lookup<func::FuncOp>(launch.getCallee());
  if (!callee)
    return launch.emitError() << "body @" << launch.getCallee() << " not found";
  Location loc = launch.getLoc();
  SmallVector<Value> operands;
  bool anyShard = false;
  for (Value v : launch.getInputs()) {
    operands.push_back(mapping.lookup(v));
    anyShard |= shards.count(operands.back()) > 0;
  }
  bool update = isUpdateBody(callee);
  if (update && ctx.layout.batchReplicas > 1) {
    // Replicas see different rows: an update must apply the reduced
    // gradient, or each replica's parameters drift apart.
    FailureOr<SmallVector<SmallVector<unsigned>>> groups =
        updateGroups(callee, launch);
    if (failed(groups))
      return failure();
    for (ArrayRef<unsigned> group : *groups)
      if (!reduced.count(operands[group[1]]))
        return launch.emitError()
               << "update '" << launch.getName() << "' applies a gradient ("
               << "argument #" << group[1] << " of @" << callee.getSymName()
               << ") that no collective reduces over the batch axes ["
               << llvm::join(ctx.layout.batchAxes, ", ")
               << "]; replicate every updated parameter over them";
  }
  if (!anyShard) {
    // Split expert weights, expert-side activations and in-body
    // collectives: a clone of the body on the operands' local types.
    SmallVector<Type> argTypes;
    for (Value operand : operands)
      argTypes.push_back(operand.getType());
    if (TypeRange(argTypes) != callee.getArgumentTypes() ||
        hasBodyCollectives(callee)) {
      func::FuncOp &local = localBodies[{
          callee.getOperation(), builder.getFunctionType(argTypes, {})}];
      if (!local) {
        FailureOr<func::FuncOp> clone =
            cloneLocalBody(callee, argTypes, ctx.mesh, launch);
        if (failed(clone))
          return failure();
        local = *clone;
      }
      auto call = func::CallOp::create(builder, loc, local, operands);
      mapping.map(launch.getResults(), call.getResults());
      return success();
    }
    auto call = func::CallOp::create(builder, loc, callee.getSymName(),
                                     launch.getResultTypes(), operands);
    mapping.map(launch.getResults(), call.getResults());
    return success();
  }

  if (!update) {
    // A ZeRO-3 parameter passed ungathered: the body does not read it.
    for (auto [i, operand] : llvm::enumerate(operands)) {
      if (!shards.count(operand))
        continue;
      auto type = cast<RankedTensorType>(callee.getArgumentTypes()[i]);
      Value empty = tensor::EmptyOp::create(builder, loc, type.getShape(),
                                            type.getElementType());
      Value zero = arith::ConstantOp::create(
          builder, loc, builder.getZeroAttr(type.getElementType()));
      operand = linalg::FillOp::create(builder, loc, zero, empty).result();
    }
    auto call = func::CallOp::create(builder, loc, callee.getSymName(),
                                     launch.getResultTypes(), operands);
    mapping.map(launch.getResults(), call.getResults());
    return success();
  }

  // An update fed shards: every operand of an update touching a shard is
  // cut to the same member's chunk, and the body runs on chunks.
  FailureOr<SmallVector<SmallVector<unsigned>>> groups =
      updateGroups(callee, launch);
  if (failed(groups))
    return failure();
  SmallVector<Type> argTypes(callee.getArgumentTypes());
  for (ArrayRef<unsigned> group : *groups) {
    const FlatShard *shard = nullptr;
    for (unsigned i : group)
      if (auto it = shards.find(operands[i]); it != shards.end())
        shard = &it->second;
    if (!shard)
      continue;
    FlatShard groupShard = *shard;
    for (unsigned i : group) {
      Value &operand = operands[i];
      if (auto it = shards.find(operand); it != shards.end()) {
        if (it->second.axes != groupShard.axes ||
            it->second.chunk != groupShard.chunk)
          return launch.emitError()
                 << "update '" << launch.getName()
                 << "' mixes flat shards of different groups or sizes";
        continue;
      }
      // A whole tensor (ZeRO-1/2's replicated parameter): this member's
      // chunk of it.
      auto type = cast<RankedTensorType>(operand.getType());
      if (type.getNumElements() != groupShard.numel)
        return launch.emitError() << "update '" << launch.getName() << "' gets "
                                  << type << " beside shards of a "
                                  << groupShard.numel << "-element tensor";
      FailureOr<StringRef> suffix =
          commSuffix(launch, type, /*allowInteger=*/false);
      if (failed(suffix))
        return failure();
      // The communicator of the group: the first whose axes are the group's.
      int64_t comm = -1;
      if (auto list =
              ctx.module->getAttrOfType<ArrayAttr>(kCommunicatorsAttrName))
        for (auto [k, entry] : llvm::enumerate(list)) {
          SmallVector<std::string> names;
          for (Attribute a : cast<ArrayAttr>(cast<ArrayAttr>(entry)[0]))
            names.push_back(cast<StringAttr>(a).str());
          if (names == groupShard.axes) {
            comm = k;
            break;
          }
        }
      if (comm < 0)
        return launch.emitError() << "no communicator over the ZeRO group of "
                                     "an operand of '"
                                  << launch.getName() << "'";
      operand = callShim(builder, loc, ctx.module,
                         ("piper_comm_shard_" + *suffix).str(), {operand},
                         {chunkType(groupShard, type)},
                         {i64Constant(builder, loc, comm)})
                    .front();
      shards[operand] = groupShard;
    }
  }
  // Every argument as the device holds it: chunks, split parts (experts),
  // whole tensors.
  for (auto [i, operand] : llvm::enumerate(operands))
    argTypes[i] = operand.getType();
  FailureOr<func::FuncOp> clone = cloneUpdateBody(callee, argTypes, launch);
  if (failed(clone))
    return failure();
  auto call = func::CallOp::create(builder, loc, *clone, operands);
  mapping.map(launch.getResults(), call.getResults());
  // A result an update computes on chunks is a shard of that update's group.
  auto ret = cast<func::ReturnOp>(clone->getBody().front().getTerminator());
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
    auto it = shards.find(operands[param.getArgNumber()]);
    if (it != shards.end()) {
      FlatShard shard = it->second;
      shards[call.getResult(k)] = shard;
    }
  }
  return success();
}

LogicalResult ProgramLowering::lowerSum(SumOp sum) {
  // Left to right, then scaled (the interpreter's fixed association).
  Value acc = mapping.lookup(sum.getValues().front());
  for (Value v : sum.getValues().drop_front())
    acc = AddOp::create(builder, sum.getLoc(), acc.getType(), acc,
                        mapping.lookup(v));
  auto type = cast<RankedTensorType>(acc.getType());
  auto scale = arith::ConstantOp::create(
      builder, sum.getLoc(),
      DenseElementsAttr::get(
          type, builder.getFloatAttr(type.getElementType(),
                                     sum.getScale().convertToDouble())));
  acc = MulOp::create(builder, sum.getLoc(), acc.getType(), acc, scale);
  mapping.map(sum.getResult(), acc);
  return success();
}

LogicalResult ProgramLowering::lowerTransfer(Operation *op) {
  bool isSend = isa<SendOp>(op);
  StringRef peerName =
      isSend ? cast<SendOp>(op).getPeer() : cast<RecvOp>(op).getPeer();
  int64_t tag = isSend ? cast<SendOp>(op).getTag() : cast<RecvOp>(op).getTag();
  // The peer's role: from its program, or, when the module holds only this
  // program (piper-compile lowers each alone), from the op.
  auto peerRole = op->getAttrOfType<DictionaryAttr>(kPeerRoleAttrName);
  for (ProgramOp candidate : ctx.module.getOps<ProgramOp>())
    if (candidate.getSymName() == peerName)
      peerRole = candidate.getRole();
  if (!peerRole)
    return op->emitError() << "peer @" << peerName << " not found";
  FailureOr<int64_t> offset = peerOffset(op, ctx.mesh, program, peerRole);
  if (failed(offset))
    return failure();
  Type type = isSend ? cast<SendOp>(op).getValue().getType()
                     : cast<RecvOp>(op).getResult().getType();
  FailureOr<StringRef> suffix = commSuffix(op, type, /*allowInteger=*/true);
  if (failed(suffix))
    return failure();
  Location loc = op->getLoc();
  SmallVector<Value> extra = {i64Constant(builder, loc, *offset),
                              i64Constant(builder, loc, tag)};
  if (isSend) {
    Value value = mapping.lookup(cast<SendOp>(op).getValue());
    if (shards.count(value))
      return op->emitError() << "cannot send a ZeRO shard between roles";
    callShim(builder, loc, ctx.module, ("piper_comm_send_" + *suffix).str(),
             {value}, {}, extra);
    return success();
  }
  Value received =
      callShim(builder, loc, ctx.module, ("piper_comm_recv_" + *suffix).str(),
               {}, {type}, extra)
          .front();
  mapping.map(cast<RecvOp>(op).getResult(), received);
  return success();
}

LogicalResult ProgramLowering::lowerComm(CommOp comm) {
  auto index = comm->getAttrOfType<IntegerAttr>(kCommIndexAttrName);
  if (!index)
    return comm.emitError()
           << "cannot lower '" << comm.getName()
           << "': no communicator index (piper-compile numbers them)";
  FailureOr<StringRef> suffix =
      commSuffix(comm, comm.getType(), /*allowInteger=*/false);
  if (failed(suffix))
    return failure();
  Location loc = comm.getLoc();
  Value in = mapping.lookup(comm.getValue());
  // A reduction runs on what the device holds (a split expert gradient is
  // its part); all_gather yields the whole tensor.
  auto type = cast<RankedTensorType>(comm.getKind() == CollectiveKind::AllGather
                                         ? comm.getType()
                                         : in.getType());
  Value commValue = i64Constant(builder, loc, index.getInt());
  // Each replica's gradient is of the mean loss over its rows; the global
  // loss is the mean over the R batch replicas.
  Value scale = f64Constant(builder, loc, 1.0 / ctx.layout.batchReplicas);
  FlatShard group;
  for (MeshAxisAttr axis : ctx.mesh.getAxisList())
    if (llvm::any_of(comm.getAxes(), [&](Attribute a) {
          return cast<StringAttr>(a).getValue() == axis.getName();
        })) {
      group.axes.push_back(axis.getName().str());
      group.members *= axis.getSize();
    }
  group.numel = type.getNumElements();
  group.chunk = (group.numel + group.members - 1) / group.members;
  CollectiveKind collective = comm.getKind();
  // ZeRO over a group of one device shards nothing: the reduce-scatter is a
  // (scaling) all-reduce and the all-gather of the update is the update.
  if (group.members == 1 && !shards.count(in)) {
    if (collective == CollectiveKind::AllGather) {
      mapping.map(comm.getResult(), in);
      return success();
    }
    if (collective == CollectiveKind::ReduceScatter)
      collective = CollectiveKind::AllReduce;
  }
  // Nonblocking (the i prefix, as MPI's): the program's events say when
  // the result is needed.
  std::string kind = stringifyCollectiveKind(collective).str();
  std::string name = "piper_comm_i" + kind + "_" + suffix->str();
  switch (collective) {
  case CollectiveKind::AllReduce:
  case CollectiveKind::ReduceScatter: {
    if (shards.count(in))
      return comm.emitError() << "cannot lower '" << comm.getName()
                              << "': its operand is already a ZeRO shard";
    bool scatter = collective == CollectiveKind::ReduceScatter;
    Type outType = scatter ? Type(chunkType(group, type)) : Type(type);
    Value out = callShim(builder, loc, ctx.module, name, {in}, {outType},
                         {commValue, scale})
                    .front();
    if (scatter)
      shards[out] = group;
    reduced.insert(out);
    mapping.map(comm.getResult(), out);
    return success();
  }
  case CollectiveKind::AllGather: {
    auto it = shards.find(in);
    if (it == shards.end())
      return comm.emitError()
             << "cannot lower '" << comm.getName()
             << "': all_gather of a whole tensor (it gathers ZeRO shards)";
    if (it->second.axes != group.axes || it->second.chunk != group.chunk)
      return comm.emitError() << "cannot lower '" << comm.getName()
                              << "': its operand is a shard over another group";
    Value out =
        callShim(builder, loc, ctx.module, name, {in}, {type}, {commValue})
            .front();
    mapping.map(comm.getResult(), out);
    return success();
  }
  case CollectiveKind::AllToAll:
    break;
  }
  return comm.emitError() << "cannot lower '" << comm.getName()
                          << "': all_to_all between programs";
}

/// Builds the function of one program; fails with a diagnostic at the first
/// instruction that cannot run.
LogicalResult convertProgram(ProgramOp program, SymbolTable &symbols) {
  auto step = symbols.lookup<func::FuncOp>(program.getStep());
  if (!step)
    return program.emitError()
           << "step function @" << program.getStep() << " not found";
  auto mesh = symbols.lookup<MeshOp>(program.getMesh());
  if (!mesh)
    return program.emitError() << "mesh @" << program.getMesh() << " not found";
  auto module = program->getParentOfType<ModuleOp>();
  SmallVector<std::string> batchAxes;
  if (auto axes = module->getAttrOfType<ArrayAttr>(kBatchAxesAttrName)) {
    for (Attribute a : axes)
      batchAxes.push_back(cast<StringAttr>(a).str());
  } else {
    SmallVector<ProgramOp> programs(module.getOps<ProgramOp>());
    batchAxes = collectBatchAxes(programs, mesh);
  }
  Context ctx{module, symbols, mesh, step,
              computeReplicaLayout(step, mesh, batchAxes)};
  return ProgramLowering(ctx, program).run();
}

struct ProgramToFuncPass
    : PassWrapper<ProgramToFuncPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(ProgramToFuncPass)
  StringRef getArgument() const override { return "piper-program-to-func"; }
  StringRef getDescription() const override {
    return "Turn each piper.program into a public func.func on tensors";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry
        .insert<func::FuncDialect, tensor::TensorDialect, arith::ArithDialect,
                bufferization::BufferizationDialect, memref::MemRefDialect>();
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    SmallVector<ProgramOp> programs(module.getOps<ProgramOp>());
    if (programs.empty()) {
      module.emitError() << "no piper.program to lower; run --piper-partition "
                            "first";
      return signalPassFailure();
    }
    DenseSet<Operation *> steps;
    for (ProgramOp program : programs) {
      if (failed(convertProgram(program, symbols)))
        return signalPassFailure();
      if (Operation *step = symbols.lookup(program.getStep()))
        steps.insert(step);
    }
    for (ProgramOp program : programs)
      program.erase();
    for (Operation *step : steps)
      step->erase();
    for (MeshOp mesh : llvm::make_early_inc_range(module.getOps<MeshOp>()))
      mesh.erase();
    // Bodies whose collectives only their local clones lower, now uncalled.
    for (auto fn : llvm::make_early_inc_range(module.getOps<func::FuncOp>()))
      if (hasBodyCollectives(fn) &&
          SymbolTable::symbolKnownUseEmpty(fn, module))
        fn.erase();
    for (StringRef name : {kBatchAxesAttrName, kCommunicatorsAttrName})
      module->removeAttr(name);
  }
};

} // namespace

std::unique_ptr<Pass> mlir::piper::createProgramToFuncPass() {
  return std::make_unique<ProgramToFuncPass>();
}
