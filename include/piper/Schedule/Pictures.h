//===- Pictures.h - Text, Chrome-trace and SVG schedule pictures -*- C++
//-*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Three views of a simulated schedule: a rank x time-slot text grid (like the
// DualPipe README figure), Chrome-trace JSON (chrome://tracing, Perfetto)
// and a stand-alone SVG timeline.
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_SCHEDULE_PICTURES_H
#define PIPER_SCHEDULE_PICTURES_H

#include "piper/Schedule/Simulator.h"

#include <string>

namespace piper::sched {

/// One line per rank, `rank R |` then one column per `slot` time units
/// (0: the shortest action's duration). An action shows its PyTorch name in
/// its first column and `-` over the rest of its span; an overlapped pair is
/// `0F7;7B3`; idle columns are `.`. Trailing blanks are trimmed.
std::string renderGrid(const Schedule &schedule, const Timeline &timeline,
                       double slot = 0);

/// Chrome-trace JSON: one complete ("X") event per action on thread `rank`,
/// with `microsPerUnit` microseconds per time unit.
std::string renderChromeTrace(const Schedule &schedule,
                              const Timeline &timeline,
                              double microsPerUnit = 1000);

/// A stand-alone SVG: one row per rank, one box per action coloured by kind
/// (F blue, I orange, W green, B red, F&B purple), a time axis below.
std::string renderSVG(const Schedule &schedule, const Timeline &timeline);

} // namespace piper::sched

#endif // PIPER_SCHEDULE_PICTURES_H
