//===- EvalFlags.h - Held-out evaluation and plot flags ---------*- C++ -*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// piper-run and piper-interp take the same --eval-data, --eval-every,
// --eval-batches and --plot flags and print the same numbers, so the flags,
// their checks and the evaluation cadence live here once.
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_TOOLS_COMMON_EVALFLAGS_H
#define PIPER_TOOLS_COMMON_EVALFLAGS_H

#include "llvm/Support/CommandLine.h"

#include <cstdint>
#include <string>

namespace piper {

/// The category of the flags below (shown by --help beside the tool's own).
llvm::cl::OptionCategory &evalCategory();

extern llvm::cl::opt<std::string> evalData;
extern llvm::cl::opt<int64_t> evalEvery;
extern llvm::cl::opt<int64_t> evalBatches;
extern llvm::cl::opt<std::string> plotFile;

/// False with a one-line `error` if the evaluation flags are out of range or
/// given without --eval-data.
bool checkEvalFlags(std::string &error);

/// Whether to evaluate after 1-based step `step` of a run ending at `last`:
/// every --eval-every steps and after the last one, when --eval-data is set.
bool evaluateAfter(int64_t step, int64_t last);

} // namespace piper

#endif // PIPER_TOOLS_COMMON_EVALFLAGS_H
