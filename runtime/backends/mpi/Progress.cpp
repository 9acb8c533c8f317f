//===- Progress.cpp - Piper runtime MPI progress, waits and timeouts ------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// OpenMPI has no background progress: a nonblocking collective advances only
// while some thread is inside MPI. So the runtime runs a progress thread that
// tests the head operation of every stream while the host thread computes,
// and every host wait also drives progress itself (the only progress when
// the thread is off or MPI_THREAD_MULTIPLE was not granted).
//
// Every wait has a deadline. A job where one rank stopped taking part would
// otherwise hang every other rank until the scheduler kills it; instead the
// first rank to give up prints one line that says what it was waiting for
// and MPI_Abort takes the whole job down.
//
//===----------------------------------------------------------------------===//

#include "Internal.h"

#include <cstdio>

using namespace piper::rt;

namespace {

/// Advances `stream`'s queue; returns whether anything changed.
bool progressStream(piper_rt_context_impl &context,
                    piper_rt_stream_impl &stream) {
  bool changed = false;
  while (!stream.queue.empty()) {
    Op &op = stream.queue.front();
    bool done = false;
    if (op.kind == Op::Wait) {
      done = op.waitStream->completed >= op.waitSeq;
    } else {
      if (!op.posted) {
        op.postSeconds = now(context);
        op.posted = true;
        changed = true;
        if (int code = postOp(context, op)) {
          if (stream.error == PIPER_RT_OK) {
            stream.error = PIPER_RT_ERROR_COMMUNICATION;
            stream.errorText = "rank " + std::to_string(context.rank) + ": " +
                               describeOp(op) +
                               " failed to start: " + mpiErrorString(code);
          }
          op.request = MPI_REQUEST_NULL;
        }
      }
      int flag = 1;
      if (op.request != MPI_REQUEST_NULL) {
        MPI_Status status;
        int code = MPI_Test(&op.request, &flag, &status);
        if (code == MPI_SUCCESS && flag && op.kind == Op::Recv) {
          // A shorter message matches too; the plan's shapes say it must not.
          int received = 0;
          MPI_Get_count(&status, mpiType(op.dtype), &received);
          if (received != op.count && stream.error == PIPER_RT_OK) {
            stream.error = PIPER_RT_ERROR_COMMUNICATION;
            stream.errorText = "rank " + std::to_string(context.rank) + ": " +
                               describeOp(op) + " received " +
                               std::to_string(received) + " elements";
          }
        }
        if (code != MPI_SUCCESS) {
          flag = 1;
          if (stream.error == PIPER_RT_OK) {
            stream.error = PIPER_RT_ERROR_COMMUNICATION;
            stream.errorText = "rank " + std::to_string(context.rank) + ": " +
                               describeOp(op) +
                               " failed: " + mpiErrorString(code);
          }
        }
      }
      done = flag != 0;
      if (done && context.tracing) {
        std::string args = "\"elements\":" + std::to_string(op.count) +
                           ",\"dtype\":\"" + dtypeName(op.dtype) + "\"";
        if (op.peer >= 0)
          args += ",\"peer\":" + std::to_string(op.peer) +
                  ",\"tag\":" + std::to_string(op.tag);
        if (op.comm)
          args += ",\"comm\":\"" + jsonEscape(op.comm->description) + "\"";
        traceSpan(context, stream, opName(op.kind), "comm", op.postSeconds,
                  now(context), args);
      }
    }
    if (!done)
      break;
    stream.queue.pop_front();
    ++stream.completed;
    changed = true;
  }
  return changed;
}

bool anyPending(const piper_rt_context_impl &context) {
  for (const auto &stream : context.streams)
    if (!stream->queue.empty())
      return true;
  return false;
}

/// Whether a stream's head is a posted collective. A nonblocking collective
/// is a chain of internal steps (a ring's segments), each of which needs a
/// test to start, while a point-to-point message between two ranks of a node
/// needs a test or two (OpenMPI's shared-memory transport copies a large
/// message in one go once the receiver sees it).
bool collectivePending(const piper_rt_context_impl &context) {
  for (const auto &stream : context.streams)
    if (!stream->queue.empty()) {
      const Op &head = stream->queue.front();
      if (head.posted && head.isCollective())
        return true;
    }
  return false;
}

/// The operation that holds `stream` back: its head, or, when the head waits
/// for another stream, what holds that one (bounded, since waits only point
/// at events recorded earlier).
const Op *blockingOp(piper_rt_stream_impl *stream) {
  for (int hops = 0; stream && hops < 64; ++hops) {
    if (stream->queue.empty())
      return nullptr;
    const Op &head = stream->queue.front();
    if (head.kind != Op::Wait)
      return &head;
    stream = head.waitStream;
  }
  return nullptr;
}

} // namespace

bool piper::rt::progressAll(piper_rt_context_impl &context) {
  // Waits on one stream may be released by another one's progress, so go
  // round until nothing moves.
  bool any = false;
  for (bool changed = true; changed;) {
    changed = false;
    for (auto &stream : context.streams)
      changed |= progressStream(context, *stream);
    any |= changed;
  }
  return any;
}

piper_rt_status piper::rt::reportTimeout(piper_rt_context_impl &context,
                                         const std::string &message) {
  if (context.abortOnTimeout) {
    std::fprintf(stderr, "piper-rt: %s; aborting the job\n", message.c_str());
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, PIPER_RT_ABORT_EXIT_CODE);
  }
  return PIPER_RT_ERROR(PIPER_RT_ERROR_TIMEOUT, "%s", message.c_str());
}

