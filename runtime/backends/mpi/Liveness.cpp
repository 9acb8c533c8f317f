//===- Liveness.cpp - Heartbeats that find a stopped or dead rank ---------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// A rank stopped by SIGSTOP (or hung outside MPI) leaves its peers waiting
// until the generic timeout (PIPER_RT_TIMEOUT, 300 s by default), since a
// wait cannot tell a slow peer from a stopped one. The progress thread can:
// it runs while its host thread computes, so a live rank's progress thread
// sends a heartbeat every PIPER_RT_LIVENESS/5 seconds however long its
// kernels take. Each rank sends to the next rank of the world ring and
// watches the previous one; silence for PIPER_RT_LIVENESS seconds (default
// 5) means the previous rank's process no longer runs, and this rank prints
// one line naming it and what this rank was waiting for, and aborts the job.
//
// At finalize a rank says goodbye (a heartbeat of 0) so that its successor
// stops watching it, and waits for its predecessor's goodbye, so that no
// heartbeat is left unmatched when the communicator is freed.
//
// The watchdog runs only with the progress thread (without it a computing
// rank sends nothing); PIPER_RT_LIVENESS=0 turns it off.
//
//===----------------------------------------------------------------------===//

#include "Internal.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>

using namespace piper::rt;

namespace piper::rt {

struct Liveness {
  MPI_Comm comm = MPI_COMM_NULL;
  int next = 0, previous = 0;
  double silence = 5, interval = 1;
  /// The heartbeat being received from `previous`, and its value (1 alive,
  /// 0 goodbye).
  MPI_Request recv = MPI_REQUEST_NULL;
  int incoming = 0;
  /// The heartbeat in flight to `next` (at most one: a slow peer does not
  /// pile them up), and its value.
  MPI_Request send = MPI_REQUEST_NULL;
  int outgoing = 1;
  double lastHeard = 0, lastSent = -1;
  bool previousDone = false, active = false;
};

} // namespace piper::rt

namespace {

constexpr int kTag = 7;

/// PIPER_RT_LIVENESS: seconds of silence; 0 turns the watchdog off. Out of
/// range or not a number: the default, with a warning from rank 0.
double livenessSeconds(int rank) {
  const double fallback = 5.0;
  const char *text = std::getenv("PIPER_RT_LIVENESS");
  if (!text || !*text)
    return fallback;
  char *end = nullptr;
  errno = 0;
  double value = std::strtod(text, &end);
  if (end != text && *end == '\0' && errno == 0 && std::isfinite(value) &&
      (value == 0 || (value >= 0.5 && value <= 3600)))
    return value;
  if (rank == 0)
    std::fprintf(stderr,
                 "piper-rt: PIPER_RT_LIVENESS='%s' is not 0 (off) or 0.5 to "
                 "3600 seconds; using %g s\n",
                 text, fallback);
  return fallback;
}

void postReceive(Liveness &l) {
  MPI_Irecv(&l.incoming, 1, MPI_INT, l.previous, kTag, l.comm, &l.recv);
}

/// What this rank is blocked on, for the report.
std::string waitingFor(piper_rt_context_impl &context) {
  for (auto &stream : context.streams)
    if (!stream->queue.empty() && stream->queue.front().kind != Op::Wait)
      return describeOp(stream->queue.front());
  if (!context.blockingWhat.empty())
    return context.blockingWhat;
  return "no communication (computing)";
}

} // namespace

void piper::rt::startLiveness(piper_rt_context_impl &context) {
  double silence = livenessSeconds(context.rank);
  if (context.size < 2 || silence == 0 || !context.progressThread.joinable())
    return;
  auto *l = new Liveness;
  // Collective: every rank starts the watchdog alike (same environment and
  // MPI library, so the same progress-thread decision).
  MPI_Comm_dup(MPI_COMM_WORLD, &l->comm);
  MPI_Comm_set_errhandler(l->comm, MPI_ERRORS_RETURN);
  l->next = (context.rank + 1) % context.size;
  l->previous = (context.rank + context.size - 1) % context.size;
  l->silence = silence;
  l->interval = std::max(0.05, silence / 5);
  std::lock_guard<std::mutex> guard(context.mutex);
  l->lastHeard = now(context);
  postReceive(*l);
  l->active = true;
  context.liveness = l;
}

void piper::rt::pollLiveness(piper_rt_context_impl &context) {
  Liveness *l = context.liveness;
  if (!l || !l->active)
    return;
  double t = now(context);
  int flag = 0;
  while (!l->previousDone && l->recv != MPI_REQUEST_NULL &&
         MPI_Test(&l->recv, &flag, MPI_STATUS_IGNORE) == MPI_SUCCESS && flag) {
    l->lastHeard = t;
    if (l->incoming == 0)
      l->previousDone = true;
    else
      postReceive(*l);
  }
  if (l->send != MPI_REQUEST_NULL)
    MPI_Test(&l->send, &flag, MPI_STATUS_IGNORE);
  if (l->send == MPI_REQUEST_NULL && t - l->lastSent >= l->interval) {
    l->outgoing = 1;
    MPI_Isend(&l->outgoing, 1, MPI_INT, l->next, kTag, l->comm, &l->send);
    l->lastSent = t;
  }
  if (l->previousDone || t - l->lastHeard <= l->silence)
    return;
  std::fprintf(stderr,
               "piper-rt: rank %d of %d: rank %d sent no heartbeat for %.1f s "
               "(stopped, hung or dead; PIPER_RT_LIVENESS=%g) while rank %d "
               "waits in %s; aborting the job\n",
               context.rank, context.size, l->previous, t - l->lastHeard,
               l->silence, context.rank, waitingFor(context).c_str());
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, PIPER_RT_ABORT_EXIT_CODE);
}

void piper::rt::stopLiveness(piper_rt_context_impl &context) {
  Liveness *l = context.liveness;
  if (!l)
    return;
  {
    std::lock_guard<std::mutex> guard(context.mutex);
    l->active = false;
  }
  // From here only this thread touches the watchdog's requests.
  auto finish = [&](MPI_Request &request) {
    double start = now(context);
    int flag = 0;
    while (request != MPI_REQUEST_NULL &&
           MPI_Test(&request, &flag, MPI_STATUS_IGNORE) == MPI_SUCCESS &&
           !flag && now(context) - start < context.timeoutSeconds)
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    return request == MPI_REQUEST_NULL;
  };
  finish(l->send);
  l->outgoing = 0;
  MPI_Isend(&l->outgoing, 1, MPI_INT, l->next, kTag, l->comm, &l->send);
  // The predecessor's heartbeats, up to its goodbye.
  double start = now(context);
  while (!l->previousDone && now(context) - start < context.timeoutSeconds) {
    if (!finish(l->recv))
      break;
    if (l->incoming == 0)
      l->previousDone = true;
    else
      postReceive(*l);
  }
  if (l->recv != MPI_REQUEST_NULL) {
    MPI_Cancel(&l->recv);
    MPI_Request_free(&l->recv);
  }
  finish(l->send);
  MPI_Comm_free(&l->comm);
  context.liveness = nullptr;
  delete l;
}
