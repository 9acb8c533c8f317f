//===- MemrefTest.cpp - Memref descriptors of the plan ABI ----------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "piper-rt/plan_abi.h"

#include "gtest/gtest.h"

#include <cstdint>
#include <cstring>
#include <random>
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

/// The element at each row-major position of `view`, one by one: the
/// definition the gather's runs must reproduce.
std::vector<int32_t> gatherOneByOne(const std::vector<int32_t> &buffer,
                                    int64_t offset,
                                    const std::vector<int64_t> &sizes,
                                    const std::vector<int64_t> &strides) {
  int64_t n = 1;
  for (int64_t s : sizes)
    n *= s;
  std::vector<int32_t> out;
  std::vector<int64_t> index(sizes.size(), 0);
  for (int64_t i = 0; i < n; ++i) {
    int64_t at = offset;
    for (size_t d = 0; d < sizes.size(); ++d)
      at += index[d] * strides[d];
    out.push_back(buffer[at]);
    for (int64_t d = int64_t(sizes.size()) - 1; d >= 0; --d) {
      if (++index[d] < sizes[d])
        break;
      index[d] = 0;
    }
  }
  return out;
}

TEST(PlanMemref, GatherCopiesDenseRunsAsTheElementsWould) {
  // Views of a buffer of distinct values: dense, row slices of a wider
  // buffer (a dense inner run, padded rows), transposes (no run), size-1
  // dimensions with arbitrary strides, and a dense tail under a strided
  // head; each gathered in one go and compared with the element-by-element
  // definition.
  std::vector<int32_t> buffer(4096);
  for (size_t i = 0; i < buffer.size(); ++i)
    buffer[i] = int32_t(i * 7 + 3);
  struct Case {
    int64_t offset;
    std::vector<int64_t> sizes, strides;
  };
  std::vector<Case> cases = {
      {0, {4, 8}, {8, 1}},             // dense: one memcpy
      {5, {4, 8}, {10, 1}},            // rows of a [4, 10] buffer
      {3, {8, 4}, {1, 8}},             // transposed
      {2, {3, 1, 5}, {5, 99, 1}},      // a size-1 middle dimension
      {1, {1, 6}, {1000, 1}},          // a size-1 outer dimension
      {0, {2, 3, 4}, {40, 4, 1}},      // dense [3, 4] tiles, strided outer
      {7, {2, 3, 4}, {50, 5, 1}},      // padded rows inside padded tiles
      {0, {5}, {3}},                   // a strided vector
      {9, {2, 2, 2, 2}, {8, 4, 2, 1}}, // dense rank 4 from an offset
  };
  std::mt19937 random(21);
  for (int k = 0; k < 200; ++k) {
    // Random strided views that stay inside the buffer.
    Case c;
    int rank = 1 + int(random() % 4);
    int64_t reach = 0;
    for (int d = 0; d < rank; ++d) {
      c.sizes.push_back(1 + int64_t(random() % 5));
      c.strides.push_back(0);
    }
    int64_t stride = 1 + int64_t(random() % 2);
    for (int d = rank - 1; d >= 0; --d) {
      c.strides[d] = stride;
      stride = stride * c.sizes[d] + int64_t(random() % 3);
    }
    for (int d = 0; d < rank; ++d)
      reach += (c.sizes[d] - 1) * c.strides[d];
    c.offset = int64_t(random() % 64);
    ASSERT_LT(c.offset + reach, int64_t(buffer.size()));
    cases.push_back(c);
  }
  for (const Case &c : cases) {
    int64_t rank = int64_t(c.sizes.size());
    std::vector<int64_t> desc(3 + 2 * rank);
    int32_t *data = const_cast<int32_t *>(buffer.data());
    std::memcpy(&desc[0], &data, sizeof(void *));
    std::memcpy(&desc[1], &data, sizeof(void *));
    desc[2] = c.offset;
    for (int64_t d = 0; d < rank; ++d) {
      desc[3 + d] = c.sizes[d];
      desc[3 + rank + d] = c.strides[d];
    }
    piper_memref_view v = piper_memref_decode(rank, desc.data());
    std::vector<int32_t> out(piper_memref_numel(&v), -1);
    piper_memref_gather(&v, sizeof(int32_t), out.data());
    EXPECT_EQ(out, gatherOneByOne(buffer, c.offset, c.sizes, c.strides))
        << "offset " << c.offset << ", rank " << rank;
  }
}

} // namespace
