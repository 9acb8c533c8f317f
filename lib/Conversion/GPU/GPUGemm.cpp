//===- GPUGemm.cpp - The CPU plan's BLAS calls to piper_gpu_gemm ----------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// --piper-gpu-gemm: runs after --piper-matmul-to-blas, so that one pass
// decides what a GEMM is for both targets. Each call of the kernel
// library's GEMMs,
//
//   piper_k_gemm_<t>(A, B, C)                    C += A B
//   piper_k_batch_gemm_<t>(A, B, C, tA, tB)      C[i] += op(A[i]) op(B[i])
//   piper_k_vjp_linear_0_<t>(x, w, dy, o)        o = dy w^T
//   piper_k_vjp_linear_1_<t>(x, w, dy, o)        o = x^T dy
//   piper_k_vjp_matmul_0_<t>(a, b, dy, o)        o = dy b^T
//   piper_k_vjp_matmul_1_<t>(a, b, dy, o)        o = a^T dy
//
// becomes one call of the GPU plan ABI's row-major strided-batched GEMM
// (runtime/include/piper-rt/plan_abi_gpu.h), every operand read in place:
// pointers, leading dimensions and batch strides come from the buffers'
// strided metadata at run time. The transposes are cuBLAS's, not copies.
//
//===----------------------------------------------------------------------===//

#include "piper/Conversion/GPU/Passes.h"

#include "ReplacedCalls.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Matchers.h"

namespace mlir::piper {
#define GEN_PASS_DEF_GPUGEMMPASS
#include "piper/Conversion/GPU/Passes.h.inc"
} // namespace mlir::piper

using namespace mlir;
using namespace mlir::piper;

namespace {

/// piper_rt_dtype values (runtime/include/piper-rt/piper_rt.h; bf16 is the
/// value the GPU runtime appends).
enum DTypeCode : int32_t { kF32 = 0, kF64 = 1, kBF16 = 3 };

/// Which library GEMM a callee is.
enum class GemmKind {
  Gemm,
  BatchGemm,
  VjpLinear0,
  VjpLinear1,
  VjpLinear2,
  VjpMatmul0,
  VjpMatmul1
};

std::optional<GemmKind> gemmKind(StringRef callee) {
  if (!callee.consume_front("piper_k_"))
    return std::nullopt;
  // The element type suffix is read from the operands.
  StringRef base = callee.rsplit('_').first;
  return llvm::StringSwitch<std::optional<GemmKind>>(base)
      .Case("gemm", GemmKind::Gemm)
      .Case("batch_gemm", GemmKind::BatchGemm)
      .Case("vjp_linear_0", GemmKind::VjpLinear0)
      .Case("vjp_linear_1", GemmKind::VjpLinear1)
      .Case("vjp_linear_2", GemmKind::VjpLinear2)
      .Case("vjp_matmul_0", GemmKind::VjpMatmul0)
      .Case("vjp_matmul_1", GemmKind::VjpMatmul1)
      .Default(std::nullopt);
}

std::optional<int32_t> dtypeCode(Type t) {
  if (t.isF32())
    return kF32;
  if (t.isF64())
    return kF64;
  if (t.isBF16())
    return kBF16;
  return std::nullopt;
}

/// A buffer as a matrix (or a batch of matrices) for the GEMM: its first
/// element's address, its sizes and strides (index values).
struct Matrix {
  Value ptr;
  SmallVector<Value> sizes, strides;
  Type element;
};

/// The ranked buffer behind a library call's unranked operand.
FailureOr<Value> rankedOperand(func::CallOp call, unsigned i) {
  Value v = call.getOperand(i);
  if (auto cast = v.getDefiningOp<memref::CastOp>())
    v = cast.getSource();
  if (!isa<MemRefType>(v.getType()))
    return call.emitError()
           << "operand " << i << " of a GEMM call is no ranked buffer";
  return v;
}

/// `v`'s address and strided metadata; fails (with an error at `call`)
/// unless its innermost stride is statically 1.
FailureOr<Matrix> matrixOf(OpBuilder &b, func::CallOp call, Value v) {
  auto type = cast<MemRefType>(v.getType());
  SmallVector<int64_t> strides;
  int64_t offset;
  if (type.getRank() == 0 ||
      failed(type.getStridesAndOffset(strides, offset)) || strides.back() != 1)
    return call.emitError()
           << "the GPU target needs unit innermost strides for GEMM "
              "operands, got "
           << type;
  Location loc = call.getLoc();
  auto meta = memref::ExtractStridedMetadataOp::create(b, loc, v);
  Value base = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, v);
  Value bytes =
      arith::ConstantIndexOp::create(b, loc, type.getElementTypeBitWidth() / 8);
  Value addr = arith::AddIOp::create(
      b, loc, base,
      arith::MulIOp::create(b, loc, meta.getOffset(), bytes).getResult());
  Value addr64 =
      arith::IndexCastOp::create(b, loc, b.getI64Type(), addr).getResult();
  Matrix m;
  m.ptr = LLVM::IntToPtrOp::create(
      b, loc, LLVM::LLVMPointerType::get(b.getContext()), addr64);
  m.sizes.assign(meta.getSizes().begin(), meta.getSizes().end());
  m.strides.assign(meta.getStrides().begin(), meta.getStrides().end());
  m.element = type.getElementType();
  return m;
}

