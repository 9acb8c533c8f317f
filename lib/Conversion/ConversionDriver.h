//===- ConversionDriver.h - One diagnostic per failed lowering --*- C++ -*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The lowering's patterns report why an op cannot run natively (a located
// error naming the op and what is supported) and then fail; the dialect
// conversion driver would add its own "failed to legalize operation" for the
// same op. Bad input should get one clear diagnostic, so the driver's generic
// one is dropped when a pattern has already explained the failure.
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_LIB_CONVERSION_CONVERSIONDRIVER_H
#define PIPER_LIB_CONVERSION_CONVERSIONDRIVER_H

#include "mlir/Transforms/DialectConversion.h"

namespace mlir::piper {

/// applyFullConversion (or applyPartialConversion when `full` is false) of
/// `root`; fails if the conversion fails or a pattern reported an error.
LogicalResult applyLowering(Operation *root, const ConversionTarget &target,
                            const FrozenRewritePatternSet &patterns,
                            bool full = true);

} // namespace mlir::piper

#endif // PIPER_LIB_CONVERSION_CONVERSIONDRIVER_H
