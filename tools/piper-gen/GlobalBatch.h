//===- GlobalBatch.h - The model's batch from the global batch --*- C++ -*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// One statement of the batch: the user gives the global batch (sequences,
// or MLP samples, per training step over the whole job) and the strategy
// it will run under; piper-gen derives the model's batch, which is one
// microbatch of one data-parallel replica (the strategy's `split n` runs n
// of them per replica, and its replicas multiply that again). piper-compile
// --global-batch checks the result against the compiled plan, so a strategy
// this reading gets wrong cannot train on another batch unnoticed.
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_TOOLS_PIPER_GEN_GLOBALBATCH_H
#define PIPER_TOOLS_PIPER_GEN_GLOBALBATCH_H

#include "piper/ModelGen/ModelGen.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace piper::gen {

/// How a global batch divides over a strategy.
struct BatchSplit {
  int64_t global = 0;
  /// The mesh axes data is split over: those of the strategy's `replicate`
  /// directives, in mesh order.
  std::vector<std::string> axes;
  int64_t replicas = 1;
  /// The largest `split` count of the strategy (1 without one).
  int64_t microbatches = 1;
  /// One replica's share: global / replicas.
  int64_t perReplica = 0;
  /// The model's batch: perReplica / microbatches.
  int64_t microbatch = 0;

  /// "global batch 32 = 2 replica(s) over [dp] x 16, 4 microbatch(es) of 4".
  std::string describe() const;
};

/// Divides `global` over the JSON strategy at `strategyPath` run on `mesh`.
/// Errors (unreadable file, bad JSON, an axis the mesh lacks, a batch that
/// does not divide) are one line each, naming the file or the numbers.
llvm::Expected<BatchSplit>
splitGlobalBatch(int64_t global, llvm::StringRef strategyPath,
                 llvm::ArrayRef<mlir::piper::modelgen::MeshAxisSpec> mesh);

} // namespace piper::gen

#endif // PIPER_TOOLS_PIPER_GEN_GLOBALBATCH_H
