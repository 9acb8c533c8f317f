//===- PiperDialect.cpp - Piper dialect -----------------------------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "piper/Dialect/Piper/IR/PiperDialect.h"
#include "piper/Dialect/Piper/IR/PiperOps.h"

#include "mlir/IR/DialectImplementation.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::piper;

#include "piper/Dialect/Piper/IR/PiperDialect.cpp.inc"

void PiperDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "piper/Dialect/Piper/IR/PiperOps.cpp.inc"
      >();
  registerAttributes();
}

/// Verifies a `piper.*` attribute attached to the value of type `type` that
/// `op` defines as argument or result `index`. `what` is "argument" or
/// "result", used in diagnostics.
static LogicalResult verifyValueAttribute(Operation *op, StringRef what,
                                          unsigned index, Type type,
                                          NamedAttribute attr) {
  auto emitError = [&]() {
    return op->emitError() << what << " #" << index << " placement: ";
  };
  if (attr.getName() != PiperDialect::getPlacementAttrName())
    return op->emitError() << "unknown piper " << what << " attribute '"
                           << attr.getName().getValue() << "'";
  auto placement = dyn_cast<PlacementAttr>(attr.getValue());
  if (!placement)
    return op->emitError() << "'" << attr.getName().getValue()
                           << "' on " << what << " #" << index
                           << " must be a #piper.placement, got "
                           << attr.getValue();
  return placement.verifyFor(type, op, emitError);
}

LogicalResult PiperDialect::verifyRegionArgAttribute(Operation *op,
                                                     unsigned regionIndex,
                                                     unsigned argIndex,
                                                     NamedAttribute attr) {
  Type type;
  if (auto fn = dyn_cast<FunctionOpInterface>(op))
    type = fn.getArgumentTypes()[argIndex];
  else
    type = op->getRegion(regionIndex).getArgument(argIndex).getType();
  return verifyValueAttribute(op, "argument", argIndex, type, attr);
}

LogicalResult PiperDialect::verifyRegionResultAttribute(Operation *op,
                                                        unsigned regionIndex,
                                                        unsigned resultIndex,
                                                        NamedAttribute attr) {
  auto fn = dyn_cast<FunctionOpInterface>(op);
  if (!fn)
    return op->emitError() << "piper result attributes are only valid on "
                              "function-like operations";
  return verifyValueAttribute(op, "result", resultIndex,
                              fn.getResultTypes()[resultIndex], attr);
}
