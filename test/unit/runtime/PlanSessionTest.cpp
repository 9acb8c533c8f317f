//===- PlanSessionTest.cpp - Plan ABI sessions without a runtime ----------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// What a single-device plan calls, as its shared object would: the buffer
// cache behind MLIR's allocation functions, the trace hooks and events (no-ops
// without a runtime), and the errors of communication with no runtime. The
// collectives on a real communicator are in mpi/PlanSessionMPITest.cpp.
//
//===----------------------------------------------------------------------===//

#include "piper-rt/plan_abi.h"

#include "gtest/gtest.h"

#include <cmath>
#include <string>
#include <vector>

namespace {

class PlanSessionTest : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_EQ(piper_plan_session_create(nullptr, &session), PIPER_RT_OK);
    previous = piper_plan_session_activate(session);
  }
  void TearDown() override {
    piper_plan_session_activate(previous);
    EXPECT_EQ(piper_plan_session_destroy(session), PIPER_RT_OK);
  }
  piper_plan_buffer_stats stats() {
    piper_plan_buffer_stats s;
    EXPECT_EQ(piper_plan_session_buffer_stats(session, &s), PIPER_RT_OK);
    return s;
  }
  piper_plan_session session = nullptr, previous = nullptr;
};

TEST_F(PlanSessionTest, ActivationIsPerThreadAndNests) {
  EXPECT_EQ(piper_plan_session_current(), session);
  piper_plan_session other = nullptr;
  ASSERT_EQ(piper_plan_session_create(nullptr, &other), PIPER_RT_OK);
  EXPECT_EQ(piper_plan_session_activate(other), session);
  EXPECT_EQ(piper_plan_session_current(), other);
  // Destroying the current session leaves the thread with none.
  EXPECT_EQ(piper_plan_session_destroy(other), PIPER_RT_OK);
  EXPECT_EQ(piper_plan_session_current(), nullptr);
  piper_plan_session_activate(session);
}

TEST_F(PlanSessionTest, BufferCacheServesTheNextStep) {
  // Step 1: three live buffers of two size classes.
  void *a = _mlir_memref_to_llvm_alloc(100);
  void *b = _mlir_memref_to_llvm_aligned_alloc(64, 100);
  void *c = _mlir_memref_to_llvm_alloc(1000);
  for (void *p : {a, b, c})
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % PIPER_RT_BUFFER_ALIGNMENT, 0u);
  EXPECT_NE(a, b);
  static_cast<char *>(c)[999] = 1; // the whole request is usable
  piper_plan_buffer_stats s = stats();
  EXPECT_EQ(s.requests, 3u);
  EXPECT_EQ(s.reused, 0u);
  EXPECT_EQ(s.reserved_bytes, 128u + 128u + 1024u);
  // Live and peak bytes count what was asked for, not the size classes.
  EXPECT_EQ(s.live_bytes, 100u + 100u + 1000u);
  EXPECT_EQ(s.peak_bytes, 1200u);
  _mlir_memref_to_llvm_free(a);
  _mlir_memref_to_llvm_free(b);
  _mlir_memref_to_llvm_free(c);
  _mlir_memref_to_llvm_free(nullptr);
  EXPECT_EQ(stats().live_bytes, 0u);
  // Step 2: the same requests reuse step 1's buffers, reserving nothing.
  void *a2 = _mlir_memref_to_llvm_alloc(120);
  void *c2 = _mlir_memref_to_llvm_alloc(1024);
  EXPECT_TRUE(a2 == a || a2 == b);
  EXPECT_EQ(c2, c);
  s = stats();
  EXPECT_EQ(s.requests, 5u);
  EXPECT_EQ(s.reused, 2u);
  EXPECT_EQ(s.reserved_bytes, 128u + 128u + 1024u);
  // Step 2 holds less at once than step 1: the high-water mark stays.
  EXPECT_EQ(s.live_bytes, 120u + 1024u);
  EXPECT_EQ(s.peak_bytes, 1200u);
  _mlir_memref_to_llvm_free(a2);
  _mlir_memref_to_llvm_free(c2);
}

