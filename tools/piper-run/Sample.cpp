//===- Sample.cpp - Text from a compiled plan -----------------------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "Sample.h"

#include "Hyperparameters.h"

#include "piper-rt/plan_abi.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>

using namespace piper;
using namespace piper::run;
namespace cl = llvm::cl;

cl::opt<int64_t> piper::run::sampleBytes(
    "sample",
    cl::desc("After training, continue --prompt by N bytes with the "
             "parameters (trained, --params-in or a checkpoint) through the "
             "plan's sampling entry, and print the text (a byte-level "
             "language model; piper-interp --sample draws the same bytes)"),
    cl::init(0), cl::value_desc("N"), cl::cat(runOptions()));
cl::opt<std::string> piper::run::samplePrompt(
    "prompt", cl::desc("Text the sample continues (default: a newline)"),
    cl::init(""), cl::cat(runOptions()));
cl::opt<double> piper::run::sampleTemperature(
    "temperature",
    cl::desc("Sampling temperature: 0 takes the most likely byte (default "
             "0.8; the draws are seeded by --seed)"),
    cl::init(0.8), cl::cat(runOptions()));

namespace {

/// The byte vocabulary sampling writes text in.
constexpr int64_t kVocabulary = 256;

/// The token ids argument: the data argument of rank 2 ([B, S]) of i64.
const plan::Tensor *tokensArgument(const plan::Manifest &manifest) {
  for (const plan::Tensor &arg : manifest.arguments)
    if (arg.kind == "data" && arg.dtype == plan::DType::I64 &&
        arg.shape.size() == 2)
      return &arg;
  return nullptr;
}

/// The logits' description, or null when no role writes them.
const plan::EvalEntry *logitsEntry(const plan::Manifest &manifest) {
  for (const plan::Role &role : manifest.roles)
    if (role.sample && !role.sample->logitsShape.empty())
      return &*role.sample;
  return nullptr;
}

/// The byte after the logits `row`: their argmax, or drawn from
/// softmax(row / temperature) (piper-interp's Sampler, draw for draw).
int64_t pickByte(const std::vector<double> &row, double temperature,
                 std::mt19937_64 &random) {
  int64_t vocab = static_cast<int64_t>(row.size());
  int64_t next = std::max_element(row.begin(), row.end()) - row.begin();
  if (temperature > 0) {
    std::uniform_real_distribution<double> uniform(0.0, 1.0);
    std::vector<double> weights(vocab);
    double top = row[next], total = 0;
    for (int64_t v = 0; v < vocab; ++v)
      total += weights[v] = std::exp((row[v] - top) / temperature);
    double pick = uniform(random) * total;
    for (next = 0; next + 1 < vocab && pick >= weights[next]; ++next)
      pick -= weights[next];
  }
  return next;
}

} // namespace

bool piper::run::checkSampleFlags(const plan::Manifest &manifest,
                                  std::string &error) {
  if (sampleBytes < 0 || sampleBytes > 1000000 || !(sampleTemperature >= 0) ||
      !std::isfinite(sampleTemperature)) {
    error = "--sample must be in [0, 1000000] and --temperature finite and "
            ">= 0";
    return false;
  }
  if (sampleBytes == 0) {
    if (samplePrompt.getNumOccurrences() ||
        sampleTemperature.getNumOccurrences()) {
      error = "--prompt and --temperature need --sample";
      return false;
    }
    return true;
  }
  const plan::EvalEntry *logits = logitsEntry(manifest);
  if (!logits) {
    error = "--sample: the plan has no sampling entry (its loss is no "
            "piper.cross_entropy of logits that the forward returns, or it "
            "was compiled before sampling entries existed; docs/TrainAnLM.md)";
    return false;
  }
  if (logits->logitsShape[1] != kVocabulary || !tokensArgument(manifest)) {
    error = "--sample needs byte tokens [B, S] and logits [rows, 256] (a "
            "model generated with --vocab=256); the plan's logits are [" +
            std::to_string(logits->logitsShape[0]) + ", " +
            std::to_string(logits->logitsShape[1]) + "]";
    return false;
  }
  return true;
}

