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
// Silence alone cannot tell a stopped predecessor from one the scheduler
// starves (a loaded machine, more ranks than cores): when the predecessor
// runs on this machine (same boot and PID namespace, exchanged at start),
// its process state settles it. Stopped ('T'), a zombie or gone: abort at
// once. Running or sleeping: it is alive but silent, so it gets up to
// kLiveGrace times the silence before it is called hung. Across machines
// silence is all there is.
//
// The watchdog runs only with the progress thread (without it a computing
// rank sends nothing); PIPER_RT_LIVENESS=0 turns it off.
//
// Start-up comes before any heartbeat: a rank stopped or dead before or in
// MPI_Init left the others in MPI_Init with no deadline at all. The
// StartupWatch gives start-up a deadline (PIPER_RT_STARTUP); since no rank
// can hear from another before MPI is up, the line names the rank that
// waited, not the one that never came.
//
//===----------------------------------------------------------------------===//

#include "Internal.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <unistd.h>

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
  /// When this rank last polled: a long gap since means this rank did not
  /// run either (see pollLiveness).
  double lastPolled = 0;
  bool previousDone = false, active = false;
  /// The predecessor's process id when it shares this rank's machine and
  /// PID namespace, else 0.
  long previousPid = 0;
};

} // namespace piper::rt

