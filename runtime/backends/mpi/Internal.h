//===- Internal.h - Piper runtime MPI backend internals ---------*- C++ -*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The objects behind the C handles and the functions the backend's files
// share. One mutex per context guards every stream queue, the trace and the
// MPI calls made under it (post and test), so the host thread and the
// progress thread never race on a request; blocking MPI calls (communicator
// creation, the trace gather) run outside it.
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_RT_BACKENDS_MPI_INTERNAL_H
#define PIPER_RT_BACKENDS_MPI_INTERNAL_H

#include "piper-rt/piper_rt.h"

#include "../../lib/Mesh.h"
#include "../../lib/Trace.h"

#include <mpi.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace piper::rt {

/// The progress thread's test intervals while work is pending: fast while a
/// collective is pending or anything moved, backing off to slow while only
/// point-to-point operations wait (Progress.cpp, startProgressThread).
constexpr double kFastPollSeconds = 50e-6;
constexpr double kSlowPollSeconds = 1e-3;
/// The progress thread polls at least every 0.1 s and a host wait at least
/// every 50 us; a longer gap than this between two polls means this rank's
/// own process did not run (the whole job stopped, the machine descheduled
/// it), which is not its peers' silence (Liveness.cpp, waitFor).
constexpr double kOwnStall = 0.25;

/// One queued operation of a stream.
struct Op {
  enum Kind { Send, Recv, AllReduce, ReduceScatter, AllGather, AllToAll, Wait };
  Kind kind = Send;
  /// A collective: a chain of internal steps (a ring's segments) that each
  /// need a test to start, unlike a point-to-point message or a wait.
  bool isCollective() const {
    return kind != Send && kind != Recv && kind != Wait;
  }
  const void *send = nullptr;
  void *recv = nullptr;
  int count = 0; // elements (per member for the collectives' blocks)
  piper_rt_dtype dtype = PIPER_RT_F32;
  piper_rt_reduce_op reduce = PIPER_RT_SUM;
  int peer = -1; // world rank, p2p
  int tag = 0;
  piper_rt_comm_impl *comm = nullptr; // collectives
  // Wait: holds the stream until `waitStream` has completed `waitSeq` ops.
  piper_rt_stream_impl *waitStream = nullptr;
  uint64_t waitSeq = 0;
  MPI_Request request = MPI_REQUEST_NULL;
  bool posted = false;
  double postSeconds = 0; // since the context's origin
};

} // namespace piper::rt

struct piper_rt_stream_impl {
  piper_rt_context_impl *context = nullptr;
  std::string name;
  int index = 0; // trace tid
  bool destroyed = false;
  std::deque<piper::rt::Op> queue;
  // Operations enqueued / completed so far; an event recorded after the n-th
  // enqueue completes when completed >= n. Streams complete in order, so two
  // counters replace a list of outstanding events.
  uint64_t enqueued = 0;
  uint64_t completed = 0;
  // First asynchronous error (CUDA-style sticky), reported and cleared by the
  // next synchronize.
  piper_rt_status error = PIPER_RT_OK;
  std::string errorText;
};

struct piper_rt_event_impl {
  piper_rt_context_impl *context = nullptr;
  piper_rt_stream_impl *stream = nullptr;
  uint64_t seq = 0;
  bool recorded = false;
};

struct piper_rt_comm_impl {
  piper_rt_context_impl *context = nullptr;
  piper_rt_stream_impl *stream = nullptr;
  uint32_t mask = 0;
  MPI_Comm comm = MPI_COMM_NULL;
  int rank = 0;
  std::vector<int> members; // world ranks in communicator order
  std::string description;  // "{dp} of stream 'grad'"
};

namespace piper::rt {
struct Liveness;
} // namespace piper::rt

struct piper_rt_context_impl {
  int rank = 0;
  int size = 1;
  bool threadMultiple = false;
  bool hasMesh = false;
  piper_rt_mesh_impl mesh;
  std::vector<int64_t> coords;
  double timeoutSeconds = PIPER_RT_DEFAULT_COMM_TIMEOUT_SECONDS;
  bool abortOnTimeout = true;
  /// Host waits poll without sleeping (every rank of the node has a core;
  /// Context.cpp, spinWhileWaiting).
  bool spinWhileWaiting = false;
  std::chrono::steady_clock::time_point origin;

  // Point-to-point traffic of every stream: one duplicate of the world made
  // at init (collective there, so streams can be created locally later).
  MPI_Comm p2p = MPI_COMM_NULL;
  // Group communicator per axis mask, and the per-stream duplicates.
  std::map<uint32_t, MPI_Comm> groups;
  std::map<std::pair<uint32_t, int>, std::unique_ptr<piper_rt_comm_impl>> comms;
  // Those of meshes replaced by piper_rt_replace_mesh, freed at finalize.
  std::vector<std::unique_ptr<piper_rt_comm_impl>> retiredComms;
  std::vector<MPI_Comm> retiredGroups;

  std::vector<std::unique_ptr<piper_rt_stream_impl>> streams;
  std::vector<piper_rt_event_impl *> events;

