//===- piper-run.cpp - Train a model with a compiled plan -----------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// piper-run PLAN_DIR [--steps=N] [--seed=S] [--log=FILE.jsonl]
//                   [--params-in=FILE] [--params-out=FILE] [--trace=FILE]
//                   [--progress] [--threads=N]
//
// Loads a plan written by piper-compile, initialises parameters exactly as
// the interpreter does (Init.h: pure functions of seed, name and element),
// zeroes optimizer state, feeds the interpreter's synthetic data
// (SyntheticData.h) and runs N training steps, printing
//   step 1 loss 2.0790981075160042
// as piper-interp does, so the two outputs compare token by token.
//
// A one-role plan runs in a single process (no MPI). A plan with several
// roles runs under `mpiexec -np N` (Job.h); the plan's calls go through the
// runtime's plan ABI (runtime/include/piper-rt/plan_abi.h), and the ranks
// that compute the loss send it to rank 0, which alone prints and logs, so
// the output is piper-interp's. This file is the driver: flags, the step
// loop and logging; the manifest and its layout are the runtime's
// (plan_manifest.h), parameters and data live in Params.h and Data.h.
//
//===----------------------------------------------------------------------===//

#include "Checkpointing.h"
#include "Data.h"
#include "Hyperparameters.h"
#include "Job.h"
#include "Memory.h"
#include "Params.h"
#include "Program.h"
#include "Sample.h"
#include "Step.h"
#include "Switch.h"
#include "TraceSummary.h"
#include "common/EvalFlags.h"
#include "common/LossCurve.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cmath>
#include <csignal>
#include <cstring>
#include <optional>
#include <unistd.h>

// The plans this driver runs: piper-run-cuda defines it as "cuda".
#ifndef PIPER_RUN_TARGET
#define PIPER_RUN_TARGET "cpu"
#endif

using namespace piper;
using namespace piper::run;
namespace cl = llvm::cl;

