//===- Compile.h - A model and a strategy to a runnable plan ----*- C++ -*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The compile driver (docs/Lowering.md, "Pipeline"), which piper-compile only
// calls:
//
//   compileModel        model -> front half -> verified device programs
//   prepareForLowering  --piper-number-communicators, --piper-stamp-peer-roles
//   printLowered        each program lowered alone, printed (for tests)
//   compilePlan         each program lowered alone -> <program>.so, and
//                       plan.json
//
// Problems with the IR are diagnostics at their location; problems with
// files and the linker are printed to llvm::errs() as "piper-compile: ...".
// Each stage nests its timers (every MLIR pass, then LLVM's translation, O2,
// codegen and the link) in the `timing` scope it is given; a default
// TimingScope times nothing.
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_COMPILE_COMPILE_H
#define PIPER_COMPILE_COMPILE_H

#include "piper/Conversion/GPU/Passes.h"
#include "piper/Dialect/Piper/Transforms/Passes.h"
#include "piper/Dialect/Piper/Transforms/PlanAnnotations.h"
#include "piper/Interpreter/Inputs.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/Timing.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <string>

namespace mlir::piper {

/// What a plan is compiled with.
struct CompileOptions {
  /// The strategy: a transform script (.mlir) or Piper's JSON directive
  /// list (.json); empty means serial.
  std::string directives;
  /// The optimizer the training step is built with (--piper-optimizer).
  PiperOptimizerOptions optimizer;
  /// Compile global gradient-norm clipping in, with this default bound
  /// (piper-run --clip-grad-norm overrides it); 0: no clipping.
  double clipGradNorm = 0.0;
  /// One trace span per op of each launched body (TraceKernels.h).
  bool traceKernels = false;
  /// The model file's name, as plan.json records it.
  std::string sourceName;
  /// --target=cuda: the GPU lowering (docs/GPU.md) with these choices;
  /// absent: the host CPU.
  std::optional<GPUTargetOptions> gpu;
};

/// Runs the front half on the model in `module` (its only public function
/// with a body) with `options`' optimizer and strategy; a translated JSON
/// strategy is kept in `keepDir` (see prepareStrategy). Returns the model's
/// arguments as the interpreter classifies them (what plan.json's
/// initialisation and data come from).
FailureOr<SmallVector<ArgumentInfo>>
compileModel(ModuleOp module, const CompileOptions &options,
             const std::optional<std::string> &keepDir, TimingScope &timing);

/// Readies the device programs of `module` to be lowered one at a time:
/// numbers the communicators over all of them and stamps each send and
/// receive with its peer's role. Returns the communicators.
FailureOr<SmallVector<CommKey>> prepareForLowering(ModuleOp module);

/// What printLowered prints of each program.
enum class LoweredForm {
  /// Functions of linalg ops and kernel calls (before bufferization).
  Kernels,
  /// The LLVM dialect.
  LLVMDialect,
  /// Optimised LLVM IR.
  LLVMIR,
};

/// Prints every program of the prepared `module`, each lowered alone, to
/// `os` in program order.
LogicalResult printLowered(ModuleOp module, LoweredForm form,
                           llvm::raw_ostream &os, TimingScope &timing,
                           const std::optional<GPUTargetOptions> &gpu = {});

/// Writes the plan directory `planDir` (created if needed): one
/// <program>.so per program of the prepared `module` and plan.json.
/// `modelArgs` come from compileModel, `communicators` from
/// prepareForLowering.
LogicalResult compilePlan(ModuleOp module, ArrayRef<ArgumentInfo> modelArgs,
                          ArrayRef<CommKey> communicators,
                          const CompileOptions &options, StringRef planDir,
                          TimingScope &timing);

} // namespace mlir::piper

#endif // PIPER_COMPILE_COMPILE_H