bool piper::run::sampleText(StepContext &step, uint64_t seed, std::string &text,
                            std::string &error) {
  const plan::Manifest &manifest = step.manifest;
  const plan::Mesh &mesh = manifest.mesh;
  const plan::Tensor &tokens = *tokensArgument(manifest);
  const plan::EvalEntry &entry = *step.role.sample;
  int64_t seqLen = tokens.shape[1];
  // The rank that holds sequence 0's logits: the first with logits whose
  // batch replica is 0 (tensor and expert replicas hold copies).
  int chooser = -1;
  for (size_t r = 0; r < step.job.roleOf.size() && chooser < 0; ++r)
    if (step.job.roleOf[r]->sample &&
        !step.job.roleOf[r]->sample->logitsShape.empty() &&
        mesh.indexAlong(mesh.coords(r), manifest.batchAxes).first == 0)
      chooser = static_cast<int>(r);
  bool firstReplica =
      mesh.indexAlong(mesh.coords(step.job.rank), manifest.batchAxes).first ==
      0;
  plan::Tensor logitsInfo;
  logitsInfo.kind = "other";
  logitsInfo.dtype = entry.logitsDtype;
  logitsInfo.shape = entry.logitsShape;
  HostTensor logits;
  bool hasLogits = !entry.logitsShape.empty();
  if (hasLogits)
    logits.allocate(logitsInfo);

  std::string window = samplePrompt.empty() ? std::string("\n") : samplePrompt;
  std::string all = window;
  std::mt19937_64 random(seed);
  for (int64_t k = 0; k < sampleBytes; ++k) {
    int64_t length = std::min<int64_t>(seqLen, all.size());
    std::string last = all.substr(all.size() - length);
    for (int64_t i : entry.inputs)
      if (manifest.arguments[i].kind == "data")
        std::memset(step.args[i].data(), 0, step.args[i].bytes());
    if (firstReplica && step.args[tokens.index].info) {
      auto *ids = static_cast<int64_t *>(step.args[tokens.index].data());
      for (int64_t p = 0; p < length; ++p)
        ids[p] = static_cast<unsigned char>(last[p]);
    }
    double seconds = 0;
    if (!callEntry(step, step.program.sampleEntry, entry.inputs, entry.outputs,
                   hasLogits ? &logits : nullptr,
                   "sample byte " + std::to_string(k + 1), seconds, error))
      return false;
    double next = 0;
    if (step.job.rank == chooser) {
      std::vector<double> row(kVocabulary);
      for (int64_t v = 0; v < kVocabulary; ++v)
        row[v] = logits.floatAt((length - 1) * kVocabulary + v);
      next = static_cast<double>(pickByte(row, sampleTemperature, random));
    }
    // Every rank takes part in each move (as Job::meanLoss's).
    for (size_t r = 0; step.job.context && r < step.job.roleOf.size(); ++r)
      if (piper_plan_session_move(step.job.session, &next, 1, PIPER_RT_F64,
                                  chooser, static_cast<int>(r),
                                  PIPER_RT_MAX_TAG) != PIPER_RT_OK) {
        error = "sample byte " + std::to_string(k + 1) + " to rank " +
                std::to_string(r) + ": " + piper_rt_last_error();
        return false;
      }
    all += static_cast<char>(static_cast<int64_t>(next));
  }
  text = all.substr(samplePrompt.empty() ? 1 : 0);
  return true;
}

std::string piper::run::printableText(const std::string &text) {
  std::string out;
  for (unsigned char c : text) {
    if ((c >= 32 && c < 127) || c == '\n' || c == '\t')
      out += static_cast<char>(c);
    else
      out += llvm::formatv("\\x{0:x-2}", unsigned(c)).str();
  }
  return out;
}
