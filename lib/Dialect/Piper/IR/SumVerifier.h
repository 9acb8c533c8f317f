//===- SumVerifier.h - Shared verifier of n-ary sums ------------*- C++ -*-===//
//-*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// `piper.accumulate` (a DAG node) and `piper.sum` (its device-program
// instruction) are the same scaled sum and check the same things.
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_LIB_DIALECT_PIPER_IR_SUMVERIFIER_H
#define PIPER_LIB_DIALECT_PIPER_IR_SUMVERIFIER_H

#include "mlir/IR/Operation.h"

namespace mlir::piper::detail {

/// At least one value, each of the result's type.
inline LogicalResult verifySum(Operation *op, ValueRange values,
                               Type resultType) {
  if (values.empty())
    return op->emitOpError() << "needs at least one value";
  for (auto [i, value] : llvm::enumerate(values))
    if (value.getType() != resultType)
      return op->emitOpError()
             << "value #" << i << " has type " << value.getType()
             << ", not the result type " << resultType;
  return success();
}

} // namespace mlir::piper::detail

#endif // PIPER_LIB_DIALECT_PIPER_IR_SUMVERIFIER_H
