//===- VersionTest.cpp - Tests for piper_rt_version -----------------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "piper-rt/piper_rt.h"

#include "gtest/gtest.h"

#include <cstdio>
#include <cstring>

// test/unit/runtime/CMakeLists.txt passes the project version here.
#ifndef PIPER_RT_VERSION
#error "PIPER_RT_VERSION must be defined by test/unit/runtime/CMakeLists.txt"
#endif

namespace {

TEST(RuntimeVersionTest, MatchesProjectVersion) {
  ASSERT_NE(piper_rt_version(), nullptr);
  EXPECT_STREQ(piper_rt_version(), PIPER_RT_VERSION);
}

TEST(RuntimeVersionTest, IsMajorMinorPatch) {
  unsigned major = 0, minor = 0, patch = 0;
  int consumed = 0;
  const char *version = piper_rt_version();
  ASSERT_EQ(
      std::sscanf(version, "%u.%u.%u%n", &major, &minor, &patch, &consumed), 3)
      << "version: '" << version << "'";
  EXPECT_EQ(static_cast<size_t>(consumed), std::strlen(version))
      << "trailing text in version '" << version << "'";
}

TEST(RuntimeVersionTest, IsStaticString) {
  // Callers may keep the pointer for the life of the process.
  EXPECT_EQ(piper_rt_version(), piper_rt_version());
}

} // namespace
