//===- Programs.h - Device programs from a scheduled DAG --------*- C++ -*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Partitioning a scheduled global DAG into one `piper.program` per device
// role, and checking a set of programs together. The passes
// `--piper-partition` and `--piper-verify-programs` only wire these up, so
// that the simulator and the runtime's compiler driver can call them
// directly.
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_DIALECT_PIPER_TRANSFORMS_PROGRAMS_H
#define PIPER_DIALECT_PIPER_TRANSFORMS_PROGRAMS_H

#include "piper/Dialect/Piper/IR/PiperOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::piper {

/// The stream a program instruction runs on; null for `piper.input` and
/// `piper.output`, which belong to no stream.
StringAttr getProgramStream(Operation *op);

/// The role of `program` without the axes in `axes`: programs with equal
/// keys are members of one communicator over `axes`.
std::string getCommGroupKey(ProgramOp program, ArrayAttr axes);

/// The attribute naming the node a copy of a shared-parameter node repeats
/// (tieSharedParameters); partitioning keeps it on the copy's launch, so
/// the lowering can count the copy's gradient once (ClipGradNorm.cpp).
constexpr StringLiteral kCopyOfAttrName = "copy_of";

/// Places the unplaced nodes of `dag` that serve placed ones (the sum of a
/// parameter's gradient contributions, its accumulation over microbatches,
/// its update) on every device group they serve: one group places them
/// there; several (a parameter tied across pipeline stages) get one copy
/// each, `copy_of` naming the original, reading the other groups'
/// contributions through transfers. Run by partitionIntoPrograms.
LogicalResult tieSharedParameters(func::FuncOp step, DAGOp dag);

/// Adds, after `step`, one `piper.program` per device role of the
/// `piper.dag` in `step` (see `--piper-partition`). Reports the first
/// problem (an unplaced node, a value crossing roles without a transfer, a
/// collective over an axis that tells roles apart, a cycle) on the node and
/// changes nothing.
LogicalResult partitionIntoPrograms(func::FuncOp step);

/// Checks the programs of `module` together (see `--piper-verify-programs`):
/// send/recv matching, events, collective order and deadlock freedom.
/// Emits the first fault as an error.
LogicalResult verifyPrograms(ModuleOp module);

} // namespace mlir::piper

#endif // PIPER_DIALECT_PIPER_TRANSFORMS_PROGRAMS_H
