//===- MemrefTest.cpp - Memref descriptors of the plan ABI ----------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "piper-rt/plan_abi.h"

#include "gtest/gtest.h"

#include <vector>

namespace {

TEST(PlanMemref, DescribeThenDecode) {
  std::vector<double> data(24);
  int64_t sizes[] = {2, 3, 4};
  std::vector<uint64_t> desc(piper_memref_descriptor_size(3) / 8);
  EXPECT_EQ(piper_memref_descriptor_size(3), (3 + 2 * 3) * 8u);
  piper_memref_describe(desc.data(), data.data(), 3, sizes);
  piper_memref_view v = piper_memref_decode(3, desc.data());
  EXPECT_EQ(v.aligned, reinterpret_cast<char *>(data.data()));
  EXPECT_EQ(v.offset, 0);
  EXPECT_EQ(v.rank, 3);
  EXPECT_EQ(v.sizes[0], 2);
  EXPECT_EQ(v.sizes[2], 4);
  EXPECT_EQ(v.strides[0], 12);
  EXPECT_EQ(v.strides[1], 4);
  EXPECT_EQ(v.strides[2], 1);
  EXPECT_EQ(piper_memref_numel(&v), 24);
}

TEST(PlanMemref, DecodesMLIRLayoutWithOffsetAndStrides) {
  // A [3, 2] transposed view, from element 1, of a [2, 4] buffer, laid out
  // as MLIR's LLVM lowering does: allocated, aligned, offset, sizes, strides.
  std::vector<float> buffer = {0, 1, 2, 3, 10, 11, 12, 13};
  struct {
    float *allocated, *aligned;
    int64_t offset, sizes[2], strides[2];
  } desc = {nullptr, buffer.data(), 1, {3, 2}, {1, 4}};
  piper_memref_view v = piper_memref_decode(2, &desc);
  EXPECT_EQ(piper_memref_data(&v, sizeof(float)),
            reinterpret_cast<char *>(&buffer[1]));
  EXPECT_EQ(piper_memref_numel(&v), 6);
  std::vector<float> out(6);
  piper_memref_gather(&v, sizeof(float), out.data());
  EXPECT_EQ(out, (std::vector<float>{1, 11, 2, 12, 3, 13}));
}

TEST(PlanMemref, RankZeroAndEmpty) {
  double x = 4.5, y = 0;
  std::vector<uint64_t> desc(piper_memref_descriptor_size(0) / 8);
  piper_memref_describe(desc.data(), &x, 0, nullptr);
  piper_memref_view v = piper_memref_decode(0, desc.data());
  EXPECT_EQ(piper_memref_numel(&v), 1);
  piper_memref_gather(&v, sizeof(double), &y);
  EXPECT_EQ(y, 4.5);
  int64_t sizes[] = {0, 5};
  std::vector<uint64_t> empty(piper_memref_descriptor_size(2) / 8);
  piper_memref_describe(empty.data(), &x, 2, sizes);
  piper_memref_view e = piper_memref_decode(2, empty.data());
  EXPECT_EQ(piper_memref_numel(&e), 0);
}

} // namespace
