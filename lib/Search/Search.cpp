//===- Search.cpp - Two-phase strategy search -----------------------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Phase 1 scores every structure (degrees and axis order) with one
// schedule (1F1B where it runs), its smallest microbatch size that fits
// and the lowest ZeRO stage that fits. Phase 2 takes the `refine` fastest
// structures and tries every microbatch size, schedule, hook choice and
// stream assignment on them, again with the lowest ZeRO stage that fits. A
// higher ZeRO stage of a strategy whose lower stage fits is not built: it
// shards the same work and only adds collectives (docs/Search.md, "Limits").
//
//===----------------------------------------------------------------------===//

#include "Space.h"

#include "piper/Simulator/DeviceSpecs.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <limits>
#include <set>

using namespace mlir;
using namespace mlir::piper;
using namespace mlir::piper::search;

llvm::StringRef search::stringifyVerdict(Verdict verdict) {
  switch (verdict) {
  case Verdict::Kept:
    return "kept";
  case Verdict::Divisibility:
    return "shape (divisibility, limits)";
  case Verdict::Schedule:
    return "schedule";
  case Verdict::StaticMemory:
    return "memory (parameters + optimizer state)";
  case Verdict::Memory:
    return "memory (planned peak)";
  case Verdict::Invalid:
    return "invalid (front half or simulator)";
  case Verdict::Dominated:
    return "dominated (a lower ZeRO stage fits)";
  case Verdict::Skipped:
    return "skipped (time limit)";
  }
  return "";
}

