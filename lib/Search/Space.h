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

/// What `c`'s busiest device holds at every step: its parameters (a ZeRO-3
/// shard only) and the AdamW moments. At most `staticMemoryBound`.
int64_t persistentMemoryBound(const Candidate &c, const SearchOptions &options);

/// What `c`'s busiest device holds when an update task starts: the
/// persistent bytes and the gradients the update reads (one stage's when a
/// rank runs several; at ZeRO-1 to 3 the reduce-scattered shard). A stage's
/// update reads every gradient of the stage, each accumulated over the
/// microbatches until then, so they are live together at its start.
int64_t updateMemoryBound(const Candidate &c, const SearchOptions &options);

/// Whether a hook choice of `c` recomputes the saved activations.
bool recomputes(const Candidate &c, const SearchOptions &options);

/// A lower bound of the activations `c`'s busiest device saves at one step,
/// given the bytes one layer saves for one microbatch (`perLayer`, measured
/// by Evaluator::layerActivationBytes): 1F1B and ZB-H1 hold min(p, m)
/// microbatches of stage 0's layers on rank 0 when its first backward
/// starts, GPipe all m; other schedules and recompute at least one
/// microbatch of the smallest stage (a recomputed chunk regenerates its
/// activations before its backward); no pipeline, one microbatch of every
/// layer.
int64_t activationFloor(const Candidate &c, const SearchOptions &options,
                        int64_t perLayer);

/// Puts the mesh axes of a generated model in `candidate`'s packing order.
/// The two orders of a structure share one training DAG (Evaluate.cpp);
/// placements name axes, so only the device numbering and, through
/// setMeshLinks, the links change.
void setMeshOrder(ModuleOp module, const Candidate &candidate);

/// Builds and scores candidates in one MLIR context. The training DAG of a
/// model (autodiff, optimizer, build-dag) depends only on the candidate's
/// mesh, stages and microbatch size; it is built once per such key and
/// cloned for every strategy applied to it.
class Evaluator {
public:
  Evaluator(MLIRContext &context, const SearchOptions &options);
  ~Evaluator();
  /// Fills verdict, reason, step time, bubble and peak of `e`; without
  /// `simulate`, stops after the memory plan (no step time).
  void evaluate(Evaluation &e, bool simulate = true);
  /// The model (with links) of `c` and `c`'s directives.
  OwningOpRef<ModuleOp> buildModel(const Candidate &c, std::string &error);
  /// The activations one layer of `c`'s model saves for one microbatch on
  /// one device: the memory plan's saved activations of a two-layer and a
  /// one-layer copy of the model (no pipeline, one microbatch, `c`'s tp and
  /// ep), subtracted. Cached per (tp, ep, microbatch size); 0 for a model
  /// file or when a copy does not build.
  int64_t layerActivationBytes(const Candidate &c);
  int64_t prefixBuilds = 0, built = 0, simulated = 0, calibrationBuilds = 0;
  SearchResult::PhaseSeconds phaseSeconds;

private:
  /// Simulates built device programs: `e`'s verdict, step time, bubble.
  void simulateBuilt(Evaluation &e, ModuleOp module);
  struct Impl;
  std::unique_ptr<Impl> impl;
};

} // namespace mlir::piper::search

#endif // PIPER_LIB_SEARCH_SPACE_H
