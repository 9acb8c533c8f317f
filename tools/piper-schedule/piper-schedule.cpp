//===- piper-schedule.cpp - Build, check, simulate and draw schedules -----===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Command line around the PiperSchedule library: builds a built-in pipeline
// schedule or imports a PyTorch CSV, validates it, simulates it under the
// given costs and prints it in one of several forms.
//
//   piper-schedule --schedule=1f1b --pp=4 --microbatches=8 --format=grid
//   piper-schedule --import=schedule.csv --costs=1,1,1 --format=summary
//
// Every error is one line `piper-schedule: error: ...` on stderr and exit
// code 1. See docs/Schedules.md.
//
//===----------------------------------------------------------------------===//

#include "piper/Schedule/Builders.h"
#include "piper/Schedule/Pictures.h"
#include "piper/Schedule/PyTorchCSV.h"
#include "piper/Schedule/Simulator.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

using namespace piper::sched;
namespace cl = llvm::cl;

namespace {

enum class Format { Summary, Grid, CSV, Chrome, SVG };

cl::OptionCategory category("piper-schedule options");

cl::opt<std::string> scheduleName(
    "schedule",
    cl::desc("Built-in schedule: gpipe, 1f1b, interleaved-1f1b, zb-h1, zb-v, "
             "dualpipe or dualpipev"),
    cl::value_desc("name"), cl::cat(category));
cl::opt<int> ranks("pp", cl::desc("Pipeline ranks (R for dualpipev)"),
                   cl::init(0), cl::cat(category));
cl::opt<int> microbatches("microbatches",
                          cl::desc("Microbatches (all directions together)"),
                          cl::init(0), cl::cat(category));
cl::opt<int> chunks("chunks",
                    cl::desc("Stages per rank (interleaved-1f1b only)"),
                    cl::init(1), cl::cat(category));
cl::opt<std::string>
    importFile("import", cl::desc("Read a PyTorch compute-only schedule CSV"),
               cl::value_desc("file"), cl::cat(category));
cl::opt<std::string>
    costsText("costs",
              cl::desc("Durations of F, I and W (B = I + W), default 1,1,1"),
              cl::value_desc("F,I,W"), cl::init("1,1,1"), cl::cat(category));
cl::opt<double>
    overlapCost("overlap-cost",
                cl::desc("Duration of an overlapped F&B pair (default F + B)"),
                cl::init(-1), cl::cat(category));
cl::opt<Format> format(
    "format", cl::desc("Output form"), cl::init(Format::Summary),
    cl::values(
        clEnumValN(Format::Summary, "summary", "makespan and per-rank bubbles"),
        clEnumValN(Format::Grid, "grid", "rank x time-slot text grid"),
        clEnumValN(Format::CSV, "csv", "PyTorch compute-only CSV"),
        clEnumValN(Format::Chrome, "chrome", "Chrome-trace JSON (Perfetto)"),
        clEnumValN(Format::SVG, "svg", "SVG timeline")),
    cl::cat(category));
cl::opt<bool>
    bForInput("b-for-input",
              cl::desc("CSV output: write input gradients as B (older "
                       "PyTorch)"),
              cl::cat(category));
cl::opt<std::string> outputFile("o", cl::desc("Output file (default stdout)"),
                                cl::value_desc("file"), cl::init("-"),
                                cl::cat(category));

int fail(const llvm::Twine &message) {
  llvm::WithColor::error(llvm::errs(), "piper-schedule") << message << "\n";
  return 1;
}

/// Parses `F,I,W` as three positive numbers.
bool parseCosts(llvm::StringRef text, Costs &costs) {
  llvm::SmallVector<llvm::StringRef> parts;
  text.split(parts, ',');
  if (parts.size() != 3)
    return false;
  double *slots[3] = {&costs.f, &costs.i, &costs.w};
  for (int k = 0; k < 3; ++k)
    if (parts[k].trim().getAsDouble(*slots[k]) || !(*slots[k] > 0))
      return false;
  return true;
}

/// Shortest exact-looking spelling: 2, 2.5, 0.333333.
std::string num(double x) {
  return llvm::formatv("{0}", llvm::format("%g", x));
}

std::string summary(const Schedule &s, const Costs &c, const Timeline &t) {
  std::string out;
  llvm::raw_string_ostream os(out);
  os << "schedule: " << s.name << "\n";
  os << "ranks: " << s.numRanks << ", stages: " << s.numStages
     << ", microbatches: " << s.numMicrobatches * s.numChains;
  if (s.numChains > 1)
    os << " (" << s.numMicrobatches << " per direction)";
  os << "\n";
  os << "costs: F=" << num(c.f) << " I=" << num(c.i) << " W=" << num(c.w)
     << " B=" << num(c.b()) << " F&B=" << num(c.fb()) << "\n";
  os << "makespan: " << num(t.makespan) << "\n";
  for (int r = 0; r < s.numRanks; ++r)
    os << "rank " << r << ": busy " << num(t.busy[r]) << ", bubble "
       << num(t.bubble(r)) << "\n";
  return out;
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(
      argc, argv,
      "Piper pipeline schedules: build, validate, simulate, draw\n");

  Costs costs;
  if (!parseCosts(costsText, costs))
    return fail("--costs expects three positive numbers F,I,W, got '" +
                costsText + "'");
  if (overlapCost.getNumOccurrences()) {
    if (!(overlapCost > 0))
      return fail("--overlap-cost must be positive");
    costs.overlapFB = overlapCost;
  }

  bool fromFile = !importFile.empty();
  if (fromFile == !scheduleName.empty())
    return fail(fromFile ? "--schedule and --import are exclusive"
                         : "give --schedule=<name> or --import=<file>");

  std::optional<Schedule> schedule;
  if (fromFile) {
    auto buffer = llvm::MemoryBuffer::getFileOrSTDIN(importFile);
    if (!buffer)
      return fail("cannot open '" + importFile +
                  "': " + buffer.getError().message());
    Result<Schedule> read = readPyTorchCSV((*buffer)->getBuffer().str());
    if (!read)
      return fail(importFile + ": " + read.error());
    schedule = std::move(*read);
  } else {
    if (ranks.getNumOccurrences() == 0 || microbatches.getNumOccurrences() == 0)
      return fail("--schedule needs --pp and --microbatches");
    Result<Schedule> built =
        buildSchedule(scheduleName, ranks, microbatches, chunks);
    if (!built)
      return fail(built.error());
    schedule = std::move(*built);
  }

  Result<Timeline> timeline = simulate(*schedule, costs);
  if (!timeline)
    return fail((fromFile ? importFile + ": " : std::string()) +
                "invalid schedule: " + timeline.error());

  std::string text;
  switch (format) {
  case Format::Summary:
    text = summary(*schedule, costs, *timeline);
    break;
  case Format::Grid:
    text = renderGrid(*schedule, *timeline);
    break;
  case Format::CSV: {
    CSVWriteOptions options;
    options.bForInput = bForInput;
    Result<std::string> csv = writePyTorchCSV(*schedule, options);
    if (!csv)
      return fail(csv.error());
    text = *csv;
    break;
  }
  case Format::Chrome:
    text = renderChromeTrace(*schedule, *timeline);
    break;
  case Format::SVG:
    text = renderSVG(*schedule, *timeline);
    break;
  }

  std::error_code ec;
  llvm::raw_fd_ostream os(outputFile, ec, llvm::sys::fs::OF_None);
  if (ec)
    return fail("cannot write '" + outputFile + "': " + ec.message());
  os << text;
  return 0;
}
