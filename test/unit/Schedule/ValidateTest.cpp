//===- ValidateTest.cpp - Invalid schedules and their diagnostics ---------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "piper/Schedule/Builders.h"
#include "piper/Schedule/Simulator.h"

#include "TestUtil.h"

using namespace piper::sched;
using namespace piper::sched::test;

namespace {

/// p stages on p ranks, empty lists.
Schedule linear(int p, int m) {
  Schedule s;
  s.name = "hand";
  s.numRanks = p;
  s.numStages = p;
  s.numMicrobatches = m;
  for (int r = 0; r < p; ++r)
    s.stageToRank.push_back(r);
  s.ranks.resize(p);
  return s;
}

std::string errorOf(const Schedule &s) {
  Status st = validate(s);
  EXPECT_FALSE(st.ok());
  return st.error();
}

TEST(ValidateTest, AcceptsHandWrittenOneFOneB) {
  Schedule s = linear(2, 2);
  s.ranks[0] = {Action::f(0, 0), Action::f(0, 1), Action::b(0, 0),
                Action::b(0, 1)};
  s.ranks[1] = {Action::f(1, 0), Action::i(1, 0), Action::f(1, 1),
                Action::i(1, 1), Action::w(1, 0), Action::w(1, 1)};
  Status st = validate(s);
  EXPECT_TRUE(st.ok()) << st.error();
}

TEST(ValidateTest, RejectsCrossRankCycle) {
  // Rank 1 wants microbatch 1 before microbatch 0, while rank 0 will only
  // send microbatch 1 after the backward of microbatch 0 came back.
  Schedule s = linear(2, 2);
  s.ranks[0] = {Action::f(0, 0), Action::b(0, 0), Action::f(0, 1),
                Action::b(0, 1)};
  s.ranks[1] = {Action::f(1, 1), Action::f(1, 0), Action::b(1, 0),
                Action::b(1, 1)};
  EXPECT_EQ(errorOf(s),
            "deadlock: the per-rank orders wait on each other in a cycle: "
            "rank 0 is stuck at 0B0 (action 1), waiting for 1B0 (rank 1, "
            "action 2); rank 1 is stuck at 1F1 (action 0), waiting for 0F1 "
            "(rank 0, action 2)");
}

TEST(ValidateTest, RejectsBackwardBeforeForwardOnOneRank) {
  Schedule s = linear(1, 1);
  s.ranks[0] = {Action::b(0, 0), Action::f(0, 0)};
  EXPECT_EQ(errorOf(s),
            "deadlock: the per-rank orders wait on each other in a cycle: "
            "rank 0 is stuck at 0B0 (action 0), waiting for 0F0 (rank 0, "
            "action 1)");
}

TEST(ValidateTest, RejectsMissingMicrobatches) {
  ASSERT_RESULT(s, build1F1B(2, 4));
  // Drop microbatches 2 and 3 from stage 1 altogether.
  auto &list = s->ranks[1];
  list.erase(
      std::remove_if(list.begin(), list.end(),
                     [](const Action &a) { return a.first.microbatch >= 2; }),
      list.end());
  EXPECT_EQ(errorOf(*s), "stage 1 is missing microbatches 2, 3: no 1F2, 1F3");
}

TEST(ValidateTest, RejectsMissingBackward) {
  Schedule s = linear(1, 2);
  s.ranks[0] = {Action::f(0, 0), Action::f(0, 1), Action::b(0, 0)};
  EXPECT_EQ(errorOf(s), "stage 0 is missing microbatch 1: no backward (0B1, "
                        "or 0I1 with 0W1)");
}

TEST(ValidateTest, RejectsWeightBeforeItsInputGradient) {
  Schedule s = linear(1, 1);
  s.ranks[0] = {Action::f(0, 0), Action::w(0, 0), Action::i(0, 0)};
  EXPECT_EQ(errorOf(s), "rank 0 runs 0W0 (action 1) before its 0I0 (action 2)");
}

TEST(ValidateTest, RejectsInputGradientWithoutWeight) {
  Schedule s = linear(1, 1);
  s.ranks[0] = {Action::f(0, 0), Action::i(0, 0)};
  EXPECT_EQ(errorOf(s), "0I0 has no 0W0: the weight gradient of stage 0, "
                        "microbatch 0 is never computed");
}

TEST(ValidateTest, RejectsFullBackwardPlusWeight) {
  Schedule s = linear(1, 1);
  s.ranks[0] = {Action::f(0, 0), Action::b(0, 0), Action::w(0, 0)};
  EXPECT_EQ(errorOf(s), "0B0 and 0W0 both compute the weight gradient of "
                        "stage 0, microbatch 0");
}

TEST(ValidateTest, RejectsDuplicates) {
  Schedule s = linear(1, 1);
  s.ranks[0] = {Action::f(0, 0), Action::b(0, 0), Action::f(0, 0)};
  EXPECT_EQ(errorOf(s), "0F0 appears twice: rank 0 action 0, rank 0 action 2");
}

TEST(ValidateTest, RejectsActionOnWrongRank) {
  Schedule s = linear(2, 1);
  s.ranks[0] = {Action::f(0, 0), Action::f(1, 0)};
  EXPECT_EQ(errorOf(s), "rank 0, action 1 (1F0): stage 1 is placed on rank 1");
}

TEST(ValidateTest, RejectsOutOfRangeMicrobatch) {
  Schedule s = linear(1, 2);
  s.ranks[0] = {Action::f(0, 7)};
  EXPECT_EQ(errorOf(s), "rank 0, action 0 (0F7): microbatch 7 does not exist "
                        "(the schedule has 2 microbatches)");
}

TEST(ValidateTest, AllBuiltinsValidate) {
  for (std::string_view name : builtinScheduleNames()) {
    ASSERT_RESULT(s, buildSchedule(name, 4, 8));
    Status st = validate(*s);
    EXPECT_TRUE(st.ok()) << name << ": " << st.error();
  }
}

} // namespace
