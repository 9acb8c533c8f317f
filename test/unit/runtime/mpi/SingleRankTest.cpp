//===- SingleRankTest.cpp - The MPI backend in one process ----------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// What needs no peers: argument errors, streams, events, launches, waits
// between streams, messages to oneself, timeouts returned as errors, and the
// trace file. Runs as an MPI singleton (no mpiexec). MPI can be initialised
// only once per process, so one context is shared by every test (a gtest
// environment), and each test uses streams of its own.
//
//===----------------------------------------------------------------------===//

#include "piper-rt/piper_rt.h"

#include "SingletonContext.h"

#include "gtest/gtest.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

piper_rt_context ctx = nullptr;

class RuntimeEnvironment : public ::testing::Environment {
public:
  void SetUp() override {
    piper::test::initSingletonContext(ctx);
    if (::testing::Test::HasFatalFailure())
      return;
  }
  void TearDown() override {
    EXPECT_EQ(piper_rt_finalize(ctx), PIPER_RT_OK) << piper_rt_last_error();
  }
};

const auto *environment =
    ::testing::AddGlobalTestEnvironment(new RuntimeEnvironment);

/// Restores the context's settings after each test.
class RuntimeSingleRankTest : public ::testing::Test {
protected:
  void SetUp() override {
    piper_rt_clear_error();
    ASSERT_EQ(piper_rt_set_abort_on_timeout(ctx, 0), PIPER_RT_OK);
  }
  void TearDown() override {
    piper_rt_set_timeout(ctx, 20);
    piper_rt_set_abort_on_timeout(ctx, 1);
  }
  piper_rt_stream stream(const std::string &name) {
    piper_rt_stream s = nullptr;
    EXPECT_EQ(piper_rt_stream_create(ctx, name.c_str(), &s), PIPER_RT_OK)
        << piper_rt_last_error();
    return s;
  }
  std::string error() { return piper_rt_last_error(); }
};

bool contains(const std::string &text, const std::string &part) {
  return text.find(part) != std::string::npos;
}

TEST_F(RuntimeSingleRankTest, RankSizeAndCoordinates) {
  int rank = -1, size = 0;
  ASSERT_EQ(piper_rt_rank(ctx, &rank), PIPER_RT_OK);
  ASSERT_EQ(piper_rt_size(ctx, &size), PIPER_RT_OK);
  EXPECT_EQ(rank, 0);
  EXPECT_EQ(size, 1);
  int64_t coords[1] = {-1};
  ASSERT_EQ(piper_rt_coords(ctx, coords, 1), PIPER_RT_OK);
  EXPECT_EQ(coords[0], 0);
}

TEST_F(RuntimeSingleRankTest, MeshMismatchAndResetAreErrors) {
  const char *names[] = {"pp", "dp"};
  int64_t sizes[] = {2, 2};
  piper_rt_mesh mesh = nullptr;
  ASSERT_EQ(piper_rt_mesh_create(2, names, sizes, &mesh), PIPER_RT_OK);
  EXPECT_EQ(piper_rt_set_mesh(ctx, mesh), PIPER_RT_ERROR_INVALID_ARGUMENT);
  // The mesh is already set (by the environment): that is reported first.
  EXPECT_TRUE(contains(error(), "the mesh is already set to (dp=1)"))
      << error();
  piper_rt_mesh_destroy(mesh);
}

TEST_F(RuntimeSingleRankTest, StreamNamesAreUnique) {
  stream("unique");
  piper_rt_stream again = nullptr;
  EXPECT_EQ(piper_rt_stream_create(ctx, "unique", &again),
            PIPER_RT_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(error(), "a stream called 'unique' already exists"));
  EXPECT_EQ(piper_rt_stream_create(ctx, "", &again),
            PIPER_RT_ERROR_INVALID_ARGUMENT);
}

TEST_F(RuntimeSingleRankTest, LaunchRunsInOrderAndEventsComplete) {
  piper_rt_stream s = stream("launch");
  piper_rt_event e = nullptr;
  ASSERT_EQ(piper_rt_event_create(ctx, &e), PIPER_RT_OK);
  int done = 1;
  EXPECT_EQ(piper_rt_event_query(e, &done), PIPER_RT_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(error(), "the event was never recorded")) << error();

  std::vector<int> order;
  auto push = [](void *arg) {
    auto *o = static_cast<std::vector<int> *>(arg);
    o->push_back(static_cast<int>(o->size()));
  };
  ASSERT_EQ(piper_rt_launch(s, "a", push, &order), PIPER_RT_OK);
  ASSERT_EQ(piper_rt_launch(s, "b", push, &order), PIPER_RT_OK);
  EXPECT_EQ(order, (std::vector<int>{0, 1}));
  ASSERT_EQ(piper_rt_event_record(e, s), PIPER_RT_OK);
  ASSERT_EQ(piper_rt_event_query(e, &done), PIPER_RT_OK);
  EXPECT_EQ(done, 1);
  EXPECT_EQ(piper_rt_event_synchronize(e), PIPER_RT_OK);
  EXPECT_EQ(piper_rt_launch(s, "null", nullptr, nullptr),
            PIPER_RT_ERROR_INVALID_ARGUMENT);
  piper_rt_event_destroy(e);
}

