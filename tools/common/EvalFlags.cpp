//===- EvalFlags.cpp - Held-out evaluation and plot flags -----------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "EvalFlags.h"

namespace cl = llvm::cl;

cl::OptionCategory &piper::evalCategory() {
  static cl::OptionCategory category("evaluation and plot options");
  return category;
}

cl::opt<std::string> piper::evalData(
    "eval-data",
    cl::desc("Held-out text (e.g. scripts/make-corpus's heldout.txt): print "
             "the held-out loss and perplexity every --eval-every steps and "
             "at the end (piper-run and piper-interp print the same numbers)"),
    cl::value_desc("file"), cl::cat(evalCategory()));
cl::opt<int64_t> piper::evalEvery(
    "eval-every",
    cl::desc("Steps between held-out evaluations (default 0: only after the "
             "last step)"),
    cl::init(0), cl::cat(evalCategory()));
cl::opt<int64_t> piper::evalBatches(
    "eval-batches",
    cl::desc("Held-out batches per evaluation, each one global batch "
             "(default 4)"),
    cl::init(4), cl::cat(evalCategory()));
cl::opt<std::string> piper::plotFile(
    "plot",
    cl::desc("At the end, draw the loss per step (and the held-out loss) as "
             "an SVG image"),
    cl::value_desc("file.svg"), cl::cat(evalCategory()));

bool piper::checkEvalFlags(std::string &error) {
  if (evalData.empty() &&
      (evalEvery.getNumOccurrences() || evalBatches.getNumOccurrences())) {
    error = "--eval-every and --eval-batches need --eval-data";
    return false;
  }
  if (evalEvery < 0 || evalBatches < 1 || evalBatches > 1000000) {
    error = "--eval-every must be >= 0 and --eval-batches in [1, 1000000], "
            "got " +
            std::to_string(evalEvery) + " and " + std::to_string(evalBatches);
    return false;
  }
  return true;
}

bool piper::evaluateAfter(int64_t step, int64_t last) {
  return !evalData.empty() &&
         (step == last || (evalEvery && step % evalEvery == 0));
}
