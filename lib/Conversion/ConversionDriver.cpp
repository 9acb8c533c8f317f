//===- ConversionDriver.cpp - One diagnostic per failed lowering ----------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "ConversionDriver.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"

using namespace mlir;
using namespace mlir::piper;

LogicalResult
mlir::piper::applyLowering(Operation *root, const ConversionTarget &target,
                           const FrozenRewritePatternSet &patterns, bool full) {
  bool reported = false;
  // Handlers run newest first: this one sees every diagnostic before the
  // tool's and swallows only the driver's repeat of an explained failure.
  ScopedDiagnosticHandler handler(
      root->getContext(), [&](Diagnostic &diag) -> LogicalResult {
        if (diag.getSeverity() != DiagnosticSeverity::Error)
          return failure();
        if (reported && StringRef(diag.str()).starts_with("failed to legalize"))
          return success();
        reported = true;
        return failure();
      });
  LogicalResult result = full ? applyFullConversion(root, target, patterns)
                              : applyPartialConversion(root, target, patterns);
  return failure(failed(result) || reported);
}