static llvm::Error invalid(const Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

static llvm::Error validate(const SearchOptions &options) {
  const Cluster &cluster = options.cluster;
  if (cluster.nodes < 1 || cluster.devicesPerNode < 1)
    return invalid("the mesh needs at least one node of at least one device, "
                   "got " +
                   Twine(cluster.nodes) + " x " +
                   Twine(cluster.devicesPerNode));
  if (!::piper::sim::lookupDeviceSpec(cluster.device))
    return invalid("unknown device '" + cluster.device + "'; expected one of " +
                   ::piper::sim::listDeviceSpecNames());
  for (const LinkChoice *link : {&cluster.intra, &cluster.inter})
    if (!symbolizeLinkClass(link->linkClass))
      return invalid("unknown link class '" + link->linkClass +
                     "'; expected nvlink, pcie, infiniband, roce, efa or "
                     "ethernet");
  if (options.memoryBudget <= 0)
    return invalid("the memory budget must be positive, got " +
                   Twine(options.memoryBudget) + " bytes");
  if (options.globalBatch <= 0)
    return invalid("the global batch must be positive, got " +
                   Twine(options.globalBatch));
  if (options.maxMicrobatches < 1)
    return invalid("--max-microbatches must be >= 1");
  if (options.fixedModel)
    return llvm::Error::success();
  if (llvm::Error e = modelgen::validateOptions(
          {options.model, options.config, 1, {}, 0, options.dtype}))
    return e;
  return llvm::Error::success();
}

namespace {

/// The search's state: the evaluator, the clock and the tallies.
class Searcher {
public:
  Searcher(MLIRContext &context, const SearchOptions &options)
      : options(options), evaluator(context, options),
        start(std::chrono::steady_clock::now()) {}

  /// The lower bound of `c`'s peak bytes that needs no IR of `c`, the
  /// largest of: the parameters and AdamW state; what every step holds
  /// (parameters or their ZeRO-3 shard, state) plus the activations saved
  /// at one step (activationFloor); that plus the gradients an update
  /// reads (updateMemoryBound). Sets `why`.
  int64_t memoryBound(const Candidate &c, std::string &why) {
    int64_t parameters = staticMemoryBound(c, options);
    int64_t perLayer = evaluator.layerActivationBytes(c);
    int64_t activations = activationFloor(c, options, perLayer);
    int64_t persistent = persistentMemoryBound(c, options);
    int64_t update = updateMemoryBound(c, options);
    if (update >= parameters && update >= persistent + activations) {
      why = "parameters, optimizer state and the gradients an update reads "
            "need at least " +
            std::to_string(update) + " B";
      return update;
    }
    if (parameters >= persistent + activations) {
      why = "parameters and optimizer state need at least " +
            std::to_string(parameters) + " B";
      return parameters;
    }
    why = "parameters, optimizer state and saved activations (" +
          std::to_string(activations) + " B) need at least " +
          std::to_string(persistent + activations) + " B";
    return persistent + activations;
  }

  /// Scores `c` unless seen, a verdict without IR applies, or time is up;
  /// returns the verdict.
  Verdict consider(const Candidate &c) {
    if (!seen.insert(c.label()).second)
      return Verdict::Skipped;
    Evaluation e;
    e.candidate = c;
    ++result.enumerated;
    int64_t bound = 0;
    std::string why;
    if (auto shape = checkStructure(c, options)) {
      e.verdict = Verdict::Divisibility;
      e.reason = *shape;
    } else if (auto schedule = checkSchedule(c, options)) {
      e.verdict = Verdict::Schedule;
      e.reason = *schedule;
    } else if (bound = memoryBound(c, why); bound > options.memoryBudget) {
      e.verdict = Verdict::StaticMemory;
      e.reason = why;
    } else if (options.timeLimit > 0 && elapsed() > options.timeLimit) {
      e.verdict = Verdict::Skipped;
      e.reason = "time limit";
    } else {
      evaluator.evaluate(e);
      // The bound must never exceed what the memory plan finds; a
      // violation would mean sound-looking rejections are not.
      if (e.peakBytes >= 0 && bound > e.peakBytes)
        ++result.boundViolations;
    }
    record(e);
    lastVerdict = e.verdict;
    return e.verdict;
  }

  /// Tries ZeRO stages from the lowest; the stages above the first that
  /// fits are counted as dominated. Returns the kept evaluation, if any.
  std::optional<Evaluation> considerZeroStages(Candidate c) {
    SmallVector<int64_t> stages = {0};
    if (c.dataReplicas() > 1)
      stages = {0, 1, 2, 3};
    std::optional<Evaluation> kept;
    for (int64_t z : stages) {
      c.zero = z;
      if (kept) {
        if (seen.insert(c.label()).second) {
          ++result.enumerated;
          Evaluation e;
          e.candidate = c;
          e.verdict = Verdict::Dominated;
          e.reason = "ZeRO-" + std::to_string(kept->candidate.zero) + " fits";
          record(e);
        }
        continue;
      }
      if (consider(c) == Verdict::Kept)
        kept = result.kept.back();
    }
    return kept;
  }

  /// Every combination of the hooks' choices for `c` (at least one: none).
  std::vector<std::map<std::string, std::string>>
  hookCombinations(const Candidate &c, bool firstOnly) const {
    std::vector<std::map<std::string, std::string>> out = {{}};
    for (const DirectiveHook &hook : options.hooks) {
      std::vector<std::string> choices =
          hook.choices ? hook.choices(c) : std::vector<std::string>();
      if (choices.empty())
        continue;
      if (firstOnly)
        choices.resize(1);
      std::vector<std::map<std::string, std::string>> next;
      for (const auto &partial : out)
        for (const std::string &choice : choices) {
          auto combined = partial;
          combined[hook.dimension] = choice;
          next.push_back(std::move(combined));
        }
      out = std::move(next);
    }
    return out;
  }

  /// Records `c` as rejected for `reason` without building it.
  void reject(const Candidate &c, Verdict verdict, std::string reason) {
    if (!seen.insert(c.label()).second)
      return;
    ++result.enumerated;
    Evaluation e;
    e.candidate = c;
    e.verdict = verdict;
    e.reason = std::move(reason);
    record(e);
  }

  /// Sets `c`'s microbatches for microbatch size `b`; false (and the
  /// rejection recorded) when that makes too many microbatches.
  bool setMicrobatches(Candidate &c, int64_t b) {
    c.microbatchSize = b;
    c.microbatches = options.globalBatch / c.dataReplicas() / b;
    if (c.microbatches <= options.maxMicrobatches)
      return true;
    reject(c, Verdict::Divisibility,
           std::to_string(c.microbatches) +
               " microbatches exceed --max-microbatches=" +
               std::to_string(options.maxMicrobatches));
    return false;
  }

  double elapsed() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                         start)
        .count();
  }

  const SearchOptions &options;
  Evaluator evaluator;
  SearchResult result;
  /// The verdict of the last candidate `consider` scored.
  Verdict lastVerdict = Verdict::Kept;

private:
  void record(const Evaluation &e) {
    if (e.verdict == Verdict::Kept) {
      result.kept.push_back(e);
      return;
    }
    unsigned v = unsigned(e.verdict);
    if (result.rejected[v]++ == 0)
      result.example[v] = e.candidate.label() + ": " + e.reason;
  }

  std::chrono::steady_clock::time_point start;
  std::set<std::string> seen;
};

} // namespace

