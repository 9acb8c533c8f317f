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

} // namespace mlir::piper

#endif // PIPER_DIALECT_PIPER_TRANSFORMS_COMMREPORT_H
