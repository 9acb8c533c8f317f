//===- ModelDirectives.cpp - Directives applied to the model --------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "piper/Compile/ModelDirectives.h"

#include "mlir/Dialect/Transform/IR/TransformDialect.h"
#include "mlir/Dialect/Transform/IR/TransformOps.h"
#include "mlir/Dialect/Transform/Interfaces/TransformInterfaces.h"
#include "mlir/Dialect/Transform/Transforms/TransformInterpreterUtils.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Parser/Parser.h"

using namespace mlir;

namespace {

struct ModelDirectivesPass
    : public PassWrapper<ModelDirectivesPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(ModelDirectivesPass)

  ModelDirectivesPass() = default;
  ModelDirectivesPass(const ModelDirectivesPass &other) : PassWrapper(other) {}

  StringRef getArgument() const override { return "piper-model-directives"; }
  StringRef getDescription() const override {
    return "Applies a strategy script's @__transform_model sequence to the "
           "model";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<transform::TransformDialect>();
  }

  void runOnOperation() override {
    if (strategy.empty())
      return;
    ParserConfig config(&getContext());
    OwningOpRef<ModuleOp> script =
        parseSourceFile<ModuleOp>(strategy.getValue(), config);
    if (!script)
      return signalPassFailure();
    // findTransformEntryPoint reports a missing sequence as an error; a
    // script without model directives is the common case.
    auto entry = script->lookupSymbol<transform::NamedSequenceOp>(
        mlir::piper::kModelSequenceName);
    if (!entry)
      return;
    if (failed(transform::applyTransformNamedSequence(
            getOperation(), entry, *script, transform::TransformOptions())))
      signalPassFailure();
  }

  Option<std::string> strategy{*this, "strategy",
                               llvm::cl::desc("Transform script to read")};
};

} // namespace

std::unique_ptr<Pass>
mlir::piper::createModelDirectivesPass(const std::string &strategyPath) {
  auto pass = std::make_unique<ModelDirectivesPass>();
  pass->strategy = strategyPath;
  return pass;
}
