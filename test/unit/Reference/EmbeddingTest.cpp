//===- EmbeddingTest.cpp - Embedding lookup kernel ------------------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "piper/Reference/Kernels.h"

#include "TestUtil.h"

using namespace piper::ref;
using namespace piper::ref::test;

namespace {

TEST(EmbeddingTest, Forward) {
  Tensor table = Tensor::of({3, 2}, {0, 1, 10, 11, 20, 21}), y;
  ASSERT_OK(embedding(table, IndexTensor::of({2, 2}, {2, 0, 2, 1}), y));
  EXPECT_EQ(y.shape, Shape({2, 2, 2}));
  EXPECT_EQ(y.data, (std::vector<double>{20, 21, 0, 1, 20, 21, 10, 11}));
}

TEST(EmbeddingTest, WeightVjp) {
  std::mt19937_64 rng(60);
  Tensor table = randomTensor(rng, {10, 3});
  // Repeated ids accumulate; rows 1, 4, 6, 8 and 9 are unused.
  IndexTensor ids = IndexTensor::of({2, 4}, {3, 0, 3, 7, 5, 2, 3, 0});
  Tensor dy = randomTensor(rng, {2, 4, 3}), dTable;
  ASSERT_OK(embeddingBackwardWeight(table, ids, dy, dTable));
  ForwardFn fwd = [&ids](const std::vector<Tensor> &in, Tensor &out) {
    return embedding(in[0], ids, out);
  };
  EXPECT_TRUE(
      vjpMatchesFiniteDifferences(fwd, {table}, dy, {{0, "dTable", dTable}}));
  for (int64_t c = 0; c < 3; ++c) {
    EXPECT_EQ(dTable.at({9, c}), 0.0);
    EXPECT_EQ(dTable.at({3, c}),
              dy.at({0, 0, c}) + dy.at({0, 2, c}) + dy.at({1, 2, c}));
  }
}

TEST(EmbeddingTest, OutOfRangeIdsAreReported) {
  Tensor table = Tensor::zeros({10, 4}), y, g;
  EXPECT_EQ(errorOf(embedding(table, IndexTensor::of({4}, {1, 4, 2, 12}), y)),
            "embedding: id 12 at position 3 is out of range for a table of 10 "
            "rows");
  EXPECT_EQ(errorOf(embedding(table, IndexTensor::of({1, 1}, {-1}), y)),
            "embedding: id -1 at position 0 is out of range for a table of 10 "
            "rows");
  EXPECT_EQ(
      errorOf(embeddingBackwardWeight(table, IndexTensor::of({2}, {0, 10}),
                                      Tensor::zeros({2, 4}), g)),
      "embedding BW: id 10 at position 1 is out of range for a table of "
      "10 rows");
}

TEST(EmbeddingTest, ShapeErrors) {
  Tensor y, g;
  EXPECT_EQ(
      errorOf(embedding(Tensor::zeros({10}), IndexTensor::of({1}, {0}), y)),
      "embedding: table must have rank 2 but has shape [10]");
  EXPECT_EQ(errorOf(embeddingBackwardWeight(Tensor::zeros({10, 4}),
                                            IndexTensor::of({2}, {0, 1}),
                                            Tensor::zeros({2, 3}), g)),
            "embedding BW: dy has shape [2, 3] but the output has shape "
            "[2, 4]");
}

} // namespace
