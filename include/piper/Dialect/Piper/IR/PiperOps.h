//===- PiperOps.h - Piper operations ----------------------------*- C++ -*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_DIALECT_PIPER_IR_PIPEROPS_H
#define PIPER_DIALECT_PIPER_IR_PIPEROPS_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/RegionKindInterface.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "piper/Dialect/Piper/IR/PiperAttrs.h"
#include "piper/Dialect/Piper/IR/PiperDialect.h"
#include "piper/Dialect/Piper/IR/PiperDistribution.h"

#include "piper/Dialect/Piper/IR/PiperInterfaces.h.inc"

#define GET_OP_CLASSES
#include "piper/Dialect/Piper/IR/PiperOps.h.inc"

namespace mlir::piper {
/// Finds the symbol `ref` in the symbol table enclosing `from`, then in each
/// enclosing symbol table outwards. Returns null if there is none.
Operation *lookupSymbolOutward(Operation *from, FlatSymbolRefAttr ref);

/// `{PP=1,EP=0}`: tags (or a device group, axis -> coordinate) as node
/// names, diagnostics and reports show them: integers and strings bare, in
/// the given order.
std::string formatTags(ArrayRef<NamedAttribute> tags);

/// `{pp=1,ep=0}`: a device group (axis -> coordinate), as formatTags.
std::string formatDeviceGroup(DictionaryAttr devices);

/// The unique name of a DAG node (task, transfer or collective), or "".
StringRef getNodeName(Operation *node);

/// Finds the `piper.mesh` named by `ref` as `lookupSymbolOutward` does.
/// Returns null if there is none or the symbol is not a mesh.
MeshOp lookupMesh(Operation *from, FlatSymbolRefAttr ref);
} // namespace mlir::piper

#endif // PIPER_DIALECT_PIPER_IR_PIPEROPS_H
