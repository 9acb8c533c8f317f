//===- GPUClip.cpp - Gradient-norm clipping without host reads ------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// --piper-gpu-clip: the CPU plan's clipping calls read every gradient on the
// host (ClipGradNorm.h):
//
//   piper_clip_accumulate_<t>(grad, weight)   sum += weight * sum(grad^2)
//   piper_clip_scale_<t>(grad, out)           out = grad * coefficient
//
// On the GPU target each becomes linalg on the device buffers, mapped to
// kernels like any other op, and one host scalar crosses per gradient:
//
//   partial[i] = sum_j grad[i, j...]^2   (f64; i the leading dimension)
//   total      = sum_i partial[i]         (f64, one thread)
//   piper_clip_add_squares(weight * total)   (the total read on the host)
//
//   c   = piper_clip_coefficient()
//   out = t(f64(grad) * c)               (rounded once, as the CPU does)
//
// The CPU sums the squares in flat order and the GPU per leading row first,
// so the norms agree to f64 rounding (not bit for bit); the scaled
// gradients are bit for bit the CPU's for the same coefficient.
//
//===----------------------------------------------------------------------===//

#include "piper/Conversion/GPU/Passes.h"

#include "ReplacedCalls.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace mlir::piper {
#define GEN_PASS_DEF_GPUCLIPPASS
#include "piper/Conversion/GPU/Passes.h.inc"
} // namespace mlir::piper

using namespace mlir;
using namespace mlir::piper;

