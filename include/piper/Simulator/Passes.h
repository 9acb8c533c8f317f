//===- Passes.h - The simulator pass ----------------------------*- C++ -*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_SIMULATOR_PASSES_H
#define PIPER_SIMULATOR_PASSES_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

#include <memory>

namespace mlir::piper {

/// `createPiperSimulate()` and `PiperSimulateOptions` (Passes.td).
#define GEN_PASS_DECL
#include "piper/Simulator/Passes.h.inc"

/// Registers `--piper-simulate`.
void registerSimulatorPasses();

} // namespace mlir::piper

#endif // PIPER_SIMULATOR_PASSES_H
