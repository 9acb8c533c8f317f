//===- BatchMatmulToBlas.cpp - linalg.batch_matmul as BLAS calls ----------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Part of --piper-matmul-to-blas: a linalg.batch_matmul on f32/f64 buffers
// (or bf16 A and B with an f32 C: `_bf16`), C[n] += op(A[n]) op(B[n]),
// becomes
//
//   piper_k_batch_gemm_<t>(A, B, C, transA, transB)
//
// (lib/Kernels/Gemm.cpp: one sgemm/dgemm per batch element) when its
// indexing maps are the default ones or transpose A or B: the forms
// AttentionToLinalg.cpp emits for Q K^T, P^T dO and dS^T Q. Every operand
// keeps its layout (BLAS reads the transposed operand in place) and all
// element types must match (no widening casts: those stay loops).
//
//===----------------------------------------------------------------------===//

#include "piper/Conversion/Passes.h"

#include "CommCalls.h"
#include "KernelPatterns.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Transforms/DialectConversion.h"

using namespace mlir;
using namespace mlir::piper;

namespace {

/// Which operands a batch_matmul reads transposed: (transA, transB), or
/// nothing if its maps are no such form.
std::optional<std::pair<bool, bool>> transposes(linalg::BatchMatmulOp op) {
  MLIRContext *ctx = op.getContext();
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  // (batch, m, n, k): the default A (n, m, k), B (n, k, n'), C (n, m, n').
  AffineExpr d0, d1, d2, d3;
  bindDims(ctx, d0, d1, d2, d3);
  auto map = [&](ArrayRef<AffineExpr> r) {
    return AffineMap::get(4, 0, r, ctx);
  };
  if (maps.size() != 3 || maps[2] != map({d0, d1, d2}))
    return std::nullopt;
  bool transA = maps[0] == map({d0, d3, d1});
  bool transB = maps[1] == map({d0, d2, d3});
  if (!transA && maps[0] != map({d0, d1, d3}))
    return std::nullopt;
  if (!transB && maps[1] != map({d0, d3, d2}))
    return std::nullopt;
  return std::make_pair(transA, transB);
}

/// linalg.batch_matmul(A, B, C) -> piper_k_batch_gemm_<t>(A, B, C, tA, tB).
struct BatchMatmulToGemmCall : OpConversionPattern<linalg::BatchMatmulOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(linalg::BatchMatmulOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (!isBlasBatchMatmul(op))
      return failure();
    auto [transA, transB] = *transposes(op);
    Location loc = op.getLoc();
    std::string name = blasGemmName("piper_k_batch_gemm_", op);
    Value flags[] = {i64Constant(rewriter, loc, transA),
                     i64Constant(rewriter, loc, transB)};
    callOnBuffers(rewriter, loc, op->getParentOfType<ModuleOp>(), name,
                  {adaptor.getInputs()[0], adaptor.getInputs()[1],
                   adaptor.getOutputs()[0]},
                  flags);
    rewriter.eraseOp(op);
    return success();
  }
};

} // namespace

bool mlir::piper::isBlasBatchMatmul(Operation *op) {
  auto matmul = dyn_cast<linalg::BatchMatmulOp>(op);
  if (!matmul || !matmul.hasPureBufferSemantics() || !transposes(matmul))
    return false;
  return !blasGemmName("", matmul).empty();
}

std::string mlir::piper::blasGemmName(StringRef prefix, Operation *op) {
  auto matmul = cast<linalg::LinalgOp>(op);
  Type elt =
      cast<MemRefType>(matmul.getDpsInits()[0].getType()).getElementType();
  auto inputsAre = [&](Type t) {
    return llvm::all_of(matmul.getDpsInputs(), [&](Value i) {
      return cast<MemRefType>(i.getType()).getElementType() == t;
    });
  };
  if ((elt.isF32() || elt.isF64()) && inputsAre(elt))
    return (prefix + (elt.isF32() ? "f32" : "f64")).str();
  // bf16 operands, f32 accumulator (Gemm.cpp widens them for sgemm).
  if (elt.isF32() && inputsAre(BFloat16Type::get(elt.getContext())))
    return (prefix + "bf16").str();
  return "";
}

void mlir::piper::callOnBuffers(OpBuilder &b, Location loc, ModuleOp module,
                                StringRef name, ValueRange buffers,
                                ValueRange scalars) {
  SmallVector<Value> args;
  for (Value v : buffers)
    args.push_back(memref::CastOp::create(
        b, loc,
        UnrankedMemRefType::get(cast<MemRefType>(v.getType()).getElementType(),
                                0),
        v));
  llvm::append_range(args, scalars);
  auto fn = module.lookupSymbol<func::FuncOp>(name);
  if (!fn) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToEnd(module.getBody());
    fn = func::FuncOp::create(
        b, module.getLoc(), name,
        b.getFunctionType(ValueRange(args).getTypes(), {}));
    fn.setPrivate();
  }
  func::CallOp::create(b, loc, fn, args);
}

void mlir::piper::populateBatchMatmulToBlasPatterns(
    RewritePatternSet &patterns) {
  patterns.add<BatchMatmulToGemmCall>(patterns.getContext());
}
