//===- TraceSummary.h - Per-rank time summary of a run's trace --*- C++ -*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// A Chrome trace answers "where did the time go" only to someone who opens
// it. `piper-run --trace-summary` prints the answer as text: per rank, the
// time in each kind of DAG node (F, BI, BW, B, UPD, ...), the time in
// communication by kind, and the time the rank's compute thread waited
// (neither computing nor done: pipeline bubbles and exposed communication).
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_TOOLS_PIPER_RUN_TRACESUMMARY_H
#define PIPER_TOOLS_PIPER_RUN_TRACESUMMARY_H

#include <string>

namespace piper::run {

/// Reads the merged Chrome trace at `path` (every rank's spans) and writes
/// the per-rank table to `text`; false with `error` if the file cannot be
/// read or is not a trace.
bool summarizeTrace(const std::string &path, std::string &text,
                    std::string &error);

} // namespace piper::run

#endif // PIPER_TOOLS_PIPER_RUN_TRACESUMMARY_H
