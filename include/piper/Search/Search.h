//===- Search.h - Automatic strategy search over the simulator --*- C++ -*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Enumerates the strategies of a generated model on a cluster (TP, EP, PP
// and DP degrees, which axes share a node, microbatch size and count, the
// built-in schedule, the ZeRO stage, the communication streams and the
// choices of directive hooks such as recompute), rejects the ones that do
// not divide or cannot fit before building anything, and scores the rest
// in-process: the front half (lib/Compile/FrontHalf) gives the device
// programs, the memory plan rejects what exceeds the budget, and the
// simulator (lib/Simulator) times the step. `piper-search` is a thin
// command line around `runSearch`; docs/Search.md explains the decisions.
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_SEARCH_SEARCH_H
#define PIPER_SEARCH_SEARCH_H

#include "piper/ModelGen/ModelGen.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/Support/JSON.h"

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace mlir::piper::search {

/// A link class with optional measured numbers (0: the class's defaults on
/// the device, sim::getDefaultLink).
struct LinkChoice {
  std::string linkClass = "nvlink";
  double bandwidthGBs = 0, latencyUs = 0;
};

/// Nodes of `devicesPerNode` accelerators: `intra` joins the devices of a
/// node, `inter` the nodes.
struct Cluster {
  int64_t nodes = 1, devicesPerNode = 1;
  std::string device = "a100";
  LinkChoice intra{"nvlink", 0, 0}, inter{"infiniband", 0, 0};
  int64_t numDevices() const { return nodes * devicesPerNode; }
};

/// Which mesh axes are packed inside a node first (innermost first). A mesh
/// axis runs over `intra` when the product of the sizes of the axes packed
/// before it and its own fits in a node, otherwise over `inter`.
enum class AxisOrder {
  /// tp, pp, ep, dp: pipeline inside the node (Piper's published runs).
  PipelineInside,
  /// tp, ep, dp, pp: pipeline across nodes (Megatron's order).
  PipelineOutside,
};

/// One strategy.
struct Candidate {
  int64_t tp = 1, ep = 1, pp = 1, dp = 1;
  AxisOrder order = AxisOrder::PipelineInside;
  /// PP chunks of the model: pp, or v * pp for interleaved/V schedules.
  int64_t stages = 1;
  /// A built-in schedule (lib/Schedule), empty when pp = 1.
  std::string schedule;
  /// Interleaved 1F1B's stages per rank.
  int64_t chunks = 1;
  int64_t microbatches = 1, microbatchSize = 1;
  int64_t zero = 0;
  /// Every EP/DP collective on one stream `comm` instead of one per kind:
  /// the simulator serialises a stream, so this trades overlap for order.
  bool sharedCommStream = false;
  /// Choice per hook dimension (DirectiveHook::dimension).
  std::map<std::string, std::string> hookChoices;

  /// Data-parallel replicas that see different sequences: dp x ep.
  int64_t dataReplicas() const { return dp * ep; }
  /// `tp1 ep4 pp8 dp1 1f1b m16x1 z1`.
  std::string label() const;
};

/// A directive contributor for a dimension that other components own
/// (activation recompute, cost-model stage balancing). `choices` lists the
/// values to search for a candidate (empty or one value: not a dimension);
/// `emit` appends the directives of one choice. Hooks run after `split`,
/// before `place` (BeforePlace), just before the schedule (BeforeSchedule)
/// or after it (AfterSchedule: recompute, whose R nodes a schedule applied
/// later would order as backward nodes).
struct DirectiveHook {
  enum class Point { BeforePlace, BeforeSchedule, AfterSchedule };
  std::string dimension;
  Point point = Point::BeforeSchedule;
  std::function<std::vector<std::string>(const Candidate &)> choices;
  std::function<void(const Candidate &, llvm::StringRef choice,
                     llvm::json::Array &directives)>
      emit;
  /// Whether a choice recomputes the saved activations in the backward
  /// (the search's activation lower bound then counts one microbatch of one
  /// stage). Unset: no choice does.
  std::function<bool(llvm::StringRef choice)> recomputes;
};

struct SearchOptions {
  /// A model read from a file instead of a config (not owned): its mesh
  /// fixes the degrees and its PP chunks the stages, so only schedules,
  /// microbatch counts, ZeRO stages, streams and hooks are searched.
  ModuleOp fixedModel;
  std::string fixedModelName;
  /// The model: a named config of piper-gen, its family and sizes.
  modelgen::ModelKind model = modelgen::ModelKind::GPT;
  modelgen::ModelConfig config;
  modelgen::ElementKind dtype = modelgen::ElementKind::BF16;
  Cluster cluster;
  /// Bytes per device; candidates whose planned peak exceeds it are
  /// rejected.
  int64_t memoryBudget = 0;
  /// Sequences (MLP: samples) per step over all replicas; every candidate
  /// runs this global batch.
  int64_t globalBatch = 0;
  /// Schedules to consider when pp > 1 (built-in names).
  std::vector<std::string> schedules = {"gpipe", "1f1b", "interleaved-1f1b",
                                        "zb-h1", "zb-v", "dualpipev"};
  /// Most microbatches per step a candidate may use.
  int64_t maxMicrobatches = 64;
  /// Structures refined with every microbatch size, schedule, ZeRO stage
  /// and stream assignment in the second phase.
  int64_t refine = 4;
  /// Wall-clock bound in seconds (0: none). Candidates not reached are
  /// counted as skipped; without it the search is deterministic.
  double timeLimit = 0;
  std::vector<DirectiveHook> hooks;
};

/// What became of a candidate.
enum class Verdict {
  Kept,
  /// Degrees that do not divide the devices, heads, experts, layers or the
  /// global batch.
  Divisibility,
  /// The schedule library rejects (p, m, v).
  Schedule,
  /// Parameters and optimizer state alone exceed the budget (no build).
  StaticMemory,
  /// The memory plan's peak exceeds the budget (built, not simulated).
  Memory,
  /// The front half or the simulator rejected the strategy.
  Invalid,
  /// A lower ZeRO stage of the same strategy fits; higher ones only add
  /// communication.
  Dominated,
  /// The time limit was reached first.
  Skipped,
};
constexpr unsigned kNumVerdicts = 8;
llvm::StringRef stringifyVerdict(Verdict verdict);

struct Evaluation {
  Candidate candidate;
  Verdict verdict = Verdict::Kept;
  /// The first diagnostic or the bound that rejected it.
  std::string reason;
  /// Simulated seconds per step, mean idle fraction, and the largest
  /// planned peak over the device programs (bytes).
  double stepTime = 0, bubble = 0;
  int64_t peakBytes = -1;
  /// The most saved activations any device holds at one step (the same
  /// for every ZeRO stage of the strategy), and the most microbatches whose
  /// activations a device holds at once.
  int64_t activationBytes = 0, activationMicrobatches = 0;
};

struct SearchResult {
  /// Kept candidates, fastest first (ties: enumeration order).
  std::vector<Evaluation> kept;
  /// Rejected candidates by verdict, with one example reason each.
  std::array<int64_t, kNumVerdicts> rejected{};
  std::array<std::string, kNumVerdicts> example;
  int64_t enumerated = 0, built = 0, simulated = 0, prefixBuilds = 0;
  /// One- and two-layer models built to measure the activations of a layer
  /// (Evaluator::layerActivationBytes).
  int64_t calibrationBuilds = 0;
  /// Built candidates whose planned peak is below the static lower bound
  /// (should stay 0; the table warns otherwise).
  int64_t boundViolations = 0;
  /// Structures (degrees and axis order) that phase 1 kept a strategy of.
  int64_t structuresScored = 0;
  double seconds = 0;
  /// Where the wall time went (seconds): autodiff and DAG building of the
  /// training DAGs, the directives and device programs of each candidate,
  /// its memory plan, its simulation, and the one- and two-layer models.
  struct PhaseSeconds {
    double trainingDAGs = 0, directives = 0, memoryPlans = 0, simulation = 0,
           layerModels = 0;
  } phaseSeconds;
  /// The best candidate's directive list and model (with link classes).
  llvm::json::Value bestDirectives = nullptr;
  OwningOpRef<ModuleOp> bestModel;
  /// `piper-gen ...` for the best model (without link classes).
  std::string bestGenCommand;
};

/// Runs the search. Invalid options (no devices, a zero budget, a batch
/// no replica count divides, ...) come back as an error naming the option.
llvm::Expected<SearchResult> runSearch(MLIRContext &context,
                                       const SearchOptions &options);

/// The JSON directive list of `candidate` (`piper-compile --directives`).
llvm::json::Value buildDirectives(const Candidate &candidate,
                                  const SearchOptions &options);
/// The JSON text `piper-compile` reads, one directive per line.
std::string renderDirectives(const llvm::json::Value &directives);

/// The ranked table of kept candidates (at most `rows`), the rejection
/// counts and the best strategy.
std::string renderTable(const SearchResult &result,
                        const SearchOptions &options, int64_t rows);

/// The generator options of `candidate`'s model: the config at microbatch
/// size, its PP chunks and mesh axes (sizes > 1, in packing order).
modelgen::GenOptions genOptionsFor(const Candidate &candidate,
                                   const SearchOptions &options);

/// Sets each mesh axis's link class from the cluster and the axis order.
void setMeshLinks(ModuleOp module, const Candidate &candidate,
                  const Cluster &cluster);

} // namespace mlir::piper::search

#endif // PIPER_SEARCH_SEARCH_H
