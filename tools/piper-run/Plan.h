//===- Plan.h - A compiled plan: manifest and loaded objects ----*- C++ -*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The plan directory piper-compile writes (docs/Lowering.md): plan.json and
// one shared object per role. No MLIR here: piper-run, like the runtime,
// must not need the compiler.
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_TOOLS_PIPER_RUN_PLAN_H
#define PIPER_TOOLS_PIPER_RUN_PLAN_H

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace piper::run {

enum class DType { F32, F64, I64 };

/// A tensor each device holds as its chunk of the row-major flattening,
/// zero-padded to `members` chunks of `chunk` elements; a device's chunk is
/// its index in the group over `axes` (ZeRO, ReplicaLayout.h).
struct ShardInfo {
  std::vector<std::string> axes;
  int64_t members = 1, chunk = 0;
};

/// A dimension split into `parts` over `axes` (mesh order): a device holds
/// part p, its row-major index over the axes, of size shape[dim] / parts
/// (expert parallelism, ReplicaLayout.h).
struct SplitInfo {
  int64_t dim = 0;
  std::vector<std::string> axes;
  int64_t parts = 1;
};

/// One argument or result of the step function.
struct TensorInfo {
  int64_t index = 0;
  /// "param", "state", "data" (arguments); "loss", "param", "state",
  /// "other" (results).
  std::string kind;
  DType dtype = DType::F64;
  std::vector<int64_t> shape;
  // Arguments.
  std::string name;  // parameter name
  std::string init;  // normal, zeros, ones
  double std = 0.0;  // normal
  int64_t bound = 0; // integer data
  // Results: the argument it replaces at the next step, or -1.
  int64_t updates = -1;
  /// Held as flat shards (ZeRO), or whole.
  std::optional<ShardInfo> shard;
  /// Held as parts of split dimensions, or whole.
  std::vector<SplitInfo> split;

  int64_t numel() const {
    int64_t n = 1;
    for (int64_t d : shape)
      n *= d;
    return n;
  }
  /// The shape of one device's part.
  std::vector<int64_t> localShape() const {
    std::vector<int64_t> local = shape;
    for (const SplitInfo &s : split)
      local[s.dim] /= s.parts;
    return local;
  }
  /// Elements one device holds.
  int64_t localNumel() const {
    if (shard)
      return shard->chunk;
    int64_t n = 1;
    for (int64_t d : localShape())
      n *= d;
    return n;
  }
  size_t elementSize() const { return dtype == DType::F32 ? 4 : 8; }
};

/// One device role's program.
struct RoleInfo {
  std::string program, object, entry;
  std::map<std::string, int64_t> role;
  std::vector<int64_t> inputs, outputs;
  /// The program's launches in order (trace span names).
  std::vector<std::string> launches;
  /// The program's streams in order (the events' record/wait operands).
  std::vector<std::string> streams;
};

struct Plan {
  std::string directory, function;
  std::map<std::string, int64_t> mesh;
  /// The mesh axes in their declared (row-major rank) order, and its name.
  std::vector<std::pair<std::string, int64_t>> meshAxes;
  std::string meshName;
  std::vector<TensorInfo> arguments, results;
  std::vector<RoleInfo> roles;
  /// The axes replicas split the batch over (dim 0 of every data argument).
  std::vector<std::string> batchAxes;
  /// The communicators compiled programs index: (axes, stream).
  std::vector<std::pair<std::vector<std::string>, std::string>> communicators;
};

/// Reads `<directory>/plan.json`; on failure returns false with a message
/// that names the file and the offending field.
bool loadPlan(const std::string &directory, Plan &plan, std::string &error);

} // namespace piper::run

#endif // PIPER_TOOLS_PIPER_RUN_PLAN_H
