//===- ReplicaLayout.cpp - How replicas hold and share a step -------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "piper/Conversion/ReplicaLayout.h"
#include "MeshGroups.h"

#include "piper/Dialect/Piper/IR/PiperAttrs.h"

#include "mlir/IR/BuiltinTypes.h"

#include <set>

using namespace mlir;
using namespace mlir::piper;

namespace {

Type flatType(Type global, const FlatShard &shard) {
  auto type = cast<RankedTensorType>(global);
  return RankedTensorType::get({shard.chunk}, type.getElementType());
}

Type localType(Type global, const std::map<unsigned, FlatShard> &shards,
               const std::map<unsigned, TensorSplit> &splits, unsigned index) {
  if (auto it = shards.find(index); it != shards.end())
    return flatType(global, it->second);
  if (auto it = splits.find(index); it != splits.end())
    return RankedTensorType::get(
        it->second.localShape, cast<RankedTensorType>(global).getElementType());
  return global;
}

/// The split dimensions of a parameter placed by `placement`, if any.
std::optional<TensorSplit> splitOf(PlacementAttr placement, Type type,
                                   MeshOp mesh) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!placement || !tensor)
    return std::nullopt;
  TensorSplit split;
  for (auto [dim, axes] : llvm::enumerate(placement.getDims())) {
    if (axes.empty())
      continue;
    std::set<std::string> names;
    for (Attribute a : axes)
      names.insert(cast<StringAttr>(a).str());
    DimSplit d;
    d.dim = dim;
    d.axes = inMeshOrder(names, mesh);
    d.parts = meshGroupSize(d.axes, mesh);
    if (d.parts > 1)
      split.dims.push_back(std::move(d));
  }
  if (split.dims.empty())
    return std::nullopt;
  split.localShape = placement.getLocalShape(tensor.getShape(), mesh);
  return split;
}

} // namespace

Type ReplicaLayout::localArgType(unsigned index, Type global) const {
  return localType(global, argShards, argSplits, index);
}

Type ReplicaLayout::localResultType(unsigned index, Type global) const {
  return localType(global, resultShards, resultSplits, index);
}

ReplicaLayout
mlir::piper::computeReplicaLayout(func::FuncOp step, MeshOp mesh,
                                  ArrayRef<std::string> batchAxes) {
  ReplicaLayout layout;
  layout.batchAxes.assign(batchAxes.begin(), batchAxes.end());
  layout.batchReplicas = meshGroupSize(batchAxes, mesh);

  // Each ZeRO >= 1 parameter's shard over its replicated axes.
  struct Zero {
    FlatShard shard;
    unsigned stage;
    Type type;
  };
  llvm::StringMap<Zero> zeroOf;
  // Each split parameter's parts, by name, with its (global) type.
  llvm::StringMap<std::pair<TensorSplit, Type>> splitOfParam;
  for (unsigned i = 0, e = step.getNumArguments(); i < e; ++i) {
    auto param = step.getArgAttrOfType<ParamAttr>(i, "piper.param");
    if (!param || !param.getPlacement())
      continue;
    Type type = step.getArgumentTypes()[i];
    if (std::optional<TensorSplit> split =
            splitOf(param.getPlacement(), type, mesh)) {
      layout.argSplits[i] = *split;
      splitOfParam[param.getName()] = {*split, type};
    }
  }
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
    shard.members = meshGroupSize(shard.axes, mesh);
    if (shard.members == 1)
      continue;
    Type type = step.getArgumentTypes()[i];
    llvm::append_range(shard.shape, cast<RankedTensorType>(type).getShape());
    // A split parameter's part is itself sharded over the remaining
    // replicated axes (Megatron's distributed optimizer): its chunks
    // flatten the part, not the whole tensor.
    if (auto it = splitOfParam.find(param.getName()); it != splitOfParam.end())
      shard.shape = it->second.first.localShape;
    shard.numel = ShapedType::getNumElements(shard.shape);
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
  // Moments have the parameter's type and split; the step counter does not.
  auto stateSplit = [&](OptStateAttr state, Type type) -> const TensorSplit * {
    if (!state)
      return nullptr;
    auto it = splitOfParam.find(state.getParam());
    if (it == splitOfParam.end() || type != it->second.second)
      return nullptr;
    return &it->second.first;
  };
  for (unsigned i = 0, e = step.getNumArguments(); i < e; ++i) {
    auto state = step.getArgAttrOfType<OptStateAttr>(i, "piper.state");
    Type type = step.getArgumentTypes()[i];
    // Both, for a split parameter's moments under ZeRO: chunks of the part
    // (the shard decides the held type, the split which part).
    if (const FlatShard *shard = stateShard(state, type))
      layout.argShards[i] = *shard;
    if (const TensorSplit *split = stateSplit(state, type))
      layout.argSplits[i] = *split;
  }
  for (unsigned j = 0, e = step.getNumResults(); j < e; ++j) {
    Type type = step.getResultTypes()[j];
    auto state = step.getResultAttrOfType<OptStateAttr>(j, "piper.state");
    if (state) {
      if (const TensorSplit *split = stateSplit(state, type))
        layout.resultSplits[j] = *split;
      if (const FlatShard *shard = stateShard(state, type))
        layout.resultShards[j] = *shard;
      continue;
    }
    auto updated = step.getResultAttrOfType<StringAttr>(j, "piper.updated");
    if (!updated)
      continue;
    if (auto it = splitOfParam.find(updated.getValue());
        it != splitOfParam.end())
      layout.resultSplits[j] = it->second.first;
    auto it = zeroOf.find(updated.getValue());
    if (it != zeroOf.end() && it->second.stage == 3)
      layout.resultShards[j] = it->second.shard;
  }
  return layout;
}
