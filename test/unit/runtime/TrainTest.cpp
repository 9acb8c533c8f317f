//===- TrainTest.cpp - Defaults, schedules, clipping, decay groups --------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// piper-rt/train.h against values written out by hand: the defaults every
// tool uses are pinned here, the schedules against their closed forms, the
// clip factor against torch.nn.utils.clip_grad_norm_'s formula.
//
//===----------------------------------------------------------------------===//

#include "piper-rt/train.h"

#include "gtest/gtest.h"

#include <cmath>

using namespace piper::train;

namespace {

TEST(TrainDefaults, AreAdamWAsPyTorch) {
  EXPECT_STREQ(kDefaultOptimizer, "adamw");
  EXPECT_EQ(kDefaultLr, 1e-3);
  EXPECT_EQ(kDefaultBeta1, 0.9);
  EXPECT_EQ(kDefaultBeta2, 0.999);
  EXPECT_EQ(kDefaultEps, 1e-8);
  EXPECT_EQ(kDefaultMomentum, 0.0);
  EXPECT_EQ(defaultWeightDecay("adamw"), 0.01);
  EXPECT_EQ(defaultWeightDecay("sgd"), 0.0);
  EXPECT_STREQ(kDefaultNoDecay, "rank<2");
  LrSchedule s;
  EXPECT_EQ(s.lr, 1e-3);
  EXPECT_EQ(s.kind, ScheduleKind::Constant);
  EXPECT_EQ(s.warmupSteps, 0);
}

TEST(LrSchedule, WarmupIsLinearFromZero) {
  LrSchedule s;
  s.lr = 0.4;
  s.warmupSteps = 4;
  EXPECT_DOUBLE_EQ(lrAt(s, 1), 0.1);
  EXPECT_DOUBLE_EQ(lrAt(s, 2), 0.2);
  EXPECT_DOUBLE_EQ(lrAt(s, 4), 0.4);
  EXPECT_DOUBLE_EQ(lrAt(s, 5), 0.4); // constant after warmup
  EXPECT_DOUBLE_EQ(lrAt(s, 1000), 0.4);
}

TEST(LrSchedule, CosineDecaysToTheMinimumAtDecaySteps) {
  LrSchedule s;
  s.lr = 1.0;
  s.minLr = 0.1;
  s.warmupSteps = 2;
  s.decaySteps = 12;
  s.kind = ScheduleKind::Cosine;
  EXPECT_DOUBLE_EQ(lrAt(s, 2), 1.0);
  // Halfway (step 7 of the 10 decay steps after warmup): the mean.
  EXPECT_DOUBLE_EQ(lrAt(s, 7), 0.55);
  EXPECT_DOUBLE_EQ(lrAt(s, 4), 0.1 + 0.9 * 0.5 * (1 + std::cos(M_PI * 0.2)));
  EXPECT_DOUBLE_EQ(lrAt(s, 12), 0.1);
  EXPECT_DOUBLE_EQ(lrAt(s, 50), 0.1); // stays at the minimum
}

TEST(LrSchedule, LinearDecay) {
  LrSchedule s;
  s.lr = 1.0;
  s.minLr = 0.0;
  s.decaySteps = 10;
  s.kind = ScheduleKind::Linear;
  EXPECT_DOUBLE_EQ(lrAt(s, 1), 0.9);
  EXPECT_DOUBLE_EQ(lrAt(s, 5), 0.5);
  EXPECT_DOUBLE_EQ(lrAt(s, 10), 0.0);
}

TEST(LrSchedule, ParsesAndChecks) {
  ScheduleKind kind;
  EXPECT_TRUE(parseScheduleKind("cosine", kind));
  EXPECT_EQ(kind, ScheduleKind::Cosine);
  EXPECT_STREQ(scheduleKindName(kind), "cosine");
  EXPECT_FALSE(parseScheduleKind("step", kind));
  LrSchedule s;
  EXPECT_EQ(checkSchedule(s), "");
  s.lr = -1;
  EXPECT_EQ(checkSchedule(s),
            "the learning rate must be finite and non-negative");
  s.lr = 1;
  s.warmupSteps = -2;
  EXPECT_EQ(checkSchedule(s), "the warmup step count must be non-negative");
}

TEST(ClipCoefficient, IsTorchsFormulaClampedToOne) {
  // norm 5: max 1 gives 1 / (5 + 1e-6).
  EXPECT_DOUBLE_EQ(clipCoefficient(25.0, 1.0), 1.0 / (5.0 + 1e-6));
  EXPECT_EQ(clipCoefficient(25.0, 10.0), 1.0); // below the bound
  EXPECT_EQ(clipCoefficient(25.0, 0.0), 1.0);  // off
  EXPECT_EQ(clipCoefficient(0.0, 1.0), 1.0);
}

TEST(DecayRule, DefaultExcludesBiasesAndNorms) {
  DecayRule rule;
  std::string error;
  ASSERT_TRUE(parseDecayRule("rank<2", rule, error));
  EXPECT_TRUE(decays(rule, "layers.0.attn.wq", 2));
  EXPECT_FALSE(decays(rule, "layers.0.attn_norm.weight", 1));
  EXPECT_FALSE(decays(rule, "fc1.bias", 1));
  EXPECT_TRUE(decays(rule, "experts.w_up", 3));
  ASSERT_TRUE(parseDecayRule("none", rule, error));
  EXPECT_TRUE(decays(rule, "fc1.bias", 1));
  ASSERT_TRUE(parseDecayRule("all", rule, error));
  EXPECT_FALSE(decays(rule, "fc1.weight", 2));
}

TEST(DecayRule, NameGlobs) {
  DecayRule rule;
  std::string error;
  ASSERT_TRUE(parseDecayRule("*.bias,*norm*,embed.?eight", rule, error));
  EXPECT_FALSE(decays(rule, "fc1.bias", 1));
  EXPECT_FALSE(decays(rule, "layers.3.mlp_norm.weight", 1));
  EXPECT_FALSE(decays(rule, "embed.weight", 2));
  EXPECT_TRUE(decays(rule, "fc1.weight", 2));
  EXPECT_TRUE(decays(rule, "lm_head.weight", 2));
  EXPECT_FALSE(parseDecayRule("*.bias,,x", rule, error));
  EXPECT_EQ(error, "no-decay rule '*.bias,,x' has an empty name pattern; "
                   "expected rank<2, none, all or a comma-separated list of "
                   "globs");
}

TEST(Glob, Matches) {
  EXPECT_TRUE(globMatch("*", ""));
  EXPECT_TRUE(globMatch("a*b*c", "aXXbYYc"));
  EXPECT_FALSE(globMatch("a*b*c", "aXXbYY"));
  EXPECT_TRUE(globMatch("?", "x"));
  EXPECT_FALSE(globMatch("?", ""));
  EXPECT_TRUE(globMatch("*.bias", "a.b.bias"));
}

} // namespace
