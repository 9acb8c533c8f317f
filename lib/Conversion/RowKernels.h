//===- RowKernels.h - Builders of row-wise linalg kernels ------*- C++ -*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The norms, softmax and the losses work on rows of the last dim. Their
// linalg lowerings (NormToLinalg.cpp, SoftmaxToLinalg.cpp,
// LossToLinalg.cpp) view a tensor [..., N] as a matrix [R, N] and build each
// step as one linalg.generic over that matrix whose operands are read whole,
// per row ([R]), per column ([N]) or as a scalar, and whose results are
// either whole (every loop parallel) or reductions to one of those shapes.
// Nothing here is specific to a target: tiling, vectorisation and the GPU
// mapping see plain linalg.generic ops.
//
// Numerics: a kernel on a type narrower than f32 (bf16) reads its operands
// into f32 (the accumulator type), sums and normalises there and rounds
// once when it writes a result of the narrow type; f32 and f64 compute in
// their own type.
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_LIB_CONVERSION_ROWKERNELS_H
#define PIPER_LIB_CONVERSION_ROWKERNELS_H

#include "piper/Dialect/Piper/IR/PiperOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Transforms/DialectConversion.h"

namespace mlir::piper::rows {

/// How a row kernel's operand or result is indexed by its loops (i, j) over
/// [R, N], or (i) over [R] in a kernel with one loop.
enum class Index {
  Whole, ///< [R, N] (or [R]): every loop.
  Row,   ///< [R]: i.
  Col,   ///< [N]: j.
  None,  ///< rank 0: no loop.
};

/// An operand and how the loops read it.
struct In {
  Value value;
  Index index;
};

/// A result's element type and, for a reduction, the value its accumulator
/// starts from (0 for sums, -inf for maxima).
struct Out {
  Type elementType;
  double init = 0.0;
};

/// Computes the values to yield from the operands' elements (`ins`) and the
/// results' current values (`accs`, the accumulators of a reduction).
using Body = function_ref<SmallVector<Value>(OpBuilder &, Location,
                                             ValueRange ins, ValueRange accs)>;

/// One linalg.generic over `loops` ([R, N] or [R]) reading `ins` and
/// producing one result per `outs`, all indexed by `outIndex`: loops the
/// results do not index are reductions, and a reduced result starts at its
/// `init`.
SmallVector<Value> build(OpBuilder &b, Location loc, ArrayRef<int64_t> loops,
                         ArrayRef<In> ins, Index outIndex, ArrayRef<Out> outs,
                         Body body);

/// build() with one result.
Value build1(
    OpBuilder &b, Location loc, ArrayRef<int64_t> loops, ArrayRef<In> ins,
    Index outIndex, Out out,
    function_ref<Value(OpBuilder &, Location, ValueRange ins, Value acc)> body);

/// `scalar` widened to `type` (arith.extf) when it is narrower.
Value widen(OpBuilder &b, Location loc, Value scalar, Type type);

/// `scalar` rounded to `type` (arith.truncf) when it is wider.
Value narrow(OpBuilder &b, Location loc, Value scalar, Type type);

/// x [..., N] as a matrix [R, N], R the product of the leading dims (1 for a
/// vector); fromRows is the inverse, back to `type`.
Value asRows(OpBuilder &b, Location loc, Value x);
Value fromRows(OpBuilder &b, Location loc, Value rows, Type type);

/// A tensor of any rank (ids, labels) as a vector of its elements.
Value flatten(OpBuilder &b, Location loc, Value t);

/// The maximum of each row of x [R, N], in x's element type (exact).
Value rowMax(OpBuilder &b, Location loc, Value x);

/// exp(x - m) for x [R, N] and the row maxima m [R], in the accumulator
/// type: the stable numerator of softmax (every exponent is <= 0).
Value rowExp(OpBuilder &b, Location loc, Value x, Value m);

/// softmax(x) of each row of x [R, N], exp(x - max) / sum exp(x - max),
/// summed in the accumulator type and written as `resultType`
/// (SoftmaxToLinalg.cpp).
Value softmaxRows(OpBuilder &b, Location loc, Value x, Type resultType);

/// y (dy - sum_j dy_j y_j) of each row of y, dy [R, N], summed in the
/// accumulator type of dy's and written as `resultType`.
Value softmaxGradRows(OpBuilder &b, Location loc, Value y, Value dy,
                      Type resultType);

/// The element type `op`'s row kernel computes on, or null after a reported
/// error: an element type the native lowering lacks (kernelFloatType) or a
/// dynamic shape. The op is then replaced as reject() does, and the pattern
/// returns success.
FloatType checkedElementType(Operation *op,
                             ConversionPatternRewriter &rewriter);

/// Reports `message` on `op` as the one error of the lowering and replaces
/// the op's results by placeholders (tensor.empty), so that no fallback
/// pattern (the kernel-call one) reports it again; applyLowering fails on
/// any reported error. Returns success for the pattern to return.
LogicalResult reject(Operation *op, ConversionPatternRewriter &rewriter,
                     const Twine &message);

/// Checks a piper.vjp's primals, cotangent and forward_attrs with the
/// forward op's own verifier (a detached forward op built from them, the
/// cotangent's type as its result type), and that it has one cotangent and
/// no gradient with respect to an integer operand. Reports the first
/// problem and replaces the op as reject() does; returns false then.
bool checkVJP(VJPOp vjp, ConversionPatternRewriter &rewriter);

} // namespace mlir::piper::rows

#endif // PIPER_LIB_CONVERSION_ROWKERNELS_H