namespace {

constexpr int kTag = 7, kIdentityTag = 8;
/// How many times the silence a predecessor that is visibly alive (on this
/// machine, running or sleeping) may stay silent before it is called hung.
constexpr double kLiveGrace = 4;
/// Who this process is to a peer on the same machine: the kernel's boot id
/// and PID namespace (two containers on one host may share a host name but
/// not a process table), and its process id.
struct ProcessIdentity {
  char where[96] = {};
  long pid = 0;
};

ProcessIdentity thisProcess() {
  ProcessIdentity id;
  id.pid = static_cast<long>(::getpid());
  char boot[48] = {}, ns[40] = {};
  if (FILE *f = std::fopen("/proc/sys/kernel/random/boot_id", "r")) {
    if (!std::fgets(boot, sizeof(boot), f))
      boot[0] = '\0';
    std::fclose(f);
  }
  ssize_t n = ::readlink("/proc/self/ns/pid", ns, sizeof(ns) - 1);
  if (!boot[0] || n <= 0)
    return id; // unknown: never treated as the same machine
  ns[n] = '\0';
  std::snprintf(id.where, sizeof(id.where), "%s/%s", boot, ns);
  return id;
}

/// The state letter of process `pid` from /proc ('R', 'S', 'T', 'Z', ...),
/// or 0 when it no longer exists.
char processState(long pid) {
  char path[64], text[512];
  std::snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
  FILE *f = std::fopen(path, "r");
  if (!f)
    return 0;
  size_t n = std::fread(text, 1, sizeof(text) - 1, f);
  std::fclose(f);
  text[n] = '\0';
  // "pid (comm) S ...": the name may hold spaces and parentheses.
  const char *close = std::strrchr(text, ')');
  return close && close[1] == ' ' ? close[2] : 0;
}

/// Whether a silent predecessor is visibly alive: on this machine, and
/// running, sleeping or in an uninterruptible wait.
bool visiblyAlive(long pid) {
  if (pid <= 0)
    return false;
  char state = processState(pid);
  return state == 'R' || state == 'S' || state == 'D';
}

/// The seconds the environment variable `name` sets: 0 (off) or a value in
/// [lowest, highest]. Unset: `fallback`; out of range or not a number:
/// `fallback`, with a warning when `warn`.
double secondsSetting(const char *name, double fallback, double lowest,
                      double highest, bool warn) {
  const char *text = std::getenv(name);
  if (!text || !*text)
    return fallback;
  char *end = nullptr;
  errno = 0;
  double value = std::strtod(text, &end);
  if (end != text && *end == '\0' && errno == 0 && std::isfinite(value) &&
      (value == 0 || (value >= lowest && value <= highest)))
    return value;
  if (warn)
    std::fprintf(stderr,
                 "piper-rt: %s='%s' is not 0 (off) or %g to %g seconds; "
                 "using %g s\n",
                 name, text, lowest, highest, fallback);
  return fallback;
}

/// PIPER_RT_LIVENESS: seconds of silence; 0 turns the watchdog off. Rank 0
/// warns about a bad value.
double livenessSeconds(int rank) {
  return secondsSetting("PIPER_RT_LIVENESS", 5.0, 0.5, 3600, rank == 0);
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

/// PIPER_RT_STARTUP: 0 (off) or 1 to 86400 seconds; default 60, well above
/// MPI_Init on a large job and well below the generic timeout.
static double startupSeconds() {
  return secondsSetting("PIPER_RT_STARTUP", 60.0, 1, 86400, true);
}

/// The launcher's rank and size of this process, before MPI can say.
static const char *launcherValue(std::initializer_list<const char *> names) {
  for (const char *name : names)
    if (const char *value = std::getenv(name))
      if (*value)
        return value;
  return "?";
}

StartupWatch::StartupWatch() {
  double seconds = startupSeconds();
  if (seconds == 0)
    return;
  thread = std::thread([this, seconds] {
    std::unique_lock<std::mutex> lock(mutex);
    if (finished.wait_for(lock, std::chrono::duration<double>(seconds),
                          [this] { return isDone; }))
      return;
    std::fprintf(
        stderr,
        "piper-rt: rank %s of %s: start-up (MPI_Init and the runtime's "
        "set-up) did not finish in %g s: another rank stopped, hung or died "
        "before it started (PIPER_RT_STARTUP=%g); aborting the job\n",
        launcherValue(
            {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "SLURM_PROCID"}),
        launcherValue({"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS"}),
        seconds, seconds);
    std::fflush(stderr);
    // MPI may not be up: MPI_Abort is not available. A rank that exits
    // makes the launcher end the job.
    _exit(PIPER_RT_ABORT_EXIT_CODE);
  });
}

void StartupWatch::done() {
  {
    std::lock_guard<std::mutex> guard(mutex);
    isDone = true;
  }
  finished.notify_all();
  if (thread.joinable())
    thread.join();
}

StartupWatch::~StartupWatch() { done(); }

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
  // Pairwise on the ring, so every rank takes part alike.
  ProcessIdentity mine = thisProcess(), theirs;
  MPI_Sendrecv(&mine, sizeof(mine), MPI_BYTE, l->next, kIdentityTag, &theirs,
               sizeof(theirs), MPI_BYTE, l->previous, kIdentityTag, l->comm,
               MPI_STATUS_IGNORE);
  if (mine.where[0] &&
      std::strncmp(mine.where, theirs.where, sizeof(mine.where)) == 0)
    l->previousPid = theirs.pid;
  std::lock_guard<std::mutex> guard(context.mutex);
  l->lastHeard = l->lastPolled = now(context);
  postReceive(*l);
  l->active = true;
  context.liveness = l;
}

void piper::rt::pollLiveness(piper_rt_context_impl &context) {
  Liveness *l = context.liveness;
  if (!l || !l->active)
    return;
  double t = now(context);
  // This rank did not run for a while (the whole job stopped and went on,
  // the machine's host descheduled it, the scheduler starved this thread):
  // its predecessor most likely did not run either, and its silence over
  // that gap says nothing about it. Without this, a job paused for longer
  // than the silence aborted itself when it went on.
  if (double gap = t - l->lastPolled; gap > kOwnStall)
    l->lastHeard = std::min(t, l->lastHeard + gap);
  l->lastPolled = t;
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
  if (t - l->lastHeard <= kLiveGrace * l->silence &&
      visiblyAlive(l->previousPid))
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
