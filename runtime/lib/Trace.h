//===- Trace.h - Piper runtime Chrome-trace rendering (internal) -*- C++
//-*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Renders spans as Chrome trace-event JSON (the "JSON Object Format" that
// chrome://tracing and ui.perfetto.dev read). Kept apart from the backend
// that records spans so that the format is unit-tested without MPI and the
// NCCL backend can share it.
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_RT_LIB_TRACE_H
#define PIPER_RT_LIB_TRACE_H

#include <string>
#include <vector>

namespace piper::rt {

/// One complete ("ph":"X") event: `name` on stream `tid` of this rank, from
/// `startMicros` for `durationMicros`. `args` is a JSON object body without
/// braces (`"bytes":64,"peer":1`) or empty.
struct TraceSpan {
  std::string name;
  std::string category;
  int tid = 0;
  double startMicros = 0;
  double durationMicros = 0;
  std::string args;
};

/// `text` as a JSON string body (quotes, backslashes and control characters
/// escaped), so stream and kernel names from plans cannot break the file.
std::string jsonEscape(const std::string &text);

/// One rank's events, comma-separated without the enclosing array: a
/// process_name ("rank N") and a thread_name per stream (tid = index in
/// `streamNames`), then the spans. pid = rank. Ranks' lists are joined with
/// "," into one file by wrapTraceEvents.
std::string renderTraceEvents(int rank, const std::vector<std::string> &streams,
                              const std::vector<TraceSpan> &spans);

/// The complete file around comma-separated event lists (empty ones skipped).
std::string wrapTraceEvents(const std::vector<std::string> &perRankEvents);

} // namespace piper::rt

#endif // PIPER_RT_LIB_TRACE_H
