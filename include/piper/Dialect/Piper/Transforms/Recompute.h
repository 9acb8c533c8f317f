//===- Recompute.h - Activation recomputation on the DAG --------*- C++ -*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Activation recomputation (activation checkpointing) as a rewrite of the
// scheduled global training DAG. Shared by `transform.piper.recompute`, the
// JSON `recompute` directive and in-process callers such as a strategy
// search.
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_DIALECT_PIPER_TRANSFORMS_RECOMPUTE_H
#define PIPER_DIALECT_PIPER_TRANSFORMS_RECOMPUTE_H

#include "piper/Dialect/Piper/IR/PiperOps.h"

#include "mlir/IR/BuiltinOps.h"

#include <memory>

namespace mlir::piper {

/// The attribute an `R` node carries: the name of the forward node whose
/// activations it recomputes.
inline constexpr llvm::StringLiteral kRecomputesAttrName = "recomputes";

/// Whether `task` is a recompute node made by `recomputeForward`.
inline bool isRecomputeTask(TaskOp task) {
  return task->hasAttr(kRecomputesAttrName);
}

/// Makes the backward of the forward node `forward` recompute the
/// activations it saves instead of reading them from `forward`:
///
/// - The saved outputs of `forward` (those read by backward nodes of its
///   device group) that come from the recomputed ops are no longer kept:
///   `forward` stops returning what nothing else reads.
/// - A new node `R{tags}` (pass B, attribute `recomputes`, same device
///   group) re-runs those ops from the chunk's saved inputs (the forward's
///   own inputs, or, for selected ops, the activations still saved) and
///   feeds the backward nodes. It runs after everything the first backward
///   consumer waits for (its temporal edges are copied), and that consumer
///   waits for it, so the recomputed values live only from R to the
///   backward.
///
/// `opKinds` empty recomputes the whole chunk. Otherwise only ops whose name
/// is `piper.<kind>` (and reshapes of their results) are recomputed, Megatron's
/// selective recompute (`{"attention"}`). Apply after `split`, `place`,
/// `replicate`, `shard` and the schedule (`order`/`schedule`): later
/// directives would see R as a backward node. Reports through `emitError`
/// and returns null when there is nothing to recompute, the node is not a
/// forward task or is already recomputed, or an op kind is unknown.
TaskOp recomputeForward(TaskOp forward, ArrayRef<std::string> opKinds,
                        function_ref<InFlightDiagnostic()> emitError);

/// Recomputes many forwards of one module: what every recomputation would
/// otherwise derive again from the whole DAG (its topological order, the
/// forwards already recomputed, the module's symbol table) is derived once.
/// Recomputing only adds nodes right before a consumer and never changes
/// the order of the nodes there were, so one order serves every call
/// (deepseek_v3 with a forward per stage and microbatch: 1,024 of them).
class Recomputer {
public:
  explicit Recomputer(ModuleOp module);
  ~Recomputer();
  /// `recomputeForward` of a forward of this module.
  TaskOp recompute(TaskOp forward, ArrayRef<std::string> opKinds,
                   function_ref<InFlightDiagnostic()> emitError);

private:
  struct State;
  std::unique_ptr<State> state;
};

/// In-process entry for strategy search: applies `recomputeForward` to every
/// forward (`F`) node of every DAG in `module` that `filter` (a tag filter,
/// as `transform.piper.match_nodes` takes) selects. Returns the number of
/// R nodes made, or failure with the diagnostic emitted at the module.
FailureOr<unsigned> applyRecompute(ModuleOp module, DictionaryAttr filter,
                                   ArrayRef<std::string> opKinds = {});

} // namespace mlir::piper

#endif // PIPER_DIALECT_PIPER_TRANSFORMS_RECOMPUTE_H
