//===- JSONPositions.h - Where each JSON directive starts -------*- C++ -*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// llvm::json keeps no source positions, so the translator finds them with a
// scan of its own: the generated transform ops carry the line and column of
// the JSON directive they came from, and a semantic error of a directive
// (reported by the transform op at run time) points into the user's file,
// not into the generated PLAN/strategy.mlir.
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_LIB_DIRECTIVES_JSONPOSITIONS_H
#define PIPER_LIB_DIRECTIVES_JSONPOSITIONS_H

#include "llvm/ADT/StringRef.h"

#include <vector>

namespace mlir::piper {

/// A 1-based line and column (in bytes) of a JSON text.
struct JSONPosition {
  unsigned line = 0;
  unsigned column = 0;
};

/// Where each element of the directive list starts: the top-level array, or
/// the array under the top-level object's "directives" key. Scans
/// iteratively (no recursion, whatever the nesting) and expects text that
/// json::parse accepted.
std::vector<JSONPosition> findDirectivePositions(llvm::StringRef json);

} // namespace mlir::piper

#endif // PIPER_LIB_DIRECTIVES_JSONPOSITIONS_H