TEST_F(PlanSessionTest, SessionsKeepTheirOwnCache) {
  void *a = _mlir_memref_to_llvm_alloc(64);
  _mlir_memref_to_llvm_free(a);
  piper_plan_session other = nullptr;
  ASSERT_EQ(piper_plan_session_create(nullptr, &other), PIPER_RT_OK);
  piper_plan_session_activate(other);
  void *b = _mlir_memref_to_llvm_alloc(64);
  piper_plan_buffer_stats s;
  piper_plan_session_buffer_stats(other, &s);
  EXPECT_EQ(s.reused, 0u);
  _mlir_memref_to_llvm_free(b);
  piper_plan_session_activate(session);
  EXPECT_EQ(piper_plan_session_destroy(other), PIPER_RT_OK);
  EXPECT_EQ(stats().requests, 1u);
}

TEST_F(PlanSessionTest, FreeingForeignMemoryAborts) {
  int local = 0;
  EXPECT_DEATH(_mlir_memref_to_llvm_free(&local), "which it never allocated");
  EXPECT_DEATH(_mlir_memref_to_llvm_aligned_alloc(4096, 8),
               "4096-byte alignment");
}

TEST_F(PlanSessionTest, CallsWithoutASessionAbort) {
  piper_plan_session_activate(nullptr);
  EXPECT_DEATH(_mlir_memref_to_llvm_alloc(8),
               "a plan called _mlir_memref_to_llvm_alloc on a thread with no "
               "current session");
  piper_plan_session_activate(session);
}

TEST_F(PlanSessionTest, CommunicationWithoutARuntimeFailsTheStep) {
  // Trace hooks and events are no-ops: the host ran everything.
  piper_trace_begin(0);
  piper_trace_end(0);
  piper_comm_record(1, 0);
  piper_comm_wait(1, 0);
  piper_comm_sync_all();
  EXPECT_EQ(piper_plan_session_finish_step(session), PIPER_RT_OK);

  double x[2] = {1, 2};
  int64_t sizes[] = {2};
  std::vector<uint64_t> desc(piper_memref_descriptor_size(1) / 8);
  piper_memref_describe(desc.data(), x, 1, sizes);
  piper_comm_send_f64(1, desc.data(), 1, 0);
  piper_comm_iall_reduce_f64(1, desc.data(), 1, desc.data(), 0, 1.0);
  EXPECT_EQ(piper_plan_session_finish_step(session),
            PIPER_RT_ERROR_COMMUNICATION);
  // The first error of the step, in the calls' own words.
  EXPECT_STREQ(piper_plan_session_step_error(session),
               "a plan sent a value but piper-run started no runtime");
  // Cleared for the next step.
  EXPECT_EQ(piper_plan_session_finish_step(session), PIPER_RT_OK);
  piper_comm_all_to_all_f32(1, desc.data(), 1, desc.data(), 3, 0);
  EXPECT_NE(piper_plan_session_finish_step(session), PIPER_RT_OK);
  EXPECT_STREQ(piper_plan_session_step_error(session),
               "all_to_all: the plan has no communicator #3");
}

