//===- Trace.h - Kernel spans of compiled plans in the runtime trace ------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The lowering brackets every launch of a program with
//   piper_trace_begin(int64_t launch) / piper_trace_end(int64_t launch)
// (its index among the program's launches; plan.json lists their names in
// that order). piper-run defines and exports both; with --trace they record
// one span per launch on a "compute" row of the runtime's Chrome trace,
// beside the communication the runtime records itself; otherwise they only
// test a flag.
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_TOOLS_PIPER_RUN_TRACE_H
#define PIPER_TOOLS_PIPER_RUN_TRACE_H

#include <string>
#include <vector>

#ifdef PIPER_RUN_HAVE_MPI
#include "piper-rt/piper_rt.h"
#endif

namespace piper::run {

#ifdef PIPER_RUN_HAVE_MPI
/// Records launch spans on `stream` (of `context`), named from `names`.
void traceLaunches(piper_rt_context context, piper_rt_stream stream,
                   const std::vector<std::string> &names);
/// Stops recording (before the stream is destroyed).
void traceStop();
#endif

} // namespace piper::run

#endif // PIPER_TOOLS_PIPER_RUN_TRACE_H
