//===- PiperAttrs.h - Piper attributes --------------------------*- C++ -*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_DIALECT_PIPER_IR_PIPERATTRS_H
#define PIPER_DIALECT_PIPER_IR_PIPERATTRS_H

#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/OpImplementation.h"

#include "piper/Dialect/Piper/IR/PiperEnums.h.inc"

namespace mlir::piper {
class MeshOp;
} // namespace mlir::piper

#define GET_ATTRDEF_CLASSES
#include "piper/Dialect/Piper/IR/PiperAttrs.h.inc"

#endif // PIPER_DIALECT_PIPER_IR_PIPERATTRS_H
