//===- embed-opt.cpp - A host compiler that embeds Piper ------------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// An opt tool of a compiler that is not Piper: it registers the dialects it
// chose itself, then adds everything Piper brings with one call.
//
//===----------------------------------------------------------------------===//

#include "piper/InitAllPiper.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  // The host's own dialects (builtin is always available).
  registry.insert<mlir::arith::ArithDialect, mlir::func::FuncDialect>();
  // Piper: the piper dialect, the upstream dialects it uses and the
  // --piper-* passes.
  mlir::piper::registerPiper(registry);

  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, "Example host compiler embedding Piper\n", registry));
}
