//===- Trace.cpp - Piper runtime Chrome-trace rendering -------------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The layout matches what the schedule simulator writes (displayTimeUnit ms,
// process_name and thread_name metadata, complete events with ts/dur in
// microseconds), with pid = rank and tid = stream, so a simulated and a
// measured timeline open side by side in the same viewer.
//
//===----------------------------------------------------------------------===//

#include "Trace.h"

#include <cstdio>

using namespace piper::rt;

namespace {

/// Microseconds with nanosecond resolution: enough for MPI latencies, and
/// "%.3f" never prints exponents, which some trace viewers reject.
std::string micros(double value) {
  char text[64];
  std::snprintf(text, sizeof(text), "%.3f", value);
  return text;
}

} // namespace

std::string piper::rt::jsonEscape(const std::string &text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    unsigned char u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (u < 0x20) {
      char escaped[8];
      std::snprintf(escaped, sizeof(escaped), "\\u%04x", u);
      out += escaped;
    } else {
      out += c;
    }
  }
  return out;
}

std::string
piper::rt::renderTraceEvents(int rank, const std::vector<std::string> &streams,
                             const std::vector<TraceSpan> &spans) {
  std::string pid = std::to_string(rank);
  std::string out = "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":" + pid +
                    ",\"args\":{\"name\":\"rank " + pid + "\"}}";
  // Sort processes by rank in the viewer rather than by first event.
  out += ",\n{\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":" + pid +
         ",\"args\":{\"sort_index\":" + pid + "}}";
  for (size_t tid = 0; tid < streams.size(); ++tid)
    out += ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":" + pid +
           ",\"tid\":" + std::to_string(tid) + ",\"args\":{\"name\":\"" +
           jsonEscape(streams[tid]) + "\"}}";
  for (const TraceSpan &span : spans) {
    out += ",\n{\"name\":\"" + jsonEscape(span.name) + "\",\"cat\":\"" +
           jsonEscape(span.category) + "\",\"ph\":\"X\",\"pid\":" + pid +
           ",\"tid\":" + std::to_string(span.tid) +
           ",\"ts\":" + micros(span.startMicros) +
           ",\"dur\":" + micros(span.durationMicros);
    if (!span.args.empty())
      out += ",\"args\":{" + span.args + "}";
    out += "}";
  }
  return out;
}

std::string
piper::rt::wrapTraceEvents(const std::vector<std::string> &perRankEvents) {
  std::string out = "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n";
  bool first = true;
  for (const std::string &events : perRankEvents) {
    if (events.empty())
      continue;
    out += (first ? "" : ",\n") + events;
    first = false;
  }
  out += "\n]}\n";
  return out;
}