/// A linear operand `[..., cols]` as a `rows x cols` matrix: its leading
/// dimensions must be one contiguous run (checked on the static layout).
FailureOr<std::pair<Value, Value>> rowsAndLd(OpBuilder &b, func::CallOp call,
                                             Value v, const Matrix &m) {
  auto type = cast<MemRefType>(v.getType());
  int64_t rank = type.getRank();
  Location loc = call.getLoc();
  if (rank == 1)
    return std::make_pair(Value(arith::ConstantIndexOp::create(b, loc, 1)),
                          m.sizes[0]);
  SmallVector<int64_t> strides;
  int64_t offset;
  (void)type.getStridesAndOffset(strides, offset);
  ArrayRef<int64_t> shape = type.getShape();
  for (int64_t d = 0; d + 2 < rank; ++d)
    if (ShapedType::isDynamic(strides[d]) ||
        ShapedType::isDynamic(strides[d + 1]) ||
        ShapedType::isDynamic(shape[d + 1]) ||
        strides[d] != strides[d + 1] * shape[d + 1])
      return call.emitError() << "the GPU target needs contiguous leading "
                                 "dimensions for a linear operand, got "
                              << type;
  Value rows = m.sizes[0];
  for (int64_t d = 1; d + 1 < rank; ++d)
    rows = arith::MulIOp::create(b, loc, rows, m.sizes[d]);
  return std::make_pair(rows, m.strides[rank - 2]);
}

/// The arguments of one piper_gpu_gemm call, as index values or flags.
struct GemmCall {
  int32_t aType = 0, cType = 0;
  bool transA = false, transB = false;
  Value batch, m, n, k;
  double beta = 0;
  Value a, lda, strideA, b, ldb, strideB, c, ldc, strideC;
};

/// The declaration of piper_gpu_gemm in `module`.
func::FuncOp gemmDeclaration(OpBuilder &b, ModuleOp module) {
  if (auto fn = module.lookupSymbol<func::FuncOp>(kGPUGemmName))
    return fn;
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToEnd(module.getBody());
  Type i32 = b.getI32Type(), i64 = b.getI64Type(), f64 = b.getF64Type(),
       ptr = LLVM::LLVMPointerType::get(b.getContext());
  auto fn = func::FuncOp::create(
      b, module.getLoc(), kGPUGemmName,
      b.getFunctionType({i32, i32, i32, i32, i64, i64, i64, i64, f64, ptr, i64,
                         i64, ptr, i64, i64, f64, ptr, i64, i64},
                        {}));
  fn.setPrivate();
  return fn;
}

