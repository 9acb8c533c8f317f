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
std::string event(int pid, const std::string &name, const char *cat,
                  double ts, double dur) {
  char text[256];
  std::snprintf(text, sizeof(text),
                "{\"name\":\"%s\",\"cat\":\"%s\",\"ph\":\"X\",\"pid\":%d,"
                "\"tid\":0,\"ts\":%.3f,\"dur\":%.3f}",
                name.c_str(), cat, pid, ts, dur);
  return text;
}

// Two ranks of one program, three steps; the launch "F" runs a matmul at
// two sizes (1 us + flops / 2 GFLOP/s), a softmax (0.5 us + bytes / 4 GB/s)
// and a reshape the simulator does not count, plus 10 us of glue. Step 0 is
// 10x slower (warm-up) and must be left out.  A kernel span outside every
// launch is reported.
TEST(Calibrate, RecoversKnownRatesFromSyntheticTrace) {
  const double mmFlopsA = 2e6, mmFlopsB = 8e6, smBytes = 4e5;
  auto mm = [](double flops) { return 1 + flops / 2e9 * 1e6; }; // us
  double sm = 0.5 + smBytes / 4e9 * 1e6;
  std::string text = "{\"traceEvents\":[";
  bool first = true;
  auto add = [&](const std::string &e) {
    text += (first ? "" : ",") + e;
    first = false;
  };
  for (int rank = 0; rank < 2; ++rank) {
    double t = 1000 * rank;
    for (int step = 0; step < 3; ++step) {
      double slow = step == 0 ? 10 : 1;
      double kernels[] = {mm(mmFlopsA) * slow, 3 * slow, sm * slow,
                          mm(mmFlopsB) * slow};
      const char *names[] = {"matmul", "reshape", "softmax", "matmul"};
      double total = 10;
      for (double k : kernels)
        total += k;
      add(event(rank, "F{MB=0}", "compute", t, total));
      double at = t + 5;
      for (int k = 0; k < 4; ++k) {
        add(event(rank, names[k], "kernel", at, kernels[k]));
        at += kernels[k];
      }
      t += total + 50;
    }
  }
  // A stray kernel span after the last launch: counted as outside.
  add(event(0, "matmul", "kernel", 99999, 1));
  text += "]}";
  std::vector<TraceEvent> events;
  std::string error;
  ASSERT_TRUE(parseTraceEvents(text, events, error)) << error;
  ASSERT_EQ(events.size(), 31u);

  CountedLaunches counted;
  counted[{"p", "F{MB=0}"}] = {{"matmul", mmFlopsA, 0, 1e5},
                               {"softmax", 0, 1e4, smBytes},
                               {"matmul", mmFlopsB, 0, 3e5}};
  Pairing pairing = pairKernelSpans(events, {"p", "p"}, counted, 1);
  EXPECT_EQ(pairing.launches, 4u);
  EXPECT_EQ(pairing.samples.size(), 12u);
  EXPECT_EQ(pairing.unpairedSpans, 4u); // the reshapes
  EXPECT_EQ(pairing.missingSpans, 0u);
  EXPECT_EQ(pairing.outsideSpans, 1u);
  // The residual: 10 us of glue and the uncounted reshape.
  EXPECT_NEAR(median(pairing.launchResiduals), 13e-6, 1e-9);

  std::map<std::string, KernelRate> rates = fitKernelRates(pairing.samples);
  ASSERT_TRUE(rates.count("matmul") && rates.count("softmax"));
  EXPECT_TRUE(rates["matmul"].perFlop);
  EXPECT_NEAR(rates["matmul"].rate, 2e9, 2e9 * 1e-3);
  EXPECT_NEAR(rates["matmul"].overhead, 1e-6, 1e-8);
  // One size: through the origin, so the rate absorbs the overhead.
  EXPECT_FALSE(rates["softmax"].perFlop);
  EXPECT_NEAR(rates["softmax"].rate, smBytes / (sm * 1e-6), 1e3);
  EXPECT_TRUE(rates.count("*"));
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
