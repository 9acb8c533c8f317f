//===- EnvironmentTest.cpp - Tests for runtime environment settings -------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "piper-rt/piper_rt.h"

#include "gtest/gtest.h"

#include <cstdlib>
#include <optional>
#include <string>

namespace {

constexpr const char *timeoutVariable = "PIPER_RT_TIMEOUT";

/// Saves PIPER_RT_TIMEOUT and restores it afterwards, so tests neither depend
/// on the caller's environment nor leak their settings into later tests when
/// the whole binary runs in one process.
class RuntimeTimeoutTest : public ::testing::Test {
protected:
  void SetUp() override {
    if (const char *value = std::getenv(timeoutVariable))
      saved = value;
    unsetenv(timeoutVariable);
    piper_rt_clear_error();
  }
  void TearDown() override {
    if (saved)
      setenv(timeoutVariable, saved->c_str(), /*overwrite=*/1);
    else
      unsetenv(timeoutVariable);
    piper_rt_clear_error();
  }
  void setTimeout(const char *value) {
    ASSERT_EQ(setenv(timeoutVariable, value, /*overwrite=*/1), 0);
  }

  std::optional<std::string> saved;
};

TEST_F(RuntimeTimeoutTest, DefaultIsFiveMinutes) {
  EXPECT_EQ(PIPER_RT_DEFAULT_COMM_TIMEOUT_SECONDS, 300.0);
}

TEST_F(RuntimeTimeoutTest, UnsetUsesDefault) {
  EXPECT_EQ(piper_rt_comm_timeout_seconds(), 300.0);
  EXPECT_EQ(piper_rt_last_status(), PIPER_RT_OK);
  EXPECT_STREQ(piper_rt_last_error(), "");
}

TEST_F(RuntimeTimeoutTest, EmptyUsesDefaultWithoutError) {
  setTimeout("");
  EXPECT_EQ(piper_rt_comm_timeout_seconds(), 300.0);
  EXPECT_EQ(piper_rt_last_status(), PIPER_RT_OK);
}

TEST_F(RuntimeTimeoutTest, ValidValues) {
  struct Case {
    const char *text;
    double seconds;
  } cases[] = {{"600", 600.0},
               {"2.5", 2.5},
               {" 42 ", 42.0},
               {"1e3", 1000.0},
               {"0.25", 0.25}};
  for (const Case &c : cases) {
    setTimeout(c.text);
    EXPECT_EQ(piper_rt_comm_timeout_seconds(), c.seconds)
        << "PIPER_RT_TIMEOUT='" << c.text << "'";
    EXPECT_EQ(piper_rt_last_status(), PIPER_RT_OK)
        << "PIPER_RT_TIMEOUT='" << c.text << "': " << piper_rt_last_error();
  }
}

TEST_F(RuntimeTimeoutTest, ValidValueLeavesEarlierErrorAlone) {
  PIPER_RT_ERROR(PIPER_RT_ERROR_COMMUNICATION, "earlier");
  setTimeout("60");
  EXPECT_EQ(piper_rt_comm_timeout_seconds(), 60.0);
  EXPECT_EQ(piper_rt_last_status(), PIPER_RT_ERROR_COMMUNICATION);
}

TEST_F(RuntimeTimeoutTest, NegativeUsesDefaultAndNamesValue) {
  setTimeout("-5");
  EXPECT_EQ(piper_rt_comm_timeout_seconds(), 300.0);
  EXPECT_EQ(piper_rt_last_status(), PIPER_RT_ERROR_INVALID_ARGUMENT);
  std::string text = piper_rt_last_error();
  EXPECT_EQ(text.rfind("piper-rt: invalid argument: PIPER_RT_TIMEOUT='-5' is "
                       "not a positive number of seconds; using the default "
                       "of 300 s (at ",
                       0),
            0u)
      << text;
  EXPECT_NE(text.find("Environment.cpp:"), std::string::npos) << text;
}

/// Values that are not a finite number > 0: each falls back to the default
/// and reports itself.
class RuntimeTimeoutInvalidTest
    : public RuntimeTimeoutTest,
      public ::testing::WithParamInterface<const char *> {};

TEST_P(RuntimeTimeoutInvalidTest, UsesDefaultAndReportsValue) {
  const char *value = GetParam();
  setTimeout(value);
  EXPECT_EQ(piper_rt_comm_timeout_seconds(), 300.0);
  EXPECT_EQ(piper_rt_last_status(), PIPER_RT_ERROR_INVALID_ARGUMENT);
  std::string quoted = std::string("PIPER_RT_TIMEOUT='") + value + "'";
  EXPECT_NE(std::string(piper_rt_last_error()).find(quoted), std::string::npos)
      << piper_rt_last_error();
}

INSTANTIATE_TEST_SUITE_P(RuntimeTimeout, RuntimeTimeoutInvalidTest,
                         ::testing::Values("abc", "10s", "0", "-0", "-5",
                                           "-0.5", " ", "inf", "nan", "1e999",
                                           "1e-999", "5 6", "1e-9", "0.001",
                                           "1e7"));

} // namespace
