//===- UnitCostScheduleTest.cpp - Simulated programs vs closed forms ------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The simulator's first promise: at unit costs (F = I = W = 1, B = 2,
// communication free) it reproduces the closed-form makespans and per-rank
// bubbles of every built-in schedule on real device programs. Each case
// generates an MLP with one layer per stage, runs autodiff, AdamW and
// build-dag, applies a strategy (split into microbatches, place the stages
// as the schedule wants them, schedule), partitions and verifies the
// programs, simulates them, and compares with schedules.md's formula and
// with the schedule library's own simulator rank by rank.
//
// Two choices make the programs the schedule the formulas describe:
//   - the DAG is built with fused backward nodes (one B per stage and
//     microbatch) and only the (stage, microbatch) pairs the schedule runs
//     as separate I and W are split back (split_backward): a separate BI
//     would hand its input gradient upstream before the W, which is the
//     zero-bubble trick and beats the formula of an atomic B;
//   - every stage boundary and direction has its own transfer stream: a
//     stream is in order, so two boundaries sharing one would serialise
//     their messages in the DAG's topological order, not the schedule's
//     (docs/DevicePrograms.md).
//
//===----------------------------------------------------------------------===//

#include "../Common/StrategyPipeline.h"
#include "piper/Dialect/Piper/Transforms/Passes.h"
#include "piper/Dialect/Piper/Transforms/Programs.h"
#include "piper/InitAllPiper.h"
#include "piper/ModelGen/ModelGen.h"
#include "piper/Schedule/Builders.h"
#include "piper/Schedule/Simulator.h"
#include "piper/Simulator/Simulate.h"

#include "mlir/Dialect/Transform/IR/TransformOps.h"
#include "mlir/Dialect/Transform/Transforms/TransformInterpreterUtils.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include "gtest/gtest.h"

#include <set>
#include <string>

using namespace mlir;
using namespace mlir::piper;
namespace sched = ::piper::sched;

