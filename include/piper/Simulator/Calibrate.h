//===- Calibrate.h - Fitting the cost model to a measured run ---*- C++ -*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The MLIR-free half of piper-calibrate (docs/Simulator.md, "Calibration"):
// reads a `piper-run --trace` of a plan compiled with --trace-kernels,
// pairs each kernel span with the op the simulator counted at that place of
// that launch (SimulationReport::kernels), and fits one rate per kernel
// kind, the time a launch spends outside its kernels, and a link's alpha
// and beta from ping-pong points. Kept apart from the tool so that a
// synthetic trace with known rates tests it.
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_SIMULATOR_CALIBRATE_H
#define PIPER_SIMULATOR_CALIBRATE_H

#include "piper/Simulator/CostModel.h"

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace piper::sim {

/// A complete ("ph": "X") event of a Chrome trace; times in microseconds.
struct TraceEvent {
  int pid = 0;
  std::string name, category;
  double start = 0, duration = 0;
  /// A communication span's payload (args elements x dtype) and, for a
  /// collective, its communicator's member count (from args comm,
  /// "... (rank r of N: ...)"); 0 when the span does not say.
  double bytes = 0;
  int members = 0;
};

/// The complete events of a trace file's text; false with `error` if the
/// text is not a trace (no traceEvents array, an X event without pid, ts
/// or dur).
bool parseTraceEvents(const std::string &text, std::vector<TraceEvent> &events,
                      std::string &error);

/// One op the simulator counted, as KernelRecord without its place.
struct CountedOp {
  std::string kind;
  double matrixFlops = 0, vectorFlops = 0, bytes = 0;
};

/// The counted ops of each (program, launch name), in body order.
using CountedLaunches =
    std::map<std::pair<std::string, std::string>, std::vector<CountedOp>>;

/// One measured op: its counts and its span's seconds.
struct KernelSample {
  CountedOp op;
  double seconds = 0;
  /// Where it ran: "<rank>:<launch name>", and which run of that launch.
  std::string launch;
  int run = 0;
};

struct Pairing {
  std::vector<KernelSample> samples;
  /// Per launch ("<rank>:<name>") and run: its span minus its paired kernel
  /// spans (seconds), what the lowering adds around the counted ops.
  std::map<std::string, std::vector<double>> launchResiduals;
  /// Launch spans used, kernel spans left unpaired (ops the simulator does
  /// not count, such as reshapes: their time stays in the residual), and
  /// counted ops without a span (a plan compiled from another strategy).
  size_t launches = 0, unpairedSpans = 0, missingSpans = 0;
  /// Kernel spans inside no launch span (none when they nest as they must).
  size_t outsideSpans = 0;
  /// missingSpans by kind.
  std::map<std::string, size_t> missingKinds;
};

/// Pairs the kernel spans (category "kernel") inside each launch span
/// (category "compute") of rank r with the ops counted for
/// (programOfRank[r], launch name), in order and by kind: a span whose kind
/// differs from the next counted op's is skipped, and counted ops without a
/// kind (kernelKindOf's: other dialects) are not looked for. The first
/// `skipRuns` runs of each (rank, launch) are warm-up and left out.
Pairing pairKernelSpans(const std::vector<TraceEvent> &events,
                        const std::vector<std::string> &programOfRank,
                        const CountedLaunches &counted, int skipRuns);

/// Which run of a launch stands for it: the fastest (the undisturbed
/// machine: preemption only adds time) or the median one (the machine as
/// loaded during the calibrating run).
enum class RunStatistic { Fastest, Median };

/// One rate per kind: ops with matrix FLOPs are timed per FLOP, the others
/// per byte. Per launch, a kind's ops of one run are summed (n ops, work W,
/// time t) and the fastest run stands for the launch: on a shared machine
/// preemption only adds time, and a sum does not depend on how the lowering
/// splits the work among the ops (attention's three vjps are computed by
/// the first). Then t = n overhead + W / rate by least squares over the
/// launches, or through the origin (overhead 0, rate = sum W / sum t) when
/// the launches do not determine both or one comes out negative. `*` is
/// every kind per byte through the origin, for kinds the calibrating
/// strategy did not run.
std::map<std::string, KernelRate>
fitKernelRates(const std::vector<KernelSample> &samples,
               RunStatistic statistic = RunStatistic::Fastest);

/// alpha + bytes / bandwidth through (bytes, seconds) points by least
/// squares (alpha clamped at 0); false if fewer than two distinct sizes or a
/// non-positive slope.
bool fitLink(const std::vector<std::pair<double, double>> &points,
             LinkFit &link);

/// The ping-pong file's points (bench/pingpong.cpp:
/// {"pingpong": [{"bytes": B, "seconds": S}, ...]}); false with `error`.
bool parsePingPong(const std::string &text,
                   std::vector<std::pair<double, double>> &points,
                   std::string &error);

/// The median of `values` (0 if empty).
double median(std::vector<double> values);

/// Per collective kind in the trace (all_reduce, reduce_scatter,
/// all_gather spans of two or more members): the link that, in the
/// simulator's ring model, fits the mean span of each payload size. The
/// mean, not the fastest: on a CPU the runtime's collectives stall now and
/// then (a 256 KiB all-reduce between two ranks on two cores took 0.07 ms
/// at best, 0.3 ms in the median and 0.9 ms on average), and the step pays
/// every stall, as it pays waiting for a late member. Needs two sizes.
std::map<std::string, LinkFit>
fitCollectives(const std::vector<TraceEvent> &events);

/// The launch overhead: per launch its residual of the run `statistic`
/// picks, then the median over launches (0 if none).
double fitLaunchOverhead(const Pairing &pairing,
                         RunStatistic statistic = RunStatistic::Fastest);

} // namespace piper::sim

#endif // PIPER_SIMULATOR_CALIBRATE_H
