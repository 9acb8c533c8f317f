//===- PiperTransformOps.h - transform.piper.* directives -------*- C++ -*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_TRANSFORMOPS_PIPERTRANSFORMOPS_H
#define PIPER_TRANSFORMOPS_PIPERTRANSFORMOPS_H

#include "mlir/Dialect/Transform/IR/TransformTypes.h"
#include "mlir/Dialect/Transform/Interfaces/TransformInterfaces.h"
#include "mlir/IR/OpImplementation.h"

namespace mlir {
class DialectRegistry;
namespace piper {
/// Registers the `transform.piper.*` ops with the transform dialect.
void registerTransformDialectExtension(DialectRegistry &registry);
} // namespace piper
} // namespace mlir

#define GET_OP_CLASSES
#include "piper/TransformOps/PiperTransformOps.h.inc"

#endif // PIPER_TRANSFORMOPS_PIPERTRANSFORMOPS_H
