//===- FormatNumber.h - printf-style text of one number ---------*- C++ -*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The simulator's reports and diagnostics print numbers with printf
// conversions ("%.6g", "%.1f") so that their text matches the schedule
// library's pictures and the runtime's reports digit for digit; one helper
// for the cost model and the report.
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_LIB_SIMULATOR_FORMATNUMBER_H
#define PIPER_LIB_SIMULATOR_FORMATNUMBER_H

#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace piper::sim {

/// `x` printed with the printf conversion `spec` (one double), of any length.
inline std::string formatNumber(const char *spec, double x) {
  std::string text;
  llvm::raw_string_ostream(text) << llvm::format(spec, x);
  return text;
}

} // namespace piper::sim

#endif // PIPER_LIB_SIMULATOR_FORMATNUMBER_H
