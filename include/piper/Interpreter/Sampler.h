//===- Sampler.h - Text from a trained byte-level language model -*- C++
//-*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// A falling loss shows little until one reads what the model writes.
// Sampling runs the model's forward with the reference interpreter, up to the
// logits that its `piper.cross_entropy` loss reads, one byte at a time:
// greedy (temperature 0) or from softmax(logits / T) with a seeded generator,
// so a sample is reproducible.
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_INTERPRETER_SAMPLER_H
#define PIPER_INTERPRETER_SAMPLER_H

#include "piper/Interpreter/Interpreter.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include <cstdint>
#include <string>

namespace mlir::piper {

class Sampler {
public:
  /// Prepares sampling from `model`, a byte-level language model (vocabulary
  /// 256) whose result is `piper.cross_entropy` of `logits[B*S, V]` and
  /// whose data are token ids `[B, S]` and labels, at the function's top
  /// level (a model without pipeline chunks). Emits a located error and
  /// fails otherwise. `model` is not modified.
  static FailureOr<Sampler> create(func::FuncOp model, Precision precision);

  /// `prompt` continued by `count` bytes: each the argmax of the next-byte
  /// logits (temperature 0) or drawn from softmax(logits / temperature),
  /// with the last S bytes as context. `params` are the parameters in
  /// argument order.
  FailureOr<std::string> generate(ArrayRef<ref::Tensor> params,
                                  const std::string &prompt, int64_t count,
                                  double temperature, uint64_t seed) const;

private:
  Sampler(OwningOpRef<ModuleOp> module, Interpreter forward, unsigned idsArg,
          unsigned labelsArg, int64_t batch, int64_t seqLen, int64_t vocab)
      : module(std::move(module)), forward(forward), idsArg(idsArg),
        labelsArg(labelsArg), batch(batch), seqLen(seqLen), vocab(vocab) {}

  /// A private copy of the model whose function returns the logits.
  OwningOpRef<ModuleOp> module;
  Interpreter forward;
  unsigned idsArg, labelsArg;
  int64_t batch, seqLen, vocab;
};

} // namespace mlir::piper

#endif // PIPER_INTERPRETER_SAMPLER_H
