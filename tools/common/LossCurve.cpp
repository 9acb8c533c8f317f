//===- LossCurve.cpp - A training run's loss curve as SVG -----------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "LossCurve.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>

using namespace piper;

namespace {

constexpr double kWidth = 720, kHeight = 440;
constexpr double kLeft = 70, kRight = 20, kTop = 40, kBottom = 50;

/// An axis from `lo` to `hi`, linear or logarithmic (base 10).
struct Axis {
  double lo, hi;
  bool log;
  double map(double v, double from, double to) const {
    double a = log ? std::log10(v) : v, l = log ? std::log10(lo) : lo,
           h = log ? std::log10(hi) : hi;
    return h > l ? from + (a - l) / (h - l) * (to - from) : (from + to) / 2;
  }
};

std::string number(double v) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.4g", v);
  return text;
}

std::string escape(const std::string &text) {
  std::string out;
  for (char c : text) {
    if (c == '<')
      out += "&lt;";
    else if (c == '>')
      out += "&gt;";
    else if (c == '&')
      out += "&amp;";
    else if (c == '"')
      out += "&quot;";
    else
      out += c;
  }
  return out;
}

/// Round tick values covering [lo, hi]: 1, 2 or 5 times a power of ten
/// apart on a linear axis, the powers of ten (and 2x, 5x when there are few)
/// on a log axis.
std::vector<double> ticks(const Axis &axis) {
  std::vector<double> out;
  if (axis.log) {
    for (double p = std::pow(10, std::floor(std::log10(axis.lo)));
         p <= axis.hi * 1.0001; p *= 10)
      for (double m : {1.0, 2.0, 5.0})
        if (p * m >= axis.lo * 0.9999 && p * m <= axis.hi * 1.0001)
          out.push_back(p * m);
    return out;
  }
  double span = axis.hi - axis.lo;
  if (span <= 0)
    return {axis.lo};
  double step = std::pow(10, std::floor(std::log10(span / 5)));
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (span / (step * m) <= 8) {
      step *= m;
      break;
    }
  for (double t = std::ceil(axis.lo / step) * step; t <= axis.hi + step * 1e-9;
       t += step)
    out.push_back(std::abs(t) < step * 1e-9 ? 0.0 : t);
  return out;
}

} // namespace

std::string piper::renderLossCurveSVG(const std::string &title,
                                      const std::vector<CurveSeries> &series) {
  double xlo = std::numeric_limits<double>::infinity(), xhi = -xlo;
  double ylo = xlo, yhi = -xlo;
  for (const CurveSeries &s : series)
    for (auto [x, y] : s.points)
      if (std::isfinite(x) && std::isfinite(y)) {
        xlo = std::min(xlo, x), xhi = std::max(xhi, x);
        ylo = std::min(ylo, y), yhi = std::max(yhi, y);
      }
  if (!(xlo <= xhi))
    xlo = 0, xhi = 1, ylo = 0, yhi = 1;
  Axis xAxis{xlo, xhi, false};
  Axis yAxis{ylo, yhi, ylo > 0 && yhi / ylo > 20};
  if (!yAxis.log) {
    double pad =
        (yhi - ylo) * 0.05 + (yhi == ylo ? std::abs(yhi) * 0.1 + 1 : 0);
    yAxis.lo -= pad, yAxis.hi += pad;
  }
  double plotL = kLeft, plotR = kWidth - kRight, plotT = kTop,
         plotB = kHeight - kBottom;
  std::string svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" +
                    number(kWidth) + "\" height=\"" + number(kHeight) +
                    "\" font-family=\"sans-serif\" font-size=\"12\">\n";
  svg += "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  svg += "<text x=\"" + number(kWidth / 2) +
         "\" y=\"22\" text-anchor=\"middle\" font-size=\"14\">" +
         escape(title) + "</text>\n";
  for (double t : ticks(yAxis)) {
    double y = yAxis.map(t, plotB, plotT);
    svg += "<line x1=\"" + number(plotL) + "\" x2=\"" + number(plotR) +
           "\" y1=\"" + number(y) + "\" y2=\"" + number(y) +
           "\" stroke=\"#ddd\"/>\n<text x=\"" + number(plotL - 6) + "\" y=\"" +
           number(y + 4) + "\" text-anchor=\"end\">" + number(t) + "</text>\n";
  }
  for (double t : ticks(xAxis)) {
    double x = xAxis.map(t, plotL, plotR);
    svg += "<line x1=\"" + number(x) + "\" x2=\"" + number(x) + "\" y1=\"" +
           number(plotB) + "\" y2=\"" + number(plotB + 5) +
           "\" stroke=\"black\"/>\n<text x=\"" + number(x) + "\" y=\"" +
           number(plotB + 18) + "\" text-anchor=\"middle\">" + number(t) +
           "</text>\n";
  }
  svg += "<rect x=\"" + number(plotL) + "\" y=\"" + number(plotT) +
         "\" width=\"" + number(plotR - plotL) + "\" height=\"" +
         number(plotB - plotT) + "\" fill=\"none\" stroke=\"black\"/>\n";
  svg += "<text x=\"" + number((plotL + plotR) / 2) + "\" y=\"" +
         number(kHeight - 10) + "\" text-anchor=\"middle\">step</text>\n";
  for (size_t i = 0; i < series.size(); ++i) {
    const CurveSeries &s = series[i];
    // A non-finite value ends one polyline; the next finite one starts
    // another.
    std::string points;
    auto flush = [&] {
      if (!points.empty())
        svg += "<polyline fill=\"none\" stroke=\"" + s.color +
               "\" stroke-width=\"1.5\" points=\"" + points + "\"/>\n";
      points.clear();
    };
    for (auto [x, y] : s.points) {
      if (!std::isfinite(x) || !std::isfinite(y) || (yAxis.log && y <= 0)) {
        flush();
        continue;
      }
      points += (points.empty() ? "" : " ") +
                number(xAxis.map(x, plotL, plotR)) + "," +
                number(yAxis.map(y, plotB, plotT));
    }
    flush();
    double ly = plotT + 16 + 16 * i;
    svg += "<line x1=\"" + number(plotR - 150) + "\" x2=\"" +
           number(plotR - 126) + "\" y1=\"" + number(ly - 4) + "\" y2=\"" +
           number(ly - 4) + "\" stroke=\"" + s.color +
           "\" stroke-width=\"2\"/>\n<text x=\"" + number(plotR - 120) +
           "\" y=\"" + number(ly) + "\">" + escape(s.name) + "</text>\n";
  }
  svg += "</svg>\n";
  return svg;
}

bool piper::writeLossCurveSVG(const std::string &path, const std::string &title,
                              const std::vector<CurveSeries> &series,
                              std::string &error) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (out)
    out << renderLossCurveSVG(title, series);
  if (out)
    out.close();
  if (!out) {
    error = "cannot write " + path + ": " + std::strerror(errno);
    return false;
  }
  return true;
}
