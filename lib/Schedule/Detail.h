//===- Detail.h - Shared internals of the schedule library ------*- C++ -*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_LIB_SCHEDULE_DETAIL_H
#define PIPER_LIB_SCHEDULE_DETAIL_H

#include "piper/Schedule/Simulator.h"

namespace piper::sched::detail {

/// Every check of validate() except the deadlock one, which needs the
/// simulator's execution loop.
Status checkStructure(const Schedule &schedule);

/// Runs a structurally valid schedule; fails only on deadlock.
Result<Timeline> execute(const Schedule &schedule, const Costs &costs);

} // namespace piper::sched::detail

#endif // PIPER_LIB_SCHEDULE_DETAIL_H
