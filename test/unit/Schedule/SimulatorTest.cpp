//===- SimulatorTest.cpp - Event simulation under non-unit costs ----------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "piper/Schedule/Simulator.h"
#include "piper/Schedule/Builders.h"

#include "TestUtil.h"

using namespace piper::sched;
using namespace piper::sched::test;

namespace {

TEST(SimulatorTest, TwoStageTimesByHand) {
  // One microbatch through two stages, F = 1, I = 2, W = 3 (B = 5).
  Schedule s;
  s.numRanks = 2;
  s.numStages = 2;
  s.numMicrobatches = 1;
  s.stageToRank = {0, 1};
  s.ranks = {{Action::f(0, 0), Action::b(0, 0)},
             {Action::f(1, 0), Action::i(1, 0), Action::w(1, 0)}};
  Costs c;
  c.f = 1;
  c.i = 2;
  c.w = 3;
  ASSERT_RESULT(t, simulate(s, c));
  // 0F0 [0,1]; 1F0 [1,2]; 1I0 [2,4]; 1W0 [4,7]; 0B0 waits for 1I0 only:
  // [4,9].
  EXPECT_EQ(t->times[0][0].start, 0);
  EXPECT_EQ(t->times[1][0].start, 1);
  EXPECT_EQ(t->times[1][1].end, 4);
  EXPECT_EQ(t->times[1][2].end, 7);
  EXPECT_EQ(t->times[0][1].start, 4);
  EXPECT_EQ(t->times[0][1].end, 9);
  EXPECT_EQ(t->makespan, 9);
  EXPECT_EQ(t->busy[0], 6);
  EXPECT_EQ(t->bubble(1), 3);
}

TEST(SimulatorTest, OneFOneBWithUnequalCosts) {
  // Uniform stages: 1F1B takes (m + p - 1)(F + B) whatever F and B are.
  Costs c;
  c.f = 1.5;
  c.i = 2;
  c.w = 0.5;
  for (auto [p, m] : {std::pair{2, 2}, {4, 8}, {5, 7}}) {
    ASSERT_RESULT(s, build1F1B(p, m));
    ASSERT_RESULT(t, simulate(*s, c));
    EXPECT_DOUBLE_EQ(t->makespan, (m + p - 1) * 4.0) << p << " " << m;
  }
}

TEST(SimulatorTest, OverlapCostIsConfigurable) {
  // One rank holding both stages of a 2-stage chain, two microbatches; the
  // pair runs F of microbatch 1 with the backward of microbatch 0.
  Schedule s;
  s.numRanks = 1;
  s.numStages = 2;
  s.numMicrobatches = 2;
  s.stageToRank = {0, 0};
  s.ranks = {{Action::f(0, 0), Action::f(1, 0), Action::b(1, 0),
              Action::overlap(0, 1, 0, 0), Action::f(1, 1), Action::b(1, 1),
              Action::b(0, 1)}};
  ASSERT_RESULT(plain, simulate(s));
  // Default F&B = F + B = 3: 1 + 1 + 2 + 3 + 1 + 2 + 2.
  EXPECT_EQ(plain->makespan, 12);
  Costs c;
  c.overlapFB = 2;
  ASSERT_RESULT(overlapped, simulate(s, c));
  EXPECT_EQ(overlapped->makespan, 11);
  EXPECT_EQ(overlapped->times[0][3].start, 4);
  EXPECT_EQ(overlapped->times[0][3].end, 6);
}

TEST(SimulatorTest, ZeroBubbleBeatsOneFOneB) {
  // With a split backward ZB-H1 saves 2W per ramp step over 1F1B.
  ASSERT_RESULT(a, build1F1B(4, 8));
  ASSERT_RESULT(b, buildZBH1(4, 8));
  ASSERT_RESULT(ta, simulate(*a));
  ASSERT_RESULT(tb, simulate(*b));
  EXPECT_EQ(ta->makespan - tb->makespan, 3 * 2);
}

TEST(SimulatorTest, SimulateRejectsInvalid) {
  Schedule s;
  s.numRanks = 1;
  s.numStages = 1;
  s.numMicrobatches = 1;
  s.stageToRank = {0};
  s.ranks = {{Action::f(0, 0)}};
  auto t = simulate(s);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.error(),
            "stage 0 is missing microbatch 0: no backward (0B0, or 0I0 with "
            "0W0)");
}

} // namespace