namespace {

cl::OptionCategory &category = runOptions();
// --lr, --warmup-steps, --lr-schedule, --min-lr, --decay-steps and
// --clip-grad-norm: Hyperparameters.cpp.
cl::opt<std::string> planDir(cl::Positional, cl::desc("<plan directory>"),
                             cl::Required, cl::cat(category));
cl::opt<int64_t> steps("steps", cl::desc("Training steps (default 1)"),
                       cl::init(1), cl::cat(category));
cl::opt<uint64_t> seed("seed",
                       cl::desc("Seed of parameters and data (default 0)"),
                       cl::init(0), cl::cat(category));
cl::opt<std::string> dataFile(
    "data",
    cl::desc("Train on the bytes of a text file (e.g. Piper's "
             "data/corpus/sonnets.txt) as tokens, in the interpreter's "
             "order, instead of synthetic data (piper-interp --data)"),
    cl::value_desc("file"), cl::cat(category));
cl::opt<std::string> paramsOut(
    "params-out",
    cl::desc("After the last step, write every parameter to FILE (rank 0, "
             "gathered from the ranks that hold it): its name, then its "
             "values, one line each, as piper-interp --params-out"),
    cl::value_desc("file"), cl::cat(category));
cl::opt<std::string> paramsIn(
    "params-in",
    cl::desc("Start from the parameter values in FILE (the format of "
             "--params-out; e.g. a PyTorch module's weights exported by "
             "python/piper) instead of the seeded initialisers"),
    cl::value_desc("file"), cl::cat(category));
cl::opt<std::string> traceFile(
    "trace",
    cl::desc("Write a Chrome trace of the run (every launch and every "
             "communication of every rank, merged by rank 0; '%r' in FILE "
             "writes one file per rank) at the end"),
    cl::value_desc("file"), cl::cat(category));
cl::opt<cl::boolOrDefault> progress(
    "progress",
    cl::desc("Print a progress line (time per step, ETA) to stderr after "
             "each step (default: when stderr is a terminal)"),
    cl::cat(category));
cl::opt<bool> bufferStatsFlag(
    "buffer-stats",
    cl::desc("At the end, print how many of the plan's allocations the "
             "buffer cache served (rank 0, stderr)"),
    cl::init(false), cl::cat(category));
cl::opt<bool> traceSummary(
    "trace-summary",
    cl::desc("With --trace: at the end, print per rank the time in each kind "
             "of node, waiting and communication (rank 0)"),
    cl::init(false), cl::cat(category));
cl::opt<bool> peakBytesFlag(
    "peak-bytes",
    cl::desc("At the end, print each rank's peak bytes: the plan's buffers' "
             "high-water mark plus the step arguments and results it holds "
             "(rank 0, stdout)"),
    cl::init(false), cl::cat(category));
cl::opt<std::string> evalProgram(
    "eval-program",
    cl::desc("What --eval-data runs: 'forward' (default), each role's "
             "forward-only evaluation entry; 'step', the whole training step "
             "with its updates dropped (slower; for comparisons)"),
    cl::init("forward"), cl::cat(piper::evalCategory()));
cl::opt<std::string> logFile("log",
                             cl::desc("Also write one JSON line per step"),
                             cl::value_desc("file"), cl::cat(category));
// Fault injection for the tests that a job whose rank dies stops everywhere
// (rather than hanging): rank R kills itself with SIGKILL as step S starts.
cl::opt<int64_t> killRank("kill-rank",
                          cl::desc("Testing: this rank dies (SIGKILL) at "
                                   "the start of --kill-at-step"),
                          cl::init(-1), cl::Hidden, cl::cat(category));
cl::opt<bool> stopInstead("kill-with-sigstop",
                          cl::desc("Testing: --kill-rank stops (SIGSTOP) "
                                   "instead of dying, as a hung rank would"),
                          cl::init(false), cl::Hidden, cl::cat(category));
cl::opt<int64_t> killAtStep("kill-at-step",
                            cl::desc("Testing: the step --kill-rank dies at"),
                            cl::init(1), cl::Hidden, cl::cat(category));

/// The most steps one run takes (docs/Limits.md).
constexpr int64_t kMaxSteps = 1000000000;

/// --kill-rank names a rank of the job and --kill-at-step a step it takes.
bool checkKillFlags(const Job &job, std::string &error) {
  int64_t ranks = static_cast<int64_t>(job.roleOf.size());
  if (killRank.getNumOccurrences() && (killRank < 0 || killRank >= ranks))
    error = "--kill-rank=" + std::to_string(killRank) +
            " is not a rank of this " + std::to_string(ranks) + "-rank job";
  else if (killAtStep.getNumOccurrences() &&
           (killAtStep < 1 || killAtStep > steps))
    error = "--kill-at-step=" + std::to_string(killAtStep) +
            " is not a step of this run (1 to " + std::to_string(steps) + ")";
  return error.empty();
}

int fail(const std::string &message) {
  // One write: the ranks of a job share stderr.
  llvm::errs() << ("piper-run: " + message + "\n");
  return 1;
}

/// Takes `--threads=N` / `--threads N` (one dash or two) out of argv.
/// libLLVM.so registers a `threads` option of its own, so piper-run cannot
/// declare a cl::opt of that name; its value is parsed here instead.
std::optional<std::string> takeThreadsFlag(int &argc, char **argv) {
  std::optional<std::string> value;
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    llvm::StringRef arg = argv[i];
    llvm::StringRef name = arg.starts_with("--")  ? arg.drop_front(2)
                           : arg.starts_with("-") ? arg.drop_front(1)
                                                  : llvm::StringRef();
    if (name == "threads") {
      value = i + 1 < argc ? argv[++i] : "";
      continue;
    }
    if (name.consume_front("threads=")) {
      value = name.str();
      continue;
    }
    argv[kept++] = argv[i];
  }
  argc = kept;
  return value;
}