/// Sets `c`'s schedule and the stages it needs.
static void setSchedule(Candidate &c, StringRef name) {
  c.schedule = name.str();
  c.chunks = 1;
  c.stages = c.pp;
  if (c.pp == 1) {
    c.schedule.clear();
  } else if (name == "interleaved-1f1b") {
    c.chunks = 2;
    c.stages = 2 * c.pp;
  } else if (name == "zb-v" || name == "dualpipev") {
    c.stages = 2 * c.pp;
  }
}

static std::string genCommand(const Candidate &c,
                              const SearchOptions &options) {
  if (options.fixedModel)
    return options.fixedModelName + " (its mesh with the cluster's links)";
  modelgen::GenOptions gen = genOptionsFor(c, options);
  std::string out;
  llvm::raw_string_ostream os(out);
  os << "piper-gen --model=" << modelgen::stringifyModelKind(gen.model);
  if (!options.config.name.empty())
    os << " --config=" << options.config.name;
  os << " --pp=" << gen.pipelineStages << " --mesh=";
  llvm::interleave(
      gen.mesh, os, [&](const auto &a) { os << a.name << "=" << a.size; }, ",");
  os << " --batch=" << gen.config.batch
     << " --dtype=" << modelgen::stringifyElementKind(gen.dtype);
  return out;
}

/// A model file: its degrees and stages are fixed; every schedule that
/// runs its stages, with every hook choice and stream assignment.
static llvm::Error searchFixedModel(Searcher &searcher) {
  const SearchOptions &options = searcher.options;
  llvm::Expected<Candidate> fixed = describeFixedModel(options);
  if (!fixed)
    return fixed.takeError();
  int64_t rows = fixed->microbatchSize * fixed->dataReplicas();
  if (options.globalBatch % rows)
    return invalid(
        options.fixedModelName + ": the global batch " +
        Twine(options.globalBatch) +
        " is not a multiple of the model's batch x dp x ep = " + Twine(rows));
  for (const std::string &schedule : options.schedules) {
    Candidate c = *fixed;
    setSchedule(c, schedule);
    if (c.pp > 1 && schedule == "interleaved-1f1b") {
      c.chunks = fixed->stages / c.pp;
      c.stages = fixed->stages;
    }
    if ((c.pp == 1 && schedule != options.schedules.front()) ||
        !searcher.setMicrobatches(c, fixed->microbatchSize))
      continue;
    if (c.stages != fixed->stages ||
        (schedule == "interleaved-1f1b" && c.chunks < 2)) {
      searcher.reject(c, Verdict::Schedule,
                      "the model has " + std::to_string(fixed->stages) +
                          " pipeline chunks; " + schedule + " needs " +
                          std::to_string(c.stages));
      continue;
    }
    for (auto &choices : searcher.hookCombinations(c, /*firstOnly=*/false))
      for (bool shared : {false, true}) {
        if (shared && c.dataReplicas() == 1)
          continue;
        c.hookChoices = choices;
        c.sharedCommStream = shared;
        searcher.considerZeroStages(c);
      }
  }
  searcher.result.structuresScored = 1;
  return llvm::Error::success();
}
/// The structures with schedule `phaseOne` (none without a pipeline),
/// those whose memory bound may fit first, the least memory first among
/// them (most sharded), then enumeration order. The bound is the lowest
/// over ZeRO stages and hook choices at the smallest microbatch size
/// (`Searcher::memoryBound`): a large mesh has hundreds of structures and
/// few fit, so a time-limited search reaches the ones that do.
static std::vector<Candidate> orderStructures(Searcher &searcher,
                                              StringRef phaseOne) {
  const SearchOptions &options = searcher.options;
  std::vector<std::pair<int64_t, Candidate>> keyed;
  for (Candidate c : enumerateStructures(options)) {
    setSchedule(c, phaseOne);
    int64_t lowest = std::numeric_limits<int64_t>::max();
    // The smallest microbatch size within --max-microbatches.
    int64_t size = 0;
    for (int64_t b : microbatchSizes(c, options))
      if (!size &&
          options.globalBatch / c.dataReplicas() / b <= options.maxMicrobatches)
        size = b;
    if (!checkStructure(c, options) && size) {
      Candidate probe = c;
      probe.microbatchSize = size;
      probe.microbatches =
          options.globalBatch / probe.dataReplicas() / probe.microbatchSize;
      probe.zero = probe.dataReplicas() > 1 ? 3 : 0;
      for (auto &choices :
           searcher.hookCombinations(probe, /*firstOnly=*/false)) {
        probe.hookChoices = choices;
        std::string why;
        lowest = std::min(lowest, searcher.memoryBound(probe, why));
      }
    }
    keyed.push_back({lowest, c});
  }
  int64_t budget = options.memoryBudget;
  std::stable_sort(keyed.begin(), keyed.end(),
                   [&](const auto &a, const auto &b) {
                     bool fitsA = a.first <= budget, fitsB = b.first <= budget;
                     if (fitsA != fitsB)
                       return fitsA;
                     return fitsA && a.first < b.first;
                   });
  std::vector<Candidate> out;
  for (auto &entry : keyed)
    out.push_back(entry.second);
  return out;
}

