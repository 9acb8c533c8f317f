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

/// Verifies `piper.placement` attached to the value of type `type` that `op`
/// defines as argument or result `index` ("argument"/"result" in `what`).
static LogicalResult verifyPlacementAttribute(Operation *op, StringRef what,
                                              unsigned index, Type type,
                                              NamedAttribute attr) {
  auto placement = dyn_cast<PlacementAttr>(attr.getValue());
  if (!placement)
    return op->emitError() << "'" << attr.getName().getValue() << "' on "
                           << what << " #" << index
                           << " must be a #piper.placement, got "
                           << attr.getValue();
  auto emitError = [&]() {
    return op->emitError() << what << " #" << index << " placement: ";
  };
  if (placement.getZero() != 0)
    return emitError() << "ZeRO stage " << placement.getZero()
                       << " describes parameters; put the placement inside "
                          "#piper.param";
  return placement.verifyFor(type, op, emitError);
}

/// Verifies `piper.param` on argument `index` of the function `fn`.
static LogicalResult verifyParamAttribute(FunctionOpInterface fn,
                                          unsigned index, NamedAttribute attr) {
  auto param = dyn_cast<ParamAttr>(attr.getValue());
  if (!param)
    return fn->emitError() << "'piper.param' on argument #" << index
                           << " must be a #piper.param, got "
                           << attr.getValue();
  StringRef name = param.getName().getValue();
  auto emitError = [&]() {
    return fn->emitError() << "parameter '" << name << "' (argument #" << index
                           << "): ";
  };
  Type type = fn.getArgumentTypes()[index];
  auto tensorType = dyn_cast<RankedTensorType>(type);
  if (!tensorType || !isa<FloatType>(tensorType.getElementType()))
    return emitError() << "parameters are ranked float tensors, got " << type;
  if (fn.getArgAttr(index, PiperDialect::getPlacementAttrName()))
    return emitError() << "has a separate piper.placement; put it inside "
                          "#piper.param as `placement = ...`";
  // Names identify parameters across strategies (initialisation,
  // checkpoints), so they must be unique within the model.
  // Report the later of two clashing arguments, pointing at the first.
  for (unsigned other = 0; other < index; ++other) {
    auto otherParam =
        fn.getArgAttrOfType<ParamAttr>(other, PiperDialect::getParamAttrName());
    if (otherParam && otherParam.getName() == param.getName())
      return emitError() << "name is also used by argument #" << other;
  }
  if (PlacementAttr placement = param.getPlacement())
    return placement.verifyFor(type, fn, emitError);
  return success();
}

/// The type of the `piper.param` argument of `fn` named `name`, or null.
static Type getParamType(FunctionOpInterface fn, StringAttr name) {
  for (unsigned arg = 0, e = fn.getNumArguments(); arg < e; ++arg) {
    auto param =
        fn.getArgAttrOfType<ParamAttr>(arg, PiperDialect::getParamAttrName());
    if (param && param.getName() == name)
      return fn.getArgumentTypes()[arg];
  }
  return {};
}

/// Verifies `piper.grad` or `piper.updated` (`role`: "gradient", "update")
/// on result `index` of `fn`: it names a parameter of the function whose
/// type is the result's type.
static LogicalResult verifyParamResultAttribute(FunctionOpInterface fn,
                                                unsigned index,
                                                NamedAttribute attr,
                                                StringRef role) {
  auto name = dyn_cast<StringAttr>(attr.getValue());
  if (!name)
    return fn->emitError() << "'" << attr.getName().getValue()
                           << "' on result #" << index
                           << " must name a parameter, got " << attr.getValue();
  Type paramType = getParamType(fn, name);
  if (!paramType)
    return fn->emitError() << "result #" << index << " is the " << role
                           << " of '" << name.getValue()
                           << "', which is not a parameter of the function";
  if (paramType != fn.getResultTypes()[index])
    return fn->emitError() << "result #" << index << " is the " << role
                           << " of parameter '" << name.getValue()
                           << "' of type " << paramType << " but has type "
                           << fn.getResultTypes()[index];
  return success();
}

/// Verifies `piper.state` on a value of type `type`.
static LogicalResult verifyStateAttribute(FunctionOpInterface fn,
                                          StringRef what, unsigned index,
                                          Type type, NamedAttribute attr) {
  auto state = dyn_cast<OptStateAttr>(attr.getValue());
  if (!state)
    return fn->emitError() << "'piper.state' on " << what << " #" << index
                           << " must be a #piper.state, got "
                           << attr.getValue();
  Type paramType = getParamType(fn, state.getParam());
  if (!paramType)
    return fn->emitError() << what << " #" << index
                           << " is optimizer state of '"
                           << state.getParam().getValue()
                           << "', which is not a parameter of the function";
  Type expected = paramType;
  if (state.getSlot().getValue() == "step")
    expected = RankedTensorType::get({}, IntegerType::get(fn.getContext(), 64));
  if (type != expected)
    return fn->emitError() << what << " #" << index << " is the "
                           << state.getSlot().getValue() << " of '"
                           << state.getParam().getValue() << "' and must be "
                           << expected << ", got " << type;
  return success();
}

/// Verifies a `piper.*` attribute on argument or result `index` of `op`.
static LogicalResult verifyValueAttribute(Operation *op, StringRef what,
                                          unsigned index, Type type,
                                          NamedAttribute attr) {
  if (attr.getName() == PiperDialect::getPlacementAttrName())
    return verifyPlacementAttribute(op, what, index, type, attr);
  auto fn = dyn_cast<FunctionOpInterface>(op);
  if (attr.getName() == PiperDialect::getParamAttrName() && fn &&
      what == "argument")
    return verifyParamAttribute(fn, index, attr);
  if (attr.getName() == PiperDialect::getGradAttrName() && fn &&
      what == "result")
    return verifyParamResultAttribute(fn, index, attr, "gradient");
  if (attr.getName() == PiperDialect::getUpdatedAttrName() && fn &&
      what == "result")
    return verifyParamResultAttribute(fn, index, attr, "update");
  if (attr.getName() == PiperDialect::getStateAttrName() && fn)
    return verifyStateAttribute(fn, what, index, type, attr);
  return op->emitError() << "unknown piper " << what << " attribute '"
                         << attr.getName().getValue() << "'";
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

LogicalResult PiperDialect::verifyOperationAttribute(Operation *op,
                                                     NamedAttribute attr) {
  if (attr.getName() == getPassAttrName()) {
    if (!isa<PassKindAttr>(attr.getValue()))
      return op->emitError() << "'piper.pass' must be a pass kind such as "
                                "#piper<pass BW>, got "
                             << attr.getValue();
    return success();
  }
  // Arguments and results are verified by the region hooks above; anything
  // else with the piper prefix on an op is a typo.
  if (attr.getName() == getPlacementAttrName() ||
      attr.getName() == getParamAttrName() ||
      attr.getName() == getGradAttrName() ||
      attr.getName() == getUpdatedAttrName() ||
      attr.getName() == getStateAttrName())
    return op->emitError() << "'" << attr.getName().getValue()
                           << "' belongs on function arguments or results";
  return op->emitError() << "unknown piper operation attribute '"
                         << attr.getName().getValue() << "'";
}
