//===- ModelDirectives.h - Directives applied to the model -------*- C++
//-*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Most directives rewrite the training DAG (`@__transform_main`); a few, such
// as `transform.piper.balance`, re-cut the model before autodiff. A strategy
// script holds those in a second named sequence, `@__transform_model`, which
// this pass applies when the script has one.
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_COMPILE_MODELDIRECTIVES_H
#define PIPER_COMPILE_MODELDIRECTIVES_H

#include "mlir/Pass/Pass.h"

#include <memory>
#include <string>

namespace mlir::piper {

/// The named sequence of a strategy script applied to the model.
inline constexpr llvm::StringLiteral kModelSequenceName = "__transform_model";

/// A pass (`piper-model-directives{strategy=PATH}`) that parses the
/// transform script at `strategyPath` and applies its `@__transform_model`
/// sequence, if any, to the module; without one it changes nothing.
std::unique_ptr<Pass>
createModelDirectivesPass(const std::string &strategyPath);

} // namespace mlir::piper

#endif // PIPER_COMPILE_MODELDIRECTIVES_H
