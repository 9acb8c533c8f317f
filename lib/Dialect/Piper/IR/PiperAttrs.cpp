//===- PiperAttrs.cpp - Piper attributes ----------------------------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "piper/Dialect/Piper/IR/PiperAttrs.h"
#include "piper/Dialect/Piper/IR/PiperDialect.h"
#include "piper/Dialect/Piper/IR/PiperOps.h"

#include "piper/Limits.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

using namespace mlir;
using namespace mlir::piper;

#include "piper/Dialect/Piper/IR/PiperEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "piper/Dialect/Piper/IR/PiperAttrs.cpp.inc"

/// The shortest decimal that reads back as the same double (`50`, `0.1`,
/// `1.0e-05`) instead of the default `5.000000e+01` or 17 digits.
static std::string formatLinkNumber(double value) {
  char buffer[32];
  // Whole numbers (bandwidths such as 450) read best without an exponent.
  if (value == std::floor(value) && std::fabs(value) < 1e15) {
    snprintf(buffer, sizeof(buffer), "%.0f", value);
    return buffer;
  }
  for (int precision = 1; precision <= 17; ++precision) {
    snprintf(buffer, sizeof(buffer), "%.*g", precision, value);
    if (strtod(buffer, nullptr) == value)
      break;
  }
  std::string text(buffer);
  // MLIR's lexer reads `1e-05` as an integer followed by junk.
  size_t exponent = text.find('e');
  if (exponent != std::string::npos && text.find('.') == std::string::npos)
    text.insert(exponent, ".0");
  return text;
}

/// Parses a number written as an integer (`50`) or a float (`0.5`): these
/// are measurements and hyper-parameters, not typed constants.
static ParseResult parseNumber(AsmParser &parser, StringRef what,
                               double &value) {
  SMLoc loc = parser.getCurrentLocation();
  Attribute number;
  if (parser.parseAttribute(number))
    return failure();
  if (auto integer = dyn_cast<IntegerAttr>(number))
    value = double(integer.getInt());
  else if (auto real = dyn_cast<FloatAttr>(number))
    value = real.getValueAsDouble();
  else
    return parser.emitError(loc) << what << " must be a number";
  return success();
}

void PiperDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "piper/Dialect/Piper/IR/PiperAttrs.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// MeshAxisAttr
//===----------------------------------------------------------------------===//

MeshAxisAttr MeshAxisAttr::parseBody(AsmParser &parser) {
  MLIRContext *ctx = parser.getContext();
  SMLoc loc = parser.getCurrentLocation();
  std::string name;
  int64_t size = 0;
  if (parser.parseKeywordOrString(&name) || parser.parseEqual() ||
      parser.parseInteger(size))
    return {};

  std::optional<LinkClass> link;
  FloatAttr bandwidth, latency;
  if (succeeded(parser.parseOptionalColon())) {
    SMLoc linkLoc = parser.getCurrentLocation();
    StringRef keyword;
    if (parser.parseKeyword(&keyword))
      return {};
    link = symbolizeLinkClass(keyword);
    if (!link) {
      parser.emitError(linkLoc)
          << "unknown link class '" << keyword
          << "'; expected nvlink, pcie, infiniband, roce, efa or ethernet";
      return {};
    }
    if (succeeded(parser.parseOptionalLParen())) {
      if (succeeded(parser.parseOptionalRParen())) {
        parser.emitError(parser.getCurrentLocation())
            << "empty link property list; give bandwidth and/or latency or "
               "drop the parentheses";
        return {};
      }
      auto parseField = [&]() -> ParseResult {
        SMLoc fieldLoc = parser.getCurrentLocation();
        StringRef field;
        double value = 0;
        if (parser.parseKeyword(&field) || parser.parseEqual() ||
            parseNumber(parser, ("link property '" + field + "'").str(), value))
          return failure();
        FloatAttr *slot = field == "bandwidth" ? &bandwidth
                          : field == "latency" ? &latency
                                               : nullptr;
        if (!slot)
          return parser.emitError(fieldLoc)
                 << "unknown link property '" << field
                 << "'; expected bandwidth or latency";
        if (*slot)
          return parser.emitError(fieldLoc)
                 << "link property '" << field << "' given twice";
        *slot = FloatAttr::get(Float64Type::get(ctx), value);
        return success();
      };
      if (parser.parseCommaSeparatedList(parseField) || parser.parseRParen())
        return {};
    }
  }
  return parser.getChecked<MeshAxisAttr>(loc, ctx, StringAttr::get(ctx, name),
                                         size, link, bandwidth, latency);
}