piper_rt_status piper::rt::waitFor(piper_rt_context_impl &context,
                                   const char *what,
                                   piper_rt_stream_impl *blocker,
                                   const std::function<bool()> &done) {
  // Time this rank did not run (a gap of more than kOwnStall between two
  // polls: the job was stopped and continued, the machine descheduled it)
  // is not time its peers kept it waiting, so it does not count towards
  // the timeout.
  double start = now(context), lastPolled = start, stalled = 0;
  for (int spins = 0;; ++spins) {
    std::string message;
    {
      std::lock_guard<std::mutex> guard(context.mutex);
      progressAll(context);
      if (done())
        return PIPER_RT_OK;
      double t = now(context);
      if (t - lastPolled > kOwnStall)
        stalled += t - lastPolled;
      lastPolled = t;
      double elapsed = t - start - stalled;
      if (elapsed > context.timeoutSeconds) {
        const Op *op = blockingOp(blocker);
        char timing[160];
        if (op && op->posted)
          std::snprintf(timing, sizeof(timing),
                        "did not complete within %.3g s (posted %.3f s ago)",
                        context.timeoutSeconds, now(context) - op->postSeconds);
        else
          std::snprintf(timing, sizeof(timing),
                        "did not complete within %.3g s (waited %.3f s)",
                        context.timeoutSeconds, elapsed);
        message = "rank " + std::to_string(context.rank) + " of " +
                  std::to_string(context.size) + ": timeout in " + what +
                  " of stream '" + (blocker ? blocker->name : "?") +
                  "': " + (op ? describeOp(*op) : std::string("the stream")) +
                  " " + timing;
      }
    }
    if (!message.empty())
      return reportTimeout(context, message);
    // Spin briefly for latency, then sleep so that oversubscribed ranks (8
    // on 2 cores) leave the cores to the peers they are waiting for; a rank
    // with a core of its own keeps polling, since every fragment of a large
    // message waits for a test (a 1 MiB all-reduce took 1-7 ms sleeping).
    if (spins < 64 || context.spinWhileWaiting)
      std::this_thread::yield();
    else
      std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

void piper::rt::setBlocking(piper_rt_context_impl &context,
                            const std::string &what) {
  std::lock_guard<std::mutex> guard(context.mutex);
  context.blockingWhat = what;
  context.blockingSince = what.empty() ? -1 : now(context);
}

void piper::rt::startProgressThread(piper_rt_context_impl &context) {
  context.progressThread = std::thread([&context] {
    std::unique_lock<std::mutex> lock(context.mutex);
    while (!context.stopProgress) {
      bool moved = progressAll(context);
      pollLiveness(context);
      // The watchdog: a blocking call (communicator creation, the trace
      // gather) cannot time itself out, so this thread does.
      if (context.blockingSince >= 0 &&
          now(context) - context.blockingSince > context.timeoutSeconds) {
        std::string message = "rank " + std::to_string(context.rank) + " of " +
                              std::to_string(context.size) +
                              ": timeout: " + context.blockingWhat +
                              " did not complete within " +
                              std::to_string(context.timeoutSeconds) + " s";
        std::fprintf(stderr, "piper-rt: %s; aborting the job\n",
                     message.c_str());
        std::fflush(stderr);
        MPI_Abort(MPI_COMM_WORLD, PIPER_RT_ABORT_EXIT_CODE);
      }
      // Pending work, or some within the last millisecond: test again
      // soon; longer idle: sleep until an enqueue wakes this thread (the
      // 100 ms bound is for the watchdog).
      //
      // Soon is 50 us while a collective is pending or anything moved:
      // that keeps a 4 MiB all-reduce moving at memory speed. With only
      // point-to-point operations pending and nothing moving (a pipeline
      // stage's receive posted a whole launch ahead of its sender), the
      // interval doubles up to 1 ms: this thread shares the rank's core
      // with the host thread's kernels, and a wake-up every 50 us made the
      // launches that ran beside such a receive 20-50% slower (tiny GPT
      // PP2 1F1B on 2 cores: rank 0's second forward 11.7-13.1 ms against
      // 7.7-8.8 without the thread). A host wait tests by itself, so the
      // longer interval delays nothing the host is waiting for.
      double t = now(context);
      bool pending = anyPending(context);
      if (pending)
        context.lastPendingSeconds = t;
      bool poll = context.lastPendingSeconds >= 0 &&
                  t - context.lastPendingSeconds < 1e-3;
      if (moved || !pending || collectivePending(context))
        context.pollSeconds = kFastPollSeconds;
      else
        context.pollSeconds =
            std::min(2 * context.pollSeconds, kSlowPollSeconds);
      context.progressSleepingLong = !poll;
      auto pause = poll ? std::chrono::microseconds(
                              static_cast<int64_t>(context.pollSeconds * 1e6))
                        : std::chrono::microseconds(100000);
      context.wake.wait_for(lock, pause);
      context.progressSleepingLong = false;
    }
  });
}

void piper::rt::stopProgressThread(piper_rt_context_impl &context) {
  if (!context.progressThread.joinable())
    return;
  {
    std::lock_guard<std::mutex> guard(context.mutex);
    context.stopProgress = true;
  }
  context.wake.notify_all();
  context.progressThread.join();
}