TEST_F(RuntimeSingleRankTest, WaitAcrossStreamsAndSelfMessages) {
  piper_rt_stream recv = stream("w-recv"), user = stream("w-user"),
                  send = stream("w-send");
  double in[4] = {0, 0, 0, 0}, out[4] = {1, 2, 3, 4};
  // A receive that nobody has sent yet holds `recv`; `user` waits for it.
  ASSERT_EQ(piper_rt_recv(recv, in, 4, PIPER_RT_F64, 0, 5), PIPER_RT_OK);
  piper_rt_event arrived = nullptr;
  ASSERT_EQ(piper_rt_event_create(ctx, &arrived), PIPER_RT_OK);
  ASSERT_EQ(piper_rt_event_record(arrived, recv), PIPER_RT_OK);
  ASSERT_EQ(piper_rt_stream_wait_event(user, arrived), PIPER_RT_OK);
  int done = 1;
  ASSERT_EQ(piper_rt_event_query(arrived, &done), PIPER_RT_OK);
  EXPECT_EQ(done, 0);
  int idle = 1;
  ASSERT_EQ(piper_rt_stream_query(user, &idle), PIPER_RT_OK);
  EXPECT_EQ(idle, 0);

  // A launch on `user` times out naming the receive it is stuck behind.
  ASSERT_EQ(piper_rt_set_timeout(ctx, 0.2), PIPER_RT_OK);
  int ran = 0;
  auto mark = [](void *arg) { *static_cast<int *>(arg) = 1; };
  EXPECT_EQ(piper_rt_launch(user, "k", mark, &ran), PIPER_RT_ERROR_TIMEOUT);
  EXPECT_EQ(ran, 0);
  EXPECT_TRUE(contains(error(), "piper-rt: timeout: rank 0 of 1: timeout in "
                                "launch of stream 'w-user': recv of 4 f64 "
                                "from rank 0 tag 5 did not complete within "
                                "0.2 s (posted "))
      << error();

  // The matching send releases both streams.
  ASSERT_EQ(piper_rt_set_timeout(ctx, 20), PIPER_RT_OK);
  ASSERT_EQ(piper_rt_send(send, out, 4, PIPER_RT_F64, 0, 5), PIPER_RT_OK);
  ASSERT_EQ(piper_rt_launch(user, "k", mark, &ran), PIPER_RT_OK);
  EXPECT_EQ(ran, 1);
  EXPECT_EQ(in[3], 4.0);
  EXPECT_EQ(piper_rt_stream_synchronize(send), PIPER_RT_OK);
  piper_rt_event_destroy(arrived);
}

TEST_F(RuntimeSingleRankTest, ShortMessageIsAnAsynchronousError) {
  piper_rt_stream s = stream("short");
  double in[4], out[2] = {1, 2};
  ASSERT_EQ(piper_rt_send(s, out, 2, PIPER_RT_F64, 0, 6), PIPER_RT_OK);
  ASSERT_EQ(piper_rt_recv(s, in, 4, PIPER_RT_F64, 0, 6), PIPER_RT_OK);
  EXPECT_EQ(piper_rt_stream_synchronize(s), PIPER_RT_ERROR_COMMUNICATION);
  EXPECT_TRUE(contains(error(), "recv of 4 f64 from rank 0 tag 6 received 2 "
                                "elements"))
      << error();
  // Reported once.
  EXPECT_EQ(piper_rt_stream_synchronize(s), PIPER_RT_OK);
}

TEST_F(RuntimeSingleRankTest, CommunicationArgumentErrors) {
  piper_rt_stream s = stream("args");
  double x = 0;
  EXPECT_EQ(piper_rt_send(s, &x, 1, PIPER_RT_F64, 1, 0),
            PIPER_RT_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(error(), "peer 1 is not a rank of the 1-rank world"));
  EXPECT_EQ(piper_rt_send(s, &x, 1, PIPER_RT_F64, 0, PIPER_RT_MAX_TAG + 1),
            PIPER_RT_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(error(), "tag 32768 is outside 0..32767"));
  EXPECT_EQ(piper_rt_recv(s, &x, size_t(1) << 31, PIPER_RT_F64, 0, 0),
            PIPER_RT_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(error(), "exceeds MPI's limit"));

  piper_rt_comm comm = nullptr;
  const char *bad[] = {"ep"};
  EXPECT_EQ(piper_rt_comm_get(ctx, 1, bad, s, &comm),
            PIPER_RT_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(error(), "mesh (dp=1) has no axis 'ep'")) << error();
  EXPECT_EQ(piper_rt_comm_get(ctx, 0, nullptr, s, &comm),
            PIPER_RT_ERROR_INVALID_ARGUMENT);
  const char *dp[] = {"dp"};
  ASSERT_EQ(piper_rt_comm_get(ctx, 1, dp, s, &comm), PIPER_RT_OK);
  double a[2] = {1, 2};
  EXPECT_EQ(piper_rt_reduce_scatter(comm, a, a, 2, PIPER_RT_F64, PIPER_RT_SUM),
            PIPER_RT_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(error(), "reduce_scatter cannot run in place"));
  EXPECT_EQ(piper_rt_all_reduce(comm, a, a, 2, PIPER_RT_F64,
                                static_cast<piper_rt_reduce_op>(9)),
            PIPER_RT_ERROR_INVALID_ARGUMENT);
}

