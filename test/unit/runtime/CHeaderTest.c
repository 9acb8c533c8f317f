//===- CHeaderTest.c - Use the runtime API from C -------------------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Compiled as C: if piper_rt.h stopped being valid C, or lost its extern "C"
// guards (so C++ callers would look for mangled names), this file or the link
// of PiperRuntimeTests would fail. ErrorTest.cpp calls these helpers.
//
//===----------------------------------------------------------------------===//

#include "piper-rt/piper_rt.h"

const char *piperRtTestCFile(void) { return __FILE__; }

piper_rt_status piperRtTestRaiseFromC(int *line) {
  if (piper_rt_version()[0] == '\0' ||
      piper_rt_status_string(PIPER_RT_OK)[0] == '\0')
    return PIPER_RT_ERROR_INTERNAL;
  *line = __LINE__ + 1;
  return PIPER_RT_ERROR(PIPER_RT_ERROR_TIMEOUT, "raised from C: %d", 42);
}

const char *piperRtTestStatusStringFromC(int value) {
  // Well defined in C for any int, unlike a cast to the enum in C++.
  return piper_rt_status_string((piper_rt_status)value);
}
