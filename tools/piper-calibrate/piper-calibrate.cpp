//===- piper-calibrate.cpp - Fit the simulator to a measured run ----------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// piper-calibrate MODEL --directives=S.json --plan=PLAN --trace=T.json
//                 [--pingpong=P.json] [--skip-steps=N] -o CAL.json
//
// PLAN is the model compiled with S.json and --trace-kernels, T.json its
// `piper-run --trace`. The tool compiles the model's front half again (in
// process, seconds) to get the device programs the simulator costs, asks the
// simulator for each op it counts per launch (FLOPs and bytes, one device's
// share), pairs them with the trace's kernel spans (Calibrate.h) and writes
// a calibration file (docs/Simulator.md, "Calibration"): a rate per kernel
// kind, the time a launch spends outside its kernels, and the link fitted
// to bench/pingpong.cpp's points. It prints what it fitted.
//
//===----------------------------------------------------------------------===//

#include "piper-rt/plan_manifest.h"
#include "piper/Compile/Compile.h"
#include "piper/InitAllPiper.h"
#include "piper/Simulator/Calibrate.h"
#include "piper/Simulator/Simulate.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

using namespace mlir;
using namespace mlir::piper;
namespace cl = llvm::cl;

namespace {

cl::OptionCategory category("piper-calibrate options");
cl::opt<std::string> modelFile(cl::Positional, cl::desc("<model.mlir>"),
                               cl::Required, cl::cat(category));
cl::opt<std::string> directives("directives",
                                cl::desc("The strategy PLAN was compiled with"),
                                cl::cat(category));
cl::opt<std::string>
    planDir("plan", cl::desc("The plan, compiled with --trace-kernels"),
            cl::Required, cl::cat(category));
cl::opt<std::string> traceFile("trace",
                               cl::desc("piper-run --trace of PLAN (one merged "
                                        "file)"),
                               cl::Required, cl::cat(category));
cl::opt<std::string>
    pingPongFile("pingpong",
                 cl::desc("bench/pingpong.cpp's output: fits links '*'"),
                 cl::cat(category));
cl::opt<int> skipSteps("skip-steps",
                       cl::desc("Runs of each launch left out as warm-up "
                                "(default 1: the first step)"),
                       cl::init(1), cl::cat(category));
cl::opt<std::string> statistic(
    "statistic",
    cl::desc("Which run of each launch the fit uses: fastest (default; the "
             "undisturbed machine) or median (the machine as loaded during "
             "the run)"),
    cl::init("fastest"), cl::cat(category));
cl::opt<std::string> outputName("o", cl::desc("The calibration file"),
                                cl::value_desc("CAL.json"), cl::Required,
                                cl::cat(category));

int fail(const std::string &message) {
  llvm::errs() << "piper-calibrate: " << message << "\n";
  return 1;
}

/// The text of `path`, or a failure naming it.
std::optional<std::string> readText(const std::string &path,
                                    std::string &error) {
  auto buffer = llvm::MemoryBuffer::getFile(path);
  if (!buffer) {
    error = "cannot read '" + path + "': " + buffer.getError().message();
    return std::nullopt;
  }
  return (*buffer)->getBuffer().str();
}

/// The ops the simulator counts per (program, launch) of `model` compiled
/// with `manifest`'s optimizer and the strategy.
FailureOr<sim::CountedLaunches>
countLaunches(MLIRContext &context, const ::piper::plan::Manifest &manifest) {
  llvm::SourceMgr sourceMgr;
  std::string error;
  auto file = openInputFile(modelFile, &error);
  if (!file) {
    llvm::errs() << "piper-calibrate: " << error << "\n";
    return failure();
  }
  sourceMgr.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
  SourceMgrDiagnosticHandler handler(sourceMgr, &context);
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!module)
    return failure();
  CompileOptions options;
  options.directives = directives;
  options.sourceName = modelFile;
  if (manifest.optimizer)
    options.optimizer.optimizer = manifest.optimizer->kind;
  TimingScope timing;
  if (failed(compileModel(*module, options, std::nullopt, timing)))
    return failure();
  SimulateOptions simulate;
  simulate.recordKernels = true;
  FailureOr<SimulationReport> report =
      simulatePrograms(*module, simulate, [&] { return module->emitError(); });
  if (failed(report))
    return failure();
  sim::CountedLaunches counted;
  for (const KernelRecord &k : report->kernels)
    counted[{k.program, k.launch}].push_back(
        {k.kind, k.matrixFlops, k.vectorFlops, k.bytes});
  return counted;
}