namespace {

struct Case {
  const char *schedule;
  int p, m, v;
  /// schedules.md's makespan at unit costs; < 0 where it only says "~0".
  double closedForm;
};

std::ostream &operator<<(std::ostream &os, const Case &c) {
  return os << c.schedule << " p=" << c.p << " m=" << c.m << " v=" << c.v;
}

/// How the DAG's stages map onto the library's schedule.
struct Layout {
  int dagStages = 0;
  /// The rank that runs DAG stage `s` on microbatch `mb`.
  std::function<int(int s, int mb)> rank;
  /// The DAG (stage, microbatch) of library stage `s`, microbatch `mb`.
  std::function<std::pair<int, int>(int s, int mb)> dagOf;
  /// Transfer stream of DAG stage `s`, microbatch `mb`.
  std::function<std::string(int s, int mb)> streamSuffix;
};

Layout layoutOf(const Case &c) {
  Layout l;
  std::string name = c.schedule;
  int p = c.p;
  l.dagOf = [](int s, int mb) { return std::make_pair(s, mb); };
  l.streamSuffix = [](int s, int) { return std::to_string(s); };
  if (name == "zb-v" || name == "dualpipev") {
    l.dagStages = 2 * p;
    l.rank = [p](int s, int) { return s < p ? s : 2 * p - 1 - s; };
  } else if (name == "interleaved-1f1b") {
    l.dagStages = p * c.v;
    l.rank = [p](int s, int) { return s % p; };
  } else if (name == "dualpipe") {
    // Both directions: microbatches m/2.. enter at rank p-1.
    int half = c.m / 2;
    l.dagStages = p;
    l.rank = [p, half](int s, int mb) { return mb < half ? s : p - 1 - s; };
    l.dagOf = [p, half](int s, int mb) {
      return s < p ? std::make_pair(s, mb) : std::make_pair(s - p, mb + half);
    };
    l.streamSuffix = [half](int s, int mb) {
      return std::to_string(s) + (mb < half ? "_up" : "_down");
    };
  } else {
    l.dagStages = p;
    l.rank = [](int s, int) { return s; };
  }
  return l;
}

class UnitCostSchedules : public test::StrategyPipeline,
                          public ::testing::WithParamInterface<Case> {
protected:
  /// The transform script: split, split_backward where the schedule runs I
  /// and W, place every (stage, pass[, microbatch]) with its own stream,
  /// schedule.
  std::string strategy(const Case &c, const sched::Schedule &schedule) {
    Layout layout = layoutOf(c);
    std::string any = " : (!transform.any_op) -> !transform.any_op\n";
    std::string s = "    %all = transform.piper.match_nodes {} in %root" + any;
    s += "    %mb = transform.piper.split %all into " + std::to_string(c.m) +
         " microbatches" + any;
    std::set<std::pair<int, int>> split;
    for (const auto &actions : schedule.ranks)
      for (const sched::Action &a : actions)
        for (const sched::Compute &part : a.parts())
          if (part.kind == sched::Kind::I || part.kind == sched::Kind::W)
            split.insert(layout.dagOf(part.stage, part.microbatch));
    int n = 0;
    for (auto [stage, mb] : split) {
      std::string h = "%b" + std::to_string(n++);
      s += "    " + h +
           " = transform.piper.match_nodes {PP = " + std::to_string(stage) +
           ", MB = " + std::to_string(mb) + ", PASS = \"B\"} in %root" + any;
      s += "    %s" + h.substr(1) + " = transform.piper.split_backward " + h +
           any;
    }
    bool perMicrobatch = std::string(c.schedule) == "dualpipe";
    for (const char *pass : {"F", "B", "UPD"}) {
      for (int stage = 0; stage < layout.dagStages; ++stage) {
        int groups = perMicrobatch && std::string(pass) != "UPD" ? c.m : 1;
        for (int mb = 0; mb < groups; ++mb) {
          std::string filter =
              "{PP = " + std::to_string(stage) +
              (perMicrobatch && groups > 1 ? ", MB = " + std::to_string(mb)
                                           : std::string()) +
              ", PASS = \"" + pass + "\"}";
          std::string stream = std::string("pp_") +
                               (std::string(pass) == "F" ? "f" : "b") +
                               layout.streamSuffix(stage, mb);
          std::string h = "%n" + std::to_string(n++);
          s += "    " + h + " = transform.piper.match_nodes " + filter +
               " in %root" + any;
          s += "    %x" + h.substr(1) + " = transform.piper.place " + h +
               " on @mesh {pp = " + std::to_string(layout.rank(stage, mb)) +
               "} stream \"" + stream + "\"" + any;
        }
      }
    }
    s += "    transform.piper.schedule \"" + std::string(c.schedule) +
         "\" in %root : !transform.any_op\n";
    return s;
  }

  /// tiny-mlp with one layer per stage, fused backward nodes, the
  /// schedule's strategy, partitioned and verified.
  OwningOpRef<ModuleOp> build(const Case &c, const sched::Schedule &schedule) {
    Layout layout = layoutOf(c);
    OwningOpRef<ModuleOp> module = StrategyPipeline::build(
        {"tiny-mlp", layout.dagStages, "pp=" + std::to_string(c.p),
         /*zero=*/0, /*layers=*/layout.dagStages, /*fuseBackward=*/true},
        strategy(c, schedule));
    if (!module)
      return {};
    func::FuncOp step;
    module->walk(
        [&](DAGOp dagOp) { step = dagOp->getParentOfType<func::FuncOp>(); });
    EXPECT_TRUE(step);
    if (!step)
      return {};
    if (failed(partitionIntoPrograms(step))) {
      ADD_FAILURE() << diagnostics;
      return {};
    }
    EXPECT_TRUE(succeeded(verifyPrograms(*module))) << diagnostics;
    EXPECT_TRUE(succeeded(mlir::verify(*module))) << diagnostics;
    return module;
  }
};

TEST_P(UnitCostSchedules, ProgramsReproduceTheClosedForm) {
  const Case &c = GetParam();
  auto schedule = sched::buildSchedule(c.schedule, c.p, c.m, c.v);
  ASSERT_TRUE(schedule) << schedule.error();
  auto library = sched::simulate(*schedule);
  ASSERT_TRUE(library) << library.error();
  if (c.closedForm >= 0)
    ASSERT_EQ(library->makespan, c.closedForm) << "the library disagrees";

  OwningOpRef<ModuleOp> module = build(c, *schedule);
  ASSERT_TRUE(module);
  ASSERT_TRUE(diagnostics.empty()) << diagnostics;
  SimulateOptions options;
  options.unitCosts = true;
  auto report =
      simulatePrograms(*module, options, [&]() { return module->emitError(); });
  ASSERT_TRUE(succeeded(report)) << diagnostics;

  EXPECT_EQ(report->stepTime, library->makespan);
  if (c.closedForm >= 0)
    EXPECT_EQ(report->stepTime, c.closedForm);
  ASSERT_EQ(int(report->devices.size()), c.p);
  for (const DeviceSummary &device : report->devices) {
    int rank = std::stoi(device.role.substr(device.role.find('=') + 1));
    SCOPED_TRACE(device.program);
    EXPECT_EQ(device.compute, library->busy[rank]);
    EXPECT_EQ(device.idle, library->bubble(rank));
    EXPECT_EQ(device.comm, 0);
  }
}

// schedules.md at unit costs (F = I = W = 1, B = 2, F&B = 3): GPipe and
// 1F1B 3m + 3(p-1); interleaved 3mv + 3(p-1); ZB-H1 3m + (p-1); DualPipeV
// 6m + 2R - 2; ZB-V only "~0" (compared with the library, which reaches
// 6m + p - 1 from m >= 2p - 1). Bidirectional DualPipe (3m + p - 2) cannot
// be partitioned yet: the loss of the microbatches entering at rank p-1 is
// computed on rank 0 and summed on rank p-1 by an accumulate node that
// partition finds without a transfer; the case below pins that.
const Case kCases[] = {
    {"gpipe", 4, 8, 1, 33},
    {"gpipe", 2, 3, 1, 12},
    {"1f1b", 4, 8, 1, 33},
    {"1f1b", 8, 16, 1, 69},
    {"1f1b", 3, 5, 1, 21},
    {"interleaved-1f1b", 4, 8, 2, 57},
    {"interleaved-1f1b", 4, 12, 3, 117},
    {"interleaved-1f1b", 2, 4, 2, 27},
    {"zb-h1", 4, 8, 1, 27},
    {"zb-h1", 8, 16, 1, 55},
    {"zb-h1", 3, 6, 1, 20},
    {"zb-v", 4, 8, 1, -1},
    {"zb-v", 3, 5, 1, -1},
    {"dualpipev", 4, 10, 1, 66},
    {"dualpipev", 3, 6, 1, 40},
    {"dualpipev", 2, 4, 1, 26},
    // Bidirectional: each rank holds a stage of each direction, so the
    // loss and gradient sums take copies from two ranks (place sends them).
    {"dualpipe", 4, 8, 1, 26},
    {"dualpipe", 2, 4, 1, -1},
};

INSTANTIATE_TEST_SUITE_P(Builtin, UnitCostSchedules,
                         ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<Case> &info) {
                           std::string name =
                               std::string(info.param.schedule) + "_p" +
                               std::to_string(info.param.p) + "_m" +
                               std::to_string(info.param.m) + "_v" +
                               std::to_string(info.param.v);
                           for (char &ch : name)
                             if (!isalnum(static_cast<unsigned char>(ch)))
                               ch = '_';
                           return name;
                         });

} // namespace