/// A generated model: phase 1 over every structure, phase 2 over the
/// fastest.
static void searchStructures(Searcher &searcher) {
  const SearchOptions &options = searcher.options;
  StringRef phaseOne = llvm::is_contained(options.schedules, "1f1b")
                           ? StringRef("1f1b")
                           : StringRef(options.schedules.front());

  // Phase 1: every structure, one schedule, the smallest microbatch size
  // (the most microbatches) at which some ZeRO stage and hook choice fits.
  std::vector<std::pair<double, Candidate>> structures;
  for (Candidate c : orderStructures(searcher, phaseOne)) {
    if (checkStructure(c, options)) {
      searcher.consider(c); // Records the shape rejection.
      continue;
    }
    for (int64_t b : microbatchSizes(c, options)) {
      if (!searcher.setMicrobatches(c, b))
        continue;
      std::optional<Evaluation> kept;
      // Hook choices in their order (recompute: none first): the first
      // that fits, so a structure that fits only with recompute is scored.
      for (auto &choices : searcher.hookCombinations(c, /*firstOnly=*/false)) {
        c.hookChoices = choices;
        if ((kept = searcher.considerZeroStages(c)))
          break;
      }
      if (kept) {
        c = kept->candidate;
        structures.push_back({kept->stepTime, c});
        break;
      }
      // A larger microbatch keeps more activations in flight (m >= p:
      // p x b under 1F1B) and the same weights: if even the highest ZeRO
      // stage does not fit at this size, no larger size will.
      if (searcher.lastVerdict == Verdict::Memory ||
          searcher.lastVerdict == Verdict::StaticMemory)
        break;
    }
  }
  searcher.result.structuresScored = int64_t(structures.size());

  // Phase 2: the fastest structures with every microbatch size, schedule,
  // hook choice and stream assignment.
  std::stable_sort(
      structures.begin(), structures.end(),
      [](const auto &a, const auto &b) { return a.first < b.first; });
  if (int64_t(structures.size()) > options.refine)
    structures.resize(options.refine);
  for (auto &[time, structure] : structures) {
    for (int64_t b : microbatchSizes(structure, options))
      for (const std::string &schedule : options.schedules) {
        Candidate c = structure;
        setSchedule(c, schedule);
        if ((c.pp == 1 && schedule != options.schedules.front()) ||
            !searcher.setMicrobatches(c, b))
          continue;
        for (auto &choices : searcher.hookCombinations(c, /*firstOnly=*/false))
          for (bool shared : {false, true}) {
            if (shared && c.dataReplicas() == 1)
              continue;
            c.hookChoices = choices;
            c.sharedCommStream = shared;
            searcher.considerZeroStages(c);
          }
      }
  }
}

/// Ranks the kept candidates and builds the best one's directives and
/// model.
static SearchResult finish(Searcher &searcher) {
  const SearchOptions &options = searcher.options;
  SearchResult result = std::move(searcher.result);
  std::stable_sort(result.kept.begin(), result.kept.end(),
                   [](const Evaluation &a, const Evaluation &b) {
                     return a.stepTime < b.stepTime;
                   });
  result.built = searcher.evaluator.built;
  result.simulated = searcher.evaluator.simulated;
  result.prefixBuilds = searcher.evaluator.prefixBuilds;
  result.calibrationBuilds = searcher.evaluator.calibrationBuilds;
  result.phaseSeconds = searcher.evaluator.phaseSeconds;
  if (!result.kept.empty()) {
    const Candidate &best = result.kept.front().candidate;
    result.bestDirectives = buildDirectives(best, options);
    std::string error;
    result.bestModel = searcher.evaluator.buildModel(best, error);
    result.bestGenCommand = genCommand(best, options);
  }
  result.seconds = searcher.elapsed();
  return result;
}

llvm::Expected<SearchResult> search::runSearch(MLIRContext &context,
                                               const SearchOptions &options) {
  if (llvm::Error e = validate(options))
    return std::move(e);
  Searcher searcher(context, options);
  if (options.fixedModel) {
    if (llvm::Error e = searchFixedModel(searcher))
      return std::move(e);
  } else {
    searchStructures(searcher);
  }
  return finish(searcher);
}