TEST_F(RuntimeSingleRankTest, OneMemberCollectivesCopy) {
  piper_rt_stream s = stream("one");
  const char *dp[] = {"dp"};
  piper_rt_comm comm = nullptr;
  ASSERT_EQ(piper_rt_comm_get(ctx, 1, dp, s, &comm), PIPER_RT_OK);
  int64_t in[3] = {1, -2, int64_t(1) << 50}, out[3] = {0, 0, 0};
  ASSERT_EQ(piper_rt_all_reduce(comm, in, out, 3, PIPER_RT_I64, PIPER_RT_SUM),
            PIPER_RT_OK);
  ASSERT_EQ(piper_rt_stream_synchronize(s), PIPER_RT_OK);
  EXPECT_EQ(out[2], int64_t(1) << 50);
  int size = 0, member = -1;
  ASSERT_EQ(piper_rt_comm_size(comm, &size), PIPER_RT_OK);
  ASSERT_EQ(piper_rt_comm_members(comm, &member, 1), PIPER_RT_OK);
  EXPECT_EQ(size, 1);
  EXPECT_EQ(member, 0);
}

TEST_F(RuntimeSingleRankTest, LaunchBodyRunsCollectivesOnItsStream) {
  // A launch's body may issue collectives on the communicators of its own
  // stream and wait for them (tensor-parallel all-reduces inside a chunk).
  struct Body {
    piper_rt_comm comm;
    piper_rt_stream stream;
    int64_t value;
    piper_rt_status status;
  } body{nullptr, stream("body"), 21, PIPER_RT_OK};
  const char *dp[] = {"dp"};
  ASSERT_EQ(piper_rt_comm_get(ctx, 1, dp, body.stream, &body.comm),
            PIPER_RT_OK);
  auto fn = [](void *arg) {
    auto *b = static_cast<Body *>(arg);
    b->status = piper_rt_all_reduce(b->comm, &b->value, &b->value, 1,
                                    PIPER_RT_I64, PIPER_RT_SUM);
    if (b->status == PIPER_RT_OK)
      b->status = piper_rt_stream_synchronize(b->stream);
    b->value *= 2;
  };
  ASSERT_EQ(piper_rt_launch(body.stream, "tp-chunk", fn, &body), PIPER_RT_OK);
  EXPECT_EQ(body.status, PIPER_RT_OK) << error();
  EXPECT_EQ(body.value, 42);
}

TEST_F(RuntimeSingleRankTest, TraceFilePerRank) {
  std::string dir = ::testing::TempDir();
  std::string pattern = dir + "/piper-rt-trace-%r.json";
  ASSERT_EQ(piper_rt_trace_enable(ctx, pattern.c_str()), PIPER_RT_OK);
  piper_rt_stream compute = stream("t-compute"), grad = stream("t-grad");
  const char *dp[] = {"dp"};
  piper_rt_comm comm = nullptr;
  ASSERT_EQ(piper_rt_comm_get(ctx, 1, dp, grad, &comm), PIPER_RT_OK);
  auto nothing = [](void *) {};
  ASSERT_EQ(piper_rt_launch(compute, "F{PP=0,MB=0}", nothing, nullptr),
            PIPER_RT_OK);
  float x[2] = {1, 2};
  ASSERT_EQ(piper_rt_all_reduce(comm, x, x, 2, PIPER_RT_F32, PIPER_RT_SUM),
            PIPER_RT_OK);
  ASSERT_EQ(piper_rt_stream_synchronize(grad), PIPER_RT_OK);
  ASSERT_EQ(piper_rt_trace_write(ctx), PIPER_RT_OK) << error();

  std::ifstream file(dir + "/piper-rt-trace-0.json");
  ASSERT_TRUE(file.good());
  std::stringstream text;
  text << file.rdbuf();
  std::string json = text.str();
  EXPECT_EQ(json.rfind("{\"displayTimeUnit\":\"ms\",\"traceEvents\":[", 0), 0u);
  EXPECT_TRUE(contains(json, "\"name\":\"rank 0\"")) << json;
  EXPECT_TRUE(contains(json, "\"args\":{\"name\":\"t-grad\"}")) << json;
  EXPECT_TRUE(contains(json, "{\"name\":\"F{PP=0,MB=0}\",\"cat\":\"compute\","
                             "\"ph\":\"X\",\"pid\":0,\"tid\":"))
      << json;
  EXPECT_TRUE(contains(json, "{\"name\":\"all_reduce\",\"cat\":\"comm\","
                             "\"ph\":\"X\",\"pid\":0,\"tid\":"))
      << json;
  EXPECT_TRUE(contains(json, "\"elements\":2,\"dtype\":\"f32\",\"comm\":"
                             "\"communicator {dp} of stream 't-grad'"))
      << json;
}

} // namespace
