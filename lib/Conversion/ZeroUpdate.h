//===- ZeroUpdate.h - Optimizer updates on flat shards ----------*- C++ -*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Under ZeRO each replica updates only its chunk of a parameter
// (ReplicaLayout.h): the update body the DAG calls on whole tensors is
// cloned with the chunks' types. Optimizer updates are elementwise, so the
// clone computes exactly the chunk of the whole update; padding elements
// (zero parameter, gradient and state) stay zero.
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_LIB_CONVERSION_ZEROUPDATE_H
#define PIPER_LIB_CONVERSION_ZEROUPDATE_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir::piper {

/// The tensors optimizer update `op` reads and writes elementwise
/// (parameter, gradient, state); empty for any other op.
SmallVector<Value> updateOperands(Operation *op);

/// Whether `body` only holds optimizer updates (and the step counters'
/// arithmetic): an UPD node's body.
bool isUpdateBody(func::FuncOp body);

/// The argument indices of each update in `body`: parameter, gradient and
/// state operands (not the step counter), which must share one type. Fails
/// with an error at `at` if an operand is not an argument.
FailureOr<SmallVector<SmallVector<unsigned>>> updateGroups(func::FuncOp body,
                                                           Operation *at);

/// A clone of update body `body` (inserted after it, a fresh symbol) whose
/// arguments have `argTypes`; every update's results take its operands'
/// type. Fails with an error at `at` if an update's operands differ.
FailureOr<func::FuncOp> cloneUpdateBody(func::FuncOp body,
                                        ArrayRef<Type> argTypes, Operation *at);

} // namespace mlir::piper

#endif // PIPER_LIB_CONVERSION_ZEROUPDATE_H
