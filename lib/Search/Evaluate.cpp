//===- Evaluate.cpp - One candidate through the front half and simulator --===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// In-process scoring: the generated model's training DAG (cached per model
// key), a copy of it through the candidate's directives, partition and
// verification (lib/Compile/FrontHalf), the memory plan (rejects before
// simulating), then the simulator. Diagnostics are caught and become the
// candidate's reason; nothing is printed per candidate.
//
//===----------------------------------------------------------------------===//

#include "Space.h"

#include "piper/Compile/FrontHalf.h"
#include "piper/Dialect/Piper/Transforms/MemoryPlan.h"
#include "piper/Directives/JSONDirectives.h"
#include "piper/Simulator/Simulate.h"

#include "mlir/Dialect/Transform/Transforms/TransformInterpreterUtils.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include <chrono>
#include <limits>
#include <map>
#include <optional>

using namespace mlir;
using namespace mlir::piper;
using namespace mlir::piper::search;

struct Evaluator::Impl {
  MLIRContext &context;
  const SearchOptions &options;
  /// Training DAGs of the current structure, by model key.
  std::map<std::string, OwningOpRef<ModuleOp>> prefixes;
  std::string structureKey;
  /// Candidates of the current structure already built, by their label in
  /// the other axis order: the memory plan's verdict, and (for the last
  /// few that reached the simulator) the device programs, which the other
  /// order only re-simulates with its links.
  std::map<std::string, Evaluation> planned;
  std::map<std::string, OwningOpRef<ModuleOp>> programs;
  std::vector<std::string> programsOrder;
  /// Evaluator::layerActivationBytes by (tp, ep, microbatch size).
  std::map<std::string, int64_t> layerActivations;

  Impl(MLIRContext &context, const SearchOptions &options)
      : context(context), options(options) {}
};

Evaluator::Evaluator(MLIRContext &context, const SearchOptions &options)
    : impl(std::make_unique<Impl>(context, options)) {}

Evaluator::~Evaluator() = default;

namespace {
/// Adds the wall time of its scope to `seconds`.
class PhaseTimer {
public:
  explicit PhaseTimer(double &seconds)
      : seconds(seconds), start(std::chrono::steady_clock::now()) {}
  ~PhaseTimer() {
    seconds +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
  }

private:
  double &seconds;
  std::chrono::steady_clock::time_point start;
};
} // namespace

/// The training DAG's key: what genOptionsFor reads but the axis order,
/// which only sets the link classes (setMeshLinks, on each copy): the two
/// orders of a structure share their training DAGs.
static std::string modelKey(const Candidate &c) {
  return std::to_string(c.tp) + "/" + std::to_string(c.ep) + "/" +
         std::to_string(c.pp) + "/" + std::to_string(c.dp) + "/" +
         std::to_string(c.stages) + "/" + std::to_string(c.microbatchSize);
}

/// Runs `pm` on `module`, the first error (if any) into `error`.
static LogicalResult runCaught(PassManager &pm, ModuleOp module,
                               std::string &error) {
  ScopedDiagnosticHandler handler(module.getContext(), [&](Diagnostic &d) {
    if (d.getSeverity() == DiagnosticSeverity::Error && error.empty())
      error = d.str();
    return success();
  });
  LogicalResult result = pm.run(module);
  if (failed(result) && error.empty())
    error = "the pass pipeline failed";
  return result;
}

OwningOpRef<ModuleOp> Evaluator::buildModel(const Candidate &c,
                                            std::string &error) {
  if (ModuleOp fixed = impl->options.fixedModel) {
    OwningOpRef<ModuleOp> copy = fixed.clone();
    setMeshLinks(*copy, c, impl->options.cluster);
    return copy;
  }
  llvm::Expected<OwningOpRef<ModuleOp>> model =
      modelgen::buildModel(&impl->context, genOptionsFor(c, impl->options));
  if (!model) {
    error = llvm::toString(model.takeError());
    return {};
  }
  setMeshLinks(**model, c, impl->options.cluster);
  return std::move(*model);
}

/// The module's training DAG (null if none).
static DAGOp findDAG(ModuleOp module) {
  DAGOp dag;
  module->walk([&](DAGOp op) {
    dag = op;
    return WalkResult::interrupt();
  });
  return dag;
}

/// Plans `dag`'s memory into `e` (the busiest group's peak, its saved
/// activations and their microbatches); fails with the plan's first error.
static LogicalResult planPeak(DAGOp dag, Evaluation &e, std::string &error) {
  if (!dag)
    return failure();
  ScopedDiagnosticHandler handler(dag->getContext(), [&](Diagnostic &d) {
    if (error.empty())
      error = d.str();
    return success();
  });
  FailureOr<std::vector<DeviceMemoryPlan>> plans =
      planMemory(dag, [&]() { return dag.emitError(); });
  if (failed(plans))
    return failure();
  e.peakBytes = e.activationBytes = e.activationMicrobatches = 0;
  for (const DeviceMemoryPlan &plan : *plans) {
    e.peakBytes = std::max(e.peakBytes, plan.peakBytes());
    e.activationBytes =
        std::max(e.activationBytes, plan.maxPerKind[MemoryKind::Activations]);
    e.activationMicrobatches =
        std::max(e.activationMicrobatches, plan.maxActivationMicrobatches);
  }
  return success();
}

