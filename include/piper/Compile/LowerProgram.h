//===- LowerProgram.h - One device program, lowered alone -------*- C++ -*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Each device program becomes its own shared object, so each is lowered in a
// clone of the module that holds only it (and the bodies it launches), and
// the clones can be lowered on several threads. What it needs to know of
// the others travels on the IR beforehand:
// --piper-number-communicators and --piper-stamp-peer-roles
// (piper/Dialect/Piper/Transforms/PlanAnnotations.h).
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_COMPILE_LOWERPROGRAM_H
#define PIPER_COMPILE_LOWERPROGRAM_H

#include "piper/Conversion/GPU/Passes.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/Support/Timing.h"

namespace mlir::piper {

/// How far lowerProgram goes.
enum class LoweringDepth {
  /// --piper-program-to-func and --piper-convert-to-kernels: functions of
  /// linalg ops and kernel calls, before bufferization.
  Kernels,
  /// The whole --piper-lower-to-llvm pipeline: the LLVM dialect.
  LLVM,
};

/// A clone of `module` holding only the program `program` (its
/// communicators numbered and peer roles stamped) and what it calls.
OwningOpRef<ModuleOp> cloneProgram(ModuleOp module, StringRef program);

/// Lowers a module from cloneProgram in place, each pass timed under
/// `timing`, and verifies the result (once: not after each pass); fails
/// after emitting the lowering's diagnostics. Distinct
/// modules may be lowered on several threads at once after
/// loadLoweringDialects.
/// With `gpu`, LoweringDepth::LLVM is the --target=cuda lowering
/// (buildLowerToGPUPipeline).
LogicalResult lowerProgramModule(ModuleOp programModule, LoweringDepth depth,
                                 TimingScope &timing,
                                 const GPUTargetOptions *gpu = nullptr);

/// Loads every dialect the lowering's passes create ops of, so that no pass
/// manager loads one while others run (which MLIR does not allow).
void loadLoweringDialects(MLIRContext *context,
                          const GPUTargetOptions *gpu = nullptr);

} // namespace mlir::piper

#endif // PIPER_COMPILE_LOWERPROGRAM_H
