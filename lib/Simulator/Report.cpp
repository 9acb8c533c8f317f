//===- Report.cpp - Summary table, Chrome trace and SVG of a simulation ---===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The same three views as the schedule library's pictures, but over device
// programs: rows are (program, stream) instead of ranks, and communication
// has boxes of its own. Chrome traces use the runtime's layout (process =
// program, thread = stream) so a simulated and a measured step open side by
// side in Perfetto.
//
//===----------------------------------------------------------------------===//

#include "piper/Simulator/Simulate.h"

#include "FormatNumber.h"

#include "llvm/ADT/StringSwitch.h"

#include <set>

using namespace mlir;
using namespace mlir::piper;
using ::piper::sim::formatNumber;

namespace {

std::string num(double x) { return formatNumber("%.6g", x); }

/// A duration: milliseconds under the model, plain units at unit costs.
std::string duration(const SimulationReport &r, double seconds) {
  return r.unitCosts ? formatNumber("%.6g", seconds)
                     : formatNumber("%.3f", seconds * 1e3);
}

std::string pad(std::string s, size_t width, bool right = false) {
  if (s.size() >= width)
    return s;
  std::string fill(width - s.size(), ' ');
  return right ? fill + s : s + fill;
}

/// JSON string contents.
std::string escapeJSON(StringRef text) {
  std::string out;
  for (char c : text) {
    if (c == '"' || c == '\\')
      out += '\\';
    out += c;
  }
  return out;
}

/// XML text.
std::string escapeXML(StringRef text) {
  std::string out;
  for (char c : text) {
    if (c == '<')
      out += "&lt;";
    else if (c == '>')
      out += "&gt;";
    else if (c == '&')
      out += "&amp;";
    else
      out += c;
  }
  return out;
}

const char *colour(StringRef category) {
  return llvm::StringSwitch<const char *>(category)
      .Case("F", "#4e79a7")
      .Case("BI", "#f28e2b")
      .Case("BW", "#59a14f")
      .Case("B", "#e15759")
      .Case("UPD", "#76716c")
      .Case("sum", "#bab0ac")
      .Cases({"send", "recv"}, "#b07aa1")
      .Default("#9c755f"); // collectives
}

} // namespace

std::string mlir::piper::renderSummary(const SimulationReport &r) {
  std::string out;
  std::string unit = r.unitCosts ? "" : " ms";
  if (r.unitCosts)
    out += "simulated step at unit costs (F = BI = BW = 1, everything else "
           "0)\n";
  else
    out += "simulated step on " + std::to_string(r.numDevices) + " x " +
           r.deviceDescription + " (" + r.device + "), model costs\n";
  out += "mesh: " + r.mesh + "\n";
  out += "step time " + duration(r, r.stepTime) + unit + ", bubble " +
         formatNumber("%.1f", 100 * r.bubbleFraction) +
         "%, communication exposed " + duration(r, r.exposedComm) + unit +
         " and hidden " + duration(r, r.hiddenComm) + unit + " per device\n";
  if (!r.unitCosts)
    out += "throughput " + formatNumber("%.0f", r.tokensPerSecond) +
           " tokens/s (" + formatNumber("%.0f", r.tokensPerStep) +
           " tokens/step), " + formatNumber("%.4g", r.flopsPerStep) +
           " FLOP/step, MFU " + formatNumber("%.1f", 100 * r.mfu) + "%\n";
  size_t w = 8;
  for (const DeviceSummary &d : r.devices)
    w = std::max(w, d.program.size() + 2);
  size_t rw = 6;
  for (const DeviceSummary &d : r.devices)
    rw = std::max(rw, d.role.size() + 2);
  out += pad("program", w) + pad("role", rw) + pad("compute" + unit, 14, true) +
         pad("comm" + unit, 14, true) + pad("exposed" + unit, 14, true) +
         pad("idle" + unit, 14, true) + pad("bubble", 8, true) +
         pad("peak MiB", 10, true) + "\n";
  for (const DeviceSummary &d : r.devices) {
    std::string memory =
        d.peakMemory < 0
            ? "-"
            : formatNumber("%.1f", double(d.peakMemory) / (1024.0 * 1024));
    if (d.peakMemory > r.memoryCapacity && !r.unitCosts)
      memory += "!";
    out += pad(d.program, w) + pad(d.role, rw) +
           pad(duration(r, d.compute), 14, true) +
           pad(duration(r, d.comm), 14, true) +
           pad(duration(r, d.exposedComm), 14, true) +
           pad(duration(r, d.idle), 14, true) +
           pad(formatNumber("%.1f%%",
                            r.stepTime > 0 ? 100 * d.idle / r.stepTime : 0),
               8, true) +
           pad(memory, 10, true) + "\n";
  }
  return out;
}

