//===- Report.cpp - The search's ranked table -----------------------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "piper/Search/Search.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::piper;
using namespace mlir::piper::search;

std::string search::renderTable(const SearchResult &result,
                                const SearchOptions &options, int64_t rows) {
  std::string out;
  llvm::raw_string_ostream os(out);
  const Cluster &cluster = options.cluster;
  os << "search: "
     << (options.fixedModel ? options.fixedModelName : options.config.name)
     << " (" << modelgen::stringifyModelKind(options.model) << ", "
     << modelgen::stringifyElementKind(options.dtype) << ") on "
     << cluster.nodes << " x " << cluster.devicesPerNode << " "
     << cluster.device << " (" << cluster.intra.linkClass << " inside, "
     << cluster.inter.linkClass << " across), global batch "
     << options.globalBatch << ", budget "
     << llvm::format("%.1f", double(options.memoryBudget) / (1 << 20))
     << " MiB\n";
  os << "candidates " << result.enumerated << ", built " << result.built
     << ", simulated " << result.simulated << ", training DAGs built "
     << result.prefixBuilds << ", structures scored " << result.structuresScored
     << " (refined " << std::min(result.structuresScored, options.refine)
     << "), layer models built " << result.calibrationBuilds << ", "
     << llvm::format("%.1f", result.seconds) << " s";
  // Where it went (the rest: enumeration, bounds, bookkeeping).
  const SearchResult::PhaseSeconds &t = result.phaseSeconds;
  os << llvm::format(" (training DAGs %.1f, directives and programs %.1f, "
                     "memory plans %.1f, simulation %.1f, layer models %.1f)",
                     t.trainingDAGs, t.directives, t.memoryPlans, t.simulation,
                     t.layerModels)
     << "\n";

  os << llvm::format("%-5s %-48s %12s %8s %12s\n", "rank", "strategy",
                     "step ms", "bubble", "peak MiB");
  for (auto [i, e] : llvm::enumerate(result.kept)) {
    if (int64_t(i) >= rows)
      break;
    os << llvm::format("%-5d %-48s %12.3f %7.1f%% %12.1f\n", int(i + 1),
                       e.candidate.label().c_str(), e.stepTime * 1e3,
                       e.bubble * 100, double(e.peakBytes) / (1 << 20));
  }
  if (int64_t(result.kept.size()) > rows)
    os << "(" << result.kept.size() - rows << " more kept)\n";

  os << "kept " << result.kept.size() << "\n";
  if (result.boundViolations)
    os << "warning: " << result.boundViolations
       << " planned peaks were below the static memory bound\n";
  for (unsigned v = 1; v < kNumVerdicts; ++v) {
    if (!result.rejected[v])
      continue;
    os << "rejected " << result.rejected[v] << " "
       << stringifyVerdict(Verdict(v)) << ", e.g. " << result.example[v]
       << "\n";
  }
  if (!result.kept.empty()) {
    const Evaluation &best = result.kept.front();
    os << "best: " << best.candidate.label() << ", step "
       << llvm::format("%.3f", best.stepTime * 1e3) << " ms, peak "
       << llvm::format("%.1f", double(best.peakBytes) / (1 << 20)) << " MiB\n";
    os << "model: " << result.bestGenCommand << "\n";
  }
  return out;
}
