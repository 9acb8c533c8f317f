//===- CostModelTest.cpp - Roofline, alpha-beta, calibration --------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "piper/Simulator/CostModel.h"

#include "gtest/gtest.h"

using namespace piper::sim;

namespace {

const DeviceSpec &a100() { return *lookupDeviceSpec("A100"); }

TEST(DeviceSpecs, TableAndLookup) {
  EXPECT_EQ(listDeviceSpecNames(), "a100, h100, h200");
  EXPECT_EQ(a100().numSMs, 108);
  EXPECT_EQ(lookupDeviceSpec("h200")->hbmBandwidth, 4.8e12);
  EXPECT_EQ(lookupDeviceSpec("tpu"), nullptr);
  EXPECT_EQ(getDefaultLink("efa", a100()).bandwidth, 6.25e9);
  EXPECT_EQ(getDefaultLink("", a100()).linkClass, "nvlink");
}

TEST(CostModel, RooflineTakesTheSlowerSide) {
  CostParameters params;
  params.computeEfficiency = 0.5;
  params.memoryEfficiency = 1;
  // 312e12 bf16 FLOPs at half the peak: 2 s; 1 byte: nothing.
  EXPECT_DOUBLE_EQ(kernelTime(312e12, 0, 1, Precision::BF16, a100(), params),
                   2);
  // 2039e9 bytes at full bandwidth: 1 s.
  EXPECT_DOUBLE_EQ(kernelTime(1, 0, 2039e9, Precision::BF16, a100(), params),
                   1);
}

TEST(CostModel, RingCollectives) {
  LinkSpec link{"nvlink", 100e9, 1e-6, 0.1};
  std::vector<AxisLink> axes = {{"dp", 4, link}};
  CommTime rs = collectiveTime("reduce_scatter", 400e9, axes);
  EXPECT_DOUBLE_EQ(rs.fixed, 3e-6);
  EXPECT_DOUBLE_EQ(rs.work, 3);
  CommTime ar = collectiveTime("all_reduce", 400e9, axes);
  EXPECT_DOUBLE_EQ(ar.work, 6); // 2 (N-1)/N beats the tree's 2 x 4 s
  CommTime small = collectiveTime("all_reduce", 8, axes);
  EXPECT_DOUBLE_EQ(small.fixed, 4e-6); // tree: 2 log2(4) latencies
  EXPECT_EQ(collectiveTime("all_gather", 1e9, {{"dp", 1, link}}).total(), 0);
}

TEST(CostModel, HierarchicalAcrossLinks) {
  LinkSpec fast{"nvlink", 300e9, 1e-6, 0.1}, slow{"efa", 6.25e9, 10e-6, 0.04};
  // 8 in a node, 4 nodes: the slow link carries a quarter of an eighth.
  CommTime rs = collectiveTime("reduce_scatter", 800e6,
                               {{"dp", 4, slow}, {"tp", 8, fast}});
  EXPECT_DOUBLE_EQ(rs.work, 7.0 / 8 * 800e6 / 300e9 + 3.0 / 4 * 100e6 / 6.25e9);
  EXPECT_DOUBLE_EQ(rs.smShare, 0.1);
  CommTime a2a =
      collectiveTime("all_to_all", 800e6, {{"dp", 4, slow}, {"tp", 8, fast}});
  EXPECT_DOUBLE_EQ(a2a.work, 3.0 / 4 * 800e6 / 6.25e9);
  EXPECT_DOUBLE_EQ(a2a.fixed, 31 * 10e-6);
}

TEST(Calibration, ParsesAndReportsErrors) {
  std::string error;
  auto cal = parseCalibration(
      R"({"parameters": {"compute_efficiency": 0.5, "kernel_overhead_us": 4},
          "launches_us": {"F{PP=0,MB=0}": 1250}, "comms_us": {"send": 40}})",
      error);
  ASSERT_TRUE(cal) << error;
  EXPECT_DOUBLE_EQ(cal->launches.at("F{PP=0,MB=0}"), 1.25e-3);
  EXPECT_DOUBLE_EQ(cal->comms.at("send"), 40e-6);
  CostParameters params;
  cal->applyTo(params);
  EXPECT_EQ(params.computeEfficiency, 0.5);
  EXPECT_DOUBLE_EQ(params.kernelOverhead, 4e-6);

  EXPECT_FALSE(parseCalibration(R"({"launches": {}})", error));
  EXPECT_EQ(error,
            "unknown key 'launches'; expected parameters, kernels, links, "
            "collectives, launches_us or comms_us");
  EXPECT_FALSE(parseCalibration(R"({"comms_us": {"send": "fast"}})", error));
  EXPECT_EQ(error, "'comms_us.send' must be a number");
  EXPECT_FALSE(
      parseCalibration(R"({"parameters": {"compute_efficiency": 2}})", error));
  EXPECT_EQ(error, "'parameters.compute_efficiency' is out of range (2)");
  EXPECT_FALSE(parseCalibration(R"({"parameters": {"speed": 2}})", error));
  EXPECT_EQ(error, "unknown parameter 'speed'; expected compute_efficiency, "
                   "memory_efficiency, kernel_overhead_us, launch_overhead_us "
                   "or interference");
  EXPECT_FALSE(parseCalibration("[1,", error));
  EXPECT_FALSE(error.empty());
}

} // namespace
