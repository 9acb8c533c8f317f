//===- StageBalance.h - Assign a model's layers to pipeline stages -*- C++ -*-//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Stage balancing: cuts a training step's forward ops (the embedding, every
// layer, the LM head and the loss) into contiguous `{PP = s}` chunks so that
// the slowest stage is as fast as possible under a per-stage memory limit.
// The cost of a stage is what the simulator would charge it per step: its
// kernels (forward and backward, once per microbatch), the data-parallel
// traffic of the parameters it holds and the expert all-to-alls of its MoE
// blocks. `transform.piper.balance` and the strategy search call it;
// docs/Balance.md gives the model and its limits.
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_BALANCE_STAGEBALANCE_H
#define PIPER_BALANCE_STAGEBALANCE_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

#include <string>

namespace mlir::piper {

/// What the balancer minimises and under which limits.
struct BalanceOptions {
  /// Pipeline stages to make (at least 1).
  int64_t numStages = 2;
  /// `roofline`: the simulator's kernel times on `device` plus the
  /// communication below; `flops`: forward and backward FLOPs only.
  std::string costSource = "roofline";
  /// A device of the simulator's table (`a100`, `h100`, `h200`).
  std::string device = "a100";
  /// Microbatches per step (0: as many as stages). Kernels and all-to-alls
  /// run once per microbatch, gradient collectives once per step.
  int64_t microbatches = 0;
  /// Mesh axes the parameters' gradients are reduced over (data parallel):
  /// each stage pays a reduce-scatter and an all-gather of its parameters
  /// per step, as ZeRO-1 does. Parameters split over one of these axes
  /// (experts under expert parallelism) are not replicated and pay none.
  SmallVector<std::string> gradAxes;
  /// Mesh axes MoE tokens are exchanged over: each dispatch and combine
  /// pays an all-to-all of its tokens forward and backward per microbatch.
  SmallVector<std::string> expertAxes;
  /// The mesh axis between stages: each stage boundary sends its
  /// activation forward and its gradient back per microbatch over this
  /// axis's link (NVLink on `device` when the model has no such axis).
  std::string pipelineAxis = "pp";
  /// Bytes one stage may hold (0: no limit): its parameters with their
  /// gradients and two optimizer moments, plus the forward activations of
  /// the microbatches 1F1B keeps in flight there (stages - s for stage s).
  double memoryLimit = 0;
};

/// The balancer's answer for one step function.
struct StageBalance {
  /// Units are the step's top-level ops after its PP chunks are inlined
  /// (a nested chunk, an MoE expert block, is one unit); constants are
  /// not units. Stage s holds units [firstUnit[s], firstUnit[s+1]).
  SmallVector<int64_t> firstUnit;
  int64_t numUnits = 0;
  /// Per stage: the cost minimised (seconds per step for `roofline`, FLOPs
  /// per step for `flops`) and the estimated bytes.
  SmallVector<double> cost, memory;
  /// Per stage: the name location of its first unit (`layers.3.attn_norm`)
  /// or its op name, for reports.
  SmallVector<std::string> firstUnitName;

  double maxCost() const;
};

/// Chooses the stages of `step` without changing it. Fails with one
/// diagnostic (through `emitError`) on an unknown cost source, device or
/// mesh axis, fewer places to cut than stages, PP chunks below the top
/// level, or when no split fits `memoryLimit`.
FailureOr<StageBalance>
balanceStages(func::FuncOp step, const BalanceOptions &options,
              function_ref<InFlightDiagnostic()> emitError);

/// The same for the step function of `model` (the function with
/// `piper.param` arguments), with `numStages` and `costSource` set on a
/// copy of `options`: the strategy search's entry point.
FailureOr<StageBalance> balanceStages(ModuleOp model, int64_t numStages,
                                      StringRef costSource,
                                      BalanceOptions options = {});

/// Rewrites `step` into `balance.firstUnit.size()` top-level `{PP = s}`
/// chunks: its existing PP chunks are inlined first, then each stage's units
/// are moved into a new chunk yielding what later stages and the return use.
/// Constants are cloned into every stage that uses them.
void applyStageBalance(func::FuncOp step, const StageBalance &balance);

/// The step function of `model`: the single `func.func` with a
/// `piper.param` argument, or with PP chunks, or the only function.
func::FuncOp findStepFunction(ModuleOp model);

} // namespace mlir::piper

#endif // PIPER_BALANCE_STAGEBALANCE_H
