//===- CommReport.h - Bytes moved per device and step -----------*- C++ -*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The numbers behind `--piper-comm-report`, for tests, benchmarks and the
// simulator: per device group, communication kind, axes and stream, how
// many calls one device makes per step and how many bytes it sends (ring
// volumes; see CommReport.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_DIALECT_PIPER_TRANSFORMS_COMMREPORT_H
#define PIPER_DIALECT_PIPER_TRANSFORMS_COMMREPORT_H

#include "piper/Dialect/Piper/IR/PiperOps.h"

#include "mlir/IR/Operation.h"

#include <string>

namespace mlir::piper {

/// One row of the report.
struct CommVolume {
  /// The device group (`pp=0`), or `all` for nodes that run everywhere.
  std::string group;
  /// `send` for transfers, else the collective kind (`all_reduce`, ...).
  std::string kind;
  /// The mesh axes of a collective, comma-separated; `-` for a send.
  std::string axes;
  std::string stream;
  /// Calls per step (a bucket of fused collectives is one call).
  int64_t calls = 0;
  /// Bytes one device of the group sends per step.
  double bytes = 0;
};

/// The rows for every DAG under `root`, sorted by (group, kind, axes,
/// stream).
SmallVector<CommVolume> collectCommVolumes(Operation *root);

// Helpers shared with the memory plan (MemoryPlan.h), so that both count a
// parameter's per-device bytes the same way.

/// Bytes of a statically shaped tensor of integers or floats, else 0.
int64_t getTensorBytes(Type type);

/// The block argument whose value `value` carries, looking through
/// transfers and collectives (a ZeRO-3 gather), or null if another op
/// computes it.
BlockArgument getCarriedArgument(Value value);

/// The parameter whose value `value` carries (getArgumentParam of its
/// getCarriedArgument), or null.
ParamAttr getCarriedParam(Value value);

/// The parameter attribute of function argument `arg`, or null (also for a
/// null `arg` or a block argument not of a function).
ParamAttr getArgumentParam(BlockArgument arg);

/// The parameter a gradient flowing into an update task belongs to: the
/// `param` operand of the optimizer op that consumes it in the body, or
/// null.
ParamAttr getParamOfGradient(Value gradient);

/// The product of the sizes of the mesh axes that split `param` (tensor or
/// expert parallelism): one device holds 1/factor of it. 1 when unplaced.
int64_t getSplitFactor(ParamAttr param, MeshOp mesh);

} // namespace mlir::piper

#endif // PIPER_DIALECT_PIPER_TRANSFORMS_COMMREPORT_H
