//===- CalibrateTest.cpp - Calibration file and fitting -------------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The calibration file's kernels and links (valid, written and read back,
// and each invalid form with its exact message), and the fit on a synthetic
// trace whose kernels follow known rates: the fit must recover them.
//
//===----------------------------------------------------------------------===//

#include "piper/Simulator/Calibrate.h"

#include "gtest/gtest.h"

#include <cstdio>
#include <vector>

using namespace piper::sim;

namespace {

TEST(CalibrationFile, KernelsAndLinksRoundTrip) {
  std::string error;
  auto cal = parseCalibration(
      R"({"parameters": {"launch_overhead_us": 25},
          "kernels": {"matmul": {"flops_per_s": 2e10, "overhead_us": 3},
                      "softmax": {"bytes_per_s": 4e9}},
          "links": {"*": {"latency_us": 2, "bandwidth_gbs": 6.5}}})",
      error);
  ASSERT_TRUE(cal) << error;
  const KernelRate *matmul = cal->kernelRate("matmul");
  ASSERT_TRUE(matmul);
  EXPECT_TRUE(matmul->perFlop);
  EXPECT_DOUBLE_EQ(matmul->seconds(2e10, 1), 1 + 3e-6);
  EXPECT_DOUBLE_EQ(cal->kernelRate("softmax")->seconds(1, 8e9), 2);
  EXPECT_EQ(cal->kernelRate("gelu"), nullptr); // no "*"
  ASSERT_TRUE(cal->link("pp"));                // "*" serves every axis
  EXPECT_DOUBLE_EQ(cal->link("pp")->bandwidth, 6.5e9);
  EXPECT_DOUBLE_EQ(cal->link("dp")->latency, 2e-6);
  CostParameters params;
  cal->applyTo(params);
  EXPECT_DOUBLE_EQ(params.launchOverhead, 25e-6);

  auto back = parseCalibration(renderCalibration(*cal), error);
  ASSERT_TRUE(back) << error;
  EXPECT_DOUBLE_EQ(back->kernels.at("matmul").rate, 2e10);
  EXPECT_DOUBLE_EQ(back->kernels.at("matmul").overhead, 3e-6);
  EXPECT_FALSE(back->kernels.at("softmax").perFlop);
  EXPECT_DOUBLE_EQ(back->links.at("*").bandwidth, 6.5e9);
  EXPECT_DOUBLE_EQ(*back->launchOverhead, 25e-6);
}

TEST(CalibrationFile, InvalidKernelsAndLinks) {
  struct Case {
    const char *text, *error;
  } cases[] = {
      {R"({"kernels": [1]})", "'kernels' must be an object"},
      {R"({"kernels": {"matmul": 3}})", "'kernels.matmul' must be an object"},
      {R"({"kernels": {"matmul": {}}})",
       "'kernels.matmul' needs flops_per_s or bytes_per_s"},
      {R"({"kernels": {"matmul": {"flops_per_s": 1, "bytes_per_s": 1}}})",
       "'kernels.matmul' has both flops_per_s and bytes_per_s"},
      {R"({"kernels": {"matmul": {"flops_per_s": 0}}})",
       "'kernels.matmul.flops_per_s' is out of range (0)"},
      {R"({"kernels": {"matmul": {"flops_per_s": 1, "overhead_us": -1}}})",
       "'kernels.matmul.overhead_us' is out of range (-1)"},
      {R"({"kernels": {"matmul": {"flops": 1}}})",
       "unknown key 'kernels.matmul.flops'; expected flops_per_s or "
       "bytes_per_s, and overhead_us"},
      {R"({"kernels": {"matmul": {"flops_per_s": "fast"}}})",
       "'kernels.matmul.flops_per_s' must be a number"},
      {R"({"links": {"*": {"latency_us": 2}}})",
       "'links.*' needs latency_us and bandwidth_gbs"},
      {R"({"links": {"pp": {"latency_us": 2, "bandwidth_gbs": 0}}})",
       "'links.pp.bandwidth_gbs' is out of range (0)"},
      {R"({"links": {"pp": {"alpha": 2}}})",
       "unknown key 'links.pp.alpha'; expected latency_us and bandwidth_gbs"},
      {R"({"parameters": {"launch_overhead_us": -5}})",
       "'parameters.launch_overhead_us' is out of range (-5)"},
  };
  for (const Case &c : cases) {
    std::string error;
    EXPECT_FALSE(parseCalibration(c.text, error)) << c.text;
    EXPECT_EQ(error, c.error) << c.text;
  }
}

/// A Chrome trace event.
std::string event(int pid, const std::string &name, const char *cat, double ts,
                  double dur) {
  char text[256];
  std::snprintf(text, sizeof(text),
                "{\"name\":\"%s\",\"cat\":\"%s\",\"ph\":\"X\",\"pid\":%d,"
                "\"tid\":0,\"ts\":%.3f,\"dur\":%.3f}",
                name.c_str(), cat, pid, ts, dur);
  return text;
}

