//===- Trace.cpp - Piper runtime MPI backend trace recording and files ----===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Spans are kept in memory (a few dozen bytes each, thousands per step) and
// written at the end rather than streamed, so tracing adds no I/O to the
// step being measured. A merged trace is gathered to rank 0 over MPI, so a
// job on many hosts still yields one file without a shared filesystem.
//
//===----------------------------------------------------------------------===//

#include "Internal.h"

#include <cerrno>
#include <cstdio>
#include <cstring>

using namespace piper::rt;

namespace {

piper_rt_status writeFile(const std::string &path, const std::string &text) {
  std::FILE *file = std::fopen(path.c_str(), "w");
  if (!file)
    return PIPER_RT_ERROR(PIPER_RT_ERROR_INVALID_ARGUMENT,
                          "cannot write trace '%s': %s", path.c_str(),
                          std::strerror(errno));
  size_t written = std::fwrite(text.data(), 1, text.size(), file);
  bool ok = written == text.size() && std::fclose(file) == 0;
  if (!ok)
    return PIPER_RT_ERROR(PIPER_RT_ERROR_INVALID_ARGUMENT,
                          "cannot write trace '%s'", path.c_str());
  return PIPER_RT_OK;
}

} // namespace

piper_rt_status piper::rt::writeTrace(piper_rt_context_impl &context) {
  std::string events;
  std::string path;
  {
    std::lock_guard<std::mutex> guard(context.mutex);
    std::vector<std::string> names;
    for (auto &stream : context.streams)
      names.push_back(stream->name);
    events = renderTraceEvents(context.rank, names, context.spans);
    path = context.tracePath;
  }
  size_t marker = path.find("%r");
  if (marker != std::string::npos) {
    path.replace(marker, 2, std::to_string(context.rank));
    return writeFile(path, wrapTraceEvents({events}));
  }

  // Merged: gather every rank's events to rank 0.
  int length = static_cast<int>(events.size());
  std::vector<int> lengths(context.rank == 0 ? context.size : 0);
  setBlocking(context, "gathering the trace to rank 0");
  MPI_Gather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, context.p2p);
  std::vector<int> offsets(lengths.size());
  std::string all;
  if (context.rank == 0) {
    long long total = 0;
    for (size_t r = 0; r < lengths.size(); ++r) {
      offsets[r] = static_cast<int>(total);
      total += lengths[r];
    }
    all.resize(static_cast<size_t>(total));
  }
  MPI_Gatherv(events.data(), length, MPI_CHAR, &all[0], lengths.data(),
              offsets.data(), MPI_CHAR, 0, context.p2p);
  setBlocking(context, "");
  if (context.rank != 0)
    return PIPER_RT_OK;
  std::vector<std::string> perRank;
  for (size_t r = 0; r < lengths.size(); ++r)
    perRank.push_back(all.substr(offsets[r], lengths[r]));
  return writeFile(path, wrapTraceEvents(perRank));
}

piper_rt_status piper_rt_trace_enable(piper_rt_context context,
                                      const char *path) {
  if (!context || !path || !*path)
    return PIPER_RT_ERROR(PIPER_RT_ERROR_INVALID_ARGUMENT,
                          "context or path is NULL or empty");
  std::lock_guard<std::mutex> guard(context->mutex);
  context->tracing = true;
  context->tracePath = path;
  return PIPER_RT_OK;
}

piper_rt_status piper_rt_time(piper_rt_context context, double *seconds) {
  if (!context || !seconds)
    return PIPER_RT_ERROR(PIPER_RT_ERROR_INVALID_ARGUMENT,
                          "context or seconds is NULL");
  *seconds = now(*context);
  return PIPER_RT_OK;
}

piper_rt_status piper_rt_trace_span(piper_rt_stream stream, const char *name,
                                    const char *category, double start,
                                    double end) {
  if (!stream || !name || !category)
    return PIPER_RT_ERROR(PIPER_RT_ERROR_INVALID_ARGUMENT,
                          "stream, name or category is NULL");
  if (stream->destroyed)
    return PIPER_RT_ERROR(PIPER_RT_ERROR_INVALID_ARGUMENT,
                          "stream '%s' was destroyed", stream->name.c_str());
  if (end < start)
    return PIPER_RT_ERROR(PIPER_RT_ERROR_INVALID_ARGUMENT,
                          "span '%s' ends (%g s) before it starts (%g s)", name,
                          end, start);
  piper_rt_context_impl &context = *stream->context;
  std::lock_guard<std::mutex> guard(context.mutex);
  traceSpan(context, *stream, name, category, start, end, "");
  return PIPER_RT_OK;
}

piper_rt_status piper_rt_trace_write(piper_rt_context context) {
  if (!context)
    return PIPER_RT_ERROR(PIPER_RT_ERROR_INVALID_ARGUMENT, "context is NULL");
  if (!context->tracing)
    return PIPER_RT_ERROR(PIPER_RT_ERROR_INVALID_ARGUMENT,
                          "tracing is not enabled (PIPER_RT_TRACE or "
                          "piper_rt_trace_enable)");
  return writeTrace(*context);
}
