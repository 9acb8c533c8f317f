//===- Version.cpp - Piper runtime version --------------------------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "piper-rt/piper_rt.h"

// Set by runtime/CMakeLists.txt from the top-level project(VERSION), so the
// runtime and the compiler cannot disagree about which release they are.
#ifndef PIPER_RT_VERSION
#error                                                                         \
    "PIPER_RT_VERSION must be defined by the build (see runtime/CMakeLists.txt)"
#endif

const char *piper_rt_version(void) { return PIPER_RT_VERSION; }