// The per-step hyperparameters: the plan reads the learning rate the driver
// set; on one device the clip norm is the local weighted sum's.
TEST_F(PlanSessionTest, StepLearningRateAndClipping) {
  ASSERT_EQ(piper_plan_session_set_hyperparameters(session, 0.25, 1.0),
            PIPER_RT_OK);
  EXPECT_EQ(piper_step_lr(), 0.25);
  EXPECT_EQ(piper_plan_session_grad_norm(session), -1.0);
  ASSERT_EQ(piper_plan_session_enable_clip(session, 0, nullptr), PIPER_RT_OK);

  double g[2] = {3, 4}, h[1] = {12}, out[2] = {0, 0};
  int64_t two[] = {2}, one[] = {1};
  std::vector<uint64_t> gd(piper_memref_descriptor_size(1) / 8), hd(gd.size()),
      od(gd.size());
  piper_memref_describe(gd.data(), g, 1, two);
  piper_memref_describe(hd.data(), h, 1, one);
  piper_memref_describe(od.data(), out, 1, two);
  // |g|^2 = 25 counted once, h held by 4 devices: 144 / 4 = 36: norm sqrt 61.
  piper_clip_accumulate_f64(1, gd.data(), 1.0);
  piper_clip_accumulate_f64(1, hd.data(), 0.25);
  piper_clip_finish();
  EXPECT_DOUBLE_EQ(piper_plan_session_grad_norm(session), std::sqrt(61.0));
  piper_clip_scale_f64(1, gd.data(), 1, od.data());
  double coef = 1.0 / (std::sqrt(61.0) + 1e-6);
  EXPECT_DOUBLE_EQ(out[0], 3 * coef);
  EXPECT_DOUBLE_EQ(out[1], 4 * coef);
  EXPECT_EQ(piper_plan_session_finish_step(session), PIPER_RT_OK);

  // The next step starts a fresh sum; a bound of 0 turns clipping off.
  ASSERT_EQ(piper_plan_session_set_hyperparameters(session, 0.5, 0.0),
            PIPER_RT_OK);
  piper_clip_accumulate_f64(1, gd.data(), 1.0);
  piper_clip_finish();
  EXPECT_DOUBLE_EQ(piper_plan_session_grad_norm(session), 5.0);
  piper_clip_scale_f64(1, gd.data(), 1, od.data());
  EXPECT_EQ(out[0], 3.0);
  EXPECT_EQ(out[1], 4.0);
}

// The GPU plans' clipping calls (--piper-gpu-clip): the plan hands over each
// gradient's weighted sum of squares and reads the coefficient back; the
// norm and coefficient are the host-reading calls' for the same sums.
TEST_F(PlanSessionTest, ClipFromDeviceSums) {
  ASSERT_EQ(piper_plan_session_set_hyperparameters(session, 0.25, 1.0),
            PIPER_RT_OK);
  ASSERT_EQ(piper_plan_session_enable_clip(session, 0, nullptr), PIPER_RT_OK);
  EXPECT_EQ(piper_clip_coefficient(), 1.0);
  piper_clip_add_squares(25.0);
  piper_clip_add_squares(144.0 * 0.25);
  piper_clip_finish();
  EXPECT_DOUBLE_EQ(piper_plan_session_grad_norm(session), std::sqrt(61.0));
  EXPECT_DOUBLE_EQ(piper_clip_coefficient(), 1.0 / (std::sqrt(61.0) + 1e-6));
  EXPECT_EQ(piper_plan_session_finish_step(session), PIPER_RT_OK);
  // Under the bound the coefficient is 1 and the sum starts afresh.
  piper_clip_add_squares(0.25);
  piper_clip_finish();
  EXPECT_DOUBLE_EQ(piper_plan_session_grad_norm(session), 0.5);
  EXPECT_EQ(piper_clip_coefficient(), 1.0);
}

TEST_F(PlanSessionTest, HostCallsNeedARuntimeOnlyToMoveData) {
  const char *axes[] = {"dp"};
  EXPECT_EQ(piper_plan_session_add_communicator(session, 1, axes, "dp"),
            PIPER_RT_ERROR_UNAVAILABLE);
  EXPECT_EQ(piper_plan_session_trace_launches(session, 1, axes),
            PIPER_RT_ERROR_UNAVAILABLE);
  EXPECT_EQ(piper_plan_session_set_streams(session, 1, axes), PIPER_RT_OK);
  EXPECT_EQ(piper_plan_session_member(session, 0), 0);
  double v = 1;
  // From a rank to itself moves nothing.
  EXPECT_EQ(piper_plan_session_move(session, &v, 1, PIPER_RT_F64, 0, 0, 7),
            PIPER_RT_OK);
  EXPECT_EQ(piper_plan_session_move(session, &v, 1, PIPER_RT_F64, 1, 0, 7),
            PIPER_RT_ERROR_UNAVAILABLE);
  EXPECT_EQ(piper_plan_session_destroy(nullptr),
            PIPER_RT_ERROR_INVALID_ARGUMENT);
}

} // namespace

extern "C" int piperPlanTestCountSymbols(void);

namespace {
TEST(PlanABI, EverySymbolIsDefinedWithCLinkage) {
  EXPECT_EQ(piperPlanTestCountSymbols(), 31);
}
} // namespace
