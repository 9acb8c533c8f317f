//===- StrategyPipeline.h - A strategy's DAG, built in a test ---*- C++ -*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// What `piper-gen | piper-opt --piper-autodiff --piper-optimizer
// --piper-build-dag --transform-interpreter` does, in process, for unit
// tests that check a strategy's DAG against formulas (communication
// volumes, memory, simulated time).
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_TEST_UNIT_COMMON_STRATEGYPIPELINE_H
#define PIPER_TEST_UNIT_COMMON_STRATEGYPIPELINE_H

#include "piper/Dialect/Piper/Transforms/Passes.h"
#include "piper/InitAllPiper.h"
#include "piper/ModelGen/ModelGen.h"

#include "mlir/Dialect/Transform/IR/TransformOps.h"
#include "mlir/Dialect/Transform/Transforms/TransformInterpreterUtils.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include "gtest/gtest.h"

#include <optional>
#include <string>

namespace mlir::piper::test {

/// The model to generate.
struct ModelSpec {
  std::string config;
  int64_t stages = 1;
  /// `--mesh`, e.g. "pp=2,dp=2".
  std::string mesh;
  /// ZeRO stage of the generated placements.
  int64_t zero = 0;
  /// Layers, when > 0, instead of the config's.
  int64_t layers = 0;
  /// `--piper-build-dag=fuse-backward`: one B node per chunk.
  bool fuseBackward = false;
};

/// A fixture with a context that loads every Piper dialect and collects
/// diagnostics (reported by the failing expectation).
class StrategyPipeline : public ::testing::Test {
protected:
  StrategyPipeline() {
    DialectRegistry registry;
    registerPiper(registry);
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
    handler.emplace(&context, [this](Diagnostic &diag) {
      diagnostics += diag.str() + "\n";
      return success();
    });
  }

  /// The model of `spec` in f64, through autodiff, AdamW and build-dag,
  /// then the transform `directives` (the body of the entry sequence,
  /// `%root` being the module). Null after a failed expectation.
  OwningOpRef<ModuleOp> build(const ModelSpec &spec, StringRef directives) {
    const modelgen::ModelConfig *config =
        modelgen::lookupNamedConfig(spec.config);
    EXPECT_TRUE(config) << spec.config;
    if (!config)
      return {};
    modelgen::GenOptions options;
    options.model = config->model;
    options.config = *config;
    if (spec.layers > 0)
      options.config.layers = spec.layers;
    options.pipelineStages = spec.stages;
    options.zero = spec.zero;
    options.dtype = modelgen::ElementKind::F64;
    auto axes = modelgen::parseMeshSpec(spec.mesh);
    EXPECT_TRUE(bool(axes)) << llvm::toString(axes.takeError());
    if (!axes)
      return {};
    options.mesh = *axes;
    auto module = modelgen::buildModel(&context, options);
    EXPECT_TRUE(bool(module)) << llvm::toString(module.takeError());
    if (!module)
      return {};
    OwningOpRef<ModuleOp> payload = std::move(*module);

    PassManager pm(&context);
    pm.addPass(createPiperAutodiff());
    PiperOptimizerOptions optimizer;
    optimizer.optimizer = "adamw";
    pm.addPass(createPiperOptimizer(optimizer));
    PiperBuildDAGOptions dag;
    dag.fuseBackward = spec.fuseBackward;
    pm.addPass(createPiperBuildDAG(dag));
    if (failed(pm.run(*payload))) {
      ADD_FAILURE() << diagnostics;
      return {};
    }

    std::string source = "module attributes {transform.with_named_sequence} {\n"
                         "  transform.named_sequence @__transform_main(%root: "
                         "!transform.any_op {transform.readonly}) {\n" +
                         directives.str() + "\n    transform.yield\n  }\n}\n";
    OwningOpRef<ModuleOp> script =
        parseSourceString<ModuleOp>(source, &context, "directives.mlir");
    if (!script) {
      ADD_FAILURE() << diagnostics << source;
      return {};
    }
    auto entry =
        script->lookupSymbol<transform::NamedSequenceOp>("__transform_main");
    if (failed(transform::applyTransformNamedSequence(
            *payload, entry, *script, transform::TransformOptions())) ||
        failed(mlir::verify(*payload))) {
      ADD_FAILURE() << diagnostics;
      return {};
    }
    return payload;
  }

  MLIRContext context;
  std::string diagnostics;
  std::optional<ScopedDiagnosticHandler> handler;
};

} // namespace mlir::piper::test

#endif // PIPER_TEST_UNIT_COMMON_STRATEGYPIPELINE_H
