//===- StrategyVolumeTest.cpp - Strategies vs analytic comm volumes -------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The strategy table of the DAG issue: on the tiny GPT and MoE configs,
// DP4, ZeRO-1/2/3 over dp = 4, TP2, EP2, PP2 and PP2 x DP2 x EP2 (with two
// microbatches) build, and the communication report equals the textbook
// volumes computed here from the configs' sizes, not from the DAG:
//
//   all_reduce over N:              2 (N-1)/N x bytes
//   reduce_scatter, all_gather,
//   all_to_all over N:              (N-1)/N x bytes
//   DP / ZeRO-1 / ZeRO-2:           2 (N-1)/N x P   (ZeRO-1/2: RS + AG)
//   ZeRO-3:                         3 (N-1)/N x P, less one gather of every
//                                   parameter whose input gradient is not
//                                   needed (the embedding table)
//   Megatron TP over 2:             4 all-reduces of T x H per layer
//                                   (F: attention out, MLP out; BI: their
//                                   column-parallel input gradients)
//   EP over 2:                      4 all-to-alls of E x C x H per layer
//                                   (F: dispatch, expert outputs; BI: both)
//   PP2:                            the stage boundary activation T x H
//                                   forward and its gradient back, per
//                                   microbatch
//
// P is the parameters' bytes (f64, 8 bytes an element), T the tokens of a
// microbatch, H the width, E the experts, C the expert capacity.
//
//===----------------------------------------------------------------------===//

#include "../Common/StrategyPipeline.h"
#include "piper/Dialect/Piper/Transforms/CommReport.h"
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
#include "llvm/Support/raw_ostream.h"

#include "gtest/gtest.h"

#include <map>
#include <string>

using namespace mlir;
using namespace mlir::piper;

namespace {

constexpr double kBytes = 8; // f64

class StrategyVolumes : public test::StrategyPipeline {
protected:
  /// piper-gen's `config` with `stages` pipeline chunks on `mesh`, through
  /// autodiff, AdamW, build-dag and the transform `directives`.
  OwningOpRef<ModuleOp> build(StringRef configName, int64_t stages,
                              StringRef mesh, StringRef directives) {
    return StrategyPipeline::build(
        {configName.str(), stages, mesh.str(), /*zero=*/0, /*layers=*/0},
        directives);
  }

  /// Bytes per kind ("send", "all_reduce", ...), summed over the device
  /// groups (one device of each group).
  static std::map<std::string, double> totals(ModuleOp module) {
    std::map<std::string, double> perKind;
    for (const CommVolume &row : collectCommVolumes(module))
      perKind[row.kind] += row.bytes;
    return perKind;
  }

  /// Parameter bytes of `config`: all, the experts', the embedding's.
  struct ParamBytes {
    double all = 0, experts = 0, embedding = 0, routers = 0;
  };
  static ParamBytes paramBytes(StringRef configName) {
    const modelgen::ModelConfig *config =
        modelgen::lookupNamedConfig(configName);
    ParamBytes bytes;
    for (const modelgen::ParamSpec &param :
         modelgen::getParameters(config->model, *config)) {
      double size = kBytes;
      for (int64_t d : param.shape)
        size *= d;
      bytes.all += size;
      if (param.isExpertWeight)
        bytes.experts += size;
      if (param.name == "embed.weight")
        bytes.embedding += size;
      if (StringRef(param.name).ends_with("router.weight"))
        bytes.routers += size;
    }
    return bytes;
  }

  static const modelgen::ModelConfig &config(StringRef name) {
    return *modelgen::lookupNamedConfig(name);
  }

  /// Bytes of one activation T x H of a microbatch.
  static double activationBytes(StringRef name) {
    return kBytes * modelgen::getNumTokens(config(name)) * config(name).hidden;
  }

