//===- InitTest.cpp - Deterministic parameter initialisation --------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "piper/Reference/Init.h"

#include "TestUtil.h"

#include <cmath>

using namespace piper::ref;
using namespace piper::ref::test;

namespace {

TEST(InitTest, HashesMatchTheirPublishedValues) {
  // The first two outputs of the splitmix64 generator seeded with 0.
  static_assert(splitmix64(0) == 0xe220a8397b1dcdafULL);
  static_assert(splitmix64(0x9e3779b97f4a7c15ULL) == 0x6e789e6aa1b965f4ULL);
  // FNV-1a 64 test vectors.
  static_assert(fnv1a64("") == 0xcbf29ce484222325ULL);
  static_assert(fnv1a64("a") == 0xaf63dc4c8601ec8cULL);
  static_assert(fnv1a64("foobar") == 0x85944171f73967e8ULL);
  EXPECT_EQ(initKey(42, "layer0.w"), 0x98554ef869d201a3ULL);
}

TEST(InitTest, GoldenValues) {
  // Computed by an independent Python transcription of the algorithm in
  // Init.h (math.log, math.cos, math.sqrt on the same integer bits). A change
  // here changes every initial parameter of every model.
  Tensor t;
  ASSERT_OK(initNormal(42, "layer0.w", {2, 2}, 1.0, t));
  EXPECT_NEAR(t.data[0], -0.3572437023832454, 1e-15);
  EXPECT_NEAR(t.data[1], 0.5278660897401176, 1e-15);
  EXPECT_NEAR(t.data[2], 1.6066606070835538, 1e-15);
  EXPECT_NEAR(t.data[3], 0.0973904277747835, 1e-15);
  double v = 0.0;
  ASSERT_OK(initNormalRange(7, "embed.table", 0.02, 123456789, 123456790, &v));
  EXPECT_NEAR(v, -0.005452122554715816, 1e-17);
}

TEST(InitTest, SameSeedAndNameGiveIdenticalValues) {
  Tensor a, b;
  ASSERT_OK(initNormal(1234, "blocks.3.attn.wq", {16, 8}, 0.02, a));
  ASSERT_OK(initNormal(1234, "blocks.3.attn.wq", {16, 8}, 0.02, b));
  EXPECT_EQ(a.shape, Shape({16, 8}));
  EXPECT_EQ(a.data, b.data);
}

TEST(InitTest, DifferentNameOrSeedGiveDifferentValues) {
  Tensor a, b, c;
  ASSERT_OK(initNormal(1234, "blocks.3.attn.wq", {64}, 1.0, a));
  ASSERT_OK(initNormal(1234, "blocks.3.attn.wk", {64}, 1.0, b));
  ASSERT_OK(initNormal(1235, "blocks.3.attn.wq", {64}, 1.0, c));
  int sameB = 0, sameC = 0;
  for (size_t i = 0; i < a.data.size(); ++i) {
    sameB += a.data[i] == b.data[i];
    sameC += a.data[i] == c.data[i];
  }
  EXPECT_EQ(sameB, 0);
  EXPECT_EQ(sameC, 0);
}

TEST(InitTest, ValuesDependOnlyOnTheFlatIndex) {
  // The shape does not matter, only the row-major element index: a [6, 4]
  // parameter and a [24] one with the same name hold the same values.
  Tensor a, b;
  ASSERT_OK(initNormal(9, "w", {6, 4}, 0.5, a));
  ASSERT_OK(initNormal(9, "w", {24}, 0.5, b));
  EXPECT_EQ(a.data, b.data);
}

TEST(InitTest, RangeEqualsTheSliceOfTheFullTensor) {
  // What a device holding elements [begin, end) of a sharded parameter does.
  Tensor full;
  ASSERT_OK(initNormal(77, "mlp.w_up", {40, 25}, 0.02, full));
  const std::pair<int64_t, int64_t> ranges[] = {
      {0, 0}, {0, 1}, {137, 600}, {500, 1000}, {999, 1000}};
  for (auto [begin, end] : ranges) {
    std::vector<double> shard(static_cast<size_t>(end - begin));
    ASSERT_OK(initNormalRange(77, "mlp.w_up", 0.02, begin, end, shard.data()));
    EXPECT_EQ(shard, std::vector<double>(full.data.begin() + begin,
                                         full.data.begin() + end))
        << "range [" << begin << ", " << end << ")";
  }
}

TEST(InitTest, SampleMomentsOf100kNormals) {
  // Standard errors for n = 1e5: 0.0032 for the mean, 0.0022 for the std;
  // the tolerances are about 4 of them.
  const int64_t n = 100000;
  const double stddev = 0.02;
  Tensor t;
  ASSERT_OK(initNormal(2024, "moments", {n}, stddev, t));
  double sum = 0.0, sumSq = 0.0;
  for (double v : t.data) {
    sum += v / stddev;
    sumSq += (v / stddev) * (v / stddev);
  }
  double mean = sum / n;
  double sd = std::sqrt(sumSq / n - mean * mean);
  EXPECT_NEAR(mean, 0.0, 0.013);
  EXPECT_NEAR(sd, 1.0, 0.009);
  for (double v : t.data)
    ASSERT_TRUE(std::isfinite(v));
}

TEST(InitTest, ZerosAndOnes) {
  Tensor z, o;
  ASSERT_OK(initZeros({2, 3}, z));
  ASSERT_OK(initOnes({3}, o));
  EXPECT_EQ(z.shape, Shape({2, 3}));
  EXPECT_EQ(z.data, std::vector<double>(6, 0.0));
  EXPECT_EQ(o.data, std::vector<double>(3, 1.0));
}

TEST(InitTest, Errors) {
  Tensor t;
  double buf[2];
  EXPECT_EQ(errorOf(initNormalRange(1, "w", 1.0, 5, 3, buf)),
            "init_normal: element range [5, 3) of 'w' is invalid");
  EXPECT_EQ(errorOf(initNormalRange(1, "w", 1.0, 0, 2, nullptr)),
            "init_normal: output buffer for 'w' is null");
  EXPECT_EQ(errorOf(initNormal(1, "w", {2, -1}, 1.0, t)),
            "init_normal: shape [2, -1] of 'w' is invalid");
  EXPECT_EQ(errorOf(initNormal(1, "w", {2}, -1.0, t)),
            "init_normal: std of 'w' must be finite and non-negative, got -1");
  EXPECT_EQ(errorOf(initZeros({-3}, t)),
            "init_constant: shape [-3] is invalid");
}

} // namespace
