//===- KernelPatterns.h - Shared by --piper-convert-to-kernels --*- C++ -*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The builders and checks the kernel patterns share: ConvertToKernels.cpp
// holds the linalg patterns and the pass, KernelCalls.cpp the patterns that
// call the C-ABI kernel library, LinalgBuilders.cpp the linalg code.
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_LIB_CONVERSION_KERNELPATTERNS_H
#define PIPER_LIB_CONVERSION_KERNELPATTERNS_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::piper {

/// f32 or f64: the element type of the op's float tensors (its operands',
/// else its results'); a located error when `report`, else a silent failure.
FailureOr<FloatType> kernelFloatType(Operation *op, bool report);

/// Whether a pattern of populateKernelCallPatterns or
/// populateConvertToKernelsPatterns (other than the rejecting one) handles
/// `op`'s kind.
bool hasKernelPattern(Operation *op);

/// One pattern per op kind that has a kernel (piper_k_<op>_<t>) and one for
/// piper.vjp (piper_k_vjp_<op>_<wrt>_<t>).
void populateKernelCallPatterns(RewritePatternSet &patterns);

/// Elementwise linalg.generic over same-shaped tensors `inputs`, computing
/// `fn` of their elements into a tensor of `resultType`.
Value buildElementwise(
    OpBuilder &b, Location loc, ValueRange inputs, Type resultType,
    function_ref<Value(OpBuilder &, Location, ValueRange)> fn);

/// x [.., K] times w [K, N] (+ bias [N]) with linalg.fill + linalg.matmul,
/// the leading dims of x collapsed.
Value buildMatmul(OpBuilder &b, Location loc, Value x, Value w, Value bias,
                  Type resultType);

/// `x` with its dims permuted (linalg.transpose; result dim d is dim
/// permutation[d] of x).
Value buildTranspose(OpBuilder &b, Location loc, Value x,
                     ArrayRef<int64_t> permutation);

/// Whether a linalg pattern lowers the piper.vjp of forward op `name` (it
/// reports its own errors, so the kernel-call pattern stays silent).
bool hasLinalgVJP(StringRef name);

/// reshape, transpose and their VJPs (LayoutToLinalg.cpp).
void populateLayoutToLinalgPatterns(RewritePatternSet &patterns);
/// router, dispatch, expert_ffn, combine and their VJPs (MoEToLinalg.cpp).
void populateMoEToLinalgPatterns(RewritePatternSet &patterns);
/// sgd_update and adamw_update (UpdatesToLinalg.cpp).
void populateUpdatesToLinalgPatterns(RewritePatternSet &patterns);

} // namespace mlir::piper

#endif // PIPER_LIB_CONVERSION_KERNELPATTERNS_H
