//===- PiperOps.cpp - Piper operations ------------------------------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "piper/Dialect/Piper/IR/PiperOps.h"

#include "piper/Limits.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"

using namespace mlir;
using namespace mlir::piper;

Operation *mlir::piper::lookupSymbolOutward(Operation *from,
                                            FlatSymbolRefAttr ref) {
  if (!from || !ref)
    return nullptr;
  // A mesh declared in an outer module serves every nested module.
  for (Operation *table = SymbolTable::getNearestSymbolTable(from); table;
       table = table->getParentOp()
                   ? SymbolTable::getNearestSymbolTable(table->getParentOp())
                   : nullptr)
    if (Operation *symbol = SymbolTable::lookupSymbolIn(table, ref.getAttr()))
      return symbol;
  return nullptr;
}

MeshOp mlir::piper::lookupMesh(Operation *from, FlatSymbolRefAttr ref) {
  return dyn_cast_or_null<MeshOp>(lookupSymbolOutward(from, ref));
}

//===----------------------------------------------------------------------===//
// MeshOp
//===----------------------------------------------------------------------===//

static ParseResult parseMeshAxes(OpAsmParser &parser, ArrayAttr &axes) {
  SmallVector<Attribute> list;
  if (parser.parseCommaSeparatedList(
          OpAsmParser::Delimiter::Square, [&]() -> ParseResult {
            MeshAxisAttr axis = MeshAxisAttr::parseBody(parser);
            if (!axis)
              return failure();
            list.push_back(axis);
            return success();
          }))
    return failure();
  axes = parser.getBuilder().getArrayAttr(list);
  return success();
}

static void printMeshAxes(OpAsmPrinter &printer, MeshOp, ArrayAttr axes) {
  printer << "[";
  llvm::interleaveComma(axes.getAsRange<MeshAxisAttr>(), printer,
                        [&](MeshAxisAttr axis) { axis.printBody(printer); });
  printer << "]";
}

LogicalResult MeshOp::verify() {
  if (getAxes().empty())
    return emitOpError() << "mesh @" << getSymName()
                         << " needs at least one axis";
  llvm::StringSet<> names;
  for (MeshAxisAttr axis : getAxes().getAsRange<MeshAxisAttr>())
    if (!names.insert(axis.getName().getValue()).second)
      return emitOpError() << "duplicate axis name '"
                           << axis.getName().getValue() << "' in mesh @"
                           << getSymName();
  // Each axis is at most kMaxMeshDevices, so the running product cannot
  // overflow before it is compared.
  int64_t devices = 1;
  for (MeshAxisAttr axis : getAxes().getAsRange<MeshAxisAttr>()) {
    devices *= axis.getSize();
    if (devices > kMaxMeshDevices)
      return emitOpError() << "mesh @" << getSymName() << " has more than "
                           << kMaxMeshDevices
                           << " devices (the product of its axis sizes)";
  }
  return success();
}

MeshAxisAttr MeshOp::getAxis(StringRef name) {
  for (MeshAxisAttr axis : getAxes().getAsRange<MeshAxisAttr>())
    if (axis.getName().getValue() == name)
      return axis;
  return {};
}

int64_t MeshOp::getNumDevices() {
  int64_t n = 1;
  for (MeshAxisAttr axis : getAxes().getAsRange<MeshAxisAttr>())
    n *= axis.getSize();
  return n;
}

std::string MeshOp::getAxisNamesForDiagnostic() {
  std::string names;
  llvm::raw_string_ostream os(names);
  llvm::interleaveComma(
      getAxes().getAsRange<MeshAxisAttr>(), os,
      [&](MeshAxisAttr axis) { os << axis.getName().getValue(); });
  return names;
}

//===----------------------------------------------------------------------===//
// AnnotateOp
//===----------------------------------------------------------------------===//

/// Tags are written `{PP = 0, KIND = "attn"}`: integers print without their
/// (i64) type so that the common case reads like Piper's Python API.
static ParseResult parseTags(OpAsmParser &parser, DictionaryAttr &tags) {
  NamedAttrList list;
  llvm::StringSet<> seen;
  if (parser.parseCommaSeparatedList(
          OpAsmParser::Delimiter::Braces, [&]() -> ParseResult {
            SMLoc loc = parser.getCurrentLocation();
            std::string name;
            Attribute value;
            if (parser.parseKeywordOrString(&name) || parser.parseEqual() ||
                parser.parseAttribute(value))
              return failure();
            if (!seen.insert(name).second)
              return parser.emitError(loc) << "duplicate tag '" << name << "'";
            list.append(name, value);
            return success();
          }))
    return failure();
  tags = list.getDictionary(parser.getContext());
  return success();
}

static void printTags(OpAsmPrinter &printer, AnnotateOp, DictionaryAttr tags) {
  printer << "{";
  llvm::interleaveComma(tags, printer, [&](NamedAttribute tag) {
    printer.printKeywordOrString(tag.getName().getValue());
    printer << " = ";
    auto integer = dyn_cast<IntegerAttr>(tag.getValue());
    if (integer && integer.getType().isSignlessInteger(64))
      printer << integer.getInt();
    else
      printer.printAttribute(tag.getValue());
  });
  printer << "}";
}

/// Tag names are upper-case identifiers, like the `PP`/`EP` of Piper.
static bool isWellFormedTagName(StringRef name) {
  if (name.empty() || !llvm::isUpper(name.front()))
    return false;
  return llvm::all_of(name, [](char c) {
    return llvm::isUpper(c) || llvm::isDigit(c) || c == '_';
  });
}