static void printLinkNumber(AsmPrinter &printer, FloatAttr value) {
  printer << formatLinkNumber(value.getValueAsDouble());
}

void MeshAxisAttr::printBody(AsmPrinter &printer) const {
  printer.printKeywordOrString(getName().getValue());
  printer << " = " << getSize();
  if (!getLink())
    return;
  printer << " : " << stringifyLinkClass(*getLink());
  if (!getBandwidth() && !getLatency())
    return;
  printer << "(";
  if (getBandwidth()) {
    printer << "bandwidth = ";
    printLinkNumber(printer, getBandwidth());
  }
  if (getLatency()) {
    if (getBandwidth())
      printer << ", ";
    printer << "latency = ";
    printLinkNumber(printer, getLatency());
  }
  printer << ")";
}

Attribute MeshAxisAttr::parse(AsmParser &parser, Type) {
  if (parser.parseLess())
    return {};
  MeshAxisAttr axis = parseBody(parser);
  if (!axis || parser.parseGreater())
    return {};
  return axis;
}

void MeshAxisAttr::print(AsmPrinter &printer) const {
  printer << "<";
  printBody(printer);
  printer << ">";
}

LogicalResult MeshAxisAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                   StringAttr name, int64_t size,
                                   std::optional<LinkClass> link,
                                   FloatAttr bandwidth, FloatAttr latency) {
  if (!name || name.getValue().empty())
    return emitError() << "mesh axis needs a non-empty name";
  if (size < 1)
    return emitError() << "mesh axis '" << name.getValue() << "' has size "
                       << size << "; sizes must be >= 1";
  if (size > kMaxMeshDevices)
    return emitError() << "mesh axis '" << name.getValue() << "' has size "
                       << size << "; sizes must be <= " << kMaxMeshDevices;
  if ((bandwidth || latency) && !link)
    return emitError() << "mesh axis '" << name.getValue()
                       << "' gives link properties without a link class";
  for (auto [field, value] : {std::make_pair("bandwidth", bandwidth),
                              std::make_pair("latency", latency)}) {
    if (value && !(value.getValueAsDouble() > 0))
      return emitError() << "mesh axis '" << name.getValue() << "' has "
                         << field << " "
                         << formatLinkNumber(value.getValueAsDouble())
                         << "; it must be > 0";
  }
  return success();
}

//===----------------------------------------------------------------------===//
// PlacementAttr
//===----------------------------------------------------------------------===//

/// Parses `{axis, axis, ...}` into an array of string attributes.
static ParseResult parseAxisSet(AsmParser &parser, ArrayAttr &result) {
  SmallVector<Attribute> axes;
  if (parser.parseCommaSeparatedList(
          AsmParser::Delimiter::Braces, [&]() -> ParseResult {
            std::string axis;
            if (parser.parseKeywordOrString(&axis))
              return failure();
            axes.push_back(StringAttr::get(parser.getContext(), axis));
            return success();
          }))
    return failure();
  result = ArrayAttr::get(parser.getContext(), axes);
  return success();
}

static void printAxisSet(AsmPrinter &printer, ArrayAttr axes) {
  printer << "{";
  llvm::interleaveComma(
      axes.getAsRange<StringAttr>(), printer,
      [&](StringAttr axis) { printer.printKeywordOrString(axis.getValue()); });
  printer << "}";
}

Attribute PlacementAttr::parse(AsmParser &parser, Type) {
  MLIRContext *ctx = parser.getContext();
  SMLoc loc = parser.getCurrentLocation();
  FlatSymbolRefAttr mesh;
  SmallVector<ArrayAttr> dims;
  if (parser.parseLess() || parser.parseAttribute(mesh) || parser.parseComma())
    return {};
  if (parser.parseCommaSeparatedList(
          AsmParser::Delimiter::Square, [&]() -> ParseResult {
            return parseAxisSet(parser, dims.emplace_back());
          }))
    return {};

  ArrayAttr replicated;
  std::optional<int64_t> zero;
  while (succeeded(parser.parseOptionalComma())) {
    SMLoc keyLoc = parser.getCurrentLocation();
    StringRef key;
    if (parser.parseKeyword(&key) || parser.parseEqual())
      return {};
    if (key == "replicated" && !replicated) {
      if (parseAxisSet(parser, replicated))
        return {};
    } else if (key == "zero" && !zero) {
      int64_t stage;
      if (parser.parseInteger(stage))
        return {};
      zero = stage;
    } else {
      if (key == "replicated" || key == "zero")
        parser.emitError(keyLoc)
            << "placement field '" << key << "' given twice";
      else
        parser.emitError(keyLoc) << "unknown placement field '" << key
                                 << "'; expected replicated or zero";
      return {};
    }
  }
  if (parser.parseGreater())
    return {};
  if (!replicated)
    replicated = ArrayAttr::get(ctx, {});
  if (zero && (*zero < 0 || *zero > 3)) {
    parser.emitError(loc) << "ZeRO stage must be 0, 1, 2 or 3, got " << *zero;
    return {};
  }
  return parser.getChecked<PlacementAttr>(loc, ctx, mesh, dims, replicated,
                                          unsigned(zero.value_or(0)));
}

