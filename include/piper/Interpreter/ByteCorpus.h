//===- ByteCorpus.h - A text as byte tokens, in a fixed order ---*- C++ -*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Training data from a text file instead of synthetic numbers, for language
// models (`piper-interp --data=FILE`, `piper-run --data=FILE`; Piper bundles
// data/corpus/sonnets.txt). Every byte is a token (vocabulary 256). A step's
// batch of B sequences of S tokens is B windows of the text:
//
//   global row g  = (step - 1) * B + b        (b = 0 .. B-1, step from 1)
//   start(g)      = (g * S) mod (L - S)       (L = the text's length)
//   tokens[b, t]  = text[start(g) + t]
//   labels[b, t]  = text[start(g) + t + 1]    (the next byte)
//
// so consecutive rows read consecutive stretches of the text, wrapping at
// its end. Like SyntheticData.h, each value is a pure function of (step,
// global row, position): a replica that reads rows [q n, (q+1) n) of the
// global batch sees exactly what the serial program sees there, and the
// order never depends on the strategy.
//
// A model takes the corpus when its data are exactly two integer arguments,
// tokens then labels, with as many elements each (labels may be flat,
// [B * S]); S is the tokens' trailing size (numel / dim 0).
//
// Header-only: piper-run reads it without linking MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_INTERPRETER_BYTECORPUS_H
#define PIPER_INTERPRETER_BYTECORPUS_H

#include "piper/Reference/Tensor.h"

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace piper::ref {

struct ByteCorpus {
  std::string path;
  std::vector<uint8_t> bytes;

  /// Reads `path`; fails if it cannot be read, is not a regular file or is
  /// empty.
  static Status load(const std::string &path, ByteCorpus &out) {
    // libstdc++ opens a directory, then throws std::ios_failure (EISDIR)
    // from the first read, which the tools build without catching.
    std::error_code ec;
    if (std::filesystem::exists(path, ec) &&
        !std::filesystem::is_regular_file(path, ec))
      return Status::error("the corpus '" + path + "' is not a regular file");
    std::ifstream in(path, std::ios::binary);
    if (!in)
      return Status::error("cannot read the corpus '" + path + "'");
    out.path = path;
    out.bytes.assign(std::istreambuf_iterator<char>(in),
                     std::istreambuf_iterator<char>());
    if (out.bytes.empty())
      return Status::error("the corpus '" + path + "' is empty");
    return Status::success();
  }

  /// The ids of step `step` for a data argument of `shape` (tokens with
  /// `shift` 0, labels with 1), sequences of `seqLen` tokens; `bound` is
  /// the model's vocabulary for these ids.
  Status window(uint64_t step, const Shape &shape, int64_t seqLen,
                int64_t shift, int64_t bound, IndexTensor &out) const {
    int64_t numel = numelOf(shape);
    int64_t length = static_cast<int64_t>(bytes.size());
    if (bound < 256)
      return Status::error(
          "the corpus's tokens are bytes (0-255), but the model's "
          "vocabulary has " +
          std::to_string(bound) + " ids (generate it with --vocab=256)");
    if (seqLen < 1 || numel < 0 || numel % seqLen != 0)
      return Status::error("a data argument of " + std::to_string(numel) +
                           " elements is not made of sequences of " +
                           std::to_string(seqLen) + " tokens");
    if (length < seqLen + 2)
      return Status::error("the corpus '" + path + "' has " +
                           std::to_string(length) +
                           " bytes, too few for sequences of " +
                           std::to_string(seqLen) + " tokens");
    int64_t rows = numel / seqLen;
    out.shape = shape;
    out.data.assign(static_cast<size_t>(numel), 0);
    int64_t span = length - seqLen;
    for (int64_t b = 0; b < rows; ++b) {
      uint64_t g =
          (step - 1) * static_cast<uint64_t>(rows) + static_cast<uint64_t>(b);
      int64_t start = static_cast<int64_t>((g % static_cast<uint64_t>(span)) *
                                           static_cast<uint64_t>(seqLen) %
                                           static_cast<uint64_t>(span));
      for (int64_t t = 0; t < seqLen; ++t)
        out.data[b * seqLen + t] = bytes[start + t + shift];
    }
    return Status::success();
  }
};

} // namespace piper::ref

#endif // PIPER_INTERPRETER_BYTECORPUS_H
