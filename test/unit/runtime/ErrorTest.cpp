//===- ErrorTest.cpp - Tests for runtime status codes and last error ------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "piper-rt/piper_rt.h"

#include "gtest/gtest.h"

#include <atomic>
#include <climits>
#include <cstring>
#include <set>
#include <string>
#include <thread>

extern "C" {
// Defined in CHeaderTest.c, which is compiled as C.
const char *piperRtTestCFile(void);
piper_rt_status piperRtTestRaiseFromC(int *line);
const char *piperRtTestStatusStringFromC(int value);
}

namespace {

/// Every status the header declares, in order. Update with the enum.
const piper_rt_status allStatuses[] = {
    PIPER_RT_OK,
    PIPER_RT_ERROR_INVALID_ARGUMENT,
    PIPER_RT_ERROR_OUT_OF_MEMORY,
    PIPER_RT_ERROR_TIMEOUT,
    PIPER_RT_ERROR_COMMUNICATION,
    PIPER_RT_ERROR_UNAVAILABLE,
    PIPER_RT_ERROR_INTERNAL,
};

/// The location suffix PIPER_RT_ERROR appends for a call on `line` of this
/// file.
std::string locationOf(int line) {
  return " (at " + std::string(__FILE__) + ":" + std::to_string(line) + ")";
}

bool endsWith(const std::string &text, const std::string &suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

/// Returns whether `text` is well-formed UTF-8 (enough for the two-byte
/// sequences these tests use).
bool isValidUtf8(const std::string &text) {
  for (size_t i = 0; i < text.size();) {
    unsigned char lead = static_cast<unsigned char>(text[i]);
    size_t length = lead < 0x80             ? 1
                    : (lead & 0xE0) == 0xC0 ? 2
                    : (lead & 0xF0) == 0xE0 ? 3
                    : (lead & 0xF8) == 0xF0 ? 4
                                            : 0;
    if (length == 0 || i + length > text.size())
      return false;
    for (size_t j = 1; j < length; ++j)
      if ((static_cast<unsigned char>(text[i + j]) & 0xC0) != 0x80)
        return false;
    i += length;
  }
  return true;
}

//===----------------------------------------------------------------------===//
// Status strings
//===----------------------------------------------------------------------===//

TEST(RuntimeStatusTest, EveryStatusHasDistinctNonEmptyString) {
  std::set<std::string> seen;
  for (piper_rt_status status : allStatuses) {
    const char *text = piper_rt_status_string(status);
    ASSERT_NE(text, nullptr) << "status " << status;
    EXPECT_STRNE(text, "") << "status " << status;
    EXPECT_STRNE(text, "unknown status") << "status " << status;
    EXPECT_TRUE(seen.insert(text).second)
        << "status " << status << " repeats '" << text << "'";
  }
  EXPECT_EQ(seen.size(), sizeof(allStatuses) / sizeof(allStatuses[0]));
}

TEST(RuntimeStatusTest, KnownStrings) {
  EXPECT_STREQ(piper_rt_status_string(PIPER_RT_OK), "ok");
  EXPECT_STREQ(piper_rt_status_string(PIPER_RT_ERROR_INVALID_ARGUMENT),
               "invalid argument");
  EXPECT_STREQ(piper_rt_status_string(PIPER_RT_ERROR_TIMEOUT), "timeout");
}

TEST(RuntimeStatusTest, OkIsZero) {
  // Callers test `if (status)`; the ABI fixes OK at 0.
  EXPECT_EQ(static_cast<int>(PIPER_RT_OK), 0);
}

TEST(RuntimeStatusTest, OutOfRangeIsUnknown) {
  // C++ may only cast values within the enum's range (0..INT32_MAX thanks to
  // PIPER_RT_STATUS_MAX_ENUM); C callers can pass any int, negatives too.
  for (int value : {7, 1000, INT_MAX}) {
    EXPECT_STREQ(piper_rt_status_string(static_cast<piper_rt_status>(value)),
                 "unknown status")
        << "value " << value;
  }
  for (int value : {-1, 7, 1000, INT_MAX, INT_MIN})
    EXPECT_STREQ(piperRtTestStatusStringFromC(value), "unknown status")
        << "value " << value;
}

TEST(RuntimeStatusTest, EnumIs32Bits) {
  EXPECT_EQ(sizeof(piper_rt_status), 4u);
}

//===----------------------------------------------------------------------===//
// Last error
//===----------------------------------------------------------------------===//

/// Starts and ends every test with no error, since gtest runs all tests of
/// the binary on one thread when not run through ctest.
class RuntimeErrorTest : public ::testing::Test {
protected:
  void SetUp() override { piper_rt_clear_error(); }
  void TearDown() override { piper_rt_clear_error(); }
};

TEST_F(RuntimeErrorTest, NewThreadHasNoError) {
  std::string text = "not read";
  piper_rt_status status = PIPER_RT_ERROR_INTERNAL;
  std::thread thread([&] {
    text = piper_rt_last_error();
    status = piper_rt_last_status();
  });
  thread.join();
  EXPECT_EQ(text, "");
  EXPECT_EQ(status, PIPER_RT_OK);
}

TEST_F(RuntimeErrorTest, FormatsStatusMessageAndLocation) {
  // The call stays on one line: for a macro call spanning lines, which line
  // __LINE__ names differs between compilers.
  constexpr piper_rt_status code = PIPER_RT_ERROR_INVALID_ARGUMENT;
  int line = __LINE__ + 1;
  auto returned = PIPER_RT_ERROR(code, "bad size %d for '%s'", -3, "w0");
  EXPECT_EQ(returned, PIPER_RT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(piper_rt_last_status(), PIPER_RT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(std::string(piper_rt_last_error()),
            "piper-rt: invalid argument: bad size -3 for 'w0'" +
                locationOf(line));
}

TEST_F(RuntimeErrorTest, ExplicitFileAndLine) {
  piper_rt_set_error(PIPER_RT_ERROR_COMMUNICATION, "nccl.cpp", 12,
                     "rank %d left", 3);
  EXPECT_STREQ(piper_rt_last_error(),
               "piper-rt: communication error: rank 3 left (at nccl.cpp:12)");
}

TEST_F(RuntimeErrorTest, NullFileOmitsLocation) {
  piper_rt_set_error(PIPER_RT_ERROR_UNAVAILABLE, nullptr, 0, "no GPU");
  EXPECT_STREQ(piper_rt_last_error(), "piper-rt: unavailable: no GPU");
}

TEST_F(RuntimeErrorTest, EmptyOrNullMessage) {
  piper_rt_set_error(PIPER_RT_ERROR_INTERNAL, "a.cpp", 1, nullptr);
  EXPECT_STREQ(piper_rt_last_error(), "piper-rt: internal error (at a.cpp:1)");
  EXPECT_EQ(piper_rt_last_status(), PIPER_RT_ERROR_INTERNAL);
  piper_rt_set_error(PIPER_RT_ERROR_TIMEOUT, "b.cpp", 2, "%s", "");
  EXPECT_STREQ(piper_rt_last_error(), "piper-rt: timeout (at b.cpp:2)");
}

TEST_F(RuntimeErrorTest, OutOfRangeCodeStillRecorded) {
  auto bogus = static_cast<piper_rt_status>(99);
  EXPECT_EQ(piper_rt_set_error(bogus, "c.cpp", 3, "odd"), bogus);
  EXPECT_EQ(piper_rt_last_status(), bogus);
  EXPECT_STREQ(piper_rt_last_error(),
               "piper-rt: unknown status: odd (at c.cpp:3)");
}

TEST_F(RuntimeErrorTest, LaterErrorReplacesEarlier) {
  PIPER_RT_ERROR(PIPER_RT_ERROR_TIMEOUT, "first");
  int line = __LINE__ + 1;
  PIPER_RT_ERROR(PIPER_RT_ERROR_OUT_OF_MEMORY, "second");
  EXPECT_EQ(piper_rt_last_status(), PIPER_RT_ERROR_OUT_OF_MEMORY);
  EXPECT_EQ(std::string(piper_rt_last_error()),
            "piper-rt: out of memory: second" + locationOf(line));
}

TEST_F(RuntimeErrorTest, ClearForgetsError) {
  PIPER_RT_ERROR(PIPER_RT_ERROR_TIMEOUT, "waited %d s", 300);
  ASSERT_STRNE(piper_rt_last_error(), "");
  piper_rt_clear_error();
  EXPECT_STREQ(piper_rt_last_error(), "");
  EXPECT_EQ(piper_rt_last_status(), PIPER_RT_OK);
  // Clearing twice is harmless.
  piper_rt_clear_error();
  EXPECT_STREQ(piper_rt_last_error(), "");
}

TEST_F(RuntimeErrorTest, SettingOkClears) {
  PIPER_RT_ERROR(PIPER_RT_ERROR_TIMEOUT, "stale");
  EXPECT_EQ(PIPER_RT_ERROR(PIPER_RT_OK, "not an error"), PIPER_RT_OK);
  EXPECT_STREQ(piper_rt_last_error(), "");
  EXPECT_EQ(piper_rt_last_status(), PIPER_RT_OK);
}

TEST_F(RuntimeErrorTest, LongMessageIsTruncatedKeepingLocation) {
  std::string longMessage(5 * PIPER_RT_MAX_ERROR_LENGTH, 'x');
  longMessage += "TAIL";
  int line = __LINE__ + 1;
  PIPER_RT_ERROR(PIPER_RT_ERROR_OUT_OF_MEMORY, "%s", longMessage.c_str());
  std::string text = piper_rt_last_error();
  EXPECT_EQ(text.size(), static_cast<size_t>(PIPER_RT_MAX_ERROR_LENGTH - 1));
  EXPECT_EQ(text.rfind("piper-rt: out of memory: xxx", 0), 0u) << text;
  EXPECT_TRUE(endsWith(text, "xxx..." + locationOf(line))) << text;
  EXPECT_EQ(text.find("TAIL"), std::string::npos);
  EXPECT_EQ(piper_rt_last_status(), PIPER_RT_ERROR_OUT_OF_MEMORY);
}

TEST_F(RuntimeErrorTest, MessageThatJustFitsIsNotTruncated) {
  std::string prefix = "piper-rt: timeout: ";
  std::string suffix = " (at f.cpp:1)";
  std::string message(
      PIPER_RT_MAX_ERROR_LENGTH - 1 - prefix.size() - suffix.size(), 'y');
  piper_rt_set_error(PIPER_RT_ERROR_TIMEOUT, "f.cpp", 1, "%s", message.c_str());
  EXPECT_EQ(std::string(piper_rt_last_error()), prefix + message + suffix);

  // One byte more no longer fits and is cut with "...".
  message += 'y';
  piper_rt_set_error(PIPER_RT_ERROR_TIMEOUT, "f.cpp", 1, "%s", message.c_str());
  std::string text = piper_rt_last_error();
  EXPECT_EQ(text.size(), static_cast<size_t>(PIPER_RT_MAX_ERROR_LENGTH - 1));
  EXPECT_TRUE(endsWith(text, "yyy..." + suffix)) << text;
}

TEST_F(RuntimeErrorTest, TruncationKeepsUtf8Valid) {
  // "\xC3\xA9" is U+00E9 (e acute), two bytes. Shifting the message by zero
  // or one ASCII byte puts the cut inside a character in one of the two runs.
  for (const char *lead : {"", "a"}) {
    std::string message = lead;
    for (int i = 0; i < PIPER_RT_MAX_ERROR_LENGTH; ++i)
      message += "\xC3\xA9";
    piper_rt_set_error(PIPER_RT_ERROR_INTERNAL, "u.cpp", 7, "%s",
                       message.c_str());
    std::string text = piper_rt_last_error();
    EXPECT_LT(text.size(), static_cast<size_t>(PIPER_RT_MAX_ERROR_LENGTH));
    EXPECT_TRUE(endsWith(text, "\xC3\xA9... (at u.cpp:7)")) << text;
    EXPECT_TRUE(isValidUtf8(text)) << "lead '" << lead << "': " << text;
  }
}

TEST_F(RuntimeErrorTest, LongFileKeepsItsTail) {
  std::string file = std::string(1000, 'd') + "/Backend.cpp";
  piper_rt_set_error(PIPER_RT_ERROR_INTERNAL, file.c_str(), 42, "%s",
                     std::string(2000, 'z').c_str());
  std::string text = piper_rt_last_error();
  EXPECT_EQ(text.size(), static_cast<size_t>(PIPER_RT_MAX_ERROR_LENGTH - 1));
  EXPECT_EQ(text.rfind("piper-rt: internal error: zzz", 0), 0u) << text;
  // The location keeps the last 200 bytes of the path after "...".
  std::string tail = std::string(200 - 12, 'd') + "/Backend.cpp";
  EXPECT_TRUE(endsWith(text, "zzz... (at ..." + tail + ":42)")) << text;
}

TEST_F(RuntimeErrorTest, ErrorsAreThreadLocal) {
  // The main thread's error must survive what other threads do.
  int mainLine = __LINE__ + 1;
  PIPER_RT_ERROR(PIPER_RT_ERROR_TIMEOUT, "main thread");

  // Both workers set their error before either reads it back, so a shared
  // (non-thread-local) state would make one of them see the other's.
  constexpr int numThreads = 2;
  std::atomic<int> haveSet{0};
  std::string seen[numThreads];
  piper_rt_status seenStatus[numThreads];
  std::string afterClear[numThreads];
  auto worker = [&](int rank) {
    piper_rt_set_error(rank == 0 ? PIPER_RT_ERROR_COMMUNICATION
                                 : PIPER_RT_ERROR_OUT_OF_MEMORY,
                       "worker.cpp", rank, "rank %d", rank);
    ++haveSet;
    while (haveSet.load() < numThreads)
      std::this_thread::yield();
    seen[rank] = piper_rt_last_error();
    seenStatus[rank] = piper_rt_last_status();
    piper_rt_clear_error();
    afterClear[rank] = piper_rt_last_error();
  };
  std::thread t0(worker, 0), t1(worker, 1);
  t0.join();
  t1.join();

  EXPECT_EQ(seen[0], "piper-rt: communication error: rank 0 (at worker.cpp:0)");
  EXPECT_EQ(seenStatus[0], PIPER_RT_ERROR_COMMUNICATION);
  EXPECT_EQ(seen[1], "piper-rt: out of memory: rank 1 (at worker.cpp:1)");
  EXPECT_EQ(seenStatus[1], PIPER_RT_ERROR_OUT_OF_MEMORY);
  EXPECT_EQ(afterClear[0], "");
  EXPECT_EQ(afterClear[1], "");
  // The workers' set and clear left the main thread's error alone.
  EXPECT_EQ(piper_rt_last_status(), PIPER_RT_ERROR_TIMEOUT);
  EXPECT_EQ(std::string(piper_rt_last_error()),
            "piper-rt: timeout: main thread" + locationOf(mainLine));
}

TEST_F(RuntimeErrorTest, RaisedFromC) {
  int line = 0;
  EXPECT_EQ(piperRtTestRaiseFromC(&line), PIPER_RT_ERROR_TIMEOUT);
  EXPECT_EQ(std::string(piper_rt_last_error()),
            "piper-rt: timeout: raised from C: 42 (at " +
                std::string(piperRtTestCFile()) + ":" + std::to_string(line) +
                ")");
}

} // namespace
