//===- PiperOptimizerOps.cpp - Piper optimizer updates --------------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "piper/Dialect/Piper/IR/PiperOps.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"

#include <limits>

using namespace mlir;
using namespace mlir::piper;

namespace {
/// One hyper-parameter and the half-open or closed range it must lie in.
struct Bound {
  StringRef name;
  double value;
  double low;
  bool lowInclusive;
  double high; // +inf when unbounded
};
} // namespace

/// `%g`: hyper-parameters read as written (0.1, 1e-08), not 1.000000e-01.
static std::string formatNumber(double value) {
  return llvm::formatv("{0}", llvm::format("%g", value)).str();
}

static LogicalResult verifyBounds(Operation *op, ArrayRef<Bound> bounds) {
  for (const Bound &b : bounds) {
    bool aboveLow = b.lowInclusive ? b.value >= b.low : b.value > b.low;
    if (aboveLow && b.value < b.high)
      continue;
    InFlightDiagnostic diag = op->emitOpError()
                              << b.name << " = " << formatNumber(b.value)
                              << " must be " << (b.lowInclusive ? ">= " : "> ")
                              << formatNumber(b.low);
    if (b.high != std::numeric_limits<double>::infinity())
      diag << " and < " << formatNumber(b.high);
    return diag;
  }
  return success();
}

LogicalResult SgdUpdateOp::verify() {
  constexpr double inf = std::numeric_limits<double>::infinity();
  return verifyBounds(
      *this,
      {{"lr", getLr().convertToDouble(), 0, false, inf},
       {"momentum", getMomentum().convertToDouble(), 0, true, 1},
       {"weight_decay", getWeightDecay().convertToDouble(), 0, true, inf}});
}

LogicalResult AdamWUpdateOp::verify() {
  constexpr double inf = std::numeric_limits<double>::infinity();
  return verifyBounds(
      *this,
      {{"lr", getLr().convertToDouble(), 0, false, inf},
       {"beta1", getBeta1().convertToDouble(), 0, true, 1},
       {"beta2", getBeta2().convertToDouble(), 0, true, 1},
       {"eps", getEps().convertToDouble(), 0, false, inf},
       {"weight_decay", getWeightDecay().convertToDouble(), 0, true, inf}});
}