void Evaluator::evaluate(Evaluation &e, bool simulate) {
  const Candidate &c = e.candidate;
  auto reject = [&](Verdict v, std::string why) {
    e.verdict = v;
    e.reason = std::move(why);
    if (!impl->options.fixedModel)
      impl->planned[c.label()] = e;
  };
  auto rejectOverBudget = [&]() {
    reject(Verdict::Memory,
           "peak " + std::to_string(e.peakBytes) + " B > budget " +
               std::to_string(impl->options.memoryBudget) + " B");
  };
  // Models of one structure share the cache; a new structure drops it, so
  // at most a structure's few models are held at once.
  std::string structure = modelKey(c);
  structure = structure.substr(0, structure.rfind('/'));
  if (structure != impl->structureKey) {
    impl->prefixes.clear();
    impl->planned.clear();
    impl->programs.clear();
    impl->programsOrder.clear();
    impl->structureKey = structure;
  }
  // The other axis order of this strategy was built: the programs and the
  // memory plan do not depend on the links, only the simulation does.
  Candidate other = c;
  other.order = c.order == AxisOrder::PipelineInside
                    ? AxisOrder::PipelineOutside
                    : AxisOrder::PipelineInside;
  if (!impl->options.fixedModel) {
    auto it = impl->planned.find(other.label());
    if (it != impl->planned.end() && it->second.verdict != Verdict::Kept) {
      e.verdict = it->second.verdict;
      e.reason = it->second.reason;
      e.peakBytes = it->second.peakBytes;
      e.activationBytes = it->second.activationBytes;
      e.activationMicrobatches = it->second.activationMicrobatches;
      return;
    }
    auto cached = impl->programs.find(other.label());
    if (it != impl->planned.end() && cached != impl->programs.end()) {
      e.peakBytes = it->second.peakBytes;
      e.activationBytes = it->second.activationBytes;
      e.activationMicrobatches = it->second.activationMicrobatches;
      setMeshOrder(*cached->second, c);
      setMeshLinks(*cached->second, c, impl->options.cluster);
      simulateBuilt(e, *cached->second);
      return;
    }
  }
  OwningOpRef<ModuleOp> &prefix = impl->prefixes[modelKey(c)];
  if (!prefix) {
    PhaseTimer timer(phaseSeconds.trainingDAGs);
    std::string error;
    OwningOpRef<ModuleOp> model = buildModel(c, error);
    if (!model)
      return reject(Verdict::Invalid, error);
    PassManager pm(&impl->context);
    pm.enableVerifier(false); // scored, not emitted: as below
    buildTrainingDAGPipeline(pm, PiperOptimizerOptions());
    if (failed(runCaught(pm, *model, error)))
      return reject(Verdict::Invalid, error);
    ++prefixBuilds;
    prefix = std::move(model);
  }

  // The directives, as piper-compile translates them, applied in-process
  // by the transform interpreter (the preload pass would keep every
  // candidate's script in the context).
  std::optional<PhaseTimer> directivesTimer(std::in_place,
                                            phaseSeconds.directives);
  std::string json = renderDirectives(buildDirectives(c, impl->options));
  llvm::Expected<std::string> script =
      translateJSONDirectives(json, "search.json");
  if (!script)
    return reject(Verdict::Invalid, llvm::toString(script.takeError()));
  OwningOpRef<ModuleOp> module = prefix->clone();
  if (!impl->options.fixedModel) {
    setMeshOrder(*module, c);
    setMeshLinks(*module, c, impl->options.cluster);
  }
  std::string error;
  {
    ScopedDiagnosticHandler handler(&impl->context, [&](Diagnostic &d) {
      if (d.getSeverity() == DiagnosticSeverity::Error && error.empty())
        error = d.str();
      return success();
    });
    OwningOpRef<ModuleOp> transforms =
        parseSourceString<ModuleOp>(*script, ParserConfig(&impl->context));
    transform::TransformOpInterface entry =
        transforms
            ? transform::detail::findTransformEntryPoint(*module, *transforms)
            : nullptr;
    ++built;
    if (!entry ||
        failed(transform::applyTransformNamedSequence(
            *module, entry, *transforms, transform::TransformOptions())))
      return reject(Verdict::Invalid,
                    error.empty() ? "the directives failed" : error);
  }
  // The memory plan first: what does not fit is never partitioned or
  // simulated. It reads the DAG, which partitioning changes only by copying
  // a tied parameter's unplaced nodes onto every group that reads it
  // (TieParameters.cpp): more memory, never less. So a DAG over the budget
  // before partitioning is over it after, and one that partitioning leaves
  // alone (as many ops) plans the same. A DAG with such unplaced nodes
  // cannot be planned before partitioning, and is planned after it.
  directivesTimer.reset();
  std::optional<PhaseTimer> planTimer(std::in_place, phaseSeconds.memoryPlans);
  DAGOp dag = findDAG(*module);
  size_t dagOps = dag ? dag.getBody().front().getOperations().size() : 0;
  bool planned = succeeded(planPeak(dag, e, error));
  planTimer.reset();
  if (planned && e.peakBytes > impl->options.memoryBudget)
    return rejectOverBudget();

  // Candidates are scored, never emitted: the IR verifier after every pass
  // (a tenth of a deepseek_v3 search) is left to piper-compile, which
  // compiles the chosen strategy with it; the programs' own checks
  // (--piper-verify-programs) still run here.
  error.clear();
  directivesTimer.emplace(phaseSeconds.directives);
  PassManager pm(&impl->context);
  pm.enableVerifier(false);
  buildProgramsPipeline(pm);
  if (failed(runCaught(pm, *module, error)))
    return reject(Verdict::Invalid, error);
  directivesTimer.reset();

  dag = findDAG(*module);
  if (!planned ||
      dagOps != (dag ? dag.getBody().front().getOperations().size() : 0)) {
    planTimer.emplace(phaseSeconds.memoryPlans);
    error.clear();
    if (failed(planPeak(dag, e, error)))
      return reject(Verdict::Invalid,
                    "memory plan: " + (error.empty() ? "no DAG" : error));
    planTimer.reset();
    if (e.peakBytes > impl->options.memoryBudget)
      return rejectOverBudget();
  }
  if (!simulate) {
    e.verdict = Verdict::Kept;
    return;
  }
  simulateBuilt(e, *module);
  if (impl->options.fixedModel)
    return;
  impl->planned[c.label()] = e;
  impl->programs[c.label()] = std::move(module);
  impl->programsOrder.push_back(c.label());
  // Device programs of a 61-layer model are large: keep the last few.
  if (impl->programsOrder.size() > 4) {
    impl->programs.erase(impl->programsOrder.front());
    impl->programsOrder.erase(impl->programsOrder.begin());
  }
}

