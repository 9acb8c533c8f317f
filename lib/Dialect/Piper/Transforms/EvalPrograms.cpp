//===- EvalPrograms.cpp - Forward-only programs from training ones --------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// addEvalPrograms (EvalPrograms.h) and --piper-eval-programs.
//
//===----------------------------------------------------------------------===//

#include "piper/Dialect/Piper/Transforms/EvalPrograms.h"

#include "piper/Dialect/Piper/Transforms/Passes.h"

#include "mlir/IR/SymbolTable.h"

#include "llvm/ADT/DenseSet.h"

#include <map>
#include <tuple>

namespace mlir::piper {
#define GEN_PASS_DEF_PIPEREVALPROGRAMS
#include "piper/Dialect/Piper/Transforms/Passes.h.inc"
} // namespace mlir::piper

using namespace mlir;
using namespace mlir::piper;

namespace {

/// The step result an evaluation returns: the loss (plan.json's result 0).
constexpr int64_t kLossResult = 0;

/// The sends of the module, by (sender, receiver, tag).
using SendKey = std::tuple<std::string, std::string, int64_t>;
/// A collective's communicator (its axes and stream) and its position among
/// the communicator's collectives in its program.
using CommPosition = std::tuple<std::string, std::string, int64_t>;

/// The communicator and position of `comm` (the k-th of its communicator
/// in program order).
CommPosition
commPosition(CommOp comm,
             std::map<std::pair<std::string, std::string>, int64_t> &counts) {
  std::string axes;
  for (Attribute axis : comm.getAxes())
    axes += cast<StringAttr>(axis).str() + ",";
  std::string stream = comm.getStream().str();
  return {axes, stream, counts[{axes, stream}]++};
}

/// Marks in `keep` every instruction of the training programs that the
/// loss outputs depend on, across programs. Fails at a receive whose send
/// is missing (the verifier rejects such programs first).
LogicalResult markNeeded(ArrayRef<ProgramOp> programs,
                         llvm::DenseSet<Operation *> &keep) {
  std::map<SendKey, SendOp> sends;
  // A collective over an axis that tells programs apart has members in
  // other programs, which issue their collectives of a communicator in the
  // same order (the verifier checks it): the k-th is kept in all or none.
  std::map<CommPosition, SmallVector<Operation *>> members;
  std::map<Operation *, CommPosition> positions;
  SmallVector<Operation *> worklist;
  for (ProgramOp program : programs) {
    std::map<std::pair<std::string, std::string>, int64_t> counts;
    for (Operation &op : program.getBody().front()) {
      // Over axes the role does not name, the members are this program's
      // replicas, which run the same instructions.
      auto comm = dyn_cast<CommOp>(op);
      if (comm && llvm::any_of(comm.getAxes(), [&](Attribute axis) {
            return program.getRole().contains(cast<StringAttr>(axis));
          })) {
        CommPosition position = commPosition(comm, counts);
        positions[&op] = position;
        members[position].push_back(&op);
      }
      if (auto send = dyn_cast<SendOp>(op))
        sends[{program.getSymName().str(), send.getPeer().str(),
               static_cast<int64_t>(send.getTag())}] = send;
      if (auto output = dyn_cast<OutputOp>(op);
          output && static_cast<int64_t>(output.getIndex()) == kLossResult)
        worklist.push_back(output);
      // They only order instructions; those that remain keep their order.
      if (isa<RecordOp, WaitOp>(op))
        keep.insert(&op);
    }
  }
  if (worklist.empty() && !programs.empty())
    return ProgramOp(programs.front()).emitError()
           << "no program outputs the loss (step result " << kLossResult
           << "); there is nothing to evaluate";
  while (!worklist.empty()) {
    Operation *op = worklist.pop_back_val();
    if (!keep.insert(op).second)
      continue;
    for (Value operand : op->getOperands())
      if (Operation *producer = operand.getDefiningOp())
        worklist.push_back(producer);
    if (auto it = positions.find(op); it != positions.end())
      llvm::append_range(worklist, members[it->second]);
    auto recv = dyn_cast<RecvOp>(op);
    if (!recv)
      continue;
    auto self = recv->getParentOfType<ProgramOp>();
    auto it = sends.find({recv.getPeer().str(), self.getSymName().str(),
                          static_cast<int64_t>(recv.getTag())});
    if (it == sends.end())
      return recv.emitError() << "the loss needs recv '" << recv.getName()
                              << "' (from @" << recv.getPeer() << ", tag "
                              << recv.getTag() << "), which no send matches";
    worklist.push_back(it->second);
  }
  return success();
}

/// `training`'s evaluation program, inserted after it: a copy without the
/// instructions `keep` lacks, its transfers addressed to the peers'
/// evaluation programs, its launches keeping their trace indices.
ProgramOp buildEvalProgram(ProgramOp training,
                           const llvm::DenseSet<Operation *> &keep) {
  OpBuilder b(training);
  b.setInsertionPointAfter(training);
  auto eval = cast<ProgramOp>(b.clone(*training));
  MLIRContext *context = training.getContext();
  eval.setSymName((training.getSymName() + kEvalSuffix).str());
  eval->setAttr(kEvalOfAttrName, FlatSymbolRefAttr::get(training));
  // The copy lists the same instructions in the same order.
  SmallVector<Operation *> copies, originals;
  for (Operation &op : eval.getBody().front())
    copies.push_back(&op);
  for (Operation &op : training.getBody().front())
    originals.push_back(&op);
  int64_t launch = 0;
  for (auto [copy, original] : llvm::zip_equal(copies, originals)) {
    if (isa<LaunchOp>(copy))
      copy->setAttr(kTraceIndexAttrName, b.getI64IntegerAttr(launch++));
    auto peer = [&](StringRef name) {
      return FlatSymbolRefAttr::get(context, (name + kEvalSuffix).str());
    };
    if (auto send = dyn_cast<SendOp>(copy))
      send.setPeerAttr(peer(send.getPeer()));
    if (auto recv = dyn_cast<RecvOp>(copy))
      recv.setPeerAttr(peer(recv.getPeer()));
  }
  // Users before producers: an instruction left out has no user kept.
  for (size_t i = copies.size(); i-- > 0;)
    if (!keep.contains(originals[i]))
      copies[i]->erase();
  return eval;
}

struct PiperEvalProgramsPass
    : public mlir::piper::impl::PiperEvalProgramsBase<PiperEvalProgramsPass> {
  using PiperEvalProgramsBase::PiperEvalProgramsBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<ProgramOp> training(module.getOps<ProgramOp>());
    if (failed(addEvalPrograms(module)))
      return signalPassFailure();
    if (!only)
      return;
    // The evaluation programs alone, as one step the verifier can check.
    for (ProgramOp program : training)
      program.erase();
    for (ProgramOp program : module.getOps<ProgramOp>())
      program->removeAttr(kEvalOfAttrName);
  }
};

} // namespace

FailureOr<SmallVector<ProgramOp>>
mlir::piper::addEvalPrograms(ModuleOp module) {
  SmallVector<ProgramOp> programs(module.getOps<ProgramOp>());
  for (ProgramOp program : programs)
    if (isEvalProgram(program))
      return program.emitError()
             << "is already an evaluation program; derive them once";
  if (programs.empty())
    return module.emitError()
           << "no piper.program to evaluate; run --piper-partition first";
  llvm::DenseSet<Operation *> keep;
  if (failed(markNeeded(programs, keep)))
    return failure();
  SmallVector<ProgramOp> evals;
  for (ProgramOp program : programs)
    evals.push_back(buildEvalProgram(program, keep));
  return evals;
}
