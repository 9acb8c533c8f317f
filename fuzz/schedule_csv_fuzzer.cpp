//===- schedule_csv_fuzzer.cpp - libFuzzer target: schedule CSV import ---===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Feeds arbitrary bytes to the PyTorch-style schedule CSV importer
// (piper-schedule --import, the JSON `schedule: {"csv": ...}` form), then
// validates what it accepts and writes an accepted schedule back: what the
// writer emits for a valid schedule, the reader must read to the same one.
// Built by bench/fuzz.sh (clang-22, -fsanitize=fuzzer,address), never by
// the default build.
//
//===----------------------------------------------------------------------===//

#include "piper/Schedule/PyTorchCSV.h"
#include "piper/Schedule/Schedule.h"
#include "piper/Schedule/Simulator.h"

#include <cstddef>
#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  using namespace piper::sched;
  std::string_view text(reinterpret_cast<const char *>(data), size);
  Result<Schedule> schedule = readPyTorchCSV(text);
  if (!schedule)
    return 0;
  if (!validate(*schedule))
    return 0;
  Result<std::string> again = writePyTorchCSV(*schedule);
  if (!again)
    return 0; // not every valid schedule has a CSV spelling
  Result<Schedule> back = readPyTorchCSV(*again);
  if (!back)
    __builtin_trap(); // what the writer emits, the reader must read
  Result<std::string> twice = writePyTorchCSV(*back);
  if (!twice || *twice != *again)
    __builtin_trap(); // ... to the same schedule
  return 0;
}