void PlacementAttr::print(AsmPrinter &printer) const {
  printer << "<";
  printer.printAttribute(getMesh());
  printer << ", [";
  llvm::interleaveComma(getDims(), printer,
                        [&](ArrayAttr axes) { printAxisSet(printer, axes); });
  printer << "]";
  if (!getReplicated().empty()) {
    printer << ", replicated = ";
    printAxisSet(printer, getReplicated());
  }
  if (getZero() != 0)
    printer << ", zero = " << getZero();
  printer << ">";
}

LogicalResult
PlacementAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                      FlatSymbolRefAttr mesh, ArrayRef<ArrayAttr> dims,
                      ArrayAttr replicated, unsigned zero) {
  if (!mesh)
    return emitError() << "placement needs a mesh symbol";
  llvm::StringSet<> seen;
  auto checkAxes = [&](ArrayAttr axes) -> LogicalResult {
    for (Attribute axis : axes) {
      auto name = dyn_cast<StringAttr>(axis);
      if (!name)
        return emitError() << "placement axes must be strings, got " << axis;
      if (!seen.insert(name.getValue()).second)
        return emitError() << "mesh axis '" << name.getValue()
                           << "' is used more than once in the placement";
    }
    return success();
  };
  for (ArrayAttr axes : dims)
    if (failed(checkAxes(axes)))
      return failure();
  if (failed(checkAxes(replicated)))
    return failure();
  if (zero > 3)
    return emitError() << "ZeRO stage must be 0, 1, 2 or 3, got " << zero;
  if (zero != 0 && replicated.empty())
    return emitError() << "ZeRO stage " << zero
                       << " shards over the replicated axes, but the "
                          "placement lists none";
  return success();
}

LogicalResult
PlacementAttr::verifyFor(Type type, Operation *symbolContext,
                         function_ref<InFlightDiagnostic()> emitError) const {
  Operation *symbol = lookupSymbolOutward(symbolContext, getMesh());
  if (!symbol)
    return emitError() << "unknown mesh " << getMesh();
  auto mesh = dyn_cast<MeshOp>(symbol);
  if (!mesh)
    return emitError() << getMesh() << " is a '" << symbol->getName()
                       << "', not a piper.mesh";
  auto tensorType = dyn_cast<RankedTensorType>(type);
  if (!tensorType)
    return emitError() << "a placement needs a ranked tensor, got " << type;
  if (int64_t(getDims().size()) != tensorType.getRank())
    return emitError() << "placement lists " << getDims().size() << " dims but "
                       << type << " has rank " << tensorType.getRank();

  auto checkAxis = [&](StringAttr name) -> MeshAxisAttr {
    MeshAxisAttr axis = mesh.getAxis(name.getValue());
    if (!axis)
      emitError() << "mesh " << getMesh() << " has no axis '" << name.getValue()
                  << "' (axes: " << mesh.getAxisNamesForDiagnostic() << ")";
    return axis;
  };
  for (StringAttr name : getReplicated().getAsRange<StringAttr>())
    if (!checkAxis(name))
      return failure();
  for (auto [dim, axes] : llvm::enumerate(getDims())) {
    int64_t product = 1;
    for (StringAttr name : axes.getAsRange<StringAttr>()) {
      MeshAxisAttr axis = checkAxis(name);
      if (!axis)
        return failure();
      product *= axis.getSize();
    }
    int64_t dimSize = tensorType.getDimSize(dim);
    if (ShapedType::isDynamic(dimSize) || dimSize % product == 0)
      continue;
    InFlightDiagnostic diag = emitError();
    if (axes.size() == 1) {
      diag << "axis '" << cast<StringAttr>(axes[0]).getValue() << "' of "
           << getMesh() << " has size " << product;
    } else {
      diag << "axes ";
      llvm::interleaveComma(
          axes.getAsRange<StringAttr>(), diag,
          [&](StringAttr a) { diag << "'" << a.getValue() << "'"; });
      diag << " of " << getMesh() << " have a combined size of " << product;
    }
    return diag << "; dim " << dim << " (size " << dimSize
                << ") is not divisible by it";
  }
  return success();
}

