//===- ReplicaLayout.cpp - How replicas hold and share a step -------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "piper/Conversion/ReplicaLayout.h"

#include "piper/Dialect/Piper/IR/PiperAttrs.h"

#include "mlir/IR/BuiltinTypes.h"

#include <set>

using namespace mlir;
using namespace mlir::piper;

namespace {

/// `axes` sorted into mesh order.
SmallVector<std::string> inMeshOrder(const std::set<std::string> &axes,
                                     MeshOp mesh) {
  SmallVector<std::string> ordered;
  for (MeshAxisAttr axis : mesh.getAxisList())
    if (axes.count(axis.getName().str()))
      ordered.push_back(axis.getName().str());
  return ordered;
}

int64_t groupSize(ArrayRef<std::string> axes, MeshOp mesh) {
  int64_t size = 1;
  for (MeshAxisAttr axis : mesh.getAxisList())
    if (llvm::is_contained(axes, axis.getName().str()))
      size *= axis.getSize();
  return size;
}

Type flatType(Type global, const FlatShard &shard) {
  auto type = cast<RankedTensorType>(global);
  return RankedTensorType::get({shard.chunk}, type.getElementType());
}

} // namespace

Type ReplicaLayout::localArgType(unsigned index, Type global) const {
  auto it = argShards.find(index);
  return it == argShards.end() ? global : flatType(global, it->second);
}

Type ReplicaLayout::localResultType(unsigned index, Type global) const {
  auto it = resultShards.find(index);
  return it == resultShards.end() ? global : flatType(global, it->second);
}

ReplicaLayout
mlir::piper::computeReplicaLayout(func::FuncOp step, MeshOp mesh,
                                  ArrayRef<std::string> batchAxes) {
  ReplicaLayout layout;
  layout.batchAxes.assign(batchAxes.begin(), batchAxes.end());
  layout.batchReplicas = groupSize(batchAxes, mesh);

  // Each ZeRO >= 1 parameter's shard over its replicated axes.
  struct Zero {
    FlatShard shard;
    unsigned stage;
    Type type;
  };
  llvm::StringMap<Zero> zeroOf;
  for (unsigned i = 0, e = step.getNumArguments(); i < e; ++i) {
    auto param = step.getArgAttrOfType<ParamAttr>(i, "piper.param");
    if (!param || !param.getPlacement() || param.getPlacement().getZero() == 0)
      continue;
    PlacementAttr placement = param.getPlacement();
    std::set<std::string> axes;
    for (Attribute a : placement.getReplicated())
      axes.insert(cast<StringAttr>(a).str());
    FlatShard shard;
    shard.axes = inMeshOrder(axes, mesh);
    shard.members = groupSize(shard.axes, mesh);
    if (shard.members == 1)
      continue;
    Type type = step.getArgumentTypes()[i];
    shard.numel = cast<RankedTensorType>(type).getNumElements();
    shard.chunk = (shard.numel + shard.members - 1) / shard.members;
    zeroOf[param.getName()] = {shard, placement.getZero(), type};
    if (placement.getZero() == 3)
      layout.argShards[i] = shard;
  }
  auto stateShard = [&](OptStateAttr state, Type type) -> const FlatShard * {
    if (!state)
      return nullptr;
    auto it = zeroOf.find(state.getParam());
    // The step counter (rank 0) is not sharded; moments have the
    // parameter's type.
    if (it == zeroOf.end() || type != it->second.type)
      return nullptr;
    return &it->second.shard;
  };
  for (unsigned i = 0, e = step.getNumArguments(); i < e; ++i)
    if (const FlatShard *shard =
            stateShard(step.getArgAttrOfType<OptStateAttr>(i, "piper.state"),
                       step.getArgumentTypes()[i]))
      layout.argShards[i] = *shard;
  for (unsigned j = 0, e = step.getNumResults(); j < e; ++j) {
    Type type = step.getResultTypes()[j];
    if (const FlatShard *shard = stateShard(
            step.getResultAttrOfType<OptStateAttr>(j, "piper.state"), type)) {
      layout.resultShards[j] = *shard;
      continue;
    }
    auto updated = step.getResultAttrOfType<StringAttr>(j, "piper.updated");
    if (!updated)
      continue;
    auto it = zeroOf.find(updated.getValue());
    if (it != zeroOf.end() && it->second.stage == 3)
      layout.resultShards[j] = it->second.shard;
  }
  return layout;
}

SmallVector<std::string>
mlir::piper::collectBatchAxes(ArrayRef<ProgramOp> programs, MeshOp mesh) {
  std::set<std::string> axes;
  for (ProgramOp program : programs)
    program.walk([&](CommOp comm) {
      if (comm.getKind() == CollectiveKind::AllReduce ||
          comm.getKind() == CollectiveKind::ReduceScatter)
        for (Attribute a : comm.getAxes())
          axes.insert(cast<StringAttr>(a).str());
    });
  return inMeshOrder(axes, mesh);
}

FailureOr<SmallVector<CommKey>>
mlir::piper::annotateCommunicators(ModuleOp module) {
  SmallVector<ProgramOp> programs(module.getOps<ProgramOp>());
  SmallVector<MeshOp> meshes(module.getOps<MeshOp>());
  if (meshes.size() != 1)
    return module.emitError() << "needs exactly one piper.mesh to lower "
                                 "device programs, found "
                              << meshes.size();
  MeshOp mesh = meshes.front();
  SmallVector<std::string> batchAxes = collectBatchAxes(programs, mesh);
  Builder b(module.getContext());
  SmallVector<Attribute> names;
  for (const std::string &axis : batchAxes)
    names.push_back(b.getStringAttr(axis));
  module->setAttr(kBatchAxesAttrName, b.getArrayAttr(names));

  std::set<CommKey> keys;
  auto keyOf = [&](CommOp comm) {
    std::set<std::string> axes;
    for (Attribute a : comm.getAxes())
      axes.insert(cast<StringAttr>(a).str());
    return CommKey{inMeshOrder(axes, mesh), comm.getStream().str()};
  };
  WalkResult walk = module.walk([&](CommOp comm) {
    if (comm.getKind() == CollectiveKind::AllToAll) {
      comm.emitError() << "cannot lower '" << comm.getName()
                       << "': all_to_all between programs is not lowered "
                          "(only data-parallel gradient and ZeRO collectives "
                          "are)";
      return WalkResult::interrupt();
    }
    keys.insert(keyOf(comm));
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();
  SmallVector<CommKey> list(keys.begin(), keys.end());
  SmallVector<Attribute> entries;
  for (const CommKey &key : list) {
    SmallVector<Attribute> axes;
    for (const std::string &axis : key.axes)
      axes.push_back(b.getStringAttr(axis));
    entries.push_back(
        b.getArrayAttr({b.getArrayAttr(axes), b.getStringAttr(key.stream)}));
  }
  module->setAttr(kCommunicatorsAttrName, b.getArrayAttr(entries));
  module.walk([&](CommOp comm) {
    auto index = llvm::find(list, keyOf(comm)) - list.begin();
    comm->setAttr(kCommIndexAttrName, b.getI64IntegerAttr(index));
  });
  return list;
}
