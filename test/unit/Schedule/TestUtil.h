//===- TestUtil.h - Helpers for the schedule unit tests ---------*- C++ -*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_TEST_UNIT_SCHEDULE_TESTUTIL_H
#define PIPER_TEST_UNIT_SCHEDULE_TESTUTIL_H

#include "piper/Schedule/Schedule.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

namespace piper::sched::test {

/// Unwraps a Result, failing the test with its message if it is an error.
#define ASSERT_RESULT(var, expr)                                               \
  auto var = (expr);                                                           \
  ASSERT_TRUE(var.ok()) << var.error()

inline std::string readInput(const std::string &name) {
  std::ifstream in(std::string(PIPER_SCHEDULE_INPUTS) + "/" + name);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// Per-rank action spellings, for readable comparisons.
inline std::vector<std::vector<std::string>> spell(const Schedule &s) {
  std::vector<std::vector<std::string>> out;
  for (const auto &list : s.ranks) {
    out.emplace_back();
    for (const Action &a : list)
      out.back().push_back(a.str());
  }
  return out;
}

} // namespace piper::sched::test

#endif // PIPER_TEST_UNIT_SCHEDULE_TESTUTIL_H
