//===- PyTorchCSVTest.cpp - PyTorch pipelining CSV import and export ------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "piper/Schedule/PyTorchCSV.h"
#include "piper/Schedule/Builders.h"
#include "piper/Schedule/Simulator.h"

#include "TestUtil.h"

using namespace piper::sched;
using namespace piper::sched::test;

namespace {

/// The fixture text with idle (empty) cells removed, done by hand here so
/// that the expectation does not come from the code under test.
std::string withoutIdleCells(const std::string &text) {
  std::string out, line;
  std::istringstream in(text);
  while (std::getline(in, line)) {
    std::string row, cell;
    std::istringstream cells(line);
    while (std::getline(cells, cell, ','))
      if (!cell.empty())
        row += (row.empty() ? "" : ",") + cell;
    out += row + "\n";
  }
  return out;
}

TEST(PyTorchCSVTest, DualPipeVFixtureImportsAndExports) {
  std::string text = readInput("dualpipev_4rank_10mb.csv");
  ASSERT_FALSE(text.empty());
  bool legacy = true;
  ASSERT_RESULT(s, readPyTorchCSV(text, &legacy));
  EXPECT_FALSE(legacy);
  EXPECT_EQ(s->numRanks, 4);
  EXPECT_EQ(s->numStages, 8);
  EXPECT_EQ(s->numMicrobatches, 10);
  EXPECT_EQ(s->stageToRank, (std::vector<int>{0, 1, 2, 3, 3, 2, 1, 0}));
  Status st = validate(*s);
  ASSERT_TRUE(st.ok()) << st.error();
  ASSERT_RESULT(out, writePyTorchCSV(*s));
  EXPECT_EQ(*out, withoutIdleCells(text));
}

TEST(PyTorchCSVTest, ZB1PFixtureImportsAndExports) {
  std::string text = readInput("zb1p_2rank_2stagep_compute.csv");
  ASSERT_FALSE(text.empty());
  bool legacy = false;
  ASSERT_RESULT(s, readPyTorchCSV(text, &legacy));
  EXPECT_TRUE(legacy);
  EXPECT_EQ(s->numRanks, 2);
  EXPECT_EQ(s->numStages, 4);
  EXPECT_EQ(s->numMicrobatches, 8);
  EXPECT_EQ(s->stageToRank, (std::vector<int>{0, 1, 0, 1}));
  // `2B0` followed by `2W0` is the input gradient only.
  EXPECT_EQ(s->ranks[0][4], Action::i(2, 0));
  EXPECT_EQ(s->ranks[0][5], Action::w(2, 0));
  Status st = validate(*s);
  ASSERT_TRUE(st.ok()) << st.error();
  CSVWriteOptions old;
  old.bForInput = true;
  ASSERT_RESULT(out, writePyTorchCSV(*s, old));
  EXPECT_EQ(*out, withoutIdleCells(text));
  // In today's spelling the same actions read back identically.
  ASSERT_RESULT(modern, writePyTorchCSV(*s));
  EXPECT_NE(modern->find("2I0,2W0"), std::string::npos);
  ASSERT_RESULT(back, readPyTorchCSV(*modern));
  EXPECT_EQ(spell(*back), spell(*s));
}

TEST(PyTorchCSVTest, BuilderReproducesDualPipeVFixture) {
  ASSERT_RESULT(fixture, readPyTorchCSV(readInput("dualpipev_4rank_10mb.csv")));
  ASSERT_RESULT(ours, buildDualPipeV(4, 10));
  EXPECT_EQ(spell(*ours), spell(*fixture));
  ASSERT_RESULT(tf, simulate(*fixture));
  ASSERT_RESULT(to, simulate(*ours));
  EXPECT_LE(to->makespan, tf->makespan);
  // 2m(F+B) + (R-1)(F&B+B-3W) at unit costs, R = 4, m = 10.
  EXPECT_EQ(tf->makespan, 66);
}

TEST(PyTorchCSVTest, BuiltinsRoundTrip) {
  for (std::string_view name : builtinScheduleNames()) {
    if (name == "dualpipe")
      continue;
    ASSERT_RESULT(s, buildSchedule(name, 4, 8));
    ASSERT_RESULT(text, writePyTorchCSV(*s));
    ASSERT_RESULT(back, readPyTorchCSV(*text));
    EXPECT_EQ(spell(*back), spell(*s)) << name;
    EXPECT_EQ(back->stageToRank, s->stageToRank) << name;
  }
}

TEST(PyTorchCSVTest, BidirectionalDualPipeCannotBeWritten) {
  ASSERT_RESULT(s, buildDualPipe(4, 8));
  auto text = writePyTorchCSV(*s);
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(text.error(), "PyTorch's schedule CSV has one pipeline; "
                          "'dualpipe' has 2 chains (a bidirectional schedule), "
                          "which it cannot express");
}

TEST(PyTorchCSVTest, IdleCellsAndSpacesAreSkipped) {
  ASSERT_RESULT(s, readPyTorchCSV("0F0,, 0B0 \r\n,1F0,1B0\n\n"));
  EXPECT_EQ(spell(*s), (std::vector<std::vector<std::string>>{{"0F0", "0B0"},
                                                              {"1F0", "1B0"}}));
}

TEST(PyTorchCSVTest, RejectsCommunicationActions) {
  auto s = readPyTorchCSV("0F0,0SEND_F0\n");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error(), "line 1, cell 2: bad action '0SEND_F0': unknown "
                       "computation 'S'; expected F, I, W or B (communication "
                       "actions are not supported, only the compute-only "
                       "form)");
}

TEST(PyTorchCSVTest, RejectsStageOnTwoRanks) {
  auto s = readPyTorchCSV("0F0\n1F0,0B0\n");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error(), "line 2, cell 2: stage 0 already appears on rank 0; a "
                       "stage belongs to one rank");
}

TEST(PyTorchCSVTest, RejectsMalformedOverlap) {
  auto s = readPyTorchCSV("(0B1;1F0)OVERLAP_F_B\n");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error(), "line 1, cell 1: bad action '(0B1;1F0)OVERLAP_F_B': "
                       "OVERLAP_F_B pairs a forward (F) with a full backward "
                       "(B), in that order");
}

} // namespace
