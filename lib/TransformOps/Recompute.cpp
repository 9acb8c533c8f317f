//===- Recompute.cpp - transform.piper.recompute --------------------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The directive form of activation recomputation; the rewrite itself is
// `recomputeForward` (Dialect/Piper/Transforms/Recompute.h), shared with
// in-process callers.
//
//===----------------------------------------------------------------------===//

#include "piper/Dialect/Piper/Transforms/Recompute.h"
#include "piper/TransformOps/PiperTransformOps.h"

#include <optional>

using namespace mlir;
using namespace mlir::piper;

DiagnosedSilenceableFailure
RecomputeOp::apply(transform::TransformRewriter &rewriter,
                   transform::TransformResults &results,
                   transform::TransformState &state) {
  SmallVector<std::string> kinds;
  for (StringRef kind : getOps().getAsValueRange<StringAttr>())
    kinds.push_back(kind.str());
  auto payload = llvm::to_vector(state.getPayloadOps(getNodes()));
  SmallVector<Operation *> made;
  for (Operation *op : payload) {
    auto task = dyn_cast<TaskOp>(op);
    if (!task)
      return emitDefiniteFailure()
             << "recompute acts on DAG nodes (piper.task), got '"
             << op->getName() << "'";
  }
  std::optional<Recomputer> recomputer;
  for (Operation *op : payload) {
    auto task = cast<TaskOp>(op);
    if (task.getPass() != PassKind::F)
      continue;
    if (!recomputer)
      recomputer.emplace(task->getParentOfType<ModuleOp>());
    // Diagnostics go to the directive; the message names the node.
    TaskOp recompute =
        recomputer->recompute(task, kinds, [&] { return emitError(); });
    if (!recompute)
      return DiagnosedSilenceableFailure::definiteFailure();
    made.push_back(recompute);
  }
  if (made.empty())
    return emitDefiniteFailure()
           << "the handle holds no forward node (pass F) to recompute";
  results.set(cast<OpResult>(getRecomputes()), made);
  return DiagnosedSilenceableFailure::success();
}

void RecomputeOp::getEffects(
    SmallVectorImpl<MemoryEffects::EffectInstance> &effects) {
  transform::consumesHandle(getNodesMutable(), effects);
  transform::producesHandle(getOperation()->getOpResults(), effects);
  transform::modifiesPayload(effects);
}
