//===- PiperDialect.h - Piper dialect ---------------------------*- C++ -*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_DIALECT_PIPER_IR_PIPERDIALECT_H
#define PIPER_DIALECT_PIPER_IR_PIPERDIALECT_H

#include "mlir/IR/Dialect.h"

#include "piper/Dialect/Piper/IR/PiperDialect.h.inc"

#endif // PIPER_DIALECT_PIPER_IR_PIPERDIALECT_H
