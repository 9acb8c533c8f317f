//===- Space.h - The strategies of a model on a cluster ---------*- C++ -*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The search's enumeration and the checks that need no IR (Space.cpp), and
// the in-process evaluation of one candidate (Evaluate.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_LIB_SEARCH_SPACE_H
#define PIPER_LIB_SEARCH_SPACE_H

#include "piper/Search/Search.h"

#include <memory>

namespace mlir::piper::search {

/// Every (tp, ep, pp, dp) factorisation of the devices, in both axis
/// orders where they differ. Microbatches, schedules, ZeRO stages and hooks
/// are not set.
std::vector<Candidate> enumerateStructures(const SearchOptions &options);

/// The microbatch sizes of `c`, ascending: the divisors of the per-replica
/// batch (none when the replicas do not divide the global batch).
SmallVector<int64_t> microbatchSizes(const Candidate &c,
                                     const SearchOptions &options);

/// The structure of `options.fixedModel`: degrees from its mesh axes (tp,
/// ep, pp, dp; sizes of axes with other names are an error), stages from
/// its PP chunks, microbatch size from the rows of its first data input.
llvm::Expected<Candidate> describeFixedModel(const SearchOptions &options);

/// Why `c`'s degrees cannot work for the model and batch, or nullopt.
std::optional<std::string> checkStructure(const Candidate &c,
                                          const SearchOptions &options);

/// Why the schedule library cannot run `c`'s schedule, or nullopt.
std::optional<std::string> checkSchedule(const Candidate &c,
                                         const SearchOptions &options);

/// A lower bound of the peak bytes of `c`'s busiest device: its share of
/// the parameters and the AdamW moments (live through the whole step), at
/// the model's element width, split by pp, tp, ep and ZeRO.
int64_t staticMemoryBound(const Candidate &c, const SearchOptions &options);

/// Builds and scores candidates in one MLIR context. The training DAG of a
/// model (autodiff, optimizer, build-dag) depends only on the candidate's
/// mesh, stages and microbatch size; it is built once per such key and
/// cloned for every strategy applied to it.
class Evaluator {
public:
  Evaluator(MLIRContext &context, const SearchOptions &options);
  ~Evaluator();
  /// Fills verdict, reason, step time, bubble and peak of `e`.
  void evaluate(Evaluation &e);
  /// The model (with links) of `c` and `c`'s directives.
  OwningOpRef<ModuleOp> buildModel(const Candidate &c, std::string &error);
  int64_t prefixBuilds = 0, built = 0, simulated = 0;

private:
  struct Impl;
  std::unique_ptr<Impl> impl;
};

} // namespace mlir::piper::search

#endif // PIPER_LIB_SEARCH_SPACE_H