void emitGemm(OpBuilder &b, Location loc, ModuleOp module, const GemmCall &g) {
  auto i32 = [&](int32_t v) -> Value {
    return arith::ConstantIntOp::create(b, loc, v, 32);
  };
  auto i64 = [&](Value v) -> Value {
    return arith::IndexCastOp::create(b, loc, b.getI64Type(), v);
  };
  auto f64 = [&](double v) -> Value {
    return arith::ConstantFloatOp::create(b, loc, b.getF64Type(), APFloat(v));
  };
  SmallVector<Value> args = {
      i32(g.aType), i32(g.cType), i32(g.transA),  i32(g.transB),
      i64(g.batch), i64(g.m),     i64(g.n),       i64(g.k),
      f64(1.0),     g.a,          i64(g.lda),     i64(g.strideA),
      g.b,          i64(g.ldb),   i64(g.strideB), f64(g.beta),
      g.c,          i64(g.ldc),   i64(g.strideC)};
  func::CallOp::create(b, loc, gemmDeclaration(b, module), args);
}

/// Fills `g` for a C += op(A) op(B) call (piper_k_gemm / batch_gemm).
LogicalResult accumulatingGemm(OpBuilder &b, func::CallOp call, bool batched,
                               GemmCall &g) {
  SmallVector<Matrix> ops;
  for (unsigned i = 0; i < 3; ++i) {
    FailureOr<Value> v = rankedOperand(call, i);
    if (failed(v))
      return failure();
    FailureOr<Matrix> m = matrixOf(b, call, *v);
    if (failed(m))
      return failure();
    ops.push_back(*m);
  }
  if (batched) {
    APInt ta, tb;
    if (!matchPattern(call.getOperand(3), m_ConstantInt(&ta)) ||
        !matchPattern(call.getOperand(4), m_ConstantInt(&tb)))
      return call.emitError() << "batched GEMM with non-constant transposes";
    g.transA = !ta.isZero();
    g.transB = !tb.isZero();
  }
  Location loc = call.getLoc();
  unsigned r = batched ? 1 : 0; // the first matrix dimension
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  g.batch =
      batched ? ops[2].sizes[0] : arith::ConstantIndexOp::create(b, loc, 1);
  g.m = ops[2].sizes[r];
  g.n = ops[2].sizes[r + 1];
  g.k = ops[0].sizes[g.transA ? r : r + 1];
  g.beta = 1.0;
  g.a = ops[0].ptr;
  g.b = ops[1].ptr;
  g.c = ops[2].ptr;
  g.lda = ops[0].strides[r];
  g.ldb = ops[1].strides[r];
  g.ldc = ops[2].strides[r];
  g.strideA = batched ? ops[0].strides[0] : zero;
  g.strideB = batched ? ops[1].strides[0] : zero;
  g.strideC = batched ? ops[2].strides[0] : zero;
  g.aType = *dtypeCode(ops[0].element);
  g.cType = *dtypeCode(ops[2].element);
  return success();
}

/// Fills `g` for a VJP call: o = dy w^T / x^T dy (linear, `x` of any rank
/// >= 1) or o = dy b^T / a^T dy (2-D matmul).
LogicalResult vjpGemm(OpBuilder &b, func::CallOp call, GemmKind kind,
                      GemmCall &g) {
  SmallVector<Value> vals;
  SmallVector<Matrix> ops;
  for (unsigned i = 0; i < 4; ++i) {
    FailureOr<Value> v = rankedOperand(call, i);
    if (failed(v))
      return failure();
    FailureOr<Matrix> m = matrixOf(b, call, *v);
    if (failed(m))
      return failure();
    vals.push_back(*v);
    ops.push_back(*m);
  }
  // Operands: 0 = x or a, 1 = w or b (2-D), 2 = dy, 3 = o. `x`, `dy` and
  // the wrt-0 `o` are `rows x cols` with contiguous leading dimensions.
  FailureOr<std::pair<Value, Value>> x = rowsAndLd(b, call, vals[0], ops[0]);
  FailureOr<std::pair<Value, Value>> dy = rowsAndLd(b, call, vals[2], ops[2]);
  FailureOr<std::pair<Value, Value>> o = rowsAndLd(b, call, vals[3], ops[3]);
  if (failed(x) || failed(dy) || failed(o))
    return failure();
  Location loc = call.getLoc();
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value rows = x->first;
  Value in = ops[1].sizes[0], out = ops[1].sizes[1];
  g.batch = arith::ConstantIndexOp::create(b, loc, 1);
  g.strideA = g.strideB = g.strideC = zero;
  g.beta = 0.0;
  g.c = ops[3].ptr;
  g.ldc = o->second;
  bool wrt0 = kind == GemmKind::VjpLinear0 || kind == GemmKind::VjpMatmul0;
  if (wrt0) {
    // o [rows, in] = dy [rows, out] * w^T (w stored [in, out]).
    g.transB = true;
    g.m = rows;
    g.n = in;
    g.k = out;
    g.a = ops[2].ptr;
    g.lda = dy->second;
    g.b = ops[1].ptr;
    g.ldb = ops[1].strides[0];
  } else {
    // o [in, out] = x^T (x stored [rows, in]) * dy [rows, out].
    g.transA = true;
    g.m = in;
    g.n = out;
    g.k = rows;
    g.a = ops[0].ptr;
    g.lda = x->second;
    g.b = ops[2].ptr;
    g.ldb = dy->second;
  }
  g.aType = *dtypeCode(ops[0].element);
  g.cType = *dtypeCode(ops[3].element);
  return success();
}

