//===- OpCounts.h - FLOPs and bytes of piper ops ----------------*- C++ -*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// How much arithmetic and memory traffic one op of a task body costs: every
// NN op, each `piper.vjp` (per differentiated operand), the optimizer
// updates, and whole bodies (through `func.call`). The simulator's roofline
// reads it; a report of model FLOPs (MFU) or a strategy search can too.
// docs/Simulator.md gives the formulas.
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_SIMULATOR_OPCOUNTS_H
#define PIPER_SIMULATOR_OPCOUNTS_H

#include "piper/Dialect/Piper/IR/PiperDistribution.h"

#include "mlir/IR/Operation.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

namespace mlir::piper {

class LocalSizes;

/// The cost of `op` alone: an NN op, a `piper.vjp`, an optimizer update,
/// or anything else with tensor operands or results (counted as memory
/// traffic and one vector op per result element). Structure (constants,
/// `func.call`, `func.return`, `piper.yield`, `piper.collective`) is free
/// here; calls are followed by `countBody`.
///
/// The figures are the op's distribution rule's (DistributionOpInterface::
/// getCost). With `sizes` (what one device holds of the body `op` is in),
/// the cost on one device of a tensor-parallel body: the same rule at the
/// op's local types. Ops whose work is not split (FLOP divisor 1:
/// expert_ffn under expert parallelism among them) keep their global-view
/// cost.
OpCount countOp(Operation *op, const LocalSizes *sizes = nullptr);

/// The cost of a function body: its ops, and the bodies it calls (those
/// at their global sizes).
OpCount countBody(FunctionOpInterface body, const LocalSizes *sizes = nullptr);

} // namespace mlir::piper

#endif // PIPER_SIMULATOR_OPCOUNTS_H
