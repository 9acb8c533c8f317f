//===- SamplePrograms.cpp - Evaluation programs that return logits --------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// addSamplePrograms (EvalPrograms.h): sampling text from a compiled plan
// needs the next-byte distribution, the logits the loss reads. The forward
// launch that computes a `piper.cross_entropy` loss returns its logits
// already (its backward needs them), so a sampling program is an
// evaluation program that also outputs them.
//
//===----------------------------------------------------------------------===//

#include "piper/Dialect/Piper/Transforms/EvalPrograms.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/SymbolTable.h"

using namespace mlir;
using namespace mlir::piper;

namespace {

/// The value `inner` of a block nested in `callee` as `callee` returns it
/// (through each enclosing op's terminator), or null when some terminator
/// does not pass it out.
Value returnedAs(Value inner, func::FuncOp callee, unsigned &position) {
  Value current = inner;
  while (true) {
    Block *block = current.getParentBlock();
    Operation *terminator = block->getTerminator();
    auto it = llvm::find(terminator->getOperands(), current);
    if (it == terminator->getOperands().end())
      return nullptr;
    unsigned k = it - terminator->getOperands().begin();
    if (block == &callee.getBody().front()) {
      position = k;
      return current;
    }
    current = terminator->getParentOp()->getResult(k);
  }
}

/// The loss launch's result holding the logits of the loss `value` (a
/// result of a launch of microbatch 0), or null with `why`.
Value logitsOf(Value loss, std::string &why) {
  // Down the running sum of the microbatches' losses (Partition.cpp) to
  // its first operand.
  while (auto sum = loss.getDefiningOp<SumOp>())
    loss = sum.getValues().front();
  auto launch = loss.getDefiningOp<LaunchOp>();
  if (!launch) {
    why = "the first microbatch's loss is not computed by the program that "
          "outputs the loss";
    return nullptr;
  }
  StringRef name = launch.getName();
  if (name.contains("MB=") && !name.contains("MB=0,") &&
      !name.contains("MB=0}")) {
    why = "the first loss summed is not microbatch 0's ('" + name.str() + "')";
    return nullptr;
  }
  auto callee = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
      launch, launch.getCalleeAttr());
  if (!callee || callee.isExternal()) {
    why = "the loss launch's body is not a function with a body";
    return nullptr;
  }
  unsigned index = cast<OpResult>(loss).getResultNumber();
  Value inner = callee.getBody().front().getTerminator()->getOperand(index);
  // Into the nested regions (piper.annotate) that yield it.
  while (auto result = dyn_cast<OpResult>(inner)) {
    Operation *op = result.getOwner();
    if (op->getNumRegions() != 1 || op->getRegion(0).empty())
      break;
    inner = op->getRegion(0).front().getTerminator()->getOperand(
        result.getResultNumber());
  }
  auto loss0 = inner.getDefiningOp<CrossEntropyOp>();
  if (!loss0) {
    why = "the loss is not a piper.cross_entropy of logits";
    return nullptr;
  }
  auto type = cast<RankedTensorType>(loss0.getLogits().getType());
  if (type.getRank() != 2 || !type.hasStaticShape() ||
      !(type.getElementType().isF32() || type.getElementType().isF64())) {
    why = "the logits are not a static f32 or f64 [rows, vocabulary] tensor";
    return nullptr;
  }
  unsigned position = 0;
  if (!returnedAs(loss0.getLogits(), callee, position)) {
    why = "the forward launch does not return its logits (a recomputed "
          "forward)";
    return nullptr;
  }
  return launch->getResult(position);
}

/// A copy of `eval` named `@p.sample`, its transfers addressed to the
/// peers' sampling programs.
ProgramOp copyAsSample(ProgramOp eval) {
  OpBuilder b(eval);
  b.setInsertionPointAfter(eval);
  auto sample = cast<ProgramOp>(b.clone(*eval));
  StringRef base = eval.getSymName().drop_back(kEvalSuffix.size());
  sample.setSymName((base + kSampleSuffix).str());
  auto peer = [&](StringRef name) {
    return FlatSymbolRefAttr::get(
        eval.getContext(),
        (name.drop_back(kEvalSuffix.size()) + kSampleSuffix).str());
  };
  for (Operation &op : sample.getBody().front()) {
    if (auto send = dyn_cast<SendOp>(op))
      send.setPeerAttr(peer(send.getPeer()));
    if (auto recv = dyn_cast<RecvOp>(op))
      recv.setPeerAttr(peer(recv.getPeer()));
  }
  return sample;
}

} // namespace

bool mlir::piper::addSamplePrograms(ModuleOp module, ArrayRef<ProgramOp> evals,
                                    std::string &why) {
  // Checked before anything is added: the logits of each loss output.
  SmallVector<std::pair<ProgramOp, Value>> losses;
  for (ProgramOp eval : evals)
    for (auto output : eval.getBody().front().getOps<OutputOp>())
      if (output.getIndex() == 0) {
        Value logits = logitsOf(output.getValue(), why);
        if (!logits)
          return false;
        losses.push_back({eval, logits});
      }
  if (losses.empty()) {
    why = "no program outputs the loss";
    return false;
  }
  for (ProgramOp eval : evals) {
    ProgramOp sample = copyAsSample(eval);
    auto step = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
        sample, sample.getStepAttr());
    for (auto [program, logits] : losses) {
      if (program != eval)
        continue;
      // The copy's value at the same place as `logits` in `eval`.
      auto launch = cast<OpResult>(logits);
      unsigned position = std::distance(eval.getBody().front().begin(),
                                        launch.getOwner()->getIterator());
      Operation *copy = &*std::next(sample.getBody().front().begin(), position);
      OpBuilder b = OpBuilder::atBlockEnd(&sample.getBody().front());
      OutputOp::create(b, copy->getLoc(),
                       b.getI64IntegerAttr(step.getNumResults()),
                       copy->getResult(launch.getResultNumber()));
    }
  }
  return true;
}
