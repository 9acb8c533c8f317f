//===- PlanSessionMPITest.cpp - The plan ABI on a one-rank runtime --------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The plan ABI's communication calls (plan_abi.h, Part 1), called as a plan
// would call them, on a session over the MPI backend in one process (an MPI
// singleton: a one-member communicator, messages to oneself). With one
// member a reduction is the input times the scale and a chunk is the whole
// padded tensor, which is enough to check the descriptor handling (strided
// inputs), the nonblocking completion rules (events, sync_all, a host read
// of a pending output) and the errors. Multi-rank numbers are checked end
// to end by test/Integration against the interpreter.
//
//===----------------------------------------------------------------------===//

#include "piper-rt/plan_abi.h"

#include "SingletonContext.h"

#include "gtest/gtest.h"

#include <vector>

namespace {

piper_rt_context ctx = nullptr;
/// One session for every test: the runtime keeps a stream's name until
/// finalize, so a second session could not create its streams again.
piper_plan_session session = nullptr;

class RuntimeEnvironment : public ::testing::Environment {
public:
  void SetUp() override {
    piper::test::initSingletonContext(ctx);
    if (::testing::Test::HasFatalFailure())
      return;
    // Communicator #0 over dp on stream "grad"; program streams (compute,
    // grad, pp).
    ASSERT_EQ(piper_plan_session_create(ctx, &session), PIPER_RT_OK)
        << piper_rt_last_error();
    const char *axes[] = {"dp"};
    ASSERT_EQ(piper_plan_session_add_communicator(session, 1, axes, "grad"),
              PIPER_RT_OK)
        << piper_rt_last_error();
    const char *streams[] = {"compute", "grad", "pp"};
    ASSERT_EQ(piper_plan_session_set_streams(session, 3, streams), PIPER_RT_OK);
  }
  void TearDown() override {
    EXPECT_EQ(piper_plan_session_destroy(session), PIPER_RT_OK);
    EXPECT_EQ(piper_rt_finalize(ctx), PIPER_RT_OK) << piper_rt_last_error();
  }
};

const auto *environment =
    ::testing::AddGlobalTestEnvironment(new RuntimeEnvironment);

/// A tensor with its descriptor, as a plan passes it.
template <typename T> struct Memref {
  std::vector<T> data;
  std::vector<uint64_t> desc;
  Memref(std::vector<int64_t> sizes, std::vector<T> values) : data(values) {
    int64_t n = 1;
    for (int64_t s : sizes)
      n *= s;
    data.resize(n);
    desc.resize(piper_memref_descriptor_size(sizes.size()) / 8);
    piper_memref_describe(desc.data(), data.data(), sizes.size(), sizes.data());
  }
  int64_t rank() const { return (desc.size() - 3) / 2; }
  void *d() { return desc.data(); }
  /// Makes this a transposed view of a rank-2 tensor (no copy).
  void transpose() {
    auto *w = reinterpret_cast<int64_t *>(desc.data());
    std::swap(w[3], w[4]);
    std::swap(w[5], w[6]);
  }
};

/// Activates the shared session, as a driver does before running a plan.
class PlanSessionMPITest : public ::testing::Test {
protected:
  void SetUp() override { piper_plan_session_activate(session); }
  void TearDown() override { piper_plan_session_activate(nullptr); }
  void finishStep() {
    EXPECT_EQ(piper_plan_session_finish_step(session), PIPER_RT_OK)
        << piper_plan_session_step_error(session);
  }
};

TEST_F(PlanSessionMPITest, AllReduceOfAStridedInputScales) {
  Memref<double> in({2, 3}, {1, 2, 3, 4, 5, 6}), out({3, 2}, {});
  in.transpose(); // [3, 2]: 1 4 2 5 3 6
  piper_comm_iall_reduce_f64(2, in.d(), 2, out.d(), 0, 0.5);
  piper_comm_record(7, 1); // on "grad", after the reduction
  piper_comm_wait(7, 0);
  EXPECT_EQ(out.data, (std::vector<double>{0.5, 2, 1, 2.5, 1.5, 3}));
  finishStep();
}

TEST_F(PlanSessionMPITest, SyncAllCompletesEveryCollective) {
  Memref<float> in({5}, {1, 2, 3, 4, 5}), scattered({5}, {});
  Memref<double> chunk({3}, {7, 8, 9}), gathered({3}, {});
  piper_comm_ireduce_scatter_f32(1, in.d(), 1, scattered.d(), 0, 2.0);
  piper_comm_iall_gather_f64(1, chunk.d(), 1, gathered.d(), 0);
  piper_comm_sync_all();
  EXPECT_EQ(scattered.data, (std::vector<float>{2, 4, 6, 8, 10}));
  EXPECT_EQ(gathered.data, (std::vector<double>{7, 8, 9}));
  finishStep();
}

TEST_F(PlanSessionMPITest, BlockingCollectivesCompleteOnReturn) {
  Memref<float> in({2, 2}, {1, 2, 3, 4}), out({2, 2}, {});
  piper_comm_all_reduce_f32(2, in.d(), 2, out.d(), 0, 1.0);
  EXPECT_EQ(out.data, in.data);
  Memref<double> whole({2, 2}, {5, 6, 7, 8}), mine({4}, {});
  piper_comm_shard_f64(2, whole.d(), 1, mine.d(), 0);
  EXPECT_EQ(mine.data, (std::vector<double>{5, 6, 7, 8}));
  // One member owns every expert: both directions are the identity.
  Memref<double> tokens({2, 3, 1}, {1, 2, 3, 4, 5, 6}), owned({2, 3, 1}, {}),
      back({2, 3, 1}, {});
  piper_comm_all_to_all_f64(3, tokens.d(), 3, owned.d(), 0, 0);
  piper_comm_all_to_all_f64(3, owned.d(), 3, back.d(), 0, 1);
  EXPECT_EQ(owned.data, tokens.data);
  EXPECT_EQ(back.data, tokens.data);
  EXPECT_EQ(piper_plan_session_member(session, 0), 0);
  finishStep();
}

TEST_F(PlanSessionMPITest, SendingAPendingOutputWaitsForIt) {
  // The send reads `out` on the host, so the reduction writing it must be
  // complete first; the receive (from this rank itself) then sees the sum.
  Memref<double> in({3}, {1, 2, 3}), out({3}, {}), got({3}, {});
  piper_comm_iall_reduce_f64(1, in.d(), 1, out.d(), 0, 3.0);
  piper_comm_send_f64(1, out.d(), 0, 5);
  piper_comm_recv_f64(1, got.d(), 0, 5);
  EXPECT_EQ(got.data, (std::vector<double>{3, 6, 9}));
  Memref<int64_t> ids({2}, {11, 12}), ids2({2}, {});
  piper_comm_send_i64(1, ids.d(), 0, 6);
  piper_comm_recv_i64(1, ids2.d(), 0, 6);
  EXPECT_EQ(ids2.data, ids.data);
  finishStep();
}

TEST_F(PlanSessionMPITest, ANonblockingReceiveCompletesAtItsStreamsEvent) {
  // Posted on program stream 2 ("pp"), which has no runtime stream of its
  // own: an event recorded there after the receive covers it, and the
  // host's wait for that event completes it.
  Memref<double> a({3}, {1, 2, 3}), got({3}, {});
  piper_comm_send_f64(1, a.d(), 0, 8);
  piper_comm_irecv_f64(1, got.d(), 0, 8, 2);
  piper_comm_record(9, 2);
  piper_comm_wait(9, 0);
  EXPECT_EQ(got.data, (std::vector<double>{1, 2, 3}));
  // Sending a value still being received completes the receive first.
  Memref<double> b({3}, {4, 5, 6}), fwd({3}, {}), back({3}, {});
  piper_comm_send_f64(1, b.d(), 0, 10);
  piper_comm_irecv_f64(1, fwd.d(), 0, 10, 2);
  piper_comm_send_f64(1, fwd.d(), 0, 11);
  piper_comm_recv_f64(1, back.d(), 0, 11);
  EXPECT_EQ(back.data, (std::vector<double>{4, 5, 6}));
  // piper_comm_sync_all completes the receives still pending.
  Memref<int64_t> ids({2}, {7, 8}), ids2({2}, {});
  piper_comm_send_i64(1, ids.d(), 0, 12);
  piper_comm_irecv_i64(1, ids2.d(), 0, 12, 2);
  piper_comm_sync_all();
  EXPECT_EQ(ids2.data, ids.data);
  finishStep();
}

TEST_F(PlanSessionMPITest, ABadCommunicatorFailsTheStep) {
  Memref<double> in({2}, {1, 2}), out({2}, {});
  piper_comm_iall_reduce_f64(1, in.d(), 1, out.d(), 4, 1.0);
  piper_comm_iall_gather_f64(1, in.d(), 1, out.d(), -1);
  EXPECT_EQ(piper_plan_session_finish_step(session),
            PIPER_RT_ERROR_COMMUNICATION);
  EXPECT_STREQ(piper_plan_session_step_error(session),
               "all_reduce: the plan has no communicator #4");
  // The next step starts clean.
  EXPECT_EQ(piper_plan_session_finish_step(session), PIPER_RT_OK);
}

TEST_F(PlanSessionMPITest, MovesAndTraceNeedTheContext) {
  double loss = 2.5;
  EXPECT_EQ(piper_plan_session_move(session, &loss, 1, PIPER_RT_F64, 0, 0,
                                    PIPER_RT_MAX_TAG),
            PIPER_RT_OK);
  EXPECT_EQ(loss, 2.5);
  const char *launches[] = {"fwd"};
  EXPECT_EQ(piper_plan_session_trace_launches(session, 1, launches),
            PIPER_RT_OK)
      << piper_rt_last_error();
  piper_trace_begin(0);
  piper_trace_end(0);
  finishStep();
}

} // namespace
