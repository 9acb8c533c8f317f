//===- Trace.cpp - Kernel spans of compiled plans in the runtime trace ----===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "Trace.h"

#include <cstdint>

namespace {

#ifdef PIPER_RUN_HAVE_MPI
struct State {
  piper_rt_context context = nullptr;
  piper_rt_stream stream = nullptr;
  const std::vector<std::string> *names = nullptr;
  double start = 0;
};
State state;
#endif

} // namespace

#ifdef PIPER_RUN_HAVE_MPI
void piper::run::traceLaunches(piper_rt_context context, piper_rt_stream stream,
                               const std::vector<std::string> &names) {
  state = {context, stream, &names, 0};
}

void piper::run::traceStop() { state = {}; }
#endif

// Called by the plans around every launch (one host thread runs a role's
// program, so the begin/end pairs do not interleave).
extern "C" __attribute__((visibility("default"))) void
piper_trace_begin(int64_t launch) {
  (void)launch;
#ifdef PIPER_RUN_HAVE_MPI
  if (state.stream)
    piper_rt_time(state.context, &state.start);
#endif
}

extern "C" __attribute__((visibility("default"))) void
piper_trace_end(int64_t launch) {
  (void)launch;
#ifdef PIPER_RUN_HAVE_MPI
  if (!state.stream)
    return;
  double end = 0;
  piper_rt_time(state.context, &end);
  const char *name =
      launch >= 0 && static_cast<size_t>(launch) < state.names->size()
          ? (*state.names)[launch].c_str()
          : "launch";
  piper_rt_trace_span(state.stream, name, "compute", state.start, end);
#endif
}
