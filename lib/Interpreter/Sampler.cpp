//===- Sampler.cpp - Text from a trained byte-level language model --------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "piper/Interpreter/Sampler.h"

#include "piper/Dialect/Piper/IR/PiperOps.h"

#include <algorithm>
#include <cmath>
#include <random>

using namespace mlir;
using namespace mlir::piper;

FailureOr<Sampler> Sampler::create(func::FuncOp model, Precision precision) {
  auto parent = model->getParentOfType<ModuleOp>();
  if (!parent)
    return model.emitError("sampling needs the model inside a module");
  OwningOpRef<ModuleOp> module = parent.clone();
  auto fn = module->lookupSymbol<func::FuncOp>(model.getSymName());
  auto ret = cast<func::ReturnOp>(fn.getBody().front().getTerminator());
  // The loss may come out of chunks (`piper.annotate`, nested): follow it
  // through their yields to the cross_entropy, remembering the path so that
  // the logits can be routed out the same way.
  SmallVector<std::pair<YieldOp, unsigned>> path;
  Value value = ret.getNumOperands() == 1 ? ret.getOperand(0) : Value();
  while (auto chunk = value ? value.getDefiningOp<AnnotateOp>() : nullptr) {
    unsigned index = cast<OpResult>(value).getResultNumber();
    auto yield = cast<YieldOp>(chunk.getBody().front().getTerminator());
    path.push_back({yield, index});
    value = yield->getOperand(index);
  }
  auto loss = value ? value.getDefiningOp<CrossEntropyOp>() : CrossEntropyOp();
  if (!loss)
    return ret.emitError(
        "sampling needs a language model whose result is piper.cross_entropy "
        "of the logits");
  // Labels must be an argument of the function itself (not of a chunk).
  auto labels = dyn_cast<BlockArgument>(loss.getLabels());
  if (labels && labels.getOwner() != &fn.getBody().front())
    labels = nullptr;
  auto logitsType = cast<RankedTensorType>(loss.getLogits().getType());
  std::optional<unsigned> ids;
  for (BlockArgument arg : fn.getArguments()) {
    auto type = dyn_cast<RankedTensorType>(arg.getType());
    if (arg != labels && type && type.getElementType().isInteger(64) &&
        type.getRank() == 2 && type.hasStaticShape()) {
      if (ids)
        return loss.emitError("sampling needs one token-id argument [B, S]; "
                              "found two");
      ids = arg.getArgNumber();
    }
  }
  if (!labels || !ids || !logitsType.hasStaticShape())
    return loss.emitError("sampling needs token ids [B, S] and labels as "
                          "arguments and static logits");
  auto idsType = cast<RankedTensorType>(fn.getArgument(*ids).getType());
  int64_t batch = idsType.getDimSize(0), seqLen = idsType.getDimSize(1);
  int64_t vocab = logitsType.getDimSize(1);
  if (logitsType.getDimSize(0) != batch * seqLen || vocab != 256)
    return loss.emitError()
           << "sampling needs byte logits [" << batch * seqLen
           << ", 256] (a model generated with --vocab=256), got " << logitsType;
  Value logits = loss.getLogits();
  // Innermost first: each yield passes the logits out, and its chunk's
  // result takes their type.
  for (auto [yield, index] : llvm::reverse(path)) {
    yield->setOperand(index, logits);
    logits = yield->getParentOp()->getResult(index);
    logits.setType(loss.getLogits().getType());
  }
  ret->setOperands(logits);
  loss.erase();
  fn.setType(FunctionType::get(fn.getContext(), fn.getArgumentTypes(),
                               {logits.getType()}));
  fn.removeResAttrsAttr();
  FailureOr<Interpreter> forward = Interpreter::create(fn, precision);
  if (failed(forward))
    return failure();
  return Sampler(std::move(module), *forward, *ids, labels.getArgNumber(),
                 batch, seqLen, vocab);
}

FailureOr<std::string> Sampler::generate(ArrayRef<ref::Tensor> params,
                                         const std::string &prompt,
                                         int64_t count, double temperature,
                                         uint64_t seed) const {
  func::FuncOp fn = forward.getFunction();
  std::string text = prompt.empty() ? std::string("\n") : prompt;
  std::mt19937_64 random(seed);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  for (int64_t k = 0; k < count; ++k) {
    // The last S bytes, left-aligned: causal attention makes what follows
    // them (zeros) irrelevant to the logits at their last position.
    int64_t length = std::min<int64_t>(seqLen, text.size());
    std::string window = text.substr(text.size() - length);
    ref::IndexTensor ids = ref::IndexTensor::zeros({batch, seqLen});
    for (int64_t p = 0; p < length; ++p)
      ids.data[p] = static_cast<unsigned char>(window[p]);
    SmallVector<RuntimeValue> args;
    size_t nextParam = 0;
    for (BlockArgument arg : fn.getArguments()) {
      unsigned i = arg.getArgNumber();
      if (i == idsArg)
        args.push_back(ids);
      else if (i == labelsArg)
        args.push_back(ref::IndexTensor::zeros({batch * seqLen}));
      else if (nextParam < params.size())
        args.push_back(params[nextParam++]);
      else
        return fn.emitError("sampling got fewer parameters than the model has");
    }
    FailureOr<SmallVector<RuntimeValue>> results = forward.run(args);
    if (failed(results))
      return failure();
    const ref::Tensor &logits = std::get<ref::Tensor>(results->front());
    const double *row = logits.data.data() + (length - 1) * vocab;
    int64_t next = std::max_element(row, row + vocab) - row;
    if (temperature > 0) {
      std::vector<double> weights(vocab);
      double top = row[next], total = 0;
      for (int64_t v = 0; v < vocab; ++v)
        total += weights[v] = std::exp((row[v] - top) / temperature);
      double pick = uniform(random) * total;
      for (next = 0; next + 1 < vocab && pick >= weights[next]; ++next)
        pick -= weights[next];
    }
    text += static_cast<char>(next);
  }
  return text.substr(prompt.empty() ? 1 : 0);
}
