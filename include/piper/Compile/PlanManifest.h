//===- PlanManifest.h - plan.json from the compiled module ------*- C++ -*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// plan.json: what piper-run needs to feed and read every program of a plan
// (docs/Lowering.md describes the format): the mesh, the batch axes and
// communicators, the optimizer, every step argument and result with its
// kind, dtype, shape and layout, and per role its object, entry point,
// inputs, outputs, launches and streams.
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_COMPILE_PLANMANIFEST_H
#define PIPER_COMPILE_PLANMANIFEST_H

#include "piper/Dialect/Piper/IR/PiperOps.h"
#include "piper/Dialect/Piper/Transforms/Passes.h"
#include "piper/Dialect/Piper/Transforms/PlanAnnotations.h"
#include "piper/Interpreter/Inputs.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/JSON.h"

namespace mlir::piper {

/// The manifest of the plan compiled from `module`: `programs` are its
/// device programs (the module numbered by --piper-number-communicators,
/// which gave `communicators`), `modelArgs` the model's arguments as the
/// interpreter classifies them, `sourceName` the model file's name and
/// `optimizer` the optimizer the step was built with. Fails, with a located
/// error, on a step argument that is neither a model argument nor optimizer
/// state and on a parameter both split and ZeRO-sharded.
FailureOr<llvm::json::Object>
buildPlanManifest(ModuleOp module, ArrayRef<ProgramOp> programs,
                  ArrayRef<ArgumentInfo> modelArgs,
                  ArrayRef<CommKey> communicators, StringRef sourceName,
                  const PiperOptimizerOptions &optimizer);

} // namespace mlir::piper

#endif // PIPER_COMPILE_PLANMANIFEST_H
