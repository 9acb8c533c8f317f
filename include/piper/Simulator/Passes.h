//===- Passes.h - The simulator pass ----------------------------*- C++ -*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_SIMULATOR_PASSES_H
#define PIPER_SIMULATOR_PASSES_H

namespace mlir::piper {

/// Registers `--piper-simulate`.
void registerSimulatorPasses();

} // namespace mlir::piper

#endif // PIPER_SIMULATOR_PASSES_H
