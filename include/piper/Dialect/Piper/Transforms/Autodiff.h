//===- Autodiff.h - Reverse-mode autodiff of Piper models -------*- C++ -*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_DIALECT_PIPER_TRANSFORMS_AUTODIFF_H
#define PIPER_DIALECT_PIPER_TRANSFORMS_AUTODIFF_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectRegistry.h"

namespace mlir::piper {

/// Attaches the VJP rules (VJPOpInterface) to the piper NN ops.
void registerVJPInterfaceExternalModels(DialectRegistry &registry);

/// The rule of every op whose backward is opaque to autodiff: one
/// `piper.vjp` per needed operand over the op's float results (missing
/// result cotangents become zeros). Ops with an ElementwiseOpInterface get
/// it without a registered VJP model: the interpreter and the lowering
/// evaluate their `piper.vjp` from the interface's partial derivatives.
LogicalResult buildGenericVJP(Operation *op, OpBuilder &b,
                              ArrayRef<Value> resultCotangents,
                              ArrayRef<bool> needed,
                              SmallVectorImpl<Value> &operandCotangents);

/// Whether the cotangent of operand `wrt` of the forward op `forwardOp` (a
/// piper op name) needs the value of its operand `primal`. The weight
/// gradient of `piper.linear` (`wrt` 1) needs the input, not the weight:
/// this is what lets ZeRO-3 skip gathering a weight for its BW node.
/// Conservatively true for ops without a finer rule.
bool vjpNeedsPrimal(StringRef forwardOp, int64_t wrt, unsigned primal);

/// Appends the backward pass to `fn`, a model whose `piper.param` arguments
/// are the parameters and whose single result is a scalar loss. The function
/// then returns the loss followed by the gradient of every parameter (in
/// argument order, each result marked `piper.grad = "<name>"`). The backward
/// of each forward chunk is grouped into a `piper.annotate` with the chunk's
/// tags and `pass = BI` (what earlier chunks need: input gradients) and one
/// with `pass = BW` (what only parameter gradients need), split by data
/// dependence. Emits a diagnostic and fails if `fn` cannot be differentiated.
LogicalResult differentiate(func::FuncOp fn);

} // namespace mlir::piper

#endif // PIPER_DIALECT_PIPER_TRANSFORMS_AUTODIFF_H
