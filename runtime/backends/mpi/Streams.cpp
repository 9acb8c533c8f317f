//===- Streams.cpp - Piper runtime streams, events and launches -----------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// A stream is an in-order queue, as in CUDA: an operation starts only when
// the one before it on the same stream has completed, so a collective may
// read a buffer the previous receive wrote. On the CPU a launch runs on the
// host thread once its stream is idle; communication is queued and posted by
// whoever drives progress next.
//
//===----------------------------------------------------------------------===//

#include "Internal.h"

#include <new>

using namespace piper::rt;

piper_rt_status piper::rt::checkStream(piper_rt_stream_impl *stream) {
  if (!stream)
    return PIPER_RT_ERROR(PIPER_RT_ERROR_INVALID_ARGUMENT, "stream is NULL");
  if (stream->destroyed)
    return PIPER_RT_ERROR(PIPER_RT_ERROR_INVALID_ARGUMENT,
                          "stream '%s' was destroyed", stream->name.c_str());
  return PIPER_RT_OK;
}

piper_rt_status piper::rt::enqueue(piper_rt_stream_impl &stream, Op op) {
  piper_rt_context_impl &context = *stream.context;
  bool wake;
  {
    std::lock_guard<std::mutex> guard(context.mutex);
    stream.queue.push_back(op);
    ++stream.enqueued;
    // Post now when the stream is idle: no reason to wait for the progress
    // thread's next round.
    if (stream.queue.size() == 1)
      progressAll(context);
    // A polling progress thread sees the operation within 50 us anyway;
    // one that backed off (only point-to-point work pending) is woken for a
    // collective, whose steps each need a test.
    wake = context.progressSleepingLong ||
           (op.isCollective() && context.pollSeconds > kFastPollSeconds);
    if (op.isCollective())
      context.pollSeconds = kFastPollSeconds;
  }
  if (wake)
    context.wake.notify_one();
  return PIPER_RT_OK;
}

void piper::rt::traceSpan(piper_rt_context_impl &context,
                          const piper_rt_stream_impl &stream,
                          const std::string &name, const char *category,
                          double start, double end, const std::string &args) {
  if (!context.tracing)
    return;
  TraceSpan span;
  span.name = name;
  span.category = category;
  span.tid = stream.index;
  span.startMicros = start * 1e6;
  span.durationMicros = (end - start) * 1e6;
  span.args = args;
  context.spans.push_back(std::move(span));
}

piper_rt_status piper_rt_stream_create(piper_rt_context context,
                                       const char *name,
                                       piper_rt_stream *stream) {
  if (!context || !name || !stream)
    return PIPER_RT_ERROR(PIPER_RT_ERROR_INVALID_ARGUMENT,
                          "context, name or stream is NULL");
  *stream = nullptr;
  if (!*name)
    return PIPER_RT_ERROR(PIPER_RT_ERROR_INVALID_ARGUMENT,
                          "a stream needs a name");
  std::lock_guard<std::mutex> guard(context->mutex);
  // A destroyed stream's name is free again (a session replaced at a
  // strategy switch opens streams of the same names); its object and trace
  // row stay until finalize.
  for (auto &existing : context->streams)
    if (!existing->destroyed && existing->name == name)
      return PIPER_RT_ERROR(PIPER_RT_ERROR_INVALID_ARGUMENT,
                            "a stream called '%s' already exists", name);
  auto impl = std::unique_ptr<piper_rt_stream_impl>(new (std::nothrow)
                                                        piper_rt_stream_impl);
  if (!impl)
    return PIPER_RT_ERROR(PIPER_RT_ERROR_OUT_OF_MEMORY, "stream");
  impl->context = context;
  impl->name = name;
  impl->index = static_cast<int>(context->streams.size());
  *stream = impl.get();
  context->streams.push_back(std::move(impl));
  return PIPER_RT_OK;
}

piper_rt_status piper_rt_stream_destroy(piper_rt_stream stream) {
  if (!stream || stream->destroyed)
    return PIPER_RT_OK;
  piper_rt_status status = piper_rt_stream_synchronize(stream);
  // The object stays until finalize: events, waits and communicators may
  // still point at it, and its index keeps naming its trace thread.
  std::lock_guard<std::mutex> guard(stream->context->mutex);
  stream->destroyed = true;
  return status;
}

piper_rt_status piper_rt_stream_synchronize(piper_rt_stream stream) {
  if (piper_rt_status s = checkStream(stream))
    return s;
  if (piper_rt_status s = waitFor(*stream->context, "synchronize", stream,
                                  [stream] { return stream->queue.empty(); }))
    return s;
  std::lock_guard<std::mutex> guard(stream->context->mutex);
  if (stream->error == PIPER_RT_OK)
    return PIPER_RT_OK;
  piper_rt_status error = stream->error;
  std::string text = std::move(stream->errorText);
  stream->error = PIPER_RT_OK;
  stream->errorText.clear();
  return PIPER_RT_ERROR(error, "%s", text.c_str());
}

piper_rt_status piper_rt_stream_query(piper_rt_stream stream, int *idle) {
  if (piper_rt_status s = checkStream(stream))
    return s;
  if (!idle)
    return PIPER_RT_ERROR(PIPER_RT_ERROR_INVALID_ARGUMENT, "idle is NULL");
  std::lock_guard<std::mutex> guard(stream->context->mutex);
  progressAll(*stream->context);
  *idle = stream->queue.empty();
  return PIPER_RT_OK;
}

