//===- PicturesTest.cpp - Text grid, Chrome trace and SVG -----------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "piper/Schedule/Pictures.h"
#include "piper/Schedule/Builders.h"

#include "TestUtil.h"

using namespace piper::sched;
using namespace piper::sched::test;

namespace {

size_t occurrences(const std::string &text, const std::string &what) {
  size_t n = 0;
  for (size_t pos = text.find(what); pos != std::string::npos;
       pos = text.find(what, pos + 1))
    ++n;
  return n;
}

TEST(PicturesTest, GridOfSmallOneFOneB) {
  // 1F1B, p = 2, m = 2 at unit costs, timed by hand: rank 0 runs 0F0 [0,1),
  // 0F1 [1,2), waits for 1B0, 0B0 [4,6), waits for 1B1, 0B1 [7,9); rank 1
  // runs 1F0 [1,2), 1B0 [2,4), 1F1 [4,5), 1B1 [5,7). Columns are 4 wide;
  // a 2-slot B is its name and 4 dashes.
  ASSERT_RESULT(s, build1F1B(2, 2));
  ASSERT_RESULT(t, simulate(*s));
  EXPECT_EQ(renderGrid(*s, *t), "rank 0 |0F0 0F1 .   .   0B0---- .   0B1----\n"
                                "rank 1 |.   1F0 1B0---- 1F1 1B1---- .   .\n");
}

TEST(PicturesTest, GridShowsOverlappedPairs) {
  ASSERT_RESULT(s, buildDualPipeV(2, 4));
  ASSERT_RESULT(t, simulate(*s));
  std::string grid = renderGrid(*s, *t);
  // At unit costs a pair spans 3 four-wide columns: 7 characters of name,
  // 4 dashes, a blank. DualPipeV's steady phase starts on rank 0 with the
  // forward of stage 0 on microbatch 3 and the backward of stage 3 on 1.
  EXPECT_NE(grid.find(" 0F3;3B1---- "), std::string::npos) << grid;
  EXPECT_EQ(occurrences(grid, "\n"), 2u);
}

TEST(PicturesTest, ChromeTraceHasOneEventPerAction) {
  ASSERT_RESULT(s, buildZBV(2, 4));
  ASSERT_RESULT(t, simulate(*s));
  std::string json = renderChromeTrace(*s, *t);
  EXPECT_EQ(occurrences(json, "\"ph\":\"X\""), s->size());
  EXPECT_EQ(occurrences(json, "\"thread_name\""), 2u);
  EXPECT_NE(json.find("{\"name\":\"0F0\",\"cat\":\"F\",\"ph\":\"X\",\"pid\":0,"
                      "\"tid\":0,\"ts\":0,\"dur\":1000,"),
            std::string::npos);
  EXPECT_EQ(json.substr(0, 18), "{\"displayTimeUnit\"");
  EXPECT_EQ(json.substr(json.size() - 4), "\n]}\n");
}

TEST(PicturesTest, SVGHasOneBoxPerAction) {
  // Rank 1 of 1F1B (p = 2, m = 3) ends with 1F2 [7,8) and 1B2 [8,10).
  ASSERT_RESULT(s, build1F1B(2, 3));
  ASSERT_RESULT(t, simulate(*s));
  std::string svg = renderSVG(*s, *t);
  EXPECT_EQ(svg.substr(0, 4), "<svg");
  EXPECT_EQ(occurrences(svg, "<g><title>"), s->size());
  EXPECT_NE(svg.find("<title>1B2 [8, 10)</title>"), std::string::npos) << svg;
  EXPECT_EQ(svg.substr(svg.size() - 7), "</svg>\n");
}

} // namespace
