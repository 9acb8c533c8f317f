//===- LossCurve.h - A training run's loss curve as SVG ---------*- C++ -*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// piper-run and piper-interp draw the curve a user looks at after a run
// (`--plot=FILE.svg`): a self-contained SVG (no fonts, scripts or external
// files) that any browser or image viewer opens. Plain C++: piper-run links
// no MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_TOOLS_COMMON_LOSSCURVE_H
#define PIPER_TOOLS_COMMON_LOSSCURVE_H

#include <string>
#include <utility>
#include <vector>

namespace piper {

/// One named series of (step, value) points, drawn as a polyline.
struct CurveSeries {
  std::string name;
  std::string color;
  std::vector<std::pair<double, double>> points;
};

/// The SVG text of `series` on shared axes: x the step, y the value (a log
/// scale when every value is positive and they span more than a factor of
/// 20), ticks at round numbers, a legend. Non-finite values are left out
/// (a NaN loss breaks the line rather than the picture).
std::string renderLossCurveSVG(const std::string &title,
                               const std::vector<CurveSeries> &series);

/// Writes renderLossCurveSVG to `path`; on failure returns false and sets
/// `error` to one line.
bool writeLossCurveSVG(const std::string &path, const std::string &title,
                       const std::vector<CurveSeries> &series,
                       std::string &error);

} // namespace piper

#endif // PIPER_TOOLS_COMMON_LOSSCURVE_H