  std::mutex mutex;
  std::condition_variable wake; // new work for the progress thread
  std::thread progressThread;
  bool stopProgress = false;
  // The progress thread polls while work is pending (every pollSeconds)
  // and for a millisecond after, and only then sleeps until woken; enqueue
  // notifies it only in that long sleep (or for a collective while it backs
  // off). A futex wake-up per operation cost a 1-element
  // ping-pong 7 us instead of 0.7 (2 ranks on 2 cores): the woken thread
  // competes with the host thread for the mutex and the cores.
  bool progressSleepingLong = false;
  double lastPendingSeconds = -1;
  // Between tests while only point-to-point operations are pending and none
  // moved: doubled after each such test up to 1 ms, back to 50 us when
  // anything moves or a collective is pending (Progress.cpp).
  double pollSeconds = piper::rt::kFastPollSeconds;
  // A blocking MPI call in flight (what, since when), for the watchdog.
  std::string blockingWhat;
  double blockingSince = -1;

  bool tracing = false;
  std::string tracePath;
  std::vector<piper::rt::TraceSpan> spans;

  // Heartbeats between ring neighbours (Liveness.cpp); null when off.
  piper::rt::Liveness *liveness = nullptr; // owned; freed by stopLiveness
};

namespace piper::rt {

/// Seconds since the context's origin (a barrier at init).
double now(const piper_rt_context_impl &context);

/// Drives every stream as far as it goes without blocking: posts the head
/// operation of each stream, tests it, pops it when done. Needs the mutex.
/// Returns whether any operation was posted or completed.
bool progressAll(piper_rt_context_impl &context);

/// Blocks the host until `done()` (evaluated under the mutex, after
/// progress) holds, or the context's timeout passes since the call; then
/// reports the operation `blocker`'s queue is stuck on, and aborts the job or
/// returns PIPER_RT_ERROR_TIMEOUT. `what` names the wait ("synchronize").
piper_rt_status waitFor(piper_rt_context_impl &context, const char *what,
                        piper_rt_stream_impl *blocker,
                        const std::function<bool()> &done);

/// Enqueues `op` on `stream` and posts it at once if it is the head.
piper_rt_status enqueue(piper_rt_stream_impl &stream, Op op);

/// Posts `op` to MPI (MPI_Isend, MPI_Iallreduce, ...); returns MPI's code.
int postOp(piper_rt_context_impl &context, Op &op);

/// "all_reduce(sum) of 4 f32 on communicator {dp} of stream 'grad' (rank 0
/// of 2: world ranks 0, 2)", for timeouts, errors and trace names.
std::string describeOp(const Op &op);
const char *opName(Op::Kind kind);
const char *dtypeName(piper_rt_dtype dtype);

/// The MPI datatype and operation of the runtime's enums.
MPI_Datatype mpiType(piper_rt_dtype dtype);
MPI_Op mpiOp(piper_rt_reduce_op op);

/// MPI's text for an error code.
std::string mpiErrorString(int code);

/// Starts and stops the progress thread, which also watches blocking calls.
void startProgressThread(piper_rt_context_impl &context);
void stopProgressThread(piper_rt_context_impl &context);

/// Marks a blocking MPI call for the watchdog (empty `what` clears it).
void setBlocking(piper_rt_context_impl &context, const std::string &what);

/// The liveness watchdog (Liveness.cpp): with the progress thread running
/// and PIPER_RT_LIVENESS > 0, each rank sends a heartbeat to the next rank
/// and watches the previous one's; start and stop are collective (init and
/// finalize), poll runs on the progress thread under the mutex.
void startLiveness(piper_rt_context_impl &context);
void pollLiveness(piper_rt_context_impl &context);
void stopLiveness(piper_rt_context_impl &context);

/// Watches start-up (MPI_Init and the collective set-up before the liveness
/// watchdog runs), which heartbeats cannot cover: a rank stopped or dead
/// there held its peers in MPI_Init with no deadline. Started before
/// MPI_Init, done() once the watchdog runs; if that takes longer than
/// PIPER_RT_STARTUP seconds (default 60; 0 turns it off), this rank prints
/// one line and exits, which makes the launcher end the job.
class StartupWatch {
public:
  StartupWatch();
  ~StartupWatch();
  void done();

private:
  std::mutex mutex;
  std::condition_variable finished;
  bool isDone = false;
  std::thread thread;
};

/// Prints the one-line timeout report and, if the context says so, aborts
/// every rank; otherwise records and returns PIPER_RT_ERROR_TIMEOUT.
piper_rt_status reportTimeout(piper_rt_context_impl &context,
                              const std::string &message);

/// Records a span when tracing (needs the mutex).
void traceSpan(piper_rt_context_impl &context, const piper_rt_stream_impl &s,
               const std::string &name, const char *category, double start,
               double end, const std::string &args);

/// Writes the trace file(s); collective over the world for a merged trace.
piper_rt_status writeTrace(piper_rt_context_impl &context);

/// Common argument checks.
piper_rt_status checkStream(piper_rt_stream_impl *stream);
piper_rt_status checkCount(size_t count, piper_rt_dtype dtype);

} // namespace piper::rt

#endif // PIPER_RT_BACKENDS_MPI_INTERNAL_H
