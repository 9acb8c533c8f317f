//===- FrontHalf.cpp - A model and a strategy to device programs ----------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "piper/Compile/FrontHalf.h"

#include "piper/Compile/ModelDirectives.h"
#include "piper/Directives/JSONDirectives.h"

#include "mlir/Dialect/Transform/Transforms/Passes.h"
#include "mlir/Support/FileUtilities.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/ToolOutputFile.h"

using namespace mlir;
using namespace mlir::piper;

void mlir::piper::buildFrontHalfPipeline(OpPassManager &pm,
                                         const PiperOptimizerOptions &optimizer,
                                         StringRef strategyPath) {
  // Model directives (transform.piper.balance) rewrite the model itself,
  // before autodiff; the rest of the strategy acts on the DAG.
  if (!strategyPath.empty())
    pm.addPass(createModelDirectivesPass(strategyPath.str()));
  buildTrainingDAGPipeline(pm, optimizer);
  buildStrategyPipeline(pm, strategyPath);
}

void mlir::piper::buildTrainingDAGPipeline(
    OpPassManager &pm, const PiperOptimizerOptions &optimizer) {
  pm.addPass(createPiperAutodiff());
  pm.addPass(createPiperOptimizer(optimizer));
  pm.addPass(createPiperBuildDAG());
}

void mlir::piper::buildStrategyPipeline(OpPassManager &pm,
                                        StringRef strategyPath) {
  if (!strategyPath.empty()) {
    transform::PreloadLibraryPassOptions preload;
    preload.transformLibraryPaths.push_back(strategyPath.str());
    pm.addPass(transform::createPreloadLibraryPass(std::move(preload)));
    pm.addPass(transform::createInterpreterPass());
  }
  buildProgramsPipeline(pm);
}

void mlir::piper::buildProgramsPipeline(OpPassManager &pm) {
  pm.addPass(createPiperPartition());
  pm.addPass(createPiperVerifyPrograms());
}

LogicalResult mlir::piper::runFrontHalf(ModuleOp module,
                                        const PiperOptimizerOptions &optimizer,
                                        StringRef strategyPath,
                                        TimingScope &timing) {
  TimingScope frontTiming = timing.nest("front half");
  PassManager pm(module.getContext());
  pm.enableTiming(frontTiming);
  buildFrontHalfPipeline(pm, optimizer, strategyPath);
  return pm.run(module);
}

FailureOr<std::string>
mlir::piper::prepareStrategy(StringRef directives,
                             const std::optional<std::string> &keepDir) {
  if (!directives.ends_with(".json"))
    return directives.str();
  std::string error;
  auto json = openInputFile(directives, &error);
  if (!json) {
    llvm::errs() << "piper-compile: " << error << "\n";
    return failure();
  }
  llvm::Expected<std::string> script =
      translateJSONDirectives(json->getBuffer(), directives);
  if (!script) {
    llvm::errs() << llvm::toString(script.takeError()) << "\n";
    return failure();
  }
  // Keep the translated script: with the plan when there is one.
  SmallString<128> path;
  if (keepDir) {
    if (std::error_code ec = llvm::sys::fs::create_directories(*keepDir)) {
      llvm::errs() << "piper-compile: cannot create " << *keepDir << ": "
                   << ec.message() << "\n";
      return failure();
    }
    path = *keepDir;
    llvm::sys::path::append(path, "strategy.mlir");
  } else if (llvm::sys::fs::createTemporaryFile("strategy", "mlir", path)) {
    llvm::errs() << "piper-compile: cannot create a temporary file\n";
    return failure();
  }
  auto file = openOutputFile(path, &error);
  if (!file) {
    llvm::errs() << "piper-compile: " << error << "\n";
    return failure();
  }
  file->os() << *script;
  file->keep();
  return std::string(path);
}
