//===- Data.cpp - The training data a run feeds ---------------------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "Data.h"

#include "piper/Interpreter/SyntheticData.h"

#include <algorithm>

using namespace piper;
using namespace piper::run;
using plan::Tensor;

bool DataFeeder::useCorpus(const std::string &file, std::string &error) {
  ref::Status status = ref::ByteCorpus::load(file, corpus);
  if (!status.ok()) {
    error = status.message();
    return false;
  }
  for (const Tensor &arg : manifest.arguments)
    if (arg.kind == "data")
      corpusArgs.push_back(&arg);
  bool fits =
      corpusArgs.size() == 2 &&
      std::none_of(corpusArgs.begin(), corpusArgs.end(),
                   [](const Tensor *a) {
                     return a->dtype != plan::DType::I64 || a->shape.empty();
                   }) &&
      corpusArgs[0]->numel() == corpusArgs[1]->numel();
  if (fits)
    return true;
  error = "--data needs a language model whose data are two integer "
          "arguments of one size (token ids, then labels); the plan has " +
          std::to_string(corpusArgs.size()) +
          " data arguments of other kinds or sizes";
  corpusArgs.clear();
  return false;
}

bool DataFeeder::feed(int64_t step, std::vector<HostTensor> &args,
                      std::string &error) {
  for (const Tensor &arg : manifest.arguments) {
    if (arg.kind != "data")
      continue;
    HostTensor &buffer = args[arg.index];
    std::vector<int64_t> global = arg.shape;
    if (!global.empty())
      global[0] *= replicas;
    size_t offset = static_cast<size_t>(replica * arg.numel());
    size_t count = static_cast<size_t>(arg.numel());
    int64_t bound = arg.bound.value_or(0);
    ref::Status status = ref::Status::success();
    if (corpusArgs.size() == 2) {
      // Tokens, then labels, as piper-interp --data reads them.
      const Tensor &tokens = *corpusArgs[0];
      ref::IndexTensor t;
      status = corpus.window(step, global, tokens.numel() / tokens.shape[0],
                             &arg == corpusArgs[0] ? 0 : 1, bound, t);
      if (status.ok())
        std::memcpy(buffer.data(), t.data.data() + offset,
                    count * sizeof(int64_t));
    } else if (arg.dtype == plan::DType::I64) {
      ref::IndexTensor t;
      status = ref::syntheticIndex(seed, arg.index, step, global, bound, t);
      if (status.ok())
        std::memcpy(buffer.data(), t.data.data() + offset,
                    count * sizeof(int64_t));
    } else {
      ref::Tensor t;
      status = ref::syntheticFloat(seed, arg.index, step, global, t);
      if (status.ok())
        buffer.setFloats(std::vector<double>(t.data.begin() + offset,
                                             t.data.begin() + offset + count));
    }
    if (!status.ok()) {
      error = status.message();
      return false;
    }
  }
  return true;
}
