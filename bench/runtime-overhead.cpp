//===- runtime-overhead.cpp - Host cost of the runtime's instructions -----===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// piper-bench-runtime: the host time the piper_rt_* runtime spends per plan
// instruction (docs/Runtime.md, "How device programs map onto the API"), on
// messages of one element so that the data movement is negligible. Run under
// `mpiexec -np 2` (more ranks join the all_reduce; rank 0 and 1 do the
// point-to-point cases); rank 0 prints microseconds per operation:
//
//   launch          piper_rt_launch of an empty kernel
//   record+wait     piper_rt_event_record + piper_rt_stream_wait_event
//   synchronize     piper_rt_stream_synchronize of an idle stream
//   send enqueue    piper_rt_send of 1 element (enqueue only; the sends are
//                   completed afterwards, untimed)
//   send/recv       1-element ping-pong, each side enqueue + synchronize;
//                   per one-way message (round trip / 2)
//   all_reduce      piper_rt_all_reduce of 1 element + synchronize
//
// The communication cases are also timed with the same calls made directly
// on MPI (MPI_Send/MPI_Recv ping-pong, MPI_Allreduce) on a duplicate of
// MPI_COMM_WORLD, so "overhead" = runtime - raw MPI is what the runtime adds
// (queues, the progress thread, its mutex, the stream bookkeeping).
//
// Each case runs --reps times of --iters iterations after a warm-up; the
// best repetition is printed (a shared machine only ever adds time).
// Options: --iters=N (default 5000), --reps=N (default 3), --smoke (200
// iterations, 1 repetition). PIPER_RT_PROGRESS_THREAD=0 turns the runtime's
// progress thread off, as for any runtime program.
//
//===----------------------------------------------------------------------===//

#include "piper-rt/piper_rt.h"

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

namespace {

int worldRank = -1;

[[noreturn]] void die(const char *file, int line, const std::string &what) {
  std::fprintf(stderr, "piper-bench-runtime: rank %d at %s:%d: %s\n", worldRank,
               file, line, what.c_str());
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, 1);
  std::exit(1);
}