// Two ranks of one program, four steps of two launches. "F" runs a matmul
// of 2 MFLOP, a reshape the simulator does not count and a softmax; "B"
// runs two matmuls of 8 MFLOP each. A matmul takes 1 us + flops / 2 GFLOP/s,
// a softmax 0.5 us + bytes / 4 GB/s, and each launch 10 us of glue. Step 0
// is 10x slower (warm-up, left out) and rank 0's steps 2 and 3 3x slower
// (preempted runs: the fastest run stands for each launch, unless the fit
// asks for the median one). A kernel span
// outside every launch is reported.
TEST(Calibrate, RecoversKnownRatesFromSyntheticTrace) {
  const double flopsA = 2e6, flopsB = 8e6, smBytes = 4e5;
  auto mm = [](double flops) { return 1 + flops / 2e9 * 1e6; }; // us
  const double sm = 0.5 + smBytes / 4e9 * 1e6;
  std::string text = "{\"traceEvents\":[";
  bool first = true;
  auto add = [&](const std::string &e) {
    text += (first ? "" : ",") + e;
    first = false;
  };
  struct Launch {
    const char *name;
    std::vector<std::pair<const char *, double>> kernels; // kind, us
  } launches[] = {
      {"F{MB=0}", {{"matmul", mm(flopsA)}, {"reshape", 3}, {"softmax", sm}}},
      {"B{MB=0}", {{"matmul", mm(flopsB)}, {"matmul", mm(flopsB)}}},
  };
  for (int rank = 0; rank < 2; ++rank) {
    double t = 10000 * rank;
    for (int step = 0; step < 4; ++step) {
      double slow = step == 0 ? 10 : (rank == 0 && step >= 2 ? 3 : 1);
      for (const Launch &launch : launches) {
        double total = 10 * slow;
        for (const auto &[kind, us] : launch.kernels)
          total += us * slow;
        add(event(rank, launch.name, "compute", t, total));
        double at = t + 5 * slow;
        for (const auto &[kind, us] : launch.kernels) {
          add(event(rank, kind, "kernel", at, us * slow));
          at += us * slow;
        }
        t += total + 50;
      }
    }
  }
  add(event(0, "matmul", "kernel", 1e7, 1));
  text += "]}";
  std::vector<TraceEvent> events;
  std::string error;
  ASSERT_TRUE(parseTraceEvents(text, events, error)) << error;
  ASSERT_EQ(events.size(), 2u * 4 * 7 + 1);

  CountedLaunches counted;
  counted[{"p", "F{MB=0}"}] = {{"matmul", flopsA, 0, 1e5},
                               {"softmax", 0, 1e4, smBytes}};
  // B also counts an op of another dialect: no kind, never traced.
  counted[{"p", "B{MB=0}"}] = {
      {"matmul", flopsB, 0, 3e5}, {"", 0, 1, 16}, {"matmul", flopsB, 0, 3e5}};
  Pairing pairing = pairKernelSpans(events, {"p", "p"}, counted, 1);
  EXPECT_EQ(pairing.launches, 2u * 2 * 3);
  EXPECT_EQ(pairing.samples.size(), 2u * 3 * 4);
  EXPECT_EQ(pairing.unpairedSpans, 2u * 3); // the reshapes
  EXPECT_EQ(pairing.missingSpans, 0u);
  EXPECT_EQ(pairing.outsideSpans, 1u);
  // The glue, and F's uncounted reshape: the median over launches of each
  // launch's fastest residual (10 us for B, 13 us for F on both ranks).
  EXPECT_NEAR(fitLaunchOverhead(pairing), 11.5e-6, 1e-9);

  std::map<std::string, KernelRate> rates = fitKernelRates(pairing.samples);
  ASSERT_TRUE(rates.count("matmul") && rates.count("softmax"));
  EXPECT_TRUE(rates["matmul"].perFlop);
  EXPECT_NEAR(rates["matmul"].rate, 2e9, 2e9 * 1e-3);
  EXPECT_NEAR(rates["matmul"].overhead, 1e-6, 1e-8);
  // One launch: through the origin, so the rate absorbs the overhead.
  EXPECT_FALSE(rates["softmax"].perFlop);
  EXPECT_NEAR(rates["softmax"].rate, smBytes / (sm * 1e-6), 1e3);
  EXPECT_EQ(rates["*"].overhead, 0);
  EXPECT_GT(rates["*"].rate, 0);
  // The median run: rank 0's runs are 1x, 3x, 3x, so it stands at 3x and
  // the kernels look slower; its residuals 39 us (F) and 30 us (B) join
  // rank 1's 13 and 10.
  std::map<std::string, KernelRate> typical =
      fitKernelRates(pairing.samples, RunStatistic::Median);
  EXPECT_LT(typical["matmul"].rate, 0.8 * 2e9);
  EXPECT_NEAR(fitLaunchOverhead(pairing, RunStatistic::Median), 21.5e-6, 1e-9);
}