int run(MLIRContext &context) {
  std::string error;
  if (statistic != "fastest" && statistic != "median")
    return fail("unknown --statistic '" + statistic + "' (fastest or median)");
  sim::RunStatistic pick = statistic == "median" ? sim::RunStatistic::Median
                                                 : sim::RunStatistic::Fastest;
  std::string manifestPath = planDir + "/plan.json";
  std::optional<std::string> manifestText = readText(manifestPath, error);
  if (!manifestText)
    return fail(error);
  ::piper::plan::Manifest manifest;
  if (!::piper::plan::readManifest(*manifestText, manifestPath, manifest,
                                   error))
    return fail(error);
  if (manifest.kernelKinds.empty())
    return fail(manifestPath + " lists no kernel_kinds: compile the plan "
                               "with piper-compile --trace-kernels");
  std::vector<const ::piper::plan::Role *> roleOf;
  if (!manifest.rolesOfRanks(roleOf, error))
    return fail(error);
  std::vector<std::string> programOfRank;
  for (const ::piper::plan::Role *role : roleOf)
    programOfRank.push_back(role->program);

  std::optional<std::string> traceText = readText(traceFile, error);
  if (!traceText)
    return fail(error);
  std::vector<sim::TraceEvent> events;
  if (!sim::parseTraceEvents(*traceText, events, error))
    return fail("trace '" + traceFile + "': " + error);

  FailureOr<sim::CountedLaunches> counted = countLaunches(context, manifest);
  if (failed(counted))
    return 1;
  sim::Pairing pairing =
      sim::pairKernelSpans(events, programOfRank, *counted, skipSteps);
  if (pairing.samples.empty())
    return fail("trace '" + traceFile +
                "' has no kernel span inside a launch of this plan's "
                "programs (was it recorded from PLAN with --trace?)");

  sim::Calibration cal;
  cal.kernels = sim::fitKernelRates(pairing.samples, pick);
  cal.launchOverhead = sim::fitLaunchOverhead(pairing, pick);
  if (!pingPongFile.empty()) {
    std::optional<std::string> text = readText(pingPongFile, error);
    std::vector<std::pair<double, double>> points;
    if (!text || !sim::parsePingPong(*text, points, error))
      return fail("ping-pong '" + pingPongFile + "': " + error);
    sim::LinkFit link;
    if (!sim::fitLink(points, link))
      return fail("ping-pong '" + pingPongFile +
                  "': needs two or more sizes whose time grows with size");
    cal.links["*"] = link;
  }

  // The collectives as the runtime ran them (the ping-pong's link times one
  // message; an all-reduce also reduces, copies and waits for each fragment).
  cal.collectives = sim::fitCollectives(events);

  auto out = openOutputFile(outputName, &error);
  if (!out)
    return fail(error);
  out->os() << sim::renderCalibration(cal);
  out->keep();

  llvm::outs() << llvm::formatv(
      "piper-calibrate: {0} launches, {1} kernel spans paired ({2} unpaired, "
      "{3} outside any launch, {4} counted ops without a span); launch "
      "overhead {5:F1} us\n",
      pairing.launches, pairing.samples.size(), pairing.unpairedSpans,
      pairing.outsideSpans, pairing.missingSpans, *cal.launchOverhead * 1e6);
  for (const auto &[kind, n] : pairing.missingKinds)
    llvm::outs() << llvm::formatv("  no span for {0} counted op(s) '{1}'\n", n,
                                  kind);
  for (const auto &[kind, rate] : cal.kernels)
    llvm::outs() << llvm::formatv(
        "  {0,-22} {1,10:F3} {2} + {3:F2} us\n", kind, rate.rate / 1e9,
        rate.perFlop ? "GFLOP/s" : "GB/s   ", rate.overhead * 1e6);
  for (const auto &[axis, link] : cal.links)
    llvm::outs() << llvm::formatv(
        "  link {0}: {1:F2} us + bytes / {2:F2} GB/s\n", axis,
        link.latency * 1e6, link.bandwidth / 1e9);
  for (const auto &[kind, link] : cal.collectives)
    llvm::outs() << llvm::formatv(
        "  {0} (ring link): {1:F2} us + bytes / {2:F2} GB/s\n", kind,
        link.latency * 1e6, link.bandwidth / 1e9);
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  DialectRegistry registry;
  registerPiper(registry);
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(
      argc, argv,
      "piper-calibrate: fit the simulator's kernel rates and links to a "
      "traced run\n");
  MLIRContext context(registry, MLIRContext::Threading::DISABLED);
  context.printOpOnDiagnostic(false);
  context.loadAllAvailableDialects();
  return run(context);
}
