//===- pingpong.cpp - One-way message time against message size -----------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// piper-bench-pingpong: the link between world ranks 0 and 1 as a plan's
// sends and receives see it (piper_rt_send / piper_rt_recv on a stream, then
// a synchronize, as the MPI backend runs them), for message sizes from 8
// bytes to 4 MiB. Rank 0 prints one JSON object that piper-calibrate reads
// (--pingpong) to fit the link's alpha (latency) and beta (1 / bandwidth):
//
//   {"pingpong": [{"bytes": 8, "seconds": 2.1e-06}, ...]}
//
// "seconds" is half the fastest of --iters round trips: on a shared machine
// preemption only adds time, and piper-calibrate fits kernels from their
// fastest runs too. Options: --iters=N (default 50), --smoke (5 iterations,
// sizes up to 64 KiB).
//
//===----------------------------------------------------------------------===//

#include "piper-rt/piper_rt.h"

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

[[noreturn]] void die(const std::string &what) {
  std::fprintf(stderr, "piper-bench-pingpong: %s\n", what.c_str());
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, 1);
  std::exit(1);
}

void check(piper_rt_status status, const char *what) {
  if (status != PIPER_RT_OK)
    die(std::string(what) + ": " + piper_rt_last_error());
}

double now() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

} // namespace

int main(int argc, char **argv) {
  long iters = 50;
  size_t maxBytes = size_t(4) << 20;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--smoke") {
      iters = 5;
      maxBytes = size_t(64) << 10;
    } else if (a.rfind("--iters=", 0) == 0) {
      iters = std::atol(a.c_str() + 8);
    } else {
      std::fprintf(stderr,
                   "piper-bench-pingpong: unknown option '%s' "
                   "(--iters=N, --smoke)\n",
                   a.c_str());
      return 2;
    }
  }
  if (iters < 1) {
    std::fprintf(stderr, "piper-bench-pingpong: --iters must be >= 1\n");
    return 2;
  }
  piper_rt_context ctx = nullptr;
  check(piper_rt_init(&argc, &argv, &ctx), "piper_rt_init");
  int rank = 0, size = 0;
  check(piper_rt_rank(ctx, &rank), "piper_rt_rank");
  check(piper_rt_size(ctx, &size), "piper_rt_size");
  if (size < 2) {
    if (rank == 0)
      std::fprintf(stderr, "piper-bench-pingpong: needs 2 ranks "
                           "(mpiexec -np 2)\n");
    piper_rt_finalize(ctx);
    return 2;
  }
  piper_rt_stream stream = nullptr;
  check(piper_rt_stream_create(ctx, "pp", &stream), "stream");
  std::vector<char> buffer(maxBytes);
  std::string out = "{\"pingpong\": [";
  bool first = true;
  for (size_t bytes = 8; bytes <= maxBytes; bytes *= 4) {
    size_t count = bytes / 4;
    std::vector<double> trips;
    for (long i = 0; i <= iters; ++i) {
      MPI_Barrier(MPI_COMM_WORLD);
      double t0 = now();
      if (rank == 0) {
        check(piper_rt_send(stream, buffer.data(), count, PIPER_RT_F32, 1, 1),
              "send");
        check(piper_rt_recv(stream, buffer.data(), count, PIPER_RT_F32, 1, 2),
              "recv");
        check(piper_rt_stream_synchronize(stream), "synchronize");
      } else if (rank == 1) {
        check(piper_rt_recv(stream, buffer.data(), count, PIPER_RT_F32, 0, 1),
              "recv");
        check(piper_rt_send(stream, buffer.data(), count, PIPER_RT_F32, 0, 2),
              "send");
        check(piper_rt_stream_synchronize(stream), "synchronize");
      }
      if (i > 0) // the first is a warm-up
        trips.push_back(now() - t0);
    }

    char entry[128];
    std::snprintf(entry, sizeof(entry), "%s{\"bytes\": %zu, \"seconds\": %.9g}",
                  first ? "" : ", ", bytes,
                  *std::min_element(trips.begin(), trips.end()) / 2);
    out += entry;
    first = false;
  }
  out += "]}\n";
  if (rank == 0)
    std::fputs(out.c_str(), stdout);
  check(piper_rt_finalize(ctx), "piper_rt_finalize");
  return 0;
}
