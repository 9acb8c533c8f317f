//===- Sample.h - Text from a compiled plan ---------------------*- C++ -*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// piper-run --sample=N: continues --prompt by N bytes with the run's
// parameters (trained, --params-in or a checkpoint), one byte per call of
// every role's sampling entry (plan.json's "sample"): the last S bytes of
// the text as sequence 0 of the global batch (left-aligned, zeros after:
// causal attention makes them irrelevant), the next byte the argmax of the
// logits at the window's last position (--temperature=0) or drawn from
// softmax(logits / T) by a generator seeded with --seed. The rank holding
// sequence 0's logits picks the byte and sends it to every rank. The draws
// are piper-interp --sample's, so both write the same text from the same
// parameters.
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_TOOLS_PIPER_RUN_SAMPLE_H
#define PIPER_TOOLS_PIPER_RUN_SAMPLE_H

#include "Step.h"

#include "llvm/Support/CommandLine.h"

#include <cstdint>
#include <string>

namespace piper::run {

extern llvm::cl::opt<int64_t> sampleBytes;
extern llvm::cl::opt<std::string> samplePrompt;
extern llvm::cl::opt<double> sampleTemperature;

/// Checks the sampling flags, and with --sample that `manifest` has a
/// sampling entry and byte tokens.
bool checkSampleFlags(const plan::Manifest &manifest, std::string &error);

/// The sample (--prompt excluded) from the parameters in `step.args`, drawn
/// with `seed`; the same on every rank.
bool sampleText(StepContext &step, uint64_t seed, std::string &text,
                std::string &error);

/// `text` with bytes other than printable ASCII, newline and tab written as
/// \xNN (as piper-interp prints a sample).
std::string printableText(const std::string &text);

} // namespace piper::run

#endif // PIPER_TOOLS_PIPER_RUN_SAMPLE_H
