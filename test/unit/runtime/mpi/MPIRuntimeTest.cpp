//===- MPIRuntimeTest.cpp - Multi-rank tests of the runtime's MPI backend -===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// One program, one case per command-line argument, started by ctest through
// run-mpi.sh under mpiexec with 1 to 8 ranks. Every expected value is computed
// on each rank on its own from the inputs' formula (in f64 or i64), never by
// MPI, so a wrong collective cannot agree with itself. A passing rank prints
// "PASS <case> rank <r>"; the runner counts those lines.
//
//===----------------------------------------------------------------------===//

#include "piper-rt/piper_rt.h"

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

int worldRank = -1;

[[noreturn]] void fail(const char *file, int line, const std::string &what) {
  std::fprintf(stderr, "FAIL rank %d at %s:%d: %s\n", worldRank, file, line,
               what.c_str());
  std::fflush(stderr);
  std::exit(1);
}

#define CHECK_OK(call)                                                         \
  do {                                                                         \
    if ((call) != PIPER_RT_OK)                                                 \
      fail(__FILE__, __LINE__,                                                 \
           std::string(#call) + ": " + piper_rt_last_error());                 \
  } while (0)

#define CHECK(cond, msg)                                                       \
  do {                                                                         \
    if (!(cond))                                                               \
      fail(__FILE__, __LINE__, std::string(#cond) + ": " + (msg));             \
  } while (0)

double seconds() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

struct Runtime {
  piper_rt_context ctx = nullptr;
  int rank = 0, size = 0;
  Runtime() {
    CHECK_OK(piper_rt_init(nullptr, nullptr, &ctx));
    CHECK_OK(piper_rt_rank(ctx, &rank));
    CHECK_OK(piper_rt_size(ctx, &size));
    worldRank = rank;
  }
  void setMesh(std::vector<const char *> names, std::vector<int64_t> sizes) {
    piper_rt_mesh mesh = nullptr;
    CHECK_OK(
        piper_rt_mesh_create(names.size(), names.data(), sizes.data(), &mesh));
    CHECK_OK(piper_rt_set_mesh(ctx, mesh));
    CHECK_OK(piper_rt_mesh_destroy(mesh));
  }
  void pass(const char *name) {
    CHECK_OK(piper_rt_finalize(ctx));
    std::printf("PASS %s rank %d\n", name, rank);
    std::fflush(stdout);
  }
};

//===----------------------------------------------------------------------===//
// Collectives on a 1-D mesh of the whole world
//===----------------------------------------------------------------------===//

/// Input element i of rank r, as an exact integer. Halved for floats (still
/// exact in f32: |value| <= 25 and sums of 8 of them have few bits), scaled
/// by 2^40 for i64 so that sums need all 64 bits' worth of exactness.
int64_t baseValue(int r, size_t i) {
  return static_cast<int64_t>(((r + 1) * 31 + i * 7) % 101) - 50;
}

template <typename T> T value(int r, size_t i);
template <> float value<float>(int r, size_t i) {
  return static_cast<float>(baseValue(r, i)) * 0.5f;
}
template <> double value<double>(int r, size_t i) {
  return static_cast<double>(baseValue(r, i)) * 0.5;
}
template <> int64_t value<int64_t>(int r, size_t i) {
  return baseValue(r, i) * (int64_t(1) << 40) + r;
}

/// The reference sum in f64 for floats and in i64 for integers.
template <typename T> struct Ref { using type = double; };
template <> struct Ref<int64_t> { using type = int64_t; };

template <typename T>
void checkCollectives(Runtime &rt, piper_rt_comm comm, piper_rt_stream stream,
                      piper_rt_dtype dtype, size_t count) {
  using R = typename Ref<T>::type;
  int n = rt.size, r = rt.rank;
  std::string what = std::string("dtype ") + std::to_string(dtype) + " count " +
                     std::to_string(count);

  // all_reduce sum (out of place and in place) and max.
  std::vector<T> in(count), out(count), inplace(count), maxOut(count);
  for (size_t i = 0; i < count; ++i)
    in[i] = inplace[i] = value<T>(r, i);
  CHECK_OK(piper_rt_all_reduce(comm, in.data(), out.data(), count, dtype,
                               PIPER_RT_SUM));
  CHECK_OK(piper_rt_all_reduce(comm, inplace.data(), inplace.data(), count,
                               dtype, PIPER_RT_SUM));
  CHECK_OK(piper_rt_all_reduce(comm, in.data(), maxOut.data(), count, dtype,
                               PIPER_RT_MAX));

  // reduce_scatter: n blocks of `count`.
  std::vector<T> rsIn(count * n), rsOut(count);
  for (size_t i = 0; i < rsIn.size(); ++i)
    rsIn[i] = value<T>(r, i);
  CHECK_OK(piper_rt_reduce_scatter(comm, rsIn.data(), rsOut.data(), count,
                                   dtype, PIPER_RT_SUM));

  // all_gather and all_to_all.
  std::vector<T> agOut(count * n), a2aIn(count * n), a2aOut(count * n);
  for (size_t i = 0; i < a2aIn.size(); ++i)
    a2aIn[i] = value<T>(r, i + 1000);
  CHECK_OK(piper_rt_all_gather(comm, in.data(), agOut.data(), count, dtype));
  CHECK_OK(
      piper_rt_all_to_all(comm, a2aIn.data(), a2aOut.data(), count, dtype));
  CHECK_OK(piper_rt_stream_synchronize(stream));

  for (size_t i = 0; i < count; ++i) {
    R sum = 0, max = static_cast<R>(value<T>(0, i));
    for (int p = 0; p < n; ++p) {
      sum += static_cast<R>(value<T>(p, i));
      if (static_cast<R>(value<T>(p, i)) > max)
        max = static_cast<R>(value<T>(p, i));
    }
    CHECK(static_cast<R>(out[i]) == sum,
          what + " all_reduce i=" + std::to_string(i));
    CHECK(static_cast<R>(inplace[i]) == sum,
          what + " in-place all_reduce i=" + std::to_string(i));
    CHECK(static_cast<R>(maxOut[i]) == max,
          what + " all_reduce max i=" + std::to_string(i));
    R rsSum = 0;
    for (int p = 0; p < n; ++p)
      rsSum += static_cast<R>(value<T>(p, r * count + i));
    CHECK(static_cast<R>(rsOut[i]) == rsSum,
          what + " reduce_scatter i=" + std::to_string(i));
    for (int p = 0; p < n; ++p) {
      CHECK(agOut[p * count + i] == value<T>(p, i),
            what + " all_gather block " + std::to_string(p));
      // Rank p's block r arrives as our block p.
      CHECK(a2aOut[p * count + i] == value<T>(p, r * count + i + 1000),
            what + " all_to_all block " + std::to_string(p));
    }
  }
}

int testCollectives() {
  Runtime rt;
  rt.setMesh({"dp"}, {rt.size});
  piper_rt_stream stream = nullptr;
  CHECK_OK(piper_rt_stream_create(rt.ctx, "grad", &stream));
  const char *axes[] = {"dp"};
  piper_rt_comm comm = nullptr;
  CHECK_OK(piper_rt_comm_get(rt.ctx, 1, axes, stream, &comm));
  int commSize = 0;
  CHECK_OK(piper_rt_comm_size(comm, &commSize));
  CHECK(commSize == rt.size, "world communicator size");
  // 1 element, an odd size, and 64 Ki elements (512 KiB of f64: MPI's
  // rendezvous protocol and multi-round algorithms rather than eager sends).
  for (size_t count : {size_t(1), size_t(1031), size_t(65536)}) {
    checkCollectives<float>(rt, comm, stream, PIPER_RT_F32, count);
    checkCollectives<double>(rt, comm, stream, PIPER_RT_F64, count);
    checkCollectives<int64_t>(rt, comm, stream, PIPER_RT_I64, count);
  }
  rt.pass("collectives");
  return 0;
}

//===----------------------------------------------------------------------===//
// Sub-communicators of a multi-axis mesh
//===----------------------------------------------------------------------===//

int testGroups(int numAxes) {
  Runtime rt;
  const char *names[] = {"pp", "dp", "tp"};
  std::vector<const char *> axisNames(names, names + numAxes);
  std::vector<int64_t> sizes(numAxes, 2);
  rt.setMesh(axisNames, sizes);
  CHECK(rt.size == (1 << numAxes), "world size must be 2^axes");
  std::vector<int64_t> coords(numAxes);
  CHECK_OK(piper_rt_coords(rt.ctx, coords.data(), coords.size()));
  // Row-major: the last axis is the lowest bit of the rank.
  for (int a = 0; a < numAxes; ++a)
    CHECK(coords[a] == ((rt.rank >> (numAxes - 1 - a)) & 1), "coordinates");

  piper_rt_stream streams[2];
  CHECK_OK(piper_rt_stream_create(rt.ctx, "s0", &streams[0]));
  CHECK_OK(piper_rt_stream_create(rt.ctx, "s1", &streams[1]));
  // Every non-empty axis set, on both streams, in the same order on every
  // rank; the group members are derived from bit arithmetic on ranks.
  for (int mask = 1; mask < (1 << numAxes); ++mask)
    for (piper_rt_stream stream : streams) {
      std::vector<const char *> axes;
      // List the axes in reverse to check that the key is a set.
      for (int a = numAxes - 1; a >= 0; --a)
        if (mask & (1 << a))
          axes.push_back(names[a]);
      piper_rt_comm comm = nullptr;
      CHECK_OK(
          piper_rt_comm_get(rt.ctx, axes.size(), axes.data(), stream, &comm));
      piper_rt_comm again = nullptr;
      CHECK_OK(
          piper_rt_comm_get(rt.ctx, axes.size(), axes.data(), stream, &again));
      CHECK(again == comm, "communicators are cached");

      // Rank bit of axis a is (numAxes - 1 - a); members share the other bits.
      int groupBits = 0;
      for (int a = 0; a < numAxes; ++a)
        if (mask & (1 << a))
          groupBits |= 1 << (numAxes - 1 - a);
      std::vector<int> expected;
      for (int p = 0; p < rt.size; ++p)
        if ((p & ~groupBits) == (rt.rank & ~groupBits))
          expected.push_back(p);
      int size = 0, myIndex = -1;
      CHECK_OK(piper_rt_comm_size(comm, &size));
      CHECK_OK(piper_rt_comm_rank(comm, &myIndex));
      std::vector<int> members(size);
      CHECK_OK(piper_rt_comm_members(comm, members.data(), members.size()));
      CHECK(members == expected, "members of mask " + std::to_string(mask));
      CHECK(expected[myIndex] == rt.rank, "communicator rank");

      // What the members actually see: the gathered world ranks, and the sum.
      int64_t mine = rt.rank, sum = 0;
      std::vector<int64_t> gathered(size);
      CHECK_OK(piper_rt_all_reduce(comm, &mine, &sum, 1, PIPER_RT_I64,
                                   PIPER_RT_SUM));
      CHECK_OK(
          piper_rt_all_gather(comm, &mine, gathered.data(), 1, PIPER_RT_I64));
      CHECK_OK(piper_rt_stream_synchronize(stream));
      int64_t expectedSum = 0;
      for (int p : expected)
        expectedSum += p;
      CHECK(sum == expectedSum, "sum over mask " + std::to_string(mask));
      for (int i = 0; i < size; ++i)
        CHECK(gathered[i] == expected[i],
              "gathered member " + std::to_string(i));
    }
  rt.pass(numAxes == 2 ? "groups-2x2" : "groups-2x2x2");
  return 0;
}

//===----------------------------------------------------------------------===//
// Send/recv ring, with events across streams
//===----------------------------------------------------------------------===//

int testRing() {
  Runtime rt;
  int n = rt.size, r = rt.rank;
  int next = (r + 1) % n, prev = (r + n - 1) % n;
  piper_rt_stream compute = nullptr, sendStream = nullptr, recvStream = nullptr;
  CHECK_OK(piper_rt_stream_create(rt.ctx, "compute", &compute));
  CHECK_OK(piper_rt_stream_create(rt.ctx, "send", &sendStream));
  CHECK_OK(piper_rt_stream_create(rt.ctx, "recv", &recvStream));
  piper_rt_event produced = nullptr, arrived = nullptr;
  CHECK_OK(piper_rt_event_create(rt.ctx, &produced));
  CHECK_OK(piper_rt_event_create(rt.ctx, &arrived));

  // A token goes round the ring n times; every rank adds its rank + 1 to
  // every element as it passes. Buffers alternate so that each hop's send
  // and receive touch different memory.
  const size_t count = 4099;
  std::vector<double> token(count, 0.0), incoming(count, 0.0);
  struct Add {
    std::vector<double> *data;
    double amount;
  };
  auto add = [](void *arg) {
    auto *a = static_cast<Add *>(arg);
    for (double &x : *a->data)
      x += a->amount;
  };
  for (int round = 0; round < n; ++round) {
    for (int hop = 0; hop < n; ++hop) {
      int64_t tag = round * n + hop;
      if (hop == r) { // this rank holds the token at this hop
        Add a{&token, static_cast<double>(r + 1)};
        CHECK_OK(piper_rt_launch(compute, "add", add, &a));
        CHECK_OK(piper_rt_event_record(produced, compute));
        CHECK_OK(piper_rt_stream_wait_event(sendStream, produced));
        CHECK_OK(piper_rt_send(sendStream, token.data(), count, PIPER_RT_F64,
                               next, tag));
        CHECK_OK(piper_rt_stream_synchronize(sendStream));
      }
      if ((hop + 1) % n == r) {
        CHECK_OK(piper_rt_recv(recvStream, incoming.data(), count, PIPER_RT_F64,
                               prev, tag));
        CHECK_OK(piper_rt_event_record(arrived, recvStream));
        CHECK_OK(piper_rt_stream_wait_event(compute, arrived));
        CHECK_OK(piper_rt_event_synchronize(arrived));
        token.swap(incoming);
      }
    }
  }
  // Rank 0 added first in round 0, so after n rounds everyone has added n
  // times: n * n(n+1)/2 everywhere, on the token's final holder, rank 0.
  double expected = static_cast<double>(n) * n * (n + 1) / 2;
  if (r == 0)
    for (size_t i = 0; i < count; ++i)
      CHECK(token[i] == expected, "ring sum " + std::to_string(token[i]));
  CHECK_OK(piper_rt_event_destroy(produced));
  CHECK_OK(piper_rt_event_destroy(arrived));
  rt.pass("ring");
  return 0;
}

//===----------------------------------------------------------------------===//
// Overlap: a posted collective completes while the host computes
//===----------------------------------------------------------------------===//

volatile double sink = 0;

/// Pure host work that makes no runtime or MPI call for `duration` seconds.
void computeFor(double duration) {
  double start = seconds(), x = 0;
  while (seconds() - start < duration)
    for (int i = 0; i < 1000; ++i)
      x += i * 1e-9;
  sink = x;
}

int testOverlap(bool expectDone) {
  Runtime rt;
  rt.setMesh({"dp"}, {rt.size});
  piper_rt_stream grad = nullptr;
  CHECK_OK(piper_rt_stream_create(rt.ctx, "grad", &grad));
  const char *axes[] = {"dp"};
  piper_rt_comm comm = nullptr;
  CHECK_OK(piper_rt_comm_get(rt.ctx, 1, axes, grad, &comm));
  // 2 Mi f64 = 16 MiB: many protocol rounds, each needing both peers inside
  // MPI, so it cannot finish inside the single MPI_Test of the post.
  const size_t count = size_t(1) << 21;
  std::vector<double> data(count, rt.rank + 1.0);
  piper_rt_event done = nullptr;
  CHECK_OK(piper_rt_event_create(rt.ctx, &done));

  // Alone, for the figure.
  double t0 = seconds();
  CHECK_OK(piper_rt_all_reduce(comm, data.data(), data.data(), count,
                               PIPER_RT_F64, PIPER_RT_SUM));
  CHECK_OK(piper_rt_stream_synchronize(grad));
  double alone = seconds() - t0;

  // The same compute time on every rank, so they reach the query together.
  CHECK_OK(
      piper_rt_all_reduce(comm, &alone, &alone, 1, PIPER_RT_F64, PIPER_RT_MAX));
  CHECK_OK(piper_rt_stream_synchronize(grad));

  double t1 = seconds();
  CHECK_OK(piper_rt_all_reduce(comm, data.data(), data.data(), count,
                               PIPER_RT_F64, PIPER_RT_SUM));
  CHECK_OK(piper_rt_event_record(done, grad));
  double compute = 0.5 + 4 * alone;
  computeFor(compute);
  int finished = 0;
  CHECK_OK(piper_rt_event_query(done, &finished));
  CHECK_OK(piper_rt_event_synchronize(done));
  double total = seconds() - t1;
  std::printf("overlap rank %d: all_reduce of 16 MiB alone %.3f s; with %.3f "
              "s of compute: %s at the end of compute, total %.3f s\n",
              rt.rank, alone, compute, finished ? "complete" : "pending",
              total);
  // With progress, every rank sees it complete. Without, the first rank to
  // query cannot (its peer has not been inside MPI since the post), though a
  // later one may, once the first rank's synchronize has driven it: so the
  // control asserts that some rank saw it pending.
  int64_t mine = finished, allFinished = 0;
  CHECK_OK(piper_rt_all_reduce(comm, &mine, &allFinished, 1, PIPER_RT_I64,
                               PIPER_RT_MIN));
  CHECK_OK(piper_rt_stream_synchronize(grad));
  CHECK(allFinished == (expectDone ? 1 : 0),
        expectDone ? "the collective did not progress during compute"
                   : "without a progress thread it completed anyway");
  // Sum of (r + 1) over ranks, twice (the second sums the first's results).
  double once = rt.size * (rt.size + 1) / 2.0;
  for (size_t i = 0; i < count; i += 4097)
    CHECK(data[i] == once * rt.size, "overlap sum");
  CHECK_OK(piper_rt_event_destroy(done));
  rt.pass(expectDone ? "overlap" : "overlap-control");
  return 0;
}

//===----------------------------------------------------------------------===//
// Failures: wrong rank count, timeout, a rank that dies
//===----------------------------------------------------------------------===//

int testMismatch() {
  Runtime rt;
  const char *names[] = {"pp", "dp"};
  int64_t sizes[] = {2, 2};
  piper_rt_mesh mesh = nullptr;
  CHECK_OK(piper_rt_mesh_create(2, names, sizes, &mesh));
  piper_rt_status status = piper_rt_set_mesh(rt.ctx, mesh);
  // What piper-run will do: print the error on every rank and exit 1.
  std::fprintf(stderr, "%s\n", piper_rt_last_error());
  piper_rt_mesh_destroy(mesh);
  piper_rt_finalize(rt.ctx);
  return status == PIPER_RT_ERROR_INVALID_ARGUMENT ? 1 : 0;
}

int testTimeout() {
  Runtime rt;
  piper_rt_stream pp = nullptr;
  CHECK_OK(piper_rt_stream_create(rt.ctx, "pp", &pp));
  // Rank 0 gives up after 2 s; the others would wait 60 s, so the test sees
  // them exit early only if rank 0's abort takes the whole job down.
  CHECK_OK(piper_rt_set_timeout(rt.ctx, rt.rank == 0 ? 2.0 : 60.0));
  double buffer[4];
  if (rt.rank == 0) {
    CHECK_OK(piper_rt_recv(pp, buffer, 4, PIPER_RT_F64, 1, 99));
  } else {
    // Waits for a message rank 0 never sends.
    CHECK_OK(piper_rt_recv(pp, buffer, 4, PIPER_RT_F64, 0, 98));
  }
  piper_rt_stream_synchronize(pp);
  std::printf("UNREACHABLE rank %d returned from the wait\n", rt.rank);
  return 0;
}

int testKill() {
  Runtime rt;
  rt.setMesh({"dp"}, {rt.size});
  piper_rt_stream grad = nullptr;
  CHECK_OK(piper_rt_stream_create(rt.ctx, "grad", &grad));
  const char *axes[] = {"dp"};
  piper_rt_comm comm = nullptr;
  CHECK_OK(piper_rt_comm_get(rt.ctx, 1, axes, grad, &comm));
  const size_t count = size_t(1) << 20;
  std::vector<double> data(count, 1.0);
  // One completed collective first, so the job is known to be healthy.
  CHECK_OK(piper_rt_all_reduce(comm, data.data(), data.data(), 1, PIPER_RT_F64,
                               PIPER_RT_SUM));
  CHECK_OK(piper_rt_stream_synchronize(grad));
  // The last rank dies instead of joining the second collective, which the
  // others have posted and wait in. (Dying just after posting is not reliably
  // "mid-collective": its progress thread may already have pushed all its
  // data, letting the others finish.)
  if (rt.rank == rt.size - 1) {
    std::fprintf(stderr, "rank %d: killing itself mid-collective\n", rt.rank);
    std::fflush(stderr);
    std::raise(SIGKILL);
  }
  CHECK_OK(piper_rt_all_reduce(comm, data.data(), data.data(), count,
                               PIPER_RT_F64, PIPER_RT_SUM));
  piper_rt_stream_synchronize(grad);
  std::printf("UNREACHABLE rank %d finished the collective\n", rt.rank);
  return 0;
}

//===----------------------------------------------------------------------===//
// A merged trace (PIPER_RT_TRACE=<file> without %r)
//===----------------------------------------------------------------------===//

int testTrace() {
  const char *path = std::getenv("PIPER_RT_TRACE");
  CHECK(path && *path, "PIPER_RT_TRACE must name the merged file");
  std::remove(path);
  Runtime rt;
  rt.setMesh({"dp"}, {rt.size});
  piper_rt_stream compute = nullptr, grad = nullptr;
  CHECK_OK(piper_rt_stream_create(rt.ctx, "compute", &compute));
  CHECK_OK(piper_rt_stream_create(rt.ctx, "grad", &grad));
  const char *axes[] = {"dp"};
  piper_rt_comm comm = nullptr;
  CHECK_OK(piper_rt_comm_get(rt.ctx, 1, axes, grad, &comm));
  std::vector<float> g(1024, 1.0f);
  auto work = [](void *) { computeFor(0.01); };
  CHECK_OK(piper_rt_launch(compute, "BW{PP=0,MB=0}", work, nullptr));
  CHECK_OK(piper_rt_all_reduce(comm, g.data(), g.data(), g.size(), PIPER_RT_F32,
                               PIPER_RT_SUM));
  CHECK_OK(piper_rt_launch(compute, "F{PP=0,MB=1}", work, nullptr));
  // A span the host timed itself (what piper-run records per launch).
  double start = 0, end = 0;
  CHECK_OK(piper_rt_time(rt.ctx, &start));
  computeFor(0.002);
  CHECK_OK(piper_rt_time(rt.ctx, &end));
  CHECK(end > start, "piper_rt_time does not advance");
  CHECK_OK(piper_rt_trace_span(compute, "host span", "compute", start, end));
  CHECK(piper_rt_trace_span(compute, "backwards", "compute", end, start) ==
            PIPER_RT_ERROR_INVALID_ARGUMENT,
        "a span ending before it starts is accepted");
  int rank = rt.rank, size = rt.size;
  rt.pass("trace"); // finalize writes the file (rank 0)
  if (rank != 0)
    return 0;
  std::FILE *file = std::fopen(path, "r");
  CHECK(file, std::string("no trace file ") + path);
  std::string json;
  char chunk[4096];
  for (size_t n; (n = std::fread(chunk, 1, sizeof(chunk), file)) > 0;)
    json.append(chunk, n);
  std::fclose(file);
  for (int r = 0; r < size; ++r) {
    std::string pid = "\"pid\":" + std::to_string(r) + ",";
    for (const char *part :
         {"\"name\":\"BW{PP=0,MB=0}\",\"cat\":\"compute\",\"ph\":\"X\",",
          "\"name\":\"all_reduce\",\"cat\":\"comm\",\"ph\":\"X\",",
          "\"name\":\"host span\",\"cat\":\"compute\",\"ph\":\"X\","})
      CHECK(json.find(std::string(part) + pid) != std::string::npos,
            std::string("rank ") + std::to_string(r) + " lacks " + part);
  }
  std::printf("trace: %zu bytes from %d ranks in %s\n", json.size(), size,
              path);
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  std::string name = argc > 1 ? argv[1] : "";
  if (name == "collectives")
    return testCollectives();
  if (name == "groups-2x2")
    return testGroups(2);
  if (name == "groups-2x2x2")
    return testGroups(3);
  if (name == "ring")
    return testRing();
  if (name == "overlap")
    return testOverlap(true);
  if (name == "overlap-control")
    return testOverlap(false);
  if (name == "mismatch")
    return testMismatch();
  if (name == "timeout")
    return testTimeout();
  if (name == "kill")
    return testKill();
  if (name == "trace")
    return testTrace();
  std::fprintf(stderr,
               "usage: %s collectives|groups-2x2|groups-2x2x2|ring|overlap|"
               "overlap-control|mismatch|timeout|kill|trace\n",
               argv[0]);
  return 2;
}
