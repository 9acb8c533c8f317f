//===- EvalPrograms.h - Forward-only evaluation programs --------*- C++ -*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// A held-out evaluation needs the training step's loss at the current
// parameters and nothing else. Its program per role is derived from the
// training programs, so it runs under every strategy they do: the
// instructions the loss output depends on, followed across roles through
// each needed receive to its send (an activation crossing a stage boundary)
// and within a role through operands (a ZeRO-3 parameter gathered for the
// forward). Backward launches, gradient collectives, sums of gradients and
// updates feed no loss and are left out. Records and waits stay (they only
// order what remains). The loss is what the training step outputs (result
// 0: the mean over microbatches, each replica's own).
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_DIALECT_PIPER_TRANSFORMS_EVALPROGRAMS_H
#define PIPER_DIALECT_PIPER_TRANSFORMS_EVALPROGRAMS_H

#include "piper/Dialect/Piper/IR/PiperOps.h"

#include "mlir/IR/BuiltinOps.h"

namespace mlir::piper {

/// On an evaluation program: the symbol of the training program it was
/// derived from.
constexpr llvm::StringLiteral kEvalOfAttrName = "piper_plan.eval_of";
/// On an evaluation program's launch: the launch's index in its training
/// program, which the trace hooks pass, so that one list of launch names
/// (plan.json's "launches") names the spans of both entries.
constexpr llvm::StringLiteral kTraceIndexAttrName = "piper_plan.trace_index";
/// The suffix of an evaluation program's symbol (`@step.pp0.eval`).
constexpr llvm::StringLiteral kEvalSuffix = ".eval";
/// The suffix of a sampling program's symbol (`@step.pp0.sample`).
constexpr llvm::StringLiteral kSampleSuffix = ".sample";

/// Whether `program` is an evaluation or sampling program (kEvalOfAttrName).
inline bool isEvalProgram(ProgramOp program) {
  return program->hasAttr(kEvalOfAttrName);
}

/// Adds after each training program `@p` of `module` its evaluation program
/// `@p.eval`, whose sends and receives name the peers' evaluation programs,
/// and returns them in the training programs' order. Fails with a located
/// error when the module already has evaluation programs, a needed receive
/// has no send or no program outputs the loss.
FailureOr<SmallVector<ProgramOp>> addEvalPrograms(ModuleOp module);

/// Adds after each evaluation program `@p.eval` of `evals` a sampling
/// program `@p.sample`: the same instructions, transfers addressed to the
/// peers' sampling programs, and in the program that outputs the loss one
/// more output, `piper.output N` with N the step's result count, of the
/// logits of the first microbatch (those the `piper.cross_entropy` loss
/// reads, which the forward launch already returns for its backward).
/// Returns false with `why` and adds nothing when the plan cannot sample
/// (no such logits: another loss, a recomputed forward, microbatch 0's loss
/// computed elsewhere, bf16 logits).
bool addSamplePrograms(ModuleOp module, ArrayRef<ProgramOp> evals,
                       std::string &why);

/// The trace index of `launch`: kTraceIndexAttrName when set, else `next`.
inline int64_t launchTraceIndex(Operation *launch, int64_t next) {
  if (auto index = launch->getAttrOfType<IntegerAttr>(kTraceIndexAttrName))
    return index.getInt();
  return next;
}

} // namespace mlir::piper

#endif // PIPER_DIALECT_PIPER_TRANSFORMS_EVALPROGRAMS_H
