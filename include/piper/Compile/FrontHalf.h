//===- FrontHalf.h - A model and a strategy to device programs --*- C++ -*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The compiler's front half as the compile driver runs it (docs/Lowering.md,
// "Pipeline"): --piper-autodiff, --piper-optimizer, --piper-build-dag, the
// strategy through the transform interpreter, --piper-partition and
// --piper-verify-programs, built with the passes' C++ constructors and typed
// options.
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_COMPILE_FRONTHALF_H
#define PIPER_COMPILE_FRONTHALF_H

#include "piper/Dialect/Piper/Transforms/Passes.h"

#include "mlir/Pass/PassManager.h"

#include <optional>
#include <string>

namespace mlir::piper {

/// Adds the front half to `pm` (on builtin.module): a training step with
/// `optimizer`, the transform script at `strategyPath` applied to its DAG
/// (none: serial), then the verified device programs.
void buildFrontHalfPipeline(OpPassManager &pm,
                            const PiperOptimizerOptions &optimizer,
                            StringRef strategyPath);

/// The first part of the front half: the training step's global DAG
/// (autodiff, `optimizer`, build-dag). The strategy search builds it once
/// per model and applies many strategies to copies (lib/Search).
void buildTrainingDAGPipeline(OpPassManager &pm,
                              const PiperOptimizerOptions &optimizer);

/// The rest: the transform script at `strategyPath` (none: serial), then
/// partition and verification.
void buildStrategyPipeline(OpPassManager &pm, StringRef strategyPath);

/// The last part: partition and verification of a scheduled DAG.
void buildProgramsPipeline(OpPassManager &pm);

/// Runs the front half on `module` (a model: one public function with
/// parameters), each pass timed under `timing`; errors are diagnostics.
LogicalResult runFrontHalf(ModuleOp module,
                           const PiperOptimizerOptions &optimizer,
                           StringRef strategyPath, TimingScope &timing);

/// The transform script that `directives` names: the file itself when it
/// is a transform script (.mlir), or the translation of Piper's JSON
/// directive list (.json; lib/Directives) written to `keepDir`/strategy.mlir
/// (the directory is created) or, without `keepDir`, to a temporary file.
/// An empty `directives` gives an empty path (serial). Failures are printed
/// to llvm::errs().
FailureOr<std::string>
prepareStrategy(StringRef directives,
                const std::optional<std::string> &keepDir);

} // namespace mlir::piper

#endif // PIPER_COMPILE_FRONTHALF_H
