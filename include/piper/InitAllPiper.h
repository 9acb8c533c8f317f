//===- InitAllPiper.h - One entry point to register Piper ------*- C++ -*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Compilers that host Piper call one function and nothing else:
//
//   mlir::DialectRegistry registry;
//   mlir::piper::registerPiper(registry);
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_INITALLPIPER_H
#define PIPER_INITALLPIPER_H

#include "mlir/IR/DialectRegistry.h"

namespace mlir::piper {

/// Adds the piper dialect, the upstream dialects Piper's pipeline produces
/// and consumes, and Piper's extensions (transform ops, interfaces) to
/// `registry`, and registers every Piper pass and pipeline with the global
/// pass registry so that `--piper-*` options exist in opt-like tools.
/// Safe to call more than once.
void registerPiper(DialectRegistry &registry);

} // namespace mlir::piper

#endif // PIPER_INITALLPIPER_H
