//===- Cores.cpp - The cores a rank may run on ----------------------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "Cores.h"

#include <algorithm>
#include <sched.h>
#include <unistd.h>

piper::rt::Cores piper::rt::processCores() {
  Cores cores;
  long online = sysconf(_SC_NPROCESSORS_ONLN);
  cores.online = online > 0 ? int(online) : 1;
  cpu_set_t mask;
  CPU_ZERO(&mask);
  cores.mine = sched_getaffinity(0, sizeof(mask), &mask) == 0
                   ? std::max(1, CPU_COUNT(&mask))
                   : cores.online;
  return cores;
}