#define CHECK_OK(call)                                                         \
  do {                                                                         \
    if ((call) != PIPER_RT_OK)                                                 \
      die(__FILE__, __LINE__,                                                  \
          std::string(#call) + ": " + piper_rt_last_error());                  \
  } while (0)

#define CHECK_MPI(call)                                                        \
  do {                                                                         \
    if ((call) != MPI_SUCCESS)                                                 \
      die(__FILE__, __LINE__, #call " failed");                                \
  } while (0)

double now() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

volatile int sink = 0;
void emptyKernel(void *arg) { sink = sink + (arg != nullptr); }

struct Options {
  long iters = 5000;
  int reps = 3;
};

/// Runs `body(iters)` reps times after a warm-up of iters / 10 iterations,
/// every rank starting together; returns the best microseconds per iteration
/// (as measured on this rank).
double measure(const Options &o, const std::function<void(long)> &body) {
  body(std::max<long>(o.iters / 10, 1));
  double best = 1e300;
  for (int r = 0; r < o.reps; ++r) {
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    double t0 = now();
    body(o.iters);
    double t = now() - t0;
    best = std::min(best, t);
  }
  CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
  return best / static_cast<double>(o.iters) * 1e6;
}

struct Row {
  std::string name;
  double us;
  double rawUs; // < 0: no raw MPI equivalent
  std::string raw;
};

} // namespace

int main(int argc, char **argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--smoke") {
      o.iters = 200;
      o.reps = 1;
    } else if (a.rfind("--iters=", 0) == 0) {
      o.iters = std::atol(a.c_str() + 8);
    } else if (a.rfind("--reps=", 0) == 0) {
      o.reps = std::atoi(a.c_str() + 7);
    } else if (a == "--help" || a == "-h") {
      std::printf("usage: mpiexec -np 2 piper-bench-runtime [--iters=N] "
                  "[--reps=N] [--smoke]\n");
      return 0;
    } else {
      std::fprintf(stderr, "piper-bench-runtime: unknown option '%s'\n",
                   a.c_str());
      return 2;
    }
  }
  if (o.iters < 1 || o.reps < 1) {
    std::fprintf(stderr, "piper-bench-runtime: --iters and --reps must be "
                         ">= 1\n");
    return 2;
  }

  piper_rt_context ctx = nullptr;
  CHECK_OK(piper_rt_init(&argc, &argv, &ctx));
  int rank = 0, size = 0;
  CHECK_OK(piper_rt_rank(ctx, &rank));
  CHECK_OK(piper_rt_size(ctx, &size));
  worldRank = rank;
  if (size < 2) {
    if (rank == 0)
      std::fprintf(stderr, "piper-bench-runtime: needs at least 2 ranks "
                           "(mpiexec -np 2)\n");
    piper_rt_finalize(ctx);
    return 2;
  }

  // A 1-D mesh of the whole world: the all_reduce's communicator.
  {
    const char *names[] = {"dp"};
    int64_t sizes[] = {size};
    piper_rt_mesh mesh = nullptr;
    CHECK_OK(piper_rt_mesh_create(1, names, sizes, &mesh));
    CHECK_OK(piper_rt_set_mesh(ctx, mesh));
    CHECK_OK(piper_rt_mesh_destroy(mesh));
  }
  piper_rt_stream compute = nullptr, pp = nullptr, grad = nullptr;
  CHECK_OK(piper_rt_stream_create(ctx, "compute", &compute));
  CHECK_OK(piper_rt_stream_create(ctx, "pp", &pp));
  CHECK_OK(piper_rt_stream_create(ctx, "dp_grad", &grad));
  piper_rt_event event = nullptr;
  CHECK_OK(piper_rt_event_create(ctx, &event));
  const char *axes[] = {"dp"};
  piper_rt_comm comm = nullptr;
  CHECK_OK(piper_rt_comm_get(ctx, 1, axes, grad, &comm));
  MPI_Comm raw;
  CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &raw));

  const bool p2p = rank < 2; // ranks 0 and 1 do the point-to-point cases
  const int peer = rank == 0 ? 1 : 0;
  float one = 1.0f, got = 0.0f;
  std::vector<Row> rows;

  // Local instructions (every rank runs them; rank 0's time is printed).
  rows.push_back({"launch (empty kernel)",
                  measure(o,
                          [&](long n) {
                            for (long i = 0; i < n; ++i)
                              CHECK_OK(piper_rt_launch(compute, "k",
                                                       emptyKernel, nullptr));
                          }),
                  -1, ""});
  rows.push_back({"event record + stream wait_event",
                  measure(o,
                          [&](long n) {
                            for (long i = 0; i < n; ++i) {
                              CHECK_OK(piper_rt_event_record(event, compute));
                              CHECK_OK(piper_rt_stream_wait_event(pp, event));
                            }
                            CHECK_OK(piper_rt_stream_synchronize(pp));
                          }),
                  -1, ""});
  rows.push_back({"stream synchronize (idle stream)",
                  measure(o,
                          [&](long n) {
                            for (long i = 0; i < n; ++i)
                              CHECK_OK(piper_rt_stream_synchronize(compute));
                          }),
                  -1, ""});

  // Point-to-point: enqueue cost, then a ping-pong (per one-way message).
  // Sends are enqueued in a batch of at most 1,000 (bounded queue memory);
  // only the enqueue calls are timed, the completion is not.
  {
    const long batch = std::min<long>(o.iters, 1000);
    // The runtime's point-to-point traffic uses its own duplicate of the
    // world, so rank 1 receives through the runtime too.
    auto recvBatch = [&](long n) {
      for (long i = 0; i < n; ++i)
        CHECK_OK(piper_rt_recv(pp, &got, 1, PIPER_RT_F32, 0, 1));
      CHECK_OK(piper_rt_stream_synchronize(pp));
    };
    double best = 1e300;
    for (int r = 0; r < o.reps + 1; ++r) { // the first is a warm-up
      CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
      double total = 0;
      for (long done = 0; done < o.iters; done += batch) {
        long n = std::min(batch, o.iters - done);
        if (rank == 0) {
          double t0 = now();
          for (long i = 0; i < n; ++i)
            CHECK_OK(piper_rt_send(pp, &one, 1, PIPER_RT_F32, 1, 1));
          total += now() - t0;
          CHECK_OK(piper_rt_stream_synchronize(pp));
        } else if (rank == 1) {
          recvBatch(n);
        }
      }
      if (r > 0)
        best = std::min(best, total);
    }
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    rows.push_back({"send enqueue (1 f32, queued)",
                    best / static_cast<double>(o.iters) * 1e6, -1, ""});
  }

  double pingPong = measure(o, [&](long n) {
    if (!p2p)
      return;
    for (long i = 0; i < n; ++i) {
      if (rank == 0) {
        CHECK_OK(piper_rt_send(pp, &one, 1, PIPER_RT_F32, peer, 2));
        CHECK_OK(piper_rt_stream_synchronize(pp));
        CHECK_OK(piper_rt_recv(pp, &got, 1, PIPER_RT_F32, peer, 3));
        CHECK_OK(piper_rt_stream_synchronize(pp));
      } else {
        CHECK_OK(piper_rt_recv(pp, &got, 1, PIPER_RT_F32, peer, 2));
        CHECK_OK(piper_rt_stream_synchronize(pp));
        CHECK_OK(piper_rt_send(pp, &one, 1, PIPER_RT_F32, peer, 3));
        CHECK_OK(piper_rt_stream_synchronize(pp));
      }
    }
  });
  double rawPingPong = measure(o, [&](long n) {
    if (!p2p)
      return;
    for (long i = 0; i < n; ++i) {
      if (rank == 0) {
        CHECK_MPI(MPI_Send(&one, 1, MPI_FLOAT, peer, 2, raw));
        CHECK_MPI(
            MPI_Recv(&got, 1, MPI_FLOAT, peer, 3, raw, MPI_STATUS_IGNORE));
      } else {
        CHECK_MPI(
            MPI_Recv(&got, 1, MPI_FLOAT, peer, 2, raw, MPI_STATUS_IGNORE));
        CHECK_MPI(MPI_Send(&one, 1, MPI_FLOAT, peer, 3, raw));
      }
    }
  });
  rows.push_back({"send+recv 1 f32 (ping-pong, per message)", pingPong / 2,
                  rawPingPong / 2, "MPI_Send/MPI_Recv"});

  float in = static_cast<float>(rank), out = 0;
  double allReduce = measure(o, [&](long n) {
    for (long i = 0; i < n; ++i) {
      CHECK_OK(
          piper_rt_all_reduce(comm, &in, &out, 1, PIPER_RT_F32, PIPER_RT_SUM));
      CHECK_OK(piper_rt_stream_synchronize(grad));
    }
  });
  double rawAllReduce = measure(o, [&](long n) {
    for (long i = 0; i < n; ++i)
      CHECK_MPI(MPI_Allreduce(&in, &out, 1, MPI_FLOAT, MPI_SUM, raw));
  });
  rows.push_back({"all_reduce 1 f32 + synchronize", allReduce, rawAllReduce,
                  "MPI_Allreduce"});

  if (rank == 0) {
    const char *progress = std::getenv("PIPER_RT_PROGRESS_THREAD");
    std::printf("runtime overhead per instruction (piper-rt, %d ranks, rank "
                "0, best of %d x %ld iterations, progress thread %s)\n",
                size, o.reps, o.iters,
                progress && std::strcmp(progress, "0") == 0 ? "off" : "on");
    std::printf("%-42s %10s %10s %10s  %s\n", "instruction", "us/op",
                "raw us/op", "added us", "raw MPI call");
    for (const Row &r : rows) {
      if (r.rawUs < 0)
        std::printf("%-42s %10.3f %10s %10s\n", r.name.c_str(), r.us, "-", "-");
      else
        std::printf("%-42s %10.3f %10.3f %10.3f  %s\n", r.name.c_str(), r.us,
                    r.rawUs, r.us - r.rawUs, r.raw.c_str());
    }
    std::fflush(stdout);
  }

  CHECK_MPI(MPI_Comm_free(&raw));
  CHECK_OK(piper_rt_event_destroy(event));
  CHECK_OK(piper_rt_finalize(ctx));
  return 0;
}