/// --threads's value, or the runtime's default without one; false if the
/// value is not a positive integer.
bool threadCount(const std::optional<std::string> &flag, int &threads,
                 std::string &error) {
  if (!flag) {
    threads = piper_plan_default_threads();
    return true;
  }
  unsigned value = 0;
  if (llvm::StringRef(*flag).getAsInteger(10, value) || value == 0 ||
      value > 4096) {
    error = "--threads must be a positive integer (at most 4096), got '" +
            *flag + "'";
    return false;
  }
  threads = int(value);
  return true;
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  std::optional<std::string> threadsFlag = takeThreadsFlag(argc, argv);
  cl::HideUnrelatedOptions(
      {&category, &checkpointCategory(), &piper::evalCategory()});
  cl::ParseCommandLineOptions(
      argc, argv,
      "piper-run: trains a model with a plan compiled by piper-compile, "
      "printing the loss per step\n\n"
      "  --threads=N  threads of this rank's kernels, BLAS and generated "
      "parallel loops alike (default: OMP_NUM_THREADS if set, else the cores "
      "this rank may run on, shared with the node's other ranks when they are "
      "not bound to their own; the count is in --log)\n");
  plan::Manifest manifest;
  std::string error;
  int threads = 1;
  if (!threadCount(threadsFlag, threads, error))
    return fail(error);
  // --steps=0 trains nothing: useful only to write the initial (or loaded)
  // parameters or to sample from loaded ones, so alone it is an error
  // rather than a silent exit 0.
  if (steps < 0 || steps > kMaxSteps ||
      (steps == 0 && paramsOut.empty() && sampleBytes == 0))
    return fail("--steps must be from 1 to " + std::to_string(kMaxSteps) +
                " (0 only with --params-out, to write the initial "
                "parameters, or --sample, to sample from them), got " +
                std::to_string(steps));
  if (traceSummary &&
      (traceFile.empty() || traceFile.find("%r") != std::string::npos))
    return fail("--trace-summary needs --trace=FILE (one merged file, no "
                "%r)");
  if (!checkEvalFlags(error))
    return fail(error);
  if (evalProgram != "forward" && evalProgram != "step")
    return fail("--eval-program must be 'forward' or 'step', got '" +
                evalProgram + "'");
  if (!plan::loadManifest(planDir, manifest, error) ||
      !plan::checkRunTarget(manifest, PIPER_RUN_TARGET, error) ||
      !checkSampleFlags(manifest, error))
    return fail(error);
  Hyperparameters hyper;
  if (!hyper.configure(manifest, steps, error))
    return fail(error);
  plan::Manifest nextManifest;
  if (!checkSwitch(manifest, steps, nextManifest, error))
    return fail(error);
  Job job;
  if (!job.start(argc, argv, manifest, traceFile, error) ||
      !hyper.start(manifest, job, error)) {
    // Every rank runs the same checks on the same plan, so every rank fails
    // alike; rank 0 alone says why.
    if (job.rank == 0)
      fail(error);
    job.stop(error);
    return 1;
  }
  if (!checkKillFlags(job, error)) {
    if (job.rank == 0)
      fail(error);
    job.stop(error);
    return 1;
  }
  plan::Coords coords = manifest.mesh.coords(job.rank);
  std::vector<int> lossRanks = manifest.lossRanks(job.roleOf);
  Program program;
  if (!program.load(planDir, manifest, job.role(), error))
    return fail(error);
  // On this thread, which runs the entry: OpenMP's team size is a property
  // of the thread that opens the parallel regions.
  if (program.setThreads)
    program.setThreads(threads);

  // Every step argument lives here; parameters and state persist (state
  // starts at zero).
  std::vector<HostTensor> args(manifest.arguments.size());
  for (const plan::Tensor &arg : manifest.arguments)
    args[arg.index].allocate(arg);
  ref::ParamsFile initialValues;
  if (!paramsIn.empty()) {
    if (ref::Status status = ref::ParamsFile::load(paramsIn, initialValues);
        !status.ok())
      return fail(status.message());
  }
  if (!initParameters(manifest, coords, seed,
                      paramsIn.empty() ? nullptr : &initialValues, args, error))
    return fail(error);
  uint64_t runSeed = seed;
  int64_t firstStep = 1;
  Checkpointing checkpoints;
  if (!checkpoints.begin(manifest, planDir, job, args, runSeed,
                         seed.getNumOccurrences() > 0, dataFile, firstStep,
                         error)) {
    if (!checkpoints.commonError)
      return fail(error);
    if (job.rank == 0)
      fail(error);
    job.stop(error);
    return 1;
  }
  std::vector<HostTensor> results(manifest.results.size());
  for (int64_t j : job.role().outputs)
    results[j].allocate(manifest.results[j]);

  std::unique_ptr<llvm::raw_fd_ostream> log;
  if (!logFile.empty() && job.rank == 0) {
    std::error_code ec;
    log = std::make_unique<llvm::raw_fd_ostream>(logFile, ec);
    if (ec)
      return fail("cannot write " + logFile + ": " + ec.message());
  }
  // The data of this rank's batch replica; replaced with the plan at a
  // --switch-to (the replica index depends on the strategy, the order not).
  std::optional<DataFeeder> data, evalFeeder;
  auto openData = [&](std::string &error) {
    auto [replica, replicas] = manifest.mesh.indexAlong(
        manifest.mesh.coords(job.rank), manifest.batchAxes);
    data.emplace(manifest, runSeed, replica, replicas);
    evalFeeder.emplace(manifest, runSeed, replica, replicas);
    return (dataFile.empty() || data->useCorpus(dataFile, error)) &&
           (evalData.empty() || evalFeeder->useCorpus(evalData, error));
  };
  if (!openData(error))
    return fail(error);
  bool showProgress = progress == cl::BOU_TRUE ||
                      (progress == cl::BOU_UNSET && isatty(STDERR_FILENO));
  double totalSeconds = 0;
  piper::CurveSeries lossCurve{"training loss", "#1f77b4", {}};
  piper::CurveSeries evalCurve{"held-out loss", "#ff7f0e", {}};
  for (int64_t s = firstStep; s <= steps; ++s) {
    StepContext stepContext{manifest,  job.role(), program, job,
                            lossRanks, args,       results};
    if (job.rank == killRank && s == killAtStep) {
      // One write: other ranks print into the same file at the same time.
      std::string line = "piper-run: rank " + std::to_string(job.rank) +
                         (stopInstead ? ": stopped" : ": killed") +
                         " at step " + std::to_string(s) + " (--kill-rank)\n";
      llvm::outs().flush();
      llvm::errs() << line;
      llvm::errs().flush();
      std::raise(stopInstead ? SIGSTOP : SIGKILL);
    }
    hyper.set(job, s);
    double loss = 0, seconds = 0;
    if (!runStepProgram(stepContext, *data, s, "step " + std::to_string(s),
                        loss, seconds, error))
      return fail(error);
    if (job.rank == 0) {
      // One write per line, at once: other ranks' messages share the file.
      std::string line;
      llvm::raw_string_ostream(line)
          << "step " << s << " loss " << llvm::format("%.17g", loss) << "\n";
      llvm::outs() << line;
      llvm::outs().flush();
      lossCurve.points.emplace_back(static_cast<double>(s), loss);
    }
    totalSeconds += seconds;
    if (showProgress && job.rank == 0) {
      double perStep = totalSeconds / static_cast<double>(s);
      llvm::errs() << "piper-run: step " << s << "/" << steps << "  "
                   << llvm::format("%.4g", perStep) << " s/step  ETA "
                   << llvm::format("%.3g", perStep * (steps - s)) << " s\n";
    }
    if (log && job.rank == 0) {
      *log << "{\"step\": " << s
           << ", \"loss\": " << llvm::format("%.17g", loss) << ", \"lr\": "
           << llvm::format("%.17g", train::lrAt(hyper.schedule, s));
      if (hyper.clips)
        *log << ", \"grad_norm\": "
             << llvm::format("%.17g",
                             piper_plan_session_grad_norm(job.session));
      *log << ", \"seconds\": " << llvm::format("%.6f", seconds)
           << ", \"threads\": " << threads << "}\n";
    }
    // Updated parameters and state become next step's arguments.
    for (int64_t j : job.role().outputs)
      if (std::optional<int64_t> target = manifest.results[j].updates)
        std::memcpy(args[*target].data(), results[j].data(),
                    results[j].bytes());
    bool evalNow = evaluateAfter(s, steps);
    double evalLoss = 0, evalSeconds = 0;
    if (evalNow &&
        !evaluateHeldOut(stepContext, *evalFeeder, evalBatches,
                         evalProgram == "step", evalLoss, evalSeconds, error))
      return fail(error);
    if (evalNow && job.rank == 0) {
      std::string line;
      llvm::raw_string_ostream(line)
          << "eval step " << s << " loss " << llvm::format("%.17g", evalLoss)
          << " ppl " << llvm::format("%.6g", std::exp(evalLoss)) << "\n";
      llvm::outs() << line;
      llvm::outs().flush();
      evalCurve.points.emplace_back(static_cast<double>(s), evalLoss);
      if (log)
        *log << "{\"step\": " << s
             << ", \"eval_loss\": " << llvm::format("%.17g", evalLoss)
             << ", \"eval_seconds\": " << llvm::format("%.6f", evalSeconds)
             << "}\n";
    }
    if (!checkpoints.afterStep(s, steps, args, error))
      return fail("rank " + std::to_string(job.rank) + ": step " +
                  std::to_string(s) + ": " + error);
    if (switchFlags().enabled() && s == switchFlags().after) {
      if (!checkpoints.beforeSwitch(error) ||
          !switchPlan(manifest, nextManifest, job, !traceFile.empty(), threads,
                      args, results, program, error) ||
          !checkpoints.afterSwitch(manifest, switchFlags().planDir, job) ||
          !hyper.configure(manifest, steps, error) ||
          !hyper.start(manifest, job, error) || !openData(error))
        return fail("rank " + std::to_string(job.rank) + ": " + error);
      lossRanks = manifest.lossRanks(job.roleOf);
    }
  }
  if (!checkpoints.finish(error))
    return fail(error);
  if (sampleBytes > 0) {
    StepContext stepContext{manifest,  job.role(), program, job,
                            lossRanks, args,       results};
    std::string text;
    if (!sampleText(stepContext, seed, text, error))
      return fail(error);
    if (job.rank == 0) {
      std::string line;
      llvm::raw_string_ostream(line)
          << "sample (" << sampleBytes << " bytes, "
          << (sampleTemperature > 0
                  ? "temperature " +
                        llvm::formatv("{0}", double(sampleTemperature)).str()
                  : std::string("greedy"))
          << "):\n"
          << printableText(text) << "\n";
      llvm::outs() << line;
      llvm::outs().flush();
    }
  }
  if (!plotFile.empty() && job.rank == 0 &&
      !piper::writeLossCurveSVG(plotFile, "piper-run " + planDir,
                                evalData.empty()
                                    ? std::vector{lossCurve}
                                    : std::vector{lossCurve, evalCurve},
                                error))
    return fail(error);
  if (bufferStatsFlag && job.rank == 0) {
    piper_plan_buffer_stats stats;
    piper_plan_session_buffer_stats(job.session, &stats);
    llvm::errs() << "piper-run: " << stats.requests << " allocations, "
                 << stats.reused << " served from the buffer cache, "
                 << stats.reserved_bytes << " bytes reserved\n";
  }
  if (peakBytesFlag) {
    std::string text;
    if (!reportPeakBytes(job, args, results, text, error))
      return fail(error);
    llvm::outs() << text;
  }
  if (!paramsOut.empty()) {
    std::string text;
    if (!gatherParameters(manifest, job.roleOf, job.rank, args, job.session,
                          text, error))
      return fail(error);
    if (job.rank == 0) {
      std::error_code ec;
      llvm::raw_fd_ostream file(paramsOut, ec);
      if (ec)
        return fail("cannot write " + paramsOut + ": " + ec.message());
      file << text;
    }
  }
  llvm::outs().flush();
  if (!job.stop(error))
    return fail(error);
  if (traceSummary && job.rank == 0) {
    std::string text;
    if (!summarizeTrace(traceFile, text, error))
      return fail(error);
    llvm::outs() << text;
  }
  return 0;
}
