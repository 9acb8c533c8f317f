//===- CheckpointTest.cpp - The checkpoint library's arithmetic -----------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// CRC-32 against its published check value, the runs of regions, reading a
// region out of pieces of another layout (the core of resuming under another
// strategy), the index's round trip and the model checks' messages.
//
//===----------------------------------------------------------------------===//

#include "piper-rt/checkpoint.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fcntl.h>
#include <numeric>
#include <unistd.h>

using namespace piper;
using namespace piper::ckpt;

namespace {

TEST(Checkpoint, Crc32MatchesZlib) {
  // The CRC-32 check value (zlib.crc32(b"123456789")).
  const char *text = "123456789";
  EXPECT_EQ(crc32(text, 9), 0xCBF43926u);
  // Continued in pieces, of lengths around the 8-byte stride.
  uint32_t c = crc32(text, 3);
  c = crc32(text + 3, 6, c);
  EXPECT_EQ(c, 0xCBF43926u);
  EXPECT_EQ(crc32(text, 0), 0u);
}

Region box(std::vector<int64_t> offset, std::vector<int64_t> shape) {
  Region r;
  r.offset = std::move(offset);
  r.shape = std::move(shape);
  return r;
}

Region flat(int64_t begin, int64_t end) {
  Region r;
  r.flat = true;
  r.begin = begin;
  r.end = end;
  return r;
}

using Runs = std::vector<std::pair<int64_t, int64_t>>;

TEST(Checkpoint, RunsOfRegions) {
  // A column part of a 4x6 matrix: one run per row.
  EXPECT_EQ(box({0, 3}, {4, 3}).runs({4, 6}),
            (Runs{{3, 3}, {9, 3}, {15, 3}, {21, 3}}));
  // A row part: one run.
  EXPECT_EQ(box({2, 0}, {2, 6}).runs({4, 6}), (Runs{{12, 12}}));
  // A 3-D box cut on the middle dimension.
  EXPECT_EQ(box({1, 1, 0}, {1, 2, 2}).runs({2, 3, 2}), (Runs{{8, 4}}));
  EXPECT_EQ(box({0, 0, 1}, {2, 1, 1}).runs({2, 3, 2}), (Runs{{1, 1}, {7, 1}}));
  EXPECT_EQ(flat(5, 17).runs({4, 6}), (Runs{{5, 12}}));
  EXPECT_EQ(flat(24, 24).runs({4, 6}), Runs{});
  EXPECT_EQ(box({}, {}).runs({}), (Runs{{0, 1}}));
  EXPECT_EQ(box({}, {}).str(), "scalar");
  EXPECT_EQ(box({0, 3}, {4, 3}).str(), "box [0, 3] + [4, 3]");
}

/// A 4x6 f64 tensor (element i = i) saved as two column parts in one file,
/// then read back as a ZeRO chunk and as a row part.
TEST(Checkpoint, ReadsAnyRegionFromPiecesOfAnotherLayout) {
  char dir[] = "/tmp/piper-ckpt-test-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  TensorEntry t;
  t.name = "w";
  t.kind = "param";
  t.shape = {4, 6};
  std::vector<double> data;
  int64_t offset = 16; // some header bytes first
  for (int part = 0; part < 2; ++part) {
    Piece p;
    p.file = "rank.safetensors";
    p.offset = offset + int64_t(data.size() * 8);
    p.region = box({0, 3 * part}, {4, 3});
    p.bytes = 12 * 8;
    for (int r = 0; r < 4; ++r)
      for (int c = 0; c < 3; ++c)
        data.push_back(r * 6 + 3 * part + c);
    p.crc = crc32(data.data() + 12 * part, 12 * 8);
    t.pieces.push_back(p);
  }
  std::string path = std::string(dir) + "/rank.safetensors";
  int fd = ::open(path.c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0644);
  ASSERT_GE(fd, 0);
  std::vector<char> header(offset, ' ');
  ASSERT_EQ(::write(fd, header.data(), header.size()), offset);
  ASSERT_EQ(::write(fd, data.data(), data.size() * 8),
            ssize_t(data.size() * 8));
  ::close(fd);

  std::string error;
  std::vector<double> chunk(12);
  ASSERT_TRUE(readRegion(dir, t, flat(5, 17), chunk.data(), error)) << error;
  std::vector<double> expected(12);
  std::iota(expected.begin(), expected.end(), 5.0);
  EXPECT_EQ(chunk, expected);

  std::vector<double> rows(12);
  ASSERT_TRUE(readRegion(dir, t, box({2, 0}, {2, 6}), rows.data(), error))
      << error;
  std::iota(expected.begin(), expected.end(), 12.0);
  EXPECT_EQ(rows, expected);

  // The whole tensor reads both pieces in full and checks their CRCs.
  std::vector<double> whole(24);
  ASSERT_TRUE(readRegion(dir, t, box({0, 0}, {4, 6}), whole.data(), error))
      << error;
  t.pieces[1].crc ^= 1;
  EXPECT_FALSE(readRegion(dir, t, box({0, 0}, {4, 6}), whole.data(), error));
  EXPECT_NE(error.find("checksum mismatch in rank.safetensors, tensor 'w' "
                       "box [0, 3] + [4, 3]"),
            std::string::npos)
      << error;
  // A piece that does not cover the region is reported.
  t.pieces.pop_back();
  EXPECT_FALSE(readRegion(dir, t, box({0, 0}, {4, 6}), whole.data(), error));
  EXPECT_NE(error.find("the pieces of 'w' cover 12 of the 24 elements"),
            std::string::npos)
      << error;
  std::remove(path.c_str());
  ::rmdir(dir);
}

TEST(Checkpoint, IndexRoundTrip) {
  Index index;
  index.step = 7;
  index.seed = 3;
  index.globalData = {{6, {4, 16}}};
  TensorEntry t;
  t.name = "optimizer.w.exp_avg";
  t.kind = "state";
  t.param = "w";
  t.slot = "exp_avg";
  t.shape = {4, 6};
  Piece p;
  p.file = "rank-00001.safetensors";
  p.offset = 128;
  p.bytes = 96;
  p.region = flat(12, 24);
  p.crc = 0xdeadbeef;
  t.pieces.push_back(p);
  index.tensors.push_back(t);
  Index back;
  std::string error;
  ASSERT_TRUE(readIndex(writeIndex(index), "index.json", back, error)) << error;
  EXPECT_EQ(back.step, 7);
  EXPECT_EQ(back.seed, 3u);
  EXPECT_EQ(back.globalData, index.globalData);
  ASSERT_EQ(back.tensors.size(), 1u);
  EXPECT_EQ(back.tensors[0].param, "w");
  EXPECT_EQ(back.tensors[0].pieces[0].region, p.region);
  EXPECT_EQ(back.tensors[0].pieces[0].crc, 0xdeadbeef);
  // A piece whose size disagrees with its region is refused.
  std::string text = writeIndex(index);
  text.replace(text.find("\"bytes\": 96"), 11, "\"bytes\": 95");
  EXPECT_FALSE(readIndex(text, "index.json", back, error));
  EXPECT_EQ(error, "index.json: bad index: size does not match the region "
                   "at index.tensors[0].pieces[0].bytes");
}

TEST(Checkpoint, ModelChecks) {
  plan::Manifest m;
  plan::Tensor w;
  w.kind = "param";
  w.name = "w";
  w.shape = {4, 6};
  m.arguments.push_back(w);
  Index index;
  std::string error;
  EXPECT_FALSE(checkModel(index, m, false, "checkpoint C", error));
  EXPECT_EQ(error,
            "checkpoint C has no tensor 'w' (a checkpoint of another model?)");
  TensorEntry t;
  t.name = "w";
  t.kind = "param";
  t.shape = {6, 4};
  index.tensors.push_back(t);
  EXPECT_FALSE(checkModel(index, m, false, "checkpoint C", error));
  EXPECT_EQ(error, "checkpoint C: tensor 'w' has shape [6, 4], the plan's is "
                   "[4, 6]");
  index.tensors[0].shape = {4, 6};
  index.tensors[0].dtype = plan::DType::F32;
  EXPECT_FALSE(checkModel(index, m, false, "checkpoint C", error));
  EXPECT_EQ(error, "checkpoint C: tensor 'w' is f32, the plan's is f64");
  // Weights from elsewhere may be another float type.
  EXPECT_TRUE(checkModel(index, m, true, "F", error)) << error;
}

} // namespace
