//===- CommCalls.h - Runtime and kernel calls on tensors -------*- C++ -*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// piper-program-to-func lowers a program's communication, and
// piper-convert-to-kernels its kernels, to calls of C functions. The runtime
// owns that contract: every symbol a plan calls, its signature and its exact
// semantics are declared once in runtime/include/piper-rt/plan_abi.h (and
// implemented by the runtime library PiperPlanRuntime, never by a tool);
// the kernel library's calls in include/piper/Kernels/Kernels.h. Plans link
// no MPI. Every tensor crosses as an unranked memref (rank, descriptor);
// inputs may have any strides, outputs are freshly allocated identity
// buffers. The helpers below only build such calls on tensors.
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_LIB_CONVERSION_COMMCALLS_H
#define PIPER_LIB_CONVERSION_COMMCALLS_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"

namespace mlir::piper {

/// "f32", "f64" (and "i64" when `allowInteger`): the shim suffix of a tensor
/// type's element type; a located error for anything else.
FailureOr<StringRef> commSuffix(Operation *op, Type type, bool allowInteger);

/// The type a tensor of `type` travels as: bf16 elements widened to f32,
/// others unchanged. The runtime's shims move f32, f64 and i64 (MPI has no
/// bf16 datatype); widening is exact, so a transfer narrowed back on arrival
/// gives the same bf16 values, and a reduction sums in f32 and rounds once.
/// Twice the bytes of bf16 on the wire (docs/MixedPrecision.md).
RankedTensorType wireType(Type type);

/// Calls C-ABI function `name` (declared once in `module`) with `inputs`
/// (tensors, passed read-only with any layout), fresh buffers of
/// `outputTypes` and the scalar `extra` operands (i64 or f64 values); returns
/// the outputs as tensors. The runtime's shims above and the kernel
/// library's piper_k_* functions (Kernels.h) share this convention, so
/// --piper-convert-to-kernels calls kernels through it too.
SmallVector<Value> callShim(OpBuilder &builder, Location loc, ModuleOp module,
                            StringRef name, ValueRange inputs,
                            TypeRange outputTypes, ValueRange extra);

/// An i64 / f64 constant, for `extra`.
Value i64Constant(OpBuilder &builder, Location loc, int64_t value);
Value f64Constant(OpBuilder &builder, Location loc, double value);

} // namespace mlir::piper

#endif // PIPER_LIB_CONVERSION_COMMCALLS_H