void Evaluator::simulateBuilt(Evaluation &e, ModuleOp module) {
  PhaseTimer timer(phaseSeconds.simulation);
  std::string error;
  SimulateOptions simulateOptions;
  simulateOptions.device = impl->options.cluster.device;
  simulateOptions.planMemory = false; // evaluate() planned it already
  FailureOr<SimulationReport> report;
  {
    ScopedDiagnosticHandler handler(&impl->context, [&](Diagnostic &d) {
      if (error.empty())
        error = d.str();
      return success();
    });
    report = simulatePrograms(module, simulateOptions, [&]() {
      return mlir::emitError(module->getLoc());
    });
  }
  ++simulated;
  if (failed(report)) {
    e.verdict = Verdict::Invalid;
    e.reason = "simulator: " + error;
    return;
  }
  e.verdict = Verdict::Kept;
  e.stepTime = report->stepTime;
  e.bubble = report->bubbleFraction;
}

int64_t Evaluator::layerActivationBytes(const Candidate &c) {
  const SearchOptions &options = impl->options;
  if (options.fixedModel || options.config.layers < 2)
    return 0;
  std::string key = std::to_string(c.tp) + "/" + std::to_string(c.ep) + "/" +
                    std::to_string(c.microbatchSize);
  auto [it, inserted] = impl->layerActivations.try_emplace(key, 0);
  if (!inserted)
    return it->second;
  // The same tp and ep shards (dp and pp only repeat or cut the layers),
  // one microbatch, ZeRO-0, no hook: the memory plan's saved activations.
  Candidate one;
  one.tp = c.tp;
  one.ep = c.ep;
  one.microbatchSize = c.microbatchSize;
  int64_t saved[2] = {0, 0};
  PhaseTimer timer(phaseSeconds.layerModels);
  for (int64_t layers : {1, 2}) {
    SearchOptions small = options;
    small.config.layers = layers;
    small.hooks.clear();
    small.memoryBudget = std::numeric_limits<int64_t>::max();
    Evaluator evaluator(impl->context, small);
    Evaluation e;
    e.candidate = one;
    evaluator.evaluate(e, /*simulate=*/false);
    ++calibrationBuilds;
    if (e.verdict == Verdict::Invalid)
      return 0;
    saved[layers - 1] = e.activationBytes;
  }
  it->second = std::max<int64_t>(0, saved[1] - saved[0]);
  return it->second;
}
