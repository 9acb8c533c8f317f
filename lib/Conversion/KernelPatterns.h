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
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Pass/Pass.h"

namespace mlir::piper {

/// f32, f64 or bf16: the element type of the op's float tensors (its operands',
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

/// The type reductions and scores compute in: the element type, widened to
/// f32 when it is narrower (bf16), so sums keep their low bits.
FloatType accumulatorType(Type elementType);

/// `v` converted between float types by extf/truncf (itself if equal).
Value castScalar(OpBuilder &b, Location loc, Value v, Type to);

/// `t` with its elements converted to `elt` (itself if they already are).
Value castTensor(OpBuilder &b, Location loc, Value t, Type elt);

/// `fn` of `args` computed in accumulatorType(elt) (bf16 arguments widened
/// to f32) and the result rounded back to `elt` once: the scalar body of an
/// elementwise kernel on bf16, as the interpreter rounds an op's result.
/// The identity on `fn` for f32 and f64.
Value computeWidened(OpBuilder &b, Location loc, ValueRange args, Type elt,
                     function_ref<Value(ValueRange)> fn);

/// A float constant of type `type`.
Value floatConstant(OpBuilder &b, Location loc, Type type, double value);

/// x [.., K] times w [K, N] (+ bias [N]) with linalg.fill + linalg.matmul,
/// the leading dims of x collapsed.
Value buildMatmul(OpBuilder &b, Location loc, Value x, Value w, Value bias,
                  Type resultType);

/// C[n] = op(lhs[n]) op(rhs[n]) for rank-3 tensors as linalg.fill +
/// linalg.batch_matmul into a fresh tensor of `resultElt` (op transposes
/// when transA/transB, by the op's indexing maps).
Value buildBatchMatmul(OpBuilder &b, Location loc, Value lhs, Value rhs,
                       bool transA, bool transB, Type resultElt);

/// matmul with lhs of rank > 2, linear of a vector, and the VJP of such a
/// matmul as linalg (BatchedMatmulToLinalg.cpp).
void populateBatchedMatmulToLinalgPatterns(RewritePatternSet &patterns);

/// piper.attention and its piper.vjp as linalg.batch_matmul and softmax
/// generics on tensors (AttentionToLinalg.cpp).
void populateAttentionToLinalgPatterns(RewritePatternSet &patterns);
/// piper.rope as linalg on tensors (RopeToLinalg.cpp).
void populateRopeToLinalgPatterns(RewritePatternSet &patterns);

/// linalg.batch_matmul on f32/f64 buffers (default maps, or A or B read
/// transposed) to piper_k_batch_gemm_<t> calls (BatchMatmulToBlas.cpp), and
/// whether that pattern replaces `op`.
void populateBatchMatmulToBlasPatterns(RewritePatternSet &patterns);
bool isBlasBatchMatmul(Operation *op);
/// `prefix` + f32/f64 (all operands of that type) or bf16 (bf16 A and B,
/// f32 C) for a linalg matmul or batch_matmul on buffers; empty when BLAS has
/// no such GEMM.
std::string blasGemmName(StringRef prefix, Operation *matmul);

/// Calls `name` (declared once in `module`) with `buffers` as unranked
/// memrefs, then `scalars`: the BLAS calls of --piper-matmul-to-blas.
void callOnBuffers(OpBuilder &b, Location loc, ModuleOp module, StringRef name,
                   ValueRange buffers, ValueRange scalars);

/// The float attribute `key` of `op`, or for a piper.vjp of its
/// forward_attrs; `fallback` (the forward op's default) when absent.
double forwardFloatAttr(Operation *op, StringRef key, double fallback);

/// Softmax over the last dim of `x` (a static float tensor, rank >= 1),
/// stable: each row's max is subtracted before exp. Sums in f32 for types
/// narrower than f32; the result has x's type (SoftmaxToLinalg.cpp).
Value buildRowSoftmax(OpBuilder &b, Location loc, Value x);

/// The softmax VJP from its output: y (dy - sum_j dy_j y_j) per row of the
/// last dim, for y and dy of one shape; the result has dy's type.
Value buildRowSoftmaxGrad(OpBuilder &b, Location loc, Value y, Value dy);

/// rmsnorm, layernorm and their piper.vjp as linalg.generic (benefit 2).
void populateNormToLinalgPatterns(RewritePatternSet &patterns);
/// softmax and its piper.vjp as linalg.generic (benefit 2).
void populateSoftmaxToLinalgPatterns(RewritePatternSet &patterns);
/// cross_entropy, embedding and their piper.vjp in linalg (benefit 2).
void populateLossToLinalgPatterns(RewritePatternSet &patterns);

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
/// piper.cast as arith.extf/truncf in a linalg.generic (CastToLinalg.cpp).
void populateCastToLinalgPatterns(RewritePatternSet &patterns);

/// math.erf (only) as calls to libm's erf/erff, before vectors and
/// memrefs go to LLVM (ErfToLibm.cpp).
std::unique_ptr<Pass> createErfToLibmPass();

} // namespace mlir::piper

#endif // PIPER_LIB_CONVERSION_KERNELPATTERNS_H
