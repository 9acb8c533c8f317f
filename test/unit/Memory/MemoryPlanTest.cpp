//===- MemoryPlanTest.cpp - Memory plans vs hand-computed figures ---------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The memory plan of issue 6 against figures computed here from the model
// configs, not from the plan:
//
//   ZeRO over N with AdamW (P = parameter bytes, n = parameters; every
//   parameter has an exp_avg and exp_avg_sq like itself and an 8-byte step
//   counter), at the first update, when every gradient is final:
//
//     stage   params   grads   optimizer
//     0       P        P       2P + 8n
//     1       P        P       2P/N + 8n
//     2       P        P/N     2P/N + 8n
//     3       P/N      P/N     2P/N + 8n
//
//   and at ZeRO-3 the most parameter bytes at once are P/N plus the copies
//   gathered for one node (all of P for the single forward node) plus the
//   copies of the next node, gathered one task ahead.
//
//   Pipelines of p stages (one per rank) and m microbatches: rank r keeps
//   the saved activations of m microbatches under GPipe and of
//   min(m, p - r) under 1F1B, M_B each, where M_B of a stage is computed
//   here from a split, unplaced DAG as the bytes of the distinct forward
//   outputs that the stage's backward tasks of microbatch 0 read.
//
//===----------------------------------------------------------------------===//

#include "piper/Dialect/Piper/Transforms/MemoryPlan.h"
#include "../Common/StrategyPipeline.h"
#include "piper/Dialect/Piper/Transforms/CommReport.h"
#include "piper/Dialect/Piper/Transforms/Passes.h"
#include "piper/Dialect/Piper/Transforms/Recompute.h"
#include "piper/InitAllPiper.h"
#include "piper/ModelGen/ModelGen.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/Dialect/Transform/IR/TransformOps.h"
#include "mlir/Dialect/Transform/Transforms/TransformInterpreterUtils.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/raw_ostream.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <string>

using namespace mlir;
using namespace mlir::piper;

namespace {

constexpr int64_t kBytes = 8; // f64

class MemoryPlans : public test::StrategyPipeline {
protected:
  /// piper-gen's `config` with `stages` pipeline chunks (`layers` layers
  /// when > 0) on `mesh` at ZeRO `zero`, through autodiff, AdamW,
  /// build-dag and the transform `directives`.
  OwningOpRef<ModuleOp> build(StringRef configName, int64_t stages,
                              StringRef mesh, int64_t zero,
                              StringRef directives, int64_t layers = 0) {
    return StrategyPipeline::build(
        {configName.str(), stages, mesh.str(), zero, layers}, directives);
  }

  static DAGOp dagOf(ModuleOp module) {
    DAGOp dag;
    module.walk([&](DAGOp op) { dag = op; });
    return dag;
  }

  std::vector<DeviceMemoryPlan> plan(ModuleOp module) {
    DAGOp dag = dagOf(module);
    EXPECT_TRUE(dag);
    if (!dag)
      return {};
    auto plans = planMemory(dag, [&]() { return dag.emitError(); });
    EXPECT_TRUE(succeeded(plans)) << diagnostics;
    return succeeded(plans) ? *plans : std::vector<DeviceMemoryPlan>();
  }

