//===- Environment.cpp - Piper runtime settings from the environment ------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Settings are environment variables because piper-run is started by mpirun,
// which forwards the environment to every rank (`mpirun -x NAME`), so one
// setting reaches all ranks without touching the compiled plan.
//
//===----------------------------------------------------------------------===//

#include "piper-rt/piper_rt.h"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>

namespace {

/// Parses `text` as a finite number > 0. The whole string must be the number
/// (surrounding whitespace allowed): strtod alone accepts "10s" as 10, which
/// would silently turn a unit typo into a different setting.
bool parsePositiveSeconds(const char *text, double *seconds) {
  errno = 0;
  char *end = nullptr;
  double value = std::strtod(text, &end);
  if (end == text || errno == ERANGE)
    return false;
  while (std::isspace(static_cast<unsigned char>(*end)))
    ++end;
  if (*end != '\0' || !std::isfinite(value) || !(value > 0.0))
    return false;
  *seconds = value;
  return true;
}

} // namespace

double piper_rt_comm_timeout_seconds(void) {
  const char *name = "PIPER_RT_TIMEOUT";
  const char *text = std::getenv(name);
  if (!text || *text == '\0')
    return PIPER_RT_DEFAULT_COMM_TIMEOUT_SECONDS;

  double seconds = 0.0;
  // Below 0.1 s a healthy job's first collective already times out (1e-9
  // aborted every run); above a week it no longer bounds anything.
  if (parsePositiveSeconds(text, &seconds) &&
      (seconds < PIPER_RT_MIN_COMM_TIMEOUT_SECONDS ||
       seconds > PIPER_RT_MAX_COMM_TIMEOUT_SECONDS)) {
    PIPER_RT_ERROR(PIPER_RT_ERROR_INVALID_ARGUMENT,
                   "%s='%s' is outside %g to %g seconds; using the default "
                   "of %g s",
                   name, text, PIPER_RT_MIN_COMM_TIMEOUT_SECONDS,
                   PIPER_RT_MAX_COMM_TIMEOUT_SECONDS,
                   PIPER_RT_DEFAULT_COMM_TIMEOUT_SECONDS);
    return PIPER_RT_DEFAULT_COMM_TIMEOUT_SECONDS;
  }
  if (seconds > 0.0)
    return seconds;

  PIPER_RT_ERROR(PIPER_RT_ERROR_INVALID_ARGUMENT,
                 "%s='%s' is not a positive number of seconds; using the "
                 "default of %g s",
                 name, text, PIPER_RT_DEFAULT_COMM_TIMEOUT_SECONDS);
  return PIPER_RT_DEFAULT_COMM_TIMEOUT_SECONDS;
}