piper_rt_status piper_rt_launch(piper_rt_stream stream, const char *name,
                                void (*fn)(void *), void *arg) {
  if (piper_rt_status s = checkStream(stream))
    return s;
  if (!fn)
    return PIPER_RT_ERROR(PIPER_RT_ERROR_INVALID_ARGUMENT,
                          "launch of '%s' has no function",
                          name ? name : "(null)");
  piper_rt_context_impl &context = *stream->context;
  if (piper_rt_status s = waitFor(context, "launch", stream,
                                  [stream] { return stream->queue.empty(); }))
    return s;
  {
    // A kernel must not read what a failed receive left behind.
    std::lock_guard<std::mutex> guard(context.mutex);
    if (stream->error != PIPER_RT_OK)
      return PIPER_RT_ERROR(stream->error, "launch of '%s' after: %s",
                            name ? name : "(null)", stream->errorText.c_str());
  }
  double start = now(context);
  fn(arg);
  double end = now(context);
  std::lock_guard<std::mutex> guard(context.mutex);
  ++stream->enqueued;
  ++stream->completed;
  traceSpan(context, *stream, name ? name : "launch", "compute", start, end,
            "");
  return PIPER_RT_OK;
}

piper_rt_status piper_rt_event_create(piper_rt_context context,
                                      piper_rt_event *event) {
  if (!context || !event)
    return PIPER_RT_ERROR(PIPER_RT_ERROR_INVALID_ARGUMENT,
                          "context or event is NULL");
  auto *impl = new (std::nothrow) piper_rt_event_impl;
  if (!impl)
    return PIPER_RT_ERROR(PIPER_RT_ERROR_OUT_OF_MEMORY, "event");
  impl->context = context;
  std::lock_guard<std::mutex> guard(context->mutex);
  context->events.push_back(impl);
  *event = impl;
  return PIPER_RT_OK;
}

piper_rt_status piper_rt_event_destroy(piper_rt_event event) {
  if (!event)
    return PIPER_RT_OK;
  if (piper_rt_context_impl *context = event->context) {
    std::lock_guard<std::mutex> guard(context->mutex);
    auto &events = context->events;
    for (size_t i = 0; i < events.size(); ++i)
      if (events[i] == event) {
        events.erase(events.begin() + i);
        break;
      }
  }
  delete event;
  return PIPER_RT_OK;
}

static piper_rt_status checkEvent(piper_rt_event event) {
  if (!event)
    return PIPER_RT_ERROR(PIPER_RT_ERROR_INVALID_ARGUMENT, "event is NULL");
  if (!event->context)
    return PIPER_RT_ERROR(PIPER_RT_ERROR_INVALID_ARGUMENT,
                          "the event's context was finalized");
  if (!event->recorded)
    return PIPER_RT_ERROR(PIPER_RT_ERROR_INVALID_ARGUMENT,
                          "the event was never recorded");
  return PIPER_RT_OK;
}

piper_rt_status piper_rt_event_record(piper_rt_event event,
                                      piper_rt_stream stream) {
  if (!event)
    return PIPER_RT_ERROR(PIPER_RT_ERROR_INVALID_ARGUMENT, "event is NULL");
  if (piper_rt_status s = checkStream(stream))
    return s;
  if (event->context != stream->context)
    return PIPER_RT_ERROR(PIPER_RT_ERROR_INVALID_ARGUMENT,
                          "the event and stream '%s' belong to different "
                          "contexts",
                          stream->name.c_str());
  std::lock_guard<std::mutex> guard(stream->context->mutex);
  event->stream = stream;
  event->seq = stream->enqueued;
  event->recorded = true;
  return PIPER_RT_OK;
}

piper_rt_status piper_rt_event_query(piper_rt_event event, int *done) {
  if (piper_rt_status s = checkEvent(event))
    return s;
  if (!done)
    return PIPER_RT_ERROR(PIPER_RT_ERROR_INVALID_ARGUMENT, "done is NULL");
  std::lock_guard<std::mutex> guard(event->context->mutex);
  progressAll(*event->context);
  *done = event->stream->completed >= event->seq;
  return PIPER_RT_OK;
}

piper_rt_status piper_rt_event_synchronize(piper_rt_event event) {
  if (piper_rt_status s = checkEvent(event))
    return s;
  piper_rt_stream_impl *stream = event->stream;
  uint64_t seq = event->seq;
  return waitFor(*event->context, "event synchronize", stream,
                 [stream, seq] { return stream->completed >= seq; });
}

piper_rt_status piper_rt_stream_wait_event(piper_rt_stream stream,
                                           piper_rt_event event) {
  if (piper_rt_status s = checkStream(stream))
    return s;
  if (piper_rt_status s = checkEvent(event))
    return s;
  if (event->context != stream->context)
    return PIPER_RT_ERROR(PIPER_RT_ERROR_INVALID_ARGUMENT,
                          "the event and stream '%s' belong to different "
                          "contexts",
                          stream->name.c_str());
  Op op;
  op.kind = Op::Wait;
  {
    // Snapshot the record as of now, as cudaStreamWaitEvent does: a later
    // re-record must not change what this wait waits for.
    std::lock_guard<std::mutex> guard(stream->context->mutex);
    op.waitStream = event->stream;
    op.waitSeq = event->seq;
    if (op.waitStream->completed >= op.waitSeq)
      return PIPER_RT_OK; // already reached: nothing to hold
  }
  return enqueue(*stream, op);
}