  /// Parameter bytes and count of `config`.
  static std::pair<int64_t, int64_t> paramBytes(StringRef configName) {
    const modelgen::ModelConfig *config =
        modelgen::lookupNamedConfig(configName);
    int64_t bytes = 0, count = 0;
    for (const modelgen::ParamSpec &param :
         modelgen::getParameters(config->model, *config)) {
      int64_t size = kBytes;
      for (int64_t d : param.shape)
        size *= d;
      bytes += size;
      ++count;
    }
    return {bytes, count};
  }
};

constexpr const char *kAll = "    %all = transform.piper.match_nodes {} in "
                             "%root : (!transform.any_op) -> "
                             "!transform.any_op\n";

std::string replicate(int zero) {
  return (kAll +
          Twine("    %c = transform.piper.replicate %all over @mesh [\"dp\"] "
                "zero = ") +
          Twine(zero) + " : (!transform.any_op) -> !transform.any_op\n")
      .str();
}

/// The first step of `plan` that runs an update.
unsigned firstUpdate(const DeviceMemoryPlan &plan) {
  for (auto [i, node] : llvm::enumerate(plan.steps))
    if (auto task = dyn_cast<TaskOp>(node);
        task && task.getPass() == PassKind::UPD)
      return i;
  ADD_FAILURE() << "no update in group " << plan.group;
  return 0;
}

class ZeRO : public MemoryPlans,
             public ::testing::WithParamInterface<const char *> {};

TEST_P(ZeRO, ModelStatesMatchTheTextbookAtEveryStage) {
  constexpr int64_t n = 4;
  auto [p, count] = paramBytes(GetParam());
  for (int zero = 0; zero <= 3; ++zero) {
    SCOPED_TRACE("ZeRO-" + std::to_string(zero));
    auto module = build(GetParam(), 1, "dp=4", zero, replicate(zero));
    ASSERT_TRUE(module);
    std::vector<DeviceMemoryPlan> plans = plan(*module);
    ASSERT_EQ(plans.size(), 1u);
    const DeviceMemoryPlan &all = plans.front();
    EXPECT_EQ(all.group, "all");
    const MemoryBreakdown &atUpdate = all.live[firstUpdate(all)];
    EXPECT_EQ(atUpdate[MemoryKind::Params], zero == 3 ? p / n : p);
    EXPECT_EQ(atUpdate[MemoryKind::Grads], zero >= 2 ? p / n : p);
    EXPECT_EQ(atUpdate[MemoryKind::OptimizerState],
              (zero >= 1 ? 2 * p / n : 2 * p) + kBytes * count);
    EXPECT_EQ(all.maxPerKind[MemoryKind::OptimizerState],
              atUpdate[MemoryKind::OptimizerState]);
    // Full gradients never outnumber the parameters.
    EXPECT_LE(all.maxPerKind[MemoryKind::Grads], p + p / n);
    if (zero < 2)
      EXPECT_EQ(all.maxPerKind[MemoryKind::Grads], p);
    // ZeRO-3: the shards, every parameter gathered for the one forward,
    // and the copies the next task reads, gathered during the forward.
    int64_t prefetched = 0;
    if (zero == 3) {
      auto forward = llvm::find_if(all.steps, [](Operation *node) {
        auto task = dyn_cast<TaskOp>(node);
        return task && task.getPass() == PassKind::F;
      });
      ASSERT_NE(forward, all.steps.end());
      auto next =
          std::find_if(std::next(forward), all.steps.end(),
                       [](Operation *node) { return isa<TaskOp>(node); });
      ASSERT_NE(next, all.steps.end());
      for (Value input : (*next)->getOperands())
        if (auto gather = input.getDefiningOp<CollectiveOp>();
            gather && gather.getKind() == CollectiveKind::AllGather)
          prefetched += getTensorBytes(input.getType());
      EXPECT_GT(prefetched, 0);
    }
    EXPECT_EQ(all.maxPerKind[MemoryKind::Params],
              zero == 3 ? p / n + p + prefetched : p);
    // Reuse never needs more allocations than buffers, and the peak fits
    // in what is reserved.
    EXPECT_LE(all.numAllocations, all.numTransientBuffers);
    EXPECT_GE(all.reservedBytes, all.peakBytes());
    const modelgen::ModelConfig &config =
        *modelgen::lookupNamedConfig(GetParam());
    for (const modelgen::ParamSpec &param :
         modelgen::getParameters(config.model, config)) {
      ParamSharding sharding = getParamSharding(dagOf(*module), param.name);
      EXPECT_EQ(sharding.zero, unsigned(zero)) << param.name;
      EXPECT_EQ(sharding.dataParallel, n) << param.name;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(TinyModels, ZeRO,
                         ::testing::Values("tiny-mlp", "tiny-gpt"),
                         [](const auto &info) {
                           std::string name = info.param;
                           return name == "tiny-gpt" ? "GPT" : "MLP";
                         });

/// `split`, then stage s on {pp = s}, then `schedule` (none when empty).
std::string pipeline(int64_t stages, int64_t microbatches, StringRef schedule) {
  std::string text = kAll;
  text += "    %mb = transform.piper.split %all into " +
          std::to_string(microbatches) +
          " microbatches : (!transform.any_op) -> !transform.any_op\n";
  for (int64_t s = 0; s < stages; ++s) {
    std::string index = std::to_string(s);
    text += "    %s" + index + " = transform.piper.match_nodes {PP = " + index +
            "} in %root : (!transform.any_op) -> !transform.any_op\n"
            "    %x" +
            index + " = transform.piper.place %s" + index +
            " on @mesh {pp = " + index +
            "} : (!transform.any_op) -> !transform.any_op\n";
  }
  if (!schedule.empty())
    text += "    transform.piper.schedule \"" + schedule.str() +
            "\" in %root : !transform.any_op\n";
  return text;
}

class Pipelines : public MemoryPlans {
protected:
  /// M_B of each stage: bytes of the distinct forward outputs read by the
  /// stage's backward tasks of microbatch 0, in a split, unplaced DAG.
  std::vector<int64_t> activationBytes(StringRef configName, int64_t stages,
                                       int64_t layers) {
    std::string split = kAll;
    split += "    %mb = transform.piper.split %all into 2 microbatches : "
             "(!transform.any_op) -> !transform.any_op\n";
    auto module = build(configName, stages, "pp=" + std::to_string(stages), 0,
                        split, layers);
    std::vector<int64_t> bytes(stages, 0);
    if (!module)
      return bytes;
    std::vector<llvm::SetVector<Value>> saved(stages);
    dagOf(*module).walk([&](TaskOp task) {
      auto pp = task.getTags().getAs<IntegerAttr>("PP");
      auto mb = task.getTags().getAs<IntegerAttr>("MB");
      if (!pp || !mb || mb.getInt() != 0 || task.getPass() == PassKind::F ||
          task.getPass() == PassKind::UPD)
        return;
      for (Value input : task.getInputs())
        if (auto producer = input.getDefiningOp<TaskOp>();
            producer && producer.getPass() == PassKind::F)
          saved[pp.getInt()].insert(input);
    });
    for (int64_t s = 0; s < stages; ++s)
      for (Value value : saved[s]) {
        auto type = cast<RankedTensorType>(value.getType());
        bytes[s] += type.getNumElements() * kBytes;
      }
    return bytes;
  }
};

TEST_F(Pipelines, GPipeKeepsEveryMicrobatchAnd1F1BOnlyPMinusR) {
  constexpr int64_t p = 4;
  std::vector<int64_t> mb = activationBytes("tiny-mlp", p, p);
  for (int64_t s = 0; s < p; ++s)
    EXPECT_GT(mb[s], 0) << "stage " << s;
  for (int64_t m : {4, 8}) {
    for (StringRef schedule : {"gpipe", "1f1b"}) {
      SCOPED_TRACE((schedule + " m=" + Twine(m)).str());
      auto module = build("tiny-mlp", p, "pp=4", 0, pipeline(p, m, schedule),
                          /*layers=*/p);
      ASSERT_TRUE(module);
      std::vector<DeviceMemoryPlan> plans = plan(*module);
      ASSERT_EQ(plans.size(), size_t(p));
      for (int64_t r = 0; r < p; ++r) {
        int64_t inFlight = schedule == "gpipe" ? m : std::min(m, p - r);
        EXPECT_EQ(plans[r].group, "pp=" + std::to_string(r));
        EXPECT_EQ(plans[r].maxActivationMicrobatches, inFlight) << "rank " << r;
        EXPECT_EQ(plans[r].maxPerKind[MemoryKind::Activations],
                  inFlight * mb[r])
            << "rank " << r;
      }
    }
  }
}

TEST_F(Pipelines, GradientsAccumulateInOneRunningSumPerParameter) {
  // However many microbatches, a stage's weight gradients take its
  // parameters' bytes twice at most: the running sum and the microbatch's
  // own gradient, added into it right after its task.
  for (int64_t m : {4, 8}) {
    SCOPED_TRACE("m=" + std::to_string(m));
    auto module =
        build("tiny-mlp", 4, "pp=4", 0, pipeline(4, m, "1f1b"), /*layers=*/4);
    ASSERT_TRUE(module);
    for (const DeviceMemoryPlan &group : plan(*module))
      EXPECT_EQ(group.maxPerKind[MemoryKind::Grads],
                2 * group.maxPerKind[MemoryKind::Params])
          << group.group;
  }
}

TEST_F(Pipelines, PartlyPlacedDAGsAreRejected) {
  std::string directives =
      "    %s0 = transform.piper.match_nodes {PP = 0} in %root : "
      "(!transform.any_op) -> !transform.any_op\n"
      "    %x0 = transform.piper.place %s0 on @mesh {pp = 0} : "
      "(!transform.any_op) -> !transform.any_op\n";
  auto module = build("tiny-mlp", 2, "pp=2", 0, directives);
  ASSERT_TRUE(module);
  DAGOp dag = dagOf(*module);
  diagnostics.clear();
  EXPECT_TRUE(failed(planMemory(dag, [&]() { return dag.emitError(); })));
  EXPECT_NE(diagnostics.find("has no device group, but 'F{PP=0}' is placed "
                             "on {pp=0}; place every task"),
            std::string::npos)
      << diagnostics;
}

// applyRecompute, the in-process entry a strategy search uses: on the tiny
// GPT under PP2 1F1B over 4 microbatches, recomputing stage 0 makes one R
// node per microbatch, and stage 0 then holds one microbatch of stored
// activations at its peak instead of two (stage 1 is unchanged).
TEST_F(Pipelines, RecomputeKeepsOneMicrobatchOfActivations) {
  auto base = build("tiny-gpt", 2, "pp=2", 0, pipeline(2, 4, "1f1b"));
  auto module = build("tiny-gpt", 2, "pp=2", 0, pipeline(2, 4, "1f1b"));
  ASSERT_TRUE(base && module);
  std::vector<DeviceMemoryPlan> before = plan(*base);
  MLIRContext *ctx = module->getContext();
  auto filter = cast<DictionaryAttr>(parseAttribute("{PP = 0}", ctx));
  FailureOr<unsigned> made = applyRecompute(*module, filter);
  ASSERT_TRUE(succeeded(made)) << diagnostics;
  EXPECT_EQ(*made, 4u);
  std::vector<DeviceMemoryPlan> after = plan(*module);
  ASSERT_EQ(before.size(), 2u);
  ASSERT_EQ(after.size(), 2u);
  EXPECT_EQ(before[0].maxActivationMicrobatches, 2);
  EXPECT_EQ(after[0].maxActivationMicrobatches, 1);
  EXPECT_EQ(after[0].maxPerKind[MemoryKind::Activations] * 2,
            before[0].maxPerKind[MemoryKind::Activations]);
  EXPECT_LT(after[0].peakBytes(), before[0].peakBytes());
  EXPECT_EQ(after[1].peakBytes(), before[1].peakBytes());
  // Applied again, every selected forward is already recomputed.
  EXPECT_TRUE(failed(applyRecompute(*module, filter)));
  EXPECT_NE(diagnostics.find("is already recomputed by 'R{PP=0,MB=0}'"),
            std::string::npos)
      << diagnostics;
}

} // namespace
