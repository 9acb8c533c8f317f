//===- ProgramComm.cpp - Program communication to runtime calls -----------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Communication becomes calls of the runtime's piper_comm_* entry points
// (CommCalls.h). Sends and receives name their peer by the world-rank offset
// to it; collectives are nonblocking (the i prefix, as MPI's), the
// program's events saying when a result is needed. A reduce_scatter yields
// this member's chunk of the gradient (a flat shard, ReplicaLayout.h) and
// all_gather turns chunks back into whole tensors.
//
//===----------------------------------------------------------------------===//

#include "CommCalls.h"
#include "KernelPatterns.h"
#include "MeshGroups.h"
#include "ProgramPatterns.h"

#include "piper/Conversion/Passes.h"

using namespace mlir;
using namespace mlir::piper;

namespace {

/// The world-rank offset from a device of `self` to its peer in `peerRole`:
/// the peer differs only on the roles' axes, and ranks are row-major over
/// the mesh (piper_rt_mesh_rank's order).
FailureOr<int64_t> peerOffset(Operation *op, MeshOp mesh, DictionaryAttr self,
                              DictionaryAttr peerRole) {
  int64_t offset = 0, stride = 1;
  SmallVector<MeshAxisAttr> axes = mesh.getAxisList();
  for (MeshAxisAttr axis : llvm::reverse(axes)) {
    StringRef name = axis.getName();
    auto peer = peerRole.getAs<IntegerAttr>(name);
    auto mine = self.getAs<IntegerAttr>(name);
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

/// piper.send / piper.recv -> piper_comm_send/recv_<t>(value, peer offset,
/// tag).
template <typename OpTy> struct TransferPattern : ProgramOpPattern<OpTy> {
  using ProgramOpPattern<OpTy>::ProgramOpPattern;
  using OpAdaptor = typename OpTy::Adaptor;
  static constexpr bool isSend = std::is_same_v<OpTy, SendOp>;

  LogicalResult
  matchAndRewrite(OpTy op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    ProgramLowering &lowering = this->lowering;
    // The peer's role: from its program, or, when the module holds only this
    // program (piper-compile lowers each alone), from the op.
    auto peerRole =
        op->template getAttrOfType<DictionaryAttr>(kPeerRoleAttrName);
    if (DictionaryAttr role = lowering.roles.lookup(op.getPeer()))
      peerRole = role;
    if (!peerRole)
      return op->emitError() << "peer @" << op.getPeer() << " not found";
    FailureOr<int64_t> offset =
        peerOffset(op, lowering.mesh, lowering.program.getRole(), peerRole);
    if (failed(offset))
      return failure();
    Type type;
    if constexpr (isSend)
      type = op.getValue().getType();
    else
      type = op.getResult().getType();
    // bf16 activations travel as f32 (wireType), narrowed back on arrival.
    RankedTensorType wire = wireType(type);
    FailureOr<StringRef> suffix = commSuffix(op, wire, /*allowInteger=*/true);
    if (failed(suffix))
      return failure();
    Location loc = op.getLoc();
    SmallVector<Value> extra = {i64Constant(rewriter, loc, *offset),
                                i64Constant(rewriter, loc, op.getTag())};
    if constexpr (isSend) {
      Value value = adaptor.getValue();
      if (lowering.shards.count(value))
        return op->emitError() << "cannot send a ZeRO shard between roles";
      callShim(
          rewriter, loc, lowering.module, ("piper_comm_send_" + *suffix).str(),
          {castTensor(rewriter, loc, value, wire.getElementType())}, {}, extra);
      rewriter.eraseOp(op);
    } else {
      // Nonblocking where every reader waits for it anyway (IssueOrder.h):
      // the runtime completes it at the wait for its stream's event.
      StringRef kind = "piper_comm_recv_";
      if (lowering.lazyReceives.contains(op)) {
        kind = "piper_comm_irecv_";
        int64_t stream = llvm::find(lowering.streams, op.getStream()) -
                         lowering.streams.begin();
        extra.push_back(i64Constant(rewriter, loc, stream));
      }
      Value received = callShim(rewriter, loc, lowering.module,
                                (kind + *suffix).str(), {}, {wire}, extra)
                           .front();
      received = castTensor(rewriter, loc, received,
                            cast<RankedTensorType>(type).getElementType());
      lowering.replace(rewriter, op, received);
    }
    return success();
  }
};

/// piper.comm -> piper_comm_i<kind>_<t>(in, out, comm[, scale]).
struct CommPattern : ProgramOpPattern<CommOp> {
  using ProgramOpPattern::ProgramOpPattern;

  LogicalResult
  matchAndRewrite(CommOp comm, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto index = comm->getAttrOfType<IntegerAttr>(kCommIndexAttrName);
    if (!index)
      return comm.emitError()
             << "cannot lower '" << comm.getName()
             << "': no communicator index (piper-compile numbers them)";
    FailureOr<StringRef> suffix =
        commSuffix(comm, comm.getType(), /*allowInteger=*/false);
    if (failed(suffix))
      return failure();
    Value in = adaptor.getValue();
    // A reduction runs on what the device holds (a split expert gradient is
    // its part); all_gather yields the whole tensor.
    auto type = cast<RankedTensorType>(
        comm.getKind() == CollectiveKind::AllGather ? comm.getType()
                                                    : in.getType());
    // The chunks of a split parameter's part gather into the part.
    if (auto it = lowering.shards.find(in);
        comm.getKind() == CollectiveKind::AllGather &&
        it != lowering.shards.end() && !it->second.shape.empty())
      type = RankedTensorType::get(it->second.shape, type.getElementType());
    // The communicator and, for reductions, the scale 1/R: each replica's
    // gradient is of the mean loss over its rows; the global loss is the
    // mean over the R batch replicas. (Created first, as every lowering of
    // a comm reads them, even where a group of one makes them unused.)
    Location loc = comm.getLoc();
    Value commValue = i64Constant(rewriter, loc, index.getInt());
    Value scale =
        f64Constant(rewriter, loc, 1.0 / lowering.layout.batchReplicas);
    FlatShard group;
    group.members = meshGroupSize(comm.getAxes(), lowering.mesh, &group.axes);
    group.numel = type.getNumElements();
    llvm::append_range(group.shape, type.getShape());
    group.chunk = (group.numel + group.members - 1) / group.members;
    CollectiveKind collective = comm.getKind();
    // ZeRO over a group of one device shards nothing: the reduce-scatter is
    // a (scaling) all-reduce and the all-gather of the update is the update.
    if (group.members == 1 && !lowering.shards.count(in)) {
      if (collective == CollectiveKind::AllGather) {
        lowering.replace(rewriter, comm, in);
        return success();
      }
      if (collective == CollectiveKind::ReduceScatter)
        collective = CollectiveKind::AllReduce;
      // One replica in all (a `replicate` over dp=1): the sum is the
      // gradient and the scale 1/R is 1, so no call, no buffer and no copy
      // (each cost a fresh buffer's page faults on the CPU: 12 ms of a
      // 130 ms TP2 step). With R > 1 the call still scales by 1/R.
      if (lowering.layout.batchReplicas == 1) {
        lowering.reduced.insert(in);
        lowering.replace(rewriter, comm, in);
        return success();
      }
    }
    std::string name = "piper_comm_i" +
                       stringifyCollectiveKind(collective).str() + "_" +
                       suffix->str();
    FailureOr<Value> out;
    switch (collective) {
    case CollectiveKind::AllReduce:
    case CollectiveKind::ReduceScatter:
      out = reduce(comm, in, type, group, name, {commValue, scale},
                   collective == CollectiveKind::ReduceScatter, rewriter);
      break;
    case CollectiveKind::AllGather:
      out = gather(comm, in, type, group, name, commValue, rewriter);
      break;
    case CollectiveKind::AllToAll:
      return comm.emitError() << "cannot lower '" << comm.getName()
                              << "': all_to_all between programs";
    }
    if (failed(out))
      return failure();
    lowering.replace(rewriter, comm, *out);
    return success();
  }

private:
  /// all_reduce, or reduce_scatter to this member's chunk, both scaled
  /// (`extra`: the communicator and the scale).
  FailureOr<Value> reduce(CommOp comm, Value in, RankedTensorType type,
                          const FlatShard &group, StringRef name,
                          ArrayRef<Value> extra, bool scatter,
                          ConversionPatternRewriter &rewriter) const {
    if (lowering.shards.count(in))
      return comm.emitError() << "cannot lower '" << comm.getName()
                              << "': its operand is already a ZeRO shard";
    Type outType = scatter ? Type(chunkType(group, type)) : Type(type);
    Value out = callShim(rewriter, comm.getLoc(), lowering.module, name, {in},
                         {outType}, extra)
                    .front();
    if (scatter)
      lowering.shards[out] = group;
    lowering.reduced.insert(out);
    return out;
  }

  /// all_gather of this member's chunk into the whole tensor.
  FailureOr<Value> gather(CommOp comm, Value in, RankedTensorType type,
                          const FlatShard &group, StringRef name,
                          Value commValue,
                          ConversionPatternRewriter &rewriter) const {
    auto it = lowering.shards.find(in);
    if (it == lowering.shards.end())
      return comm.emitError()
             << "cannot lower '" << comm.getName()
             << "': all_gather of a whole tensor (it gathers ZeRO shards)";
    if (it->second.axes != group.axes || it->second.chunk != group.chunk)
      return comm.emitError() << "cannot lower '" << comm.getName()
                              << "': its operand is a shard over another group";
    return callShim(rewriter, comm.getLoc(), lowering.module, name, {in},
                    {type}, {commValue})
        .front();
  }
};

} // namespace

void mlir::piper::populateProgramCommPatterns(ProgramTypeConverter &converter,
                                              RewritePatternSet &patterns,
                                              ProgramLowering &lowering) {
  patterns.add<TransferPattern<SendOp>, TransferPattern<RecvOp>, CommPattern>(
      converter, patterns.getContext(), lowering);
}
