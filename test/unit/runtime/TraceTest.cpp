//===- TraceTest.cpp - Tests for the runtime's Chrome-trace rendering -----===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "../../../runtime/lib/Trace.h"

#include "gtest/gtest.h"

using namespace piper::rt;

namespace {

TEST(RuntimeTraceTest, EscapesNames) {
  EXPECT_EQ(jsonEscape("F{PP=0,MB=1}"), "F{PP=0,MB=1}");
  EXPECT_EQ(jsonEscape("a\"b\\c\n"), "a\\\"b\\\\c\\u000a");
}

TEST(RuntimeTraceTest, OneRank) {
  TraceSpan launch{"F0", "compute", 0, 1.5, 10.25, ""};
  TraceSpan comm{"all_reduce", "comm", 1, 2, 3, "\"elements\":4"};
  std::string events = renderTraceEvents(3, {"compute", "dp"}, {launch, comm});
  EXPECT_EQ(
      wrapTraceEvents({events}),
      "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n"
      "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":3,\"args\":{\"name\":"
      "\"rank 3\"}},\n"
      "{\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":3,\"args\":{"
      "\"sort_index\":3}},\n"
      "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":3,\"tid\":0,\"args\":{"
      "\"name\":\"compute\"}},\n"
      "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":3,\"tid\":1,\"args\":{"
      "\"name\":\"dp\"}},\n"
      "{\"name\":\"F0\",\"cat\":\"compute\",\"ph\":\"X\",\"pid\":3,\"tid\":0,"
      "\"ts\":1.500,\"dur\":10.250},\n"
      "{\"name\":\"all_reduce\",\"cat\":\"comm\",\"ph\":\"X\",\"pid\":3,"
      "\"tid\":1,\"ts\":2.000,\"dur\":3.000,\"args\":{\"elements\":4}}\n"
      "]}\n");
}

TEST(RuntimeTraceTest, MergedSkipsEmptyRanks) {
  std::string a = renderTraceEvents(0, {}, {});
  std::string b = renderTraceEvents(1, {}, {});
  std::string merged = wrapTraceEvents({a, "", b});
  EXPECT_EQ(merged, "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n" + a +
                        ",\n" + b + "\n]}\n");
}

} // namespace
