//===- Data.h - The training data a run feeds -------------------*- C++ -*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Each step's data arguments, exactly as piper-interp makes them: its
// synthetic data (SyntheticData.h), or with --data the bytes of a text as
// tokens (ByteCorpus.h). The step function is written per batch replica: the
// global batch is R times a data argument along dim 0, and replica q reads
// rows [q n, (q+1) n) of it (docs/Lowering.md, "Replicas").
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_TOOLS_PIPER_RUN_DATA_H
#define PIPER_TOOLS_PIPER_RUN_DATA_H

#include "HostTensor.h"

#include "piper/Interpreter/ByteCorpus.h"

#include <string>

namespace piper::run {

class DataFeeder {
public:
  DataFeeder(const plan::Manifest &manifest, uint64_t seed, int64_t replica,
             int64_t replicas)
      : manifest(manifest), seed(seed), replica(replica), replicas(replicas) {}
  /// --data: reads `file` and checks that the plan is a language model
  /// whose data are two integer arguments of one size (tokens, labels).
  bool useCorpus(const std::string &file, std::string &error);
  /// Writes step `step`'s data into `args` (indexed by argument).
  bool feed(int64_t step, std::vector<HostTensor> &args, std::string &error);

private:
  const plan::Manifest &manifest;
  uint64_t seed;
  int64_t replica, replicas;
  ref::ByteCorpus corpus;
  std::vector<const plan::Tensor *> corpusArgs;
};

} // namespace piper::run

#endif // PIPER_TOOLS_PIPER_RUN_DATA_H
