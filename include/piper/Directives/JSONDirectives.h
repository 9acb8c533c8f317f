//===- JSONDirectives.h - Piper's JSON directive lists ----------*- C++ -*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Piper publishes strategies as JSON lists of directives (place, replicate,
// shard, split, order objects with tag filters). This reads such a list
// and writes the equivalent Transform-dialect script of `transform.piper.*`
// ops, so strategies written for Piper run here unchanged and every check
// of the transform ops applies to them. No MLIR is needed to translate.
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_DIRECTIVES_JSONDIRECTIVES_H
#define PIPER_DIRECTIVES_JSONDIRECTIVES_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>

namespace mlir::piper {

/// Translates the JSON text `json` (from `sourceName`, for messages) into
/// a transform module whose `@__transform_main` applies the directives in
/// order. Errors name the directive by its JSON path
/// (`directives[2].place.devices.pp`) and say what was expected.
llvm::Expected<std::string> translateJSONDirectives(llvm::StringRef json,
                                                    llvm::StringRef sourceName);

} // namespace mlir::piper

#endif // PIPER_DIRECTIVES_JSONDIRECTIVES_H