std::string mlir::piper::renderChromeTrace(const SimulationReport &r) {
  // Microseconds; a unit of the unit-cost mode is a millisecond, as in the
  // schedule library's traces.
  double scale = r.unitCosts ? 1000 : 1e6;
  std::string out = "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n";
  bool first = true;
  auto event = [&](const std::string &e) {
    out += (first ? "" : ",\n") + e;
    first = false;
  };
  for (auto [p, program] : llvm::enumerate(r.problem.programs)) {
    event(
        "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":" + std::to_string(p) +
        ",\"args\":{\"name\":\"@" + program.name + "\"}}");
    for (auto [s, stream] : llvm::enumerate(program.streams))
      event("{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":" +
            std::to_string(p) + ",\"tid\":" + std::to_string(s) +
            ",\"args\":{\"name\":\"" + stream.name + "\"}}");
  }
  for (const sim::Span &span : r.trace.spans) {
    // Instructions, and the collectives inside launches.
    bool inner = span.isSegment && span.kind == sim::SegmentKind::Comm &&
                 r.problem.programs[span.program]
                         .streams[span.stream]
                         .instrs[span.instr]
                         .kind == sim::Instr::Kind::Launch;
    if (span.isSegment && !inner)
      continue;
    event("{\"name\":\"" + escapeJSON(span.name) + "\",\"cat\":\"" +
          escapeJSON(span.category) +
          "\",\"ph\":\"X\",\"pid\":" + std::to_string(span.program) +
          ",\"tid\":" + std::to_string(span.stream) +
          ",\"ts\":" + num(span.start * scale) +
          ",\"dur\":" + num((span.end - span.start) * scale) + "}");
  }
  out += "\n]}\n";
  return out;
}

std::string mlir::piper::renderTimelineSVG(const SimulationReport &r) {
  // Rows: the (program, stream) pairs that ran something.
  std::set<std::pair<int, int>> used;
  for (const sim::Span &span : r.trace.spans)
    if (!span.isSegment && span.end > span.start)
      used.insert({span.program, span.stream});
  std::map<std::pair<int, int>, int> row;
  for (auto key : used)
    row[key] = int(row.size());
  const double plot = 1200, rowH = 22, left = 200, top = 8;
  double t = r.stepTime > 0 ? r.stepTime : 1;
  double px = plot / t;
  double width = left + plot + 16, height = top + row.size() * rowH + 30;
  std::string out = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" +
                    num(width) + "\" height=\"" + num(height) +
                    "\" font-family=\"monospace\" font-size=\"10\">\n";
  out += "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  for (auto [key, i] : row) {
    const sim::Program &program = r.problem.programs[key.first];
    out += "<text x=\"4\" y=\"" + num(top + i * rowH + rowH / 2 + 4) + "\">@" +
           escapeXML(program.name) + " " +
           escapeXML(program.streams[key.second].name) + "</text>\n";
  }
  for (const sim::Span &span : r.trace.spans) {
    if (span.isSegment || span.end <= span.start)
      continue;
    double y = top + row[{span.program, span.stream}] * rowH;
    double x = left + span.start * px, w = (span.end - span.start) * px;
    out += "<g><title>" + escapeXML(span.name) + " [" +
           duration(r, span.start) + ", " + duration(r, span.end) +
           (r.unitCosts ? "" : " ms") + ")</title><rect x=\"" + num(x) +
           "\" y=\"" + num(y + 2) + "\" width=\"" + num(std::max(w, 0.5)) +
           "\" height=\"" + num(rowH - 4) + "\" fill=\"" +
           colour(span.category) + "\"/></g>\n";
  }
  double axisY = top + row.size() * rowH + 4;
  out += "<line x1=\"" + num(left) + "\" y1=\"" + num(axisY) + "\" x2=\"" +
         num(left + plot) + "\" y2=\"" + num(axisY) + "\" stroke=\"black\"/>\n";
  for (int i = 0; i <= 10; ++i)
    out += "<text x=\"" + num(left + i * plot / 10) + "\" y=\"" +
           num(axisY + 14) + "\" text-anchor=\"middle\">" +
           duration(r, t * i / 10) + "</text>\n";
  out += "<text x=\"" + num(left + plot) + "\" y=\"" + num(axisY + 26) +
         "\" text-anchor=\"end\">" + (r.unitCosts ? "units" : "ms") +
         "</text>\n";
  out += "</svg>\n";
  return out;
}