  /// Expects exactly the kinds in `expected`, each to 1e-9 relative.
  static void expectTotals(ModuleOp module,
                           const std::map<std::string, double> &expected) {
    std::map<std::string, double> actual = totals(module);
    for (auto &[kind, bytes] : expected) {
      ASSERT_TRUE(actual.count(kind)) << "no " << kind << " in the report";
      EXPECT_NEAR(actual[kind], bytes, 1e-9 * bytes) << kind;
    }
    for (auto &[kind, bytes] : actual)
      EXPECT_TRUE(expected.count(kind))
          << "unexpected " << kind << ": " << bytes << " bytes";
  }
};

constexpr const char *kAll = "    %all = transform.piper.match_nodes {} in "
                             "%root : (!transform.any_op) -> "
                             "!transform.any_op\n";

std::string replicate(StringRef axes, int zero, StringRef extra = "") {
  return (kAll + Twine("    %c = transform.piper.replicate %all over @mesh ") +
          axes + " zero = " + Twine(zero) + " " + extra +
          " : (!transform.any_op) -> !transform.any_op\n")
      .str();
}

class DataParallel : public StrategyVolumes,
                     public ::testing::WithParamInterface<const char *> {};

TEST_P(DataParallel, DP4AllReducesEveryGradientOnce) {
  auto module = build(GetParam(), 1, "dp=4", replicate("[\"dp\"]", 0));
  ASSERT_TRUE(module);
  double p = paramBytes(GetParam()).all;
  expectTotals(*module, {{"all_reduce", 2 * 0.75 * p}});
}

TEST_P(DataParallel, ZeRO1And2ScatterGradientsAndGatherParameters) {
  for (int zero : {1, 2}) {
    auto module = build(GetParam(), 1, "dp=4", replicate("[\"dp\"]", zero));
    ASSERT_TRUE(module);
    double p = paramBytes(GetParam()).all;
    expectTotals(*module,
                 {{"reduce_scatter", 0.75 * p}, {"all_gather", 0.75 * p}});
  }
}

TEST_P(DataParallel, ZeRO3MovesThreeTimesTheParameters) {
  auto module = build(GetParam(), 1, "dp=4", replicate("[\"dp\"]", 3));
  ASSERT_TRUE(module);
  ParamBytes p = paramBytes(GetParam());
  // Gathered for F and again for BI; scattered once: 3 (N-1)/N x P. The
  // embedding's input (token ids) has no gradient, so BI never needs the
  // table. The weight gradients of linear layers and norms need no
  // weights, but those of the MoE router (through its softmax) and of the
  // SwiGLU experts (each weight's gradient runs through the other two) are
  // recomputed from the weights, so BW gathers those a third time.
  double bwGathers = p.experts + p.routers;
  expectTotals(*module,
               {{"reduce_scatter", 0.75 * p.all},
                {"all_gather", 0.75 * (2 * p.all - p.embedding + bwGathers)}});
  if (StringRef(GetParam()) == "tiny-gpt") {
    // The textbook figure, exactly: 3 x P x (N-1)/N less the table's BI.
    double total = 0;
    for (auto &[kind, bytes] : totals(*module))
      total += bytes;
    EXPECT_NEAR(total, 3 * 0.75 * p.all - 0.75 * p.embedding, 1e-6);
  }
}

TEST_P(DataParallel, PP2SendsTheBoundaryActivationAndItsGradient) {
  std::string directives =
      "    %s0 = transform.piper.match_nodes {PP = 0} in %root : "
      "(!transform.any_op) -> !transform.any_op\n"
      "    %x0 = transform.piper.place %s0 on @mesh {pp = 0} : "
      "(!transform.any_op) -> !transform.any_op\n"
      "    %s1 = transform.piper.match_nodes {PP = 1} in %root : "
      "(!transform.any_op) -> !transform.any_op\n"
      "    %x1 = transform.piper.place %s1 on @mesh {pp = 1} : "
      "(!transform.any_op) -> !transform.any_op\n";
  auto module = build(GetParam(), 2, "pp=2", directives);
  ASSERT_TRUE(module);
  expectTotals(*module, {{"send", 2 * activationBytes(GetParam())}});
}

INSTANTIATE_TEST_SUITE_P(TinyModels, DataParallel,
                         ::testing::Values("tiny-gpt", "tiny-moe"),
                         [](const auto &info) {
                           std::string name = info.param;
                           return name == "tiny-gpt" ? "GPT" : "MoE";
                         });

TEST_F(StrategyVolumes, TP2AllReducesFourActivationsPerLayer) {
  std::string directives =
      kAll + std::string("    %tp = transform.piper.shard %all tensor over "
                         "@mesh [\"tp\"] column [\"layers.*.attn.w[qkv]\", "
                         "\"layers.*.mlp.w_{gate,up}\"] row "
                         "[\"layers.*.attn.wo\", \"layers.*.mlp.w_down\"] : "
                         "(!transform.any_op) -> !transform.any_op\n");
  auto module = build("tiny-gpt", 1, "tp=2", directives);
  ASSERT_TRUE(module);
  double layers = config("tiny-gpt").layers;
  expectTotals(*module, {{"all_reduce",
                          layers * 4 * 2 * 0.5 * activationBytes("tiny-gpt")}});
}

/// Bytes of the dispatched tokens of one MoE layer, E x C x H.
double dispatchBytes(const modelgen::ModelConfig &config) {
  return kBytes * config.experts * modelgen::getExpertCapacity(config) *
         config.hidden;
}

TEST_F(StrategyVolumes, EP2MovesTokensToExpertsAndBack) {
  std::string directives =
      kAll + std::string("    %ep = transform.piper.shard %all expert over "
                         "@mesh [\"ep\"] : (!transform.any_op) -> "
                         "!transform.any_op\n");
  auto module = build("tiny-moe", 1, "ep=2", directives);
  ASSERT_TRUE(module);
  double layers = config("tiny-moe").layers;
  expectTotals(
      *module,
      {{"all_to_all", layers * 4 * 0.5 * dispatchBytes(config("tiny-moe"))}});
}

TEST_F(StrategyVolumes, PP2xDP2xEP2WithTwoMicrobatches) {
  std::string directives =
      kAll +
      std::string(
          "    %mb = transform.piper.split %all into 2 microbatches : "
          "(!transform.any_op) -> !transform.any_op\n"
          "    %s0 = transform.piper.match_nodes {PP = 0} in %root : "
          "(!transform.any_op) -> !transform.any_op\n"
          "    %x0 = transform.piper.place %s0 on @mesh {pp = 0} : "
          "(!transform.any_op) -> !transform.any_op\n"
          "    %s1 = transform.piper.match_nodes {PP = 1} in %root : "
          "(!transform.any_op) -> !transform.any_op\n"
          "    %x1 = transform.piper.place %s1 on @mesh {pp = 1} : "
          "(!transform.any_op) -> !transform.any_op\n"
          "    %nodes = transform.piper.match_nodes {} in %root : "
          "(!transform.any_op) -> !transform.any_op\n"
          "    %ep = transform.piper.shard %nodes expert over @mesh [\"ep\"] : "
          "(!transform.any_op) -> !transform.any_op\n"
          "    %dense = transform.piper.replicate %nodes over @mesh [\"dp\", "
          "\"ep\"] where {EP = \"none\"} : (!transform.any_op) -> "
          "!transform.any_op\n"
          "    %experts = transform.piper.replicate %nodes over @mesh [\"dp\"] "
          "where {EP = \"*\"} : (!transform.any_op) -> !transform.any_op\n");
  auto module = build("tiny-moe", 2, "pp=2,dp=2,ep=2", directives);
  ASSERT_TRUE(module);
  const modelgen::ModelConfig &moe = config("tiny-moe");
  ParamBytes p = paramBytes("tiny-moe");
  double microbatches = 2;
  // Dense gradients all-reduced over dp x ep (N = 4); each device holds
  // half the experts, all-reduced over dp (N = 2); both once per step.
  double gradients = 2 * 0.75 * (p.all - p.experts) + 2 * 0.5 * p.experts / 2;
  expectTotals(
      *module,
      {{"send", microbatches * 2 * activationBytes("tiny-moe")},
       {"all_to_all", microbatches * moe.layers * 4 * 0.5 * dispatchBytes(moe)},
       {"all_reduce", gradients}});
}

} // namespace