LogicalResult AnnotateOp::verify() {
  if (getTags().empty())
    return emitOpError() << "needs at least one tag";
  for (NamedAttribute tag : getTags()) {
    StringRef name = tag.getName().getValue();
    if (!isWellFormedTagName(name))
      return emitOpError() << "malformed tag name '" << name
                           << "': tag names are upper-case identifiers such "
                              "as PP or EP";
    if (name == "PASS")
      return emitOpError() << "tag 'PASS' is reserved: the DAG builder "
                              "assigns passes (F, B, BI, BW, UPD)";
    if (name == "MB")
      return emitOpError() << "tag 'MB' is reserved: split assigns "
                              "microbatch numbers";
    if (auto string = dyn_cast<StringAttr>(tag.getValue());
        string && string.getValue() == "*")
      return emitOpError() << "tag '" << name
                           << "' has the value \"*\", which filters use as "
                              "a wildcard";
    if (auto integer = dyn_cast<IntegerAttr>(tag.getValue())) {
      if (!integer.getType().isSignlessInteger() ||
          integer.getType().isInteger(1))
        return emitOpError() << "tag '" << name
                             << "' must be a non-negative integer or a "
                                "string, got "
                             << tag.getValue();
      if (integer.getValue().isNegative())
        return emitOpError()
               << "tag '" << name << "' must be non-negative, got "
               << integer.getInt();
    } else if (!isa<StringAttr>(tag.getValue())) {
      return emitOpError() << "tag '" << name
                           << "' must be a non-negative integer or a string, "
                              "got "
                           << tag.getValue();
    }
  }

  for (auto parent = (*this)->getParentOfType<AnnotateOp>(); parent;
       parent = parent->getParentOfType<AnnotateOp>()) {
    for (NamedAttribute tag : getTags()) {
      if (Attribute outer = parent.getTags().get(tag.getName())) {
        InFlightDiagnostic diag = emitOpError()
                                  << "tag '" << tag.getName().getValue()
                                  << "' is already set to ";
        auto integer = dyn_cast<IntegerAttr>(outer);
        if (integer)
          diag << integer.getInt();
        else
          diag << outer;
        diag.attachNote(parent.getLoc()) << "enclosing piper.annotate here";
        return diag << " by an enclosing piper.annotate";
      }
    }
  }

  // No pass means forward: `pass = F` and none are the same.
  PassKind pass = getPass().value_or(PassKind::F);
  if (auto parent = (*this)->getParentOfType<AnnotateOp>();
      parent && parent.getPass().value_or(PassKind::F) != pass) {
    auto name = [](PassKind kind) {
      return kind == PassKind::F ? StringRef("forward")
                                 : stringifyPassKind(kind);
    };
    return emitOpError() << "is a " << name(pass) << " chunk inside a "
                         << name(parent.getPass().value_or(PassKind::F))
                         << " chunk; nested chunks share their pass";
  }

  Block &body = getBody().front();
  auto yield = body.empty() ? YieldOp() : dyn_cast<YieldOp>(body.back());
  if (!yield)
    return emitOpError() << "region must end in piper.yield";
  if (yield.getOperandTypes() != getResultTypes()) {
    std::string yielded, results;
    llvm::raw_string_ostream yieldedOs(yielded), resultsOs(results);
    llvm::interleaveComma(yield.getOperandTypes(), yieldedOs);
    llvm::interleaveComma(getResultTypes(), resultsOs);
    return emitOpError() << "yields (" << yielded << ") but its results are ("
                         << results << ")";
  }
  return success();
}

SmallVector<NamedAttribute> AnnotateOp::getAllTags() {
  SmallVector<AnnotateOp> chain;
  for (AnnotateOp op = *this; op; op = op->getParentOfType<AnnotateOp>())
    chain.push_back(op);
  SmallVector<NamedAttribute> tags;
  for (AnnotateOp op : llvm::reverse(chain))
    llvm::append_range(tags, op.getTags().getValue());
  return tags;
}

//===----------------------------------------------------------------------===//
// VJPOp
//===----------------------------------------------------------------------===//

LogicalResult VJPOp::verify() {
  std::optional<RegisteredOperationName> forward =
      RegisteredOperationName::lookup(getOp(), getContext());
  if (!forward || forward->getDialectNamespace() != "piper")
    return emitOpError() << "'" << getOp()
                         << "' is not a registered piper operation";
  ArrayRef<int64_t> wrt = getWrt();
  if (wrt.empty())
    return emitOpError() << "needs at least one operand in 'wrt'";
  for (auto [i, index] : llvm::enumerate(wrt)) {
    if (index < 0 || index >= int64_t(getPrimals().size()))
      return emitOpError() << "wrt index " << index << " is out of range for "
                           << getPrimals().size() << " primals";
    if (i > 0 && index <= wrt[i - 1])
      return emitOpError() << "wrt indices must be strictly increasing";
  }
  if (getGradients().size() != wrt.size())
    return emitOpError() << "has " << getGradients().size() << " results for "
                         << wrt.size() << " wrt operands";
  for (auto [index, gradient] : llvm::zip(wrt, getGradients()))
    if (gradient.getType() != getPrimals()[index].getType())
      return emitOpError() << "gradient of primal " << index << " has type "
                           << gradient.getType() << ", expected "
                           << getPrimals()[index].getType();
  if (getCotangents().empty())
    return emitOpError() << "needs at least one cotangent";
  return success();
}

#include "piper/Dialect/Piper/IR/PiperInterfaces.cpp.inc"

const ElementwiseOpInterface::Concept *
ElementwiseOpInterface::lookupElementwise(StringRef name,
                                          MLIRContext *context) {
  std::optional<RegisteredOperationName> info =
      RegisteredOperationName::lookup(name, context);
  return info ? info->getInterface<ElementwiseOpInterface>() : nullptr;
}

#define GET_OP_CLASSES
#include "piper/Dialect/Piper/IR/PiperOps.cpp.inc"
