//===- StageBalanceTest.cpp - balanceStages, the strategy search's hook ---===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// balanceStages(ModuleOp, stages, cost) on generated models: every op is
// counted once (the FLOP costs of the stages add up to 3 x m x the step's
// forward FLOPs counted independently, op by op), the model is left as it
// was, qwen3_1b's 151,936-word head gets a stage of its own, and
// applyStageBalance leaves a verified model with that many PP chunks.
//
//===----------------------------------------------------------------------===//

#include "piper/Balance/StageBalance.h"
#include "piper/Dialect/Piper/IR/PiperOps.h"
#include "piper/ModelGen/ModelGen.h"
#include "piper/Simulator/OpCounts.h"

#include "mlir/IR/Verifier.h"

#include "gtest/gtest.h"

using namespace mlir;
using namespace mlir::piper;

namespace {

OwningOpRef<ModuleOp> generate(MLIRContext &context, StringRef config,
                               int64_t stages, int64_t layers = 0) {
  const modelgen::ModelConfig *named = modelgen::lookupNamedConfig(config);
  EXPECT_TRUE(named) << config.str();
  modelgen::GenOptions options;
  options.model = named->model;
  options.config = *named;
  if (layers)
    options.config.layers = layers;
  options.pipelineStages = stages;
  options.dtype = modelgen::ElementKind::BF16;
  auto module = modelgen::buildModel(&context, options);
  EXPECT_TRUE(bool(module)) << llvm::toString(module.takeError());
  return module ? std::move(*module) : OwningOpRef<ModuleOp>();
}

int64_t countPPChunks(func::FuncOp step) {
  int64_t chunks = 0;
  for (Operation &op : step.getBody().front())
    if (auto chunk = dyn_cast<AnnotateOp>(op);
        chunk && chunk.getTags().get("PP"))
      ++chunks;
  return chunks;
}

TEST(StageBalance, FlopCostsAddUpToTheWholeStep) {
  MLIRContext context;
  OwningOpRef<ModuleOp> model = generate(context, "tiny-moe", 2, 4);
  ASSERT_TRUE(model);
  double forward = 0;
  // Chunks are structure, as in the simulator: their ops are counted.
  model->walk([&](Operation *op) {
    if (!isa<AnnotateOp>(op))
      forward += countOp(op).flops();
  });
  BalanceOptions options;
  options.microbatches = 4;
  FailureOr<StageBalance> balance = balanceStages(*model, 3, "flops", options);
  ASSERT_TRUE(succeeded(balance));
  ASSERT_EQ(balance->cost.size(), 3u);
  double total = 0;
  for (double c : balance->cost)
    total += c;
  EXPECT_NEAR(total, 3 * 4 * forward, 1e-9 * total);
  EXPECT_EQ(balance->firstUnit.front(), 0);
  // The model is not changed: still piper-gen's two stages.
  EXPECT_EQ(countPPChunks(findStepFunction(*model)), 2);
}

TEST(StageBalance, Qwen3HeadGetsItsOwnStage) {
  MLIRContext context;
  OwningOpRef<ModuleOp> model = generate(context, "qwen3_1b", 0);
  ASSERT_TRUE(model);
  BalanceOptions options;
  options.microbatches = 16;
  FailureOr<StageBalance> balance =
      balanceStages(*model, 8, "roofline", options);
  ASSERT_TRUE(succeeded(balance));
  ASSERT_EQ(balance->cost.size(), 8u);
  // The last stage starts at the LM head (piper-gen names its linear
  // `lm_head`; the final norm is in the stage before) and is the most
  // expensive: no layer can join it without making it slower.
  EXPECT_EQ(StringRef(balance->firstUnitName.back()).split(' ').first,
            "lm_head");
  EXPECT_EQ(balance->maxCost(), balance->cost.back());
  for (size_t s = 0; s + 1 < balance->cost.size(); ++s)
    EXPECT_LT(balance->cost[s], balance->cost.back()) << "stage " << s;

  func::FuncOp step = findStepFunction(*model);
  applyStageBalance(step, *balance);
  EXPECT_EQ(countPPChunks(step), 8);
  EXPECT_TRUE(succeeded(verify(*model)));
}

TEST(StageBalance, MoreStagesThanCutsIsAnError) {
  MLIRContext context;
  OwningOpRef<ModuleOp> model = generate(context, "tiny-gpt", 0, 1);
  ASSERT_TRUE(model);
  std::string message;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
    message = diag.str();
    return success();
  });
  EXPECT_TRUE(failed(balanceStages(*model, 64, "flops")));
  EXPECT_NE(message.find("cannot split '@step' into 64 stages"),
            std::string::npos)
      << message;
}

} // namespace