/// The bias gradient db[o] = sum over rows of dy[..., o] is no GEMM: a
/// zero fill and a row-order sum as linalg, which --piper-gpu-map-linalg
/// maps like the other kernels (one thread per output element).
LogicalResult biasGradient(OpBuilder &b, func::CallOp call) {
  FailureOr<Value> dy = rankedOperand(call, 2), db = rankedOperand(call, 3);
  if (failed(dy) || failed(db))
    return failure();
  auto type = cast<MemRefType>(dy->getType());
  Location loc = call.getLoc();
  Value rows = *dy;
  if (type.getRank() != 2) {
    if (type.getRank() < 2 || !type.getLayout().isIdentity())
      return call.emitError() << "the GPU target needs an identity-layout "
                                 "dy of rank >= 2 for a bias gradient, got "
                              << type;
    SmallVector<ReassociationIndices> groups(2);
    for (int64_t d = 0; d + 1 < type.getRank(); ++d)
      groups[0].push_back(d);
    groups[1].push_back(type.getRank() - 1);
    rows = memref::CollapseShapeOp::create(b, loc, rows, groups);
  }
  Type elt = type.getElementType();
  Value zero = arith::ConstantOp::create(b, loc, b.getZeroAttr(elt));
  linalg::FillOp::create(b, loc, ValueRange{zero}, ValueRange{*db});
  MLIRContext *ctx = b.getContext();
  AffineExpr o, r;
  bindDims(ctx, o, r);
  SmallVector<AffineMap> maps = {AffineMap::get(2, 0, {r, o}, ctx),
                                 AffineMap::get(2, 0, {o}, ctx)};
  linalg::GenericOp::create(
      b, loc, ValueRange{rows}, ValueRange{*db}, maps,
      {utils::IteratorType::parallel, utils::IteratorType::reduction},
      [](OpBuilder &nb, Location nl, ValueRange args) {
        Value sum = arith::AddFOp::create(nb, nl, args[0], args[1]);
        linalg::YieldOp::create(nb, nl, sum);
      });
  return success();
}

struct GPUGemmPass : mlir::piper::impl::GPUGemmPassBase<GPUGemmPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<std::pair<func::CallOp, GemmKind>> calls;
    module.walk([&](func::CallOp call) {
      if (std::optional<GemmKind> kind = gemmKind(call.getCallee()))
        calls.push_back({call, *kind});
    });
    OpBuilder b(module.getContext());
    llvm::SmallSetVector<StringRef, 8> callees;
    for (auto [call, kind] : calls) {
      b.setInsertionPoint(call);
      if (kind == GemmKind::VjpLinear2) {
        if (failed(biasGradient(b, call)))
          return signalPassFailure();
      } else {
        GemmCall g;
        bool accumulating =
            kind == GemmKind::Gemm || kind == GemmKind::BatchGemm;
        if (failed(accumulating ? accumulatingGemm(
                                      b, call, kind == GemmKind::BatchGemm, g)
                                : vjpGemm(b, call, kind, g)))
          return signalPassFailure();
        emitGemm(b, call.getLoc(), module, g);
      }
      eraseReplacedCall(call, callees);
    }
    // The library declarations nothing calls any more.
    eraseUncalledDeclarations(module, callees);
  }
};

} // namespace
