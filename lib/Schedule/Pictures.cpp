//===- Pictures.cpp - Text, Chrome-trace and SVG schedule pictures --------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "piper/Schedule/Pictures.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

using namespace piper::sched;

namespace {

/// The grid label: the CSV name, or `F;B` for a pair (the CSV's parentheses
/// and suffix would not fit in three slots).
std::string label(const Action &a) {
  if (!a.isOverlap())
    return a.str();
  return a.first.str() + ";" + a.overlapped->str();
}

/// A short, locale-independent number for JSON and SVG.
std::string num(double x) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.6g", x);
  return buf;
}

const char *kindName(const Action &a) {
  if (a.isOverlap())
    return "F&B";
  switch (a.first.kind) {
  case Kind::F:
    return "F";
  case Kind::I:
    return "I";
  case Kind::W:
    return "W";
  case Kind::B:
    return "B";
  }
  return "?";
}

const char *colour(const Action &a) {
  if (a.isOverlap())
    return "#8e6bb8";
  switch (a.first.kind) {
  case Kind::F:
    return "#4e79a7";
  case Kind::I:
    return "#f28e2b";
  case Kind::W:
    return "#59a14f";
  case Kind::B:
    return "#e15759";
  }
  return "#999999";
}

} // namespace

std::string piper::sched::renderGrid(const Schedule &s, const Timeline &t,
                                     double slot) {
  if (slot <= 0) {
    slot = 0;
    for (const auto &row : t.times)
      for (const Interval &iv : row)
        if (iv.end > iv.start && (slot == 0 || iv.end - iv.start < slot))
          slot = iv.end - iv.start;
    if (slot == 0)
      slot = 1;
  }
  auto column = [&](double time) {
    return static_cast<int>(std::llround(time / slot));
  };
  int columns = column(t.makespan);
  // Wide enough that every label fits in its span with a blank after it.
  size_t width = 2;
  for (int r = 0; r < s.numRanks; ++r)
    for (size_t k = 0; k < s.ranks[r].size(); ++k) {
      int span =
          std::max(1, column(t.times[r][k].end) - column(t.times[r][k].start));
      size_t need = (label(s.ranks[r][k]).size() + 1 + span - 1) / span;
      width = std::max(width, need);
    }
  std::string rankWidth = std::to_string(s.numRanks - 1);
  std::string out;
  for (int r = 0; r < s.numRanks; ++r) {
    std::string line(columns * width, ' ');
    for (int c = 0; c < columns; ++c)
      line[c * width] = '.';
    for (size_t k = 0; k < s.ranks[r].size(); ++k) {
      int from = column(t.times[r][k].start);
      int to = std::max(from + 1, column(t.times[r][k].end));
      size_t begin = from * width, end = to * width - 1;
      std::string text = label(s.ranks[r][k]);
      for (size_t x = begin; x < end && x < line.size(); ++x)
        line[x] = x - begin < text.size() ? text[x - begin] : '-';
      if (end < line.size())
        line[end] = ' ';
    }
    std::string name = std::to_string(r);
    name.insert(0, rankWidth.size() - name.size(), ' ');
    line.insert(0, "rank " + name + " |");
    while (!line.empty() && line.back() == ' ')
      line.pop_back();
    out += line + "\n";
  }
  return out;
}

std::string piper::sched::renderChromeTrace(const Schedule &s,
                                            const Timeline &t,
                                            double microsPerUnit) {
  std::string out = "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n";
  bool first = true;
  auto event = [&](const std::string &e) {
    out += (first ? "" : ",\n") + e;
    first = false;
  };
  event("{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":0,\"args\":{"
        "\"name\":\"" +
        (s.name.empty() ? std::string("schedule") : s.name) + "\"}}");
  for (int r = 0; r < s.numRanks; ++r)
    event("{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":0,\"tid\":" +
          std::to_string(r) + ",\"args\":{\"name\":\"rank " +
          std::to_string(r) + "\"}}");
  for (int r = 0; r < s.numRanks; ++r)
    for (size_t k = 0; k < s.ranks[r].size(); ++k) {
      const Action &a = s.ranks[r][k];
      const Interval &iv = t.times[r][k];
      event("{\"name\":\"" + a.str() + "\",\"cat\":\"" + kindName(a) +
            "\",\"ph\":\"X\",\"pid\":0,\"tid\":" + std::to_string(r) +
            ",\"ts\":" + num(iv.start * microsPerUnit) +
            ",\"dur\":" + num((iv.end - iv.start) * microsPerUnit) +
            ",\"args\":{\"stage\":" + std::to_string(a.first.stage) +
            ",\"microbatch\":" + std::to_string(a.first.microbatch) +
            ",\"index\":" + std::to_string(k) + "}}");
    }
  out += "\n]}\n";
  return out;
}

std::string piper::sched::renderSVG(const Schedule &s, const Timeline &t) {
  // 24 px per time unit keeps `0F0` legible at unit costs; 28 px per rank.
  const double px = 24, rowH = 28, left = 64, top = 8;
  double width = left + t.makespan * px + 16;
  double height = top + s.numRanks * rowH + 28;
  std::string out = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" +
                    num(width) + "\" height=\"" + num(height) +
                    "\" font-family=\"monospace\" font-size=\"10\">\n";
  out += "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  for (int r = 0; r < s.numRanks; ++r) {
    double y = top + r * rowH;
    out += "<text x=\"4\" y=\"" + num(y + rowH / 2 + 4) + "\">rank " +
           std::to_string(r) + "</text>\n";
    for (size_t k = 0; k < s.ranks[r].size(); ++k) {
      const Action &a = s.ranks[r][k];
      const Interval &iv = t.times[r][k];
      double x = left + iv.start * px, w = (iv.end - iv.start) * px;
      out += "<g><title>" + a.str() + " [" + num(iv.start) + ", " +
             num(iv.end) + ")</title><rect x=\"" + num(x) + "\" y=\"" +
             num(y + 2) + "\" width=\"" + num(w) + "\" height=\"" +
             num(rowH - 4) + "\" fill=\"" + colour(a) +
             "\" stroke=\"white\"/><text x=\"" + num(x + w / 2) + "\" y=\"" +
             num(y + rowH / 2 + 4) +
             "\" text-anchor=\"middle\" fill=\"white\">" + label(a) +
             "</text></g>\n";
    }
  }
  // Axis: a tick per unit up to 60 units, else per ten.
  double axisY = top + s.numRanks * rowH + 4;
  double step = t.makespan <= 60 ? 1 : 10;
  out += "<line x1=\"" + num(left) + "\" y1=\"" + num(axisY) + "\" x2=\"" +
         num(left + t.makespan * px) + "\" y2=\"" + num(axisY) +
         "\" stroke=\"black\"/>\n";
  for (double x = 0; x <= t.makespan + 1e-9; x += step)
    out += "<text x=\"" + num(left + x * px) + "\" y=\"" + num(axisY + 14) +
           "\" text-anchor=\"middle\">" + num(x) + "</text>\n";
  out += "</svg>\n";
  return out;
}
