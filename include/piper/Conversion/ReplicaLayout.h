//===- ReplicaLayout.h - How replicas hold and share a step -----*- C++ -*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The local view of a partitioned step (docs/Lowering.md, "Replicas"): what
// one device of a role holds when the role has data-parallel replicas.
//
// - Batch axes: the mesh axes the programs reduce gradients over (the union
//   of the axes of every all_reduce and reduce_scatter in the programs). The
//   step function is written per replica: its data arguments are one
//   replica's share, and the global batch is R times that along dim 0, R the
//   product of the batch axes' sizes. Replica q (row-major over the batch
//   axes, in mesh order) reads rows [q n, (q+1) n). A gradient reduction is
//   a sum over its group, times 1/R: each replica's loss is the mean over
//   its rows, the global loss the mean of those.
// - Flat shards (ZeRO): the optimizer state of a parameter with ZeRO >= 1,
//   and the parameter itself with ZeRO 3, are held as member k's chunk of
//   the row-major flattening, zero-padded to N chunks of ceil(numel / N)
//   elements, N the product of the sizes of the parameter's replicated axes
//   and k the device's index in that group.
//   A split parameter (below) with ZeRO >= 1 is sharded the same way over
//   its replicated axes, but the chunks flatten the device's part, not the
//   whole tensor (Megatron's distributed optimizer for TP x ZeRO).
// - Split tensors (expert parallelism): a parameter whose placement splits
//   a dimension over mesh axes (expert weights on dim 0 over ep), its
//   optimizer moments and its updated value are held as the device's part:
//   dim d has size / P, P the product of the axes' sizes, and the device
//   holds part p (its row-major index over those axes), elements
//   [p size/P, (p+1) size/P) of dim d (PlacementAttr::getLocalShape).
//
// piper-compile computes both for the whole module (every program), writes
// them into plan.json and onto the module (the attributes of
// piper/Dialect/Piper/Transforms/PlanAnnotations.h, which also declares
// collectBatchAxes) before it lowers each program alone.
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_CONVERSION_REPLICALAYOUT_H
#define PIPER_CONVERSION_REPLICALAYOUT_H

#include "piper/Dialect/Piper/IR/PiperOps.h"
#include "piper/Dialect/Piper/Transforms/PlanAnnotations.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

#include <map>
#include <string>

namespace mlir::piper {

/// A tensor held as one member's chunk of its flattening.
struct FlatShard {
  /// The group's axes (mesh order) and size.
  SmallVector<std::string> axes;
  int64_t members = 1;
  /// Elements of the whole tensor and of one chunk (ceil(numel / members)).
  int64_t numel = 0, chunk = 0;
  /// The shape the chunks flatten: the whole tensor's, or a split
  /// parameter's part's (ZeRO over the axes a tensor- or expert-split
  /// parameter is replicated on); all_gather rebuilds this shape.
  SmallVector<int64_t> shape;
};

/// One split dimension of a tensor: `parts` parts over `axes` (mesh order).
struct DimSplit {
  unsigned dim = 0;
  SmallVector<std::string> axes;
  int64_t parts = 1;
};

/// A tensor held as the device's part of its split dimensions.
struct TensorSplit {
  SmallVector<DimSplit> dims;
  /// The part's shape.
  SmallVector<int64_t> localShape;
};

struct ReplicaLayout {
  /// Batch axes in mesh order, and the product of their sizes.
  SmallVector<std::string> batchAxes;
  int64_t batchReplicas = 1;
  /// Step arguments and results held as flat shards.
  std::map<unsigned, FlatShard> argShards, resultShards;
  /// Step arguments and results held as parts of split dimensions.
  std::map<unsigned, TensorSplit> argSplits, resultSplits;

  /// The type a device holds for step argument `index` of type `global`.
  Type localArgType(unsigned index, Type global) const;
  Type localResultType(unsigned index, Type global) const;
};

/// The flat sharding of the arguments and results of `step` on `mesh`, with
/// `batchAxes` given (from the programs, or kBatchAxesAttrName).
ReplicaLayout computeReplicaLayout(func::FuncOp step, MeshOp mesh,
                                   ArrayRef<std::string> batchAxes);

} // namespace mlir::piper

#endif // PIPER_CONVERSION_REPLICALAYOUT_H