namespace {

constexpr StringLiteral kAccumulatePrefix = "piper_clip_accumulate_";
constexpr StringLiteral kScalePrefix = "piper_clip_scale_";

/// The ranked buffer behind a shim operand (a memref.cast to unranked).
FailureOr<TypedValue<MemRefType>> rankedOperand(func::CallOp call,
                                                unsigned index) {
  Value v = call.getOperand(index);
  if (auto cast = v.getDefiningOp<memref::CastOp>())
    v = cast.getSource();
  if (auto ranked = dyn_cast<TypedValue<MemRefType>>(v)) {
    Type element = ranked.getType().getElementType();
    if (element.isF32() || element.isF64())
      return ranked;
  }
  return call.emitError() << "@" << call.getCallee()
                          << " needs an f32 or f64 buffer as operand #"
                          << index;
}

/// A function declaration `name` : `type` in `module` (added if missing).
void declare(OpBuilder &b, ModuleOp module, StringRef name, FunctionType type) {
  if (module.lookupSymbol<func::FuncOp>(name))
    return;
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToEnd(module.getBody());
  auto fn = func::FuncOp::create(b, module.getLoc(), name, type);
  fn.setPrivate();
}

Value toF64(OpBuilder &b, Location loc, Value x) {
  return x.getType().isF64() ? x
                             : arith::ExtFOp::create(b, loc, b.getF64Type(), x);
}

/// A linalg.generic that adds the squares of `in` (over the dimensions the
/// maps reduce) to `acc` in f64.
void sumSquares(OpBuilder &b, Location loc, Value in, Value acc,
                ArrayRef<AffineMap> maps,
                ArrayRef<utils::IteratorType> iterators) {
  linalg::GenericOp::create(
      b, loc, ValueRange{in}, ValueRange{acc}, maps, iterators,
      [](OpBuilder &nb, Location nl, ValueRange args) {
        Value x = toF64(nb, nl, args[0]);
        Value square = arith::MulFOp::create(nb, nl, x, x);
        linalg::YieldOp::create(
            nb, nl, ValueRange{arith::AddFOp::create(nb, nl, args[1], square)});
      });
}

/// piper_clip_accumulate_<t>(grad, weight) on device buffers.
LogicalResult rewriteAccumulate(OpBuilder &b, func::CallOp call,
                                ModuleOp module) {
  FailureOr<TypedValue<MemRefType>> grad = rankedOperand(call, 0);
  if (failed(grad))
    return failure();
  if (call.getNumOperands() != 2 || !call.getOperand(1).getType().isF64())
    return call.emitError()
           << "@" << call.getCallee() << " takes a gradient and an f64 weight";
  Location loc = call.getLoc();
  MLIRContext *ctx = b.getContext();
  MemRefType type = grad->getType();
  int64_t rank = type.getRank();
  Type f64 = b.getF64Type();
  Value zero = arith::ConstantOp::create(b, loc, b.getF64FloatAttr(0.0));
  auto scalarType = MemRefType::get({}, f64);
  Value total = memref::AllocOp::create(b, loc, scalarType);
  linalg::FillOp::create(b, loc, zero, total);
  AffineMap identity = AffineMap::getMultiDimIdentityMap(rank, ctx);
  if (rank < 2) {
    // Nothing to spread over threads but the elements themselves.
    sumSquares(
        b, loc, *grad, total, {identity, AffineMap::get(rank, 0, ctx)},
        SmallVector<utils::IteratorType>(rank, utils::IteratorType::reduction));
  } else {
    // One thread per leading row, then one over the rows.
    SmallVector<Value> dynamic;
    if (type.isDynamicDim(0))
      dynamic.push_back(memref::DimOp::create(b, loc, *grad, 0));
    Value rows = memref::AllocOp::create(
        b, loc, MemRefType::get({type.getDimSize(0)}, f64), dynamic);
    linalg::FillOp::create(b, loc, zero, rows);
    SmallVector<utils::IteratorType> iterators(rank,
                                               utils::IteratorType::reduction);
    iterators[0] = utils::IteratorType::parallel;
    sumSquares(b, loc, *grad, rows,
               {identity, AffineMap::get(rank, 0, b.getAffineDimExpr(0))},
               iterators);
    linalg::GenericOp::create(
        b, loc, ValueRange{rows}, ValueRange{total},
        {AffineMap::getMultiDimIdentityMap(1, ctx), AffineMap::get(1, 0, ctx)},
        {utils::IteratorType::reduction},
        [](OpBuilder &nb, Location nl, ValueRange args) {
          linalg::YieldOp::create(
              nb, nl,
              ValueRange{arith::AddFOp::create(nb, nl, args[1], args[0])});
        });
    memref::DeallocOp::create(b, loc, rows);
  }
  // The one value the host reads (--piper-gpu-device-memory copies it).
  Value sum = memref::LoadOp::create(b, loc, total, ValueRange{});
  Value weighted = arith::MulFOp::create(b, loc, call.getOperand(1), sum);
  memref::DeallocOp::create(b, loc, total);
  declare(b, module, kGPUClipAddSquaresName, b.getFunctionType({f64}, {}));
  func::CallOp::create(b, loc, kGPUClipAddSquaresName, TypeRange{},
                       ValueRange{weighted});
  return success();
}

/// piper_clip_scale_<t>(grad, out) on device buffers.
LogicalResult rewriteScale(OpBuilder &b, func::CallOp call, ModuleOp module) {
  FailureOr<TypedValue<MemRefType>> in = rankedOperand(call, 0);
  if (failed(in))
    return failure();
  FailureOr<TypedValue<MemRefType>> out = rankedOperand(call, 1);
  if (failed(out))
    return failure();
  if (in->getType().getShape() != out->getType().getShape() ||
      in->getType().getElementType() != out->getType().getElementType())
    return call.emitError() << "@" << call.getCallee()
                            << " needs a result buffer of its input's type";
  Location loc = call.getLoc();
  Type f64 = b.getF64Type();
  declare(b, module, kGPUClipCoefficientName, b.getFunctionType({}, {f64}));
  Value coef = func::CallOp::create(b, loc, kGPUClipCoefficientName,
                                    TypeRange{f64}, ValueRange{})
                   .getResult(0);
  int64_t rank = in->getType().getRank();
  AffineMap identity = AffineMap::getMultiDimIdentityMap(rank, b.getContext());
  Type element = in->getType().getElementType();
  linalg::GenericOp::create(
      b, loc, ValueRange{*in}, ValueRange{*out}, {identity, identity},
      SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
      [&](OpBuilder &nb, Location nl, ValueRange args) {
        Value scaled =
            arith::MulFOp::create(nb, nl, toF64(nb, nl, args[0]), coef);
        if (element != f64)
          scaled = arith::TruncFOp::create(nb, nl, element, scaled);
        linalg::YieldOp::create(nb, nl, ValueRange{scaled});
      });
  return success();
}

struct GPUClipPass : mlir::piper::impl::GPUClipPassBase<GPUClipPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<func::CallOp> calls;
    module.walk([&](func::CallOp call) {
      StringRef callee = call.getCallee();
      if (callee.starts_with(kAccumulatePrefix) ||
          callee.starts_with(kScalePrefix))
        calls.push_back(call);
    });
    OpBuilder b(module.getContext());
    llvm::SmallSetVector<StringRef, 4> callees;
    for (func::CallOp call : calls) {
      b.setInsertionPoint(call);
      bool accumulate = call.getCallee().starts_with(kAccumulatePrefix);
      if (failed(accumulate ? rewriteAccumulate(b, call, module)
                            : rewriteScale(b, call, module)))
        return signalPassFailure();
      eraseReplacedCall(call, callees);
    }
    // The host-reading declarations nothing calls any more.
    eraseUncalledDeclarations(module, callees);
  }
};

} // namespace
