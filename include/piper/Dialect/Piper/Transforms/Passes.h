//===- Passes.h - Piper passes ----------------------------------*- C++ -*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_DIALECT_PIPER_TRANSFORMS_PASSES_H
#define PIPER_DIALECT_PIPER_TRANSFORMS_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

// The optimizer options' defaults.
#include "piper-rt/train_defaults.h"

namespace mlir::piper {

#define GEN_PASS_DECL
#include "piper/Dialect/Piper/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "piper/Dialect/Piper/Transforms/Passes.h.inc"

} // namespace mlir::piper

#endif // PIPER_DIALECT_PIPER_TRANSFORMS_PASSES_H