TEST(Calibrate, FitsCollectivesFromTheirMeanSpans) {
  // Two-member all-reduces as piper-run traces them: in the ring model a
  // link of 1 us + bytes / 2 GB/s gives 2 us + bytes / 2 GB/s (2(n-1) = 2
  // latencies, 2(n-1)/n = 1 times the bytes) on average over the spans of
  // each size. A span without a member count, and a send, are not
  // collectives.
  // clang-format off
  std::string text = R"json({"traceEvents": [
    {"ph": "X", "name": "all_reduce", "cat": "comm", "pid": 0, "ts": 0,
     "dur": 2.0, "args": {"elements": 256, "dtype": "f32",
     "comm": "communicator {dp} of stream 'g' (rank 0 of 2: world ranks 0, 1)"}},
    {"ph": "X", "name": "all_reduce", "cat": "comm", "pid": 0, "ts": 9,
     "dur": 3.024, "args": {"elements": 256, "dtype": "f32",
     "comm": "communicator {dp} of stream 'g' (rank 0 of 2: world ranks 0, 1)"}},
    {"ph": "X", "name": "all_reduce", "cat": "comm", "pid": 1, "ts": 0,
     "dur": 500, "args": {"elements": 131072, "dtype": "f64",
     "comm": "communicator {dp} of stream 'g' (rank 1 of 2: world ranks 0, 1)"}},
    {"ph": "X", "name": "all_reduce", "cat": "comm", "pid": 1, "ts": 900,
     "dur": 552.576, "args": {"elements": 131072, "dtype": "f64",
     "comm": "communicator {dp} of stream 'g' (rank 1 of 2: world ranks 0, 1)"}},
    {"ph": "X", "name": "all_gather", "cat": "comm", "pid": 0, "ts": 0,
     "dur": 7, "args": {"elements": 8, "dtype": "f32"}},
    {"ph": "X", "name": "send", "cat": "comm", "pid": 0, "ts": 0, "dur": 7,
     "args": {"elements": 8, "dtype": "f32", "peer": 1, "tag": 0}}]})json";
  // clang-format on
  std::vector<TraceEvent> events;
  std::string error;
  ASSERT_TRUE(parseTraceEvents(text, events, error)) << error;
  EXPECT_EQ(events[0].bytes, 1024);
  EXPECT_EQ(events[0].members, 2);
  EXPECT_EQ(events[2].bytes, 1048576);
  EXPECT_EQ(events[4].members, 0);
  std::map<std::string, LinkFit> links = fitCollectives(events);
  ASSERT_EQ(links.size(), 1u);
  EXPECT_NEAR(links.at("all_reduce").latency, 1e-6, 1e-9);
  EXPECT_NEAR(links.at("all_reduce").bandwidth, 2e9, 2e9 * 1e-6);

  // A calibration file carries them, and a round trip keeps them.
  Calibration cal;
  cal.collectives = links;
  auto back = parseCalibration(renderCalibration(cal), error);
  ASSERT_TRUE(back) << error;
  EXPECT_NEAR(back->collectives.at("all_reduce").bandwidth, 2e9, 1);
  EXPECT_FALSE(parseCalibration(
      R"({"collectives": {"all_reduce": {"latency_us": 1}}})", error));
  EXPECT_EQ(error,
            "'collectives.all_reduce' needs latency_us and bandwidth_gbs");
  EXPECT_FALSE(parseCalibration(
      R"({"collectives": {"allreduce": {"latency_us": 1, "bandwidth_gbs": 1}}})",
      error));
  EXPECT_EQ(error, "unknown collective 'collectives.allreduce'; expected "
                   "all_reduce, reduce_scatter, all_gather or all_to_all");
}

TEST(Calibrate, FitsLinkAndRejectsBadInput) {
  std::vector<std::pair<double, double>> points;
  std::string error;
  ASSERT_TRUE(parsePingPong(
      R"({"pingpong": [{"bytes": 8, "seconds": 2.000002e-6},
                       {"bytes": 1048576, "seconds": 2.64144e-4},
                       {"bytes": 4194304, "seconds": 1.050576e-3}]})",
      points, error))
      << error;
  LinkFit link;
  ASSERT_TRUE(fitLink(points, link));
  EXPECT_NEAR(link.latency, 2e-6, 1e-8);
  EXPECT_NEAR(link.bandwidth, 4e9, 4e9 * 1e-4);

  EXPECT_FALSE(fitLink({{8, 1e-6}, {8, 2e-6}}, link)); // one size
  points.clear();
  EXPECT_FALSE(parsePingPong(R"({"pingpong": [{"bytes": 8}]})", points, error));
  EXPECT_EQ(error, "pingpong[0] needs non-negative numbers bytes and seconds");
  EXPECT_FALSE(parsePingPong(R"({"points": []})", points, error));
  EXPECT_EQ(error, "no 'pingpong' array at the top level");
  std::vector<TraceEvent> events;
  EXPECT_FALSE(parseTraceEvents(
      R"({"traceEvents": [{"ph": "X", "name": "F", "ts": 1}]})", events,
      error));
  EXPECT_EQ(error, "traceEvents[0]: a complete event needs pid, ts and dur");
}

} // namespace