SmallVector<int64_t> PlacementAttr::getLocalShape(ArrayRef<int64_t> globalShape,
                                                  MeshOp mesh) const {
  SmallVector<int64_t> local(globalShape);
  for (auto [dim, axes] : llvm::enumerate(getDims())) {
    if (ShapedType::isDynamic(local[dim]))
      continue;
    for (StringAttr name : axes.getAsRange<StringAttr>())
      local[dim] /= mesh.getAxis(name.getValue()).getSize();
  }
  return local;
}

SmallVector<StringAttr> PlacementAttr::getSplitAxes() const {
  SmallVector<StringAttr> axes;
  for (ArrayAttr dimAxes : getDims())
    llvm::append_range(axes, dimAxes.getAsRange<StringAttr>());
  return axes;
}

//===----------------------------------------------------------------------===//
// ParamAttr
//===----------------------------------------------------------------------===//

Attribute ParamAttr::parse(AsmParser &parser, Type) {
  MLIRContext *ctx = parser.getContext();
  SMLoc loc = parser.getCurrentLocation();
  std::string name;
  StringRef initKeyword;
  if (parser.parseLess() || parser.parseString(&name) || parser.parseComma())
    return {};
  SMLoc initLoc = parser.getCurrentLocation();
  if (parser.parseKeyword(&initKeyword))
    return {};
  std::optional<InitKind> init = symbolizeInitKind(initKeyword);
  if (!init) {
    parser.emitError(initLoc) << "unknown initialiser '" << initKeyword
                              << "'; expected normal(std), zeros or ones";
    return {};
  }
  FloatAttr stddev;
  if (succeeded(parser.parseOptionalLParen())) {
    double value = 0;
    if (parseNumber(parser, "standard deviation", value) ||
        parser.parseRParen())
      return {};
    stddev = FloatAttr::get(Float64Type::get(ctx), value);
  }
  PlacementAttr placement;
  if (succeeded(parser.parseOptionalComma())) {
    if (parser.parseKeyword("placement") || parser.parseEqual() ||
        parser.parseAttribute(placement))
      return {};
  }
  if (parser.parseGreater())
    return {};
  return parser.getChecked<ParamAttr>(loc, ctx, StringAttr::get(ctx, name),
                                      *init, stddev, placement);
}

void ParamAttr::print(AsmPrinter &printer) const {
  printer << "<\"";
  llvm::printEscapedString(getName().getValue(), printer.getStream());
  printer << "\", " << stringifyInitKind(getInit());
  if (getStd())
    printer << "(" << formatLinkNumber(getStd().getValueAsDouble()) << ")";
  if (getPlacement()) {
    printer << ", placement = ";
    printer.printAttribute(getPlacement());
  }
  printer << ">";
}

LogicalResult ParamAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                StringAttr name, InitKind init,
                                FloatAttr stddev, PlacementAttr placement) {
  if (!name || name.getValue().empty())
    return emitError() << "parameter needs a non-empty name";
  if (init == InitKind::Normal) {
    if (!stddev)
      return emitError() << "parameter '" << name.getValue()
                         << "': normal initialisation needs a standard "
                            "deviation, e.g. normal(0.02)";
    if (!(stddev.getValueAsDouble() > 0))
      return emitError() << "parameter '" << name.getValue()
                         << "': standard deviation must be > 0, got "
                         << formatLinkNumber(stddev.getValueAsDouble());
  } else if (stddev) {
    return emitError() << "parameter '" << name.getValue()
                       << "': " << stringifyInitKind(init)
                       << " initialisation takes no argument";
  }
  return success();
}

//===----------------------------------------------------------------------===//
// OptStateAttr
//===----------------------------------------------------------------------===//

LogicalResult OptStateAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                   StringAttr param, StringAttr slot) {
  if (!llvm::is_contained({"momentum_buffer", "exp_avg", "exp_avg_sq", "step"},
                          slot.getValue()))
    return emitError() << "unknown optimizer state slot '" << slot.getValue()
                       << "'; expected momentum_buffer, exp_avg, exp_avg_sq "
                          "or step";
  return success();
}
