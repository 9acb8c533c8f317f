//===- CommCalls.cpp - Communication as calls of piper-run's shims --------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "CommCalls.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;
using namespace mlir::piper;

FailureOr<StringRef> mlir::piper::commSuffix(Operation *op, Type type,
                                             bool allowInteger) {
  Type elt = cast<RankedTensorType>(type).getElementType();
  if (elt.isF32())
    return StringRef("f32");
  if (elt.isF64())
    return StringRef("f64");
  if (allowInteger && elt.isInteger(64))
    return StringRef("i64");
  return op->emitError() << "cannot lower '" << op->getName()
                         << "' of element type " << elt << " ("
                         << (allowInteger ? "f32, f64 and i64 are"
                                          : "f32 and f64 are")
                         << " supported)";
}

RankedTensorType mlir::piper::wireType(Type type) {
  auto tensor = cast<RankedTensorType>(type);
  if (!tensor.getElementType().isBF16())
    return tensor;
  return tensor.clone(Float32Type::get(type.getContext()));
}

Value mlir::piper::i64Constant(OpBuilder &builder, Location loc,
                               int64_t value) {
  return arith::ConstantIntOp::create(builder, loc, value, 64);
}

Value mlir::piper::f64Constant(OpBuilder &builder, Location loc, double value) {
  return arith::ConstantFloatOp::create(builder, loc, builder.getF64Type(),
                                        APFloat(value));
}

SmallVector<Value> mlir::piper::callShim(OpBuilder &builder, Location loc,
                                         ModuleOp module, StringRef name,
                                         ValueRange inputs,
                                         TypeRange outputTypes,
                                         ValueRange extra) {
  MLIRContext *context = builder.getContext();
  SmallVector<Value> operands;
  SmallVector<Type> argTypes;
  for (Value input : inputs) {
    auto type = cast<RankedTensorType>(input.getType());
    // Any strides: a value may be a slice; the shim copies it out, so the
    // buffer may be freed right after the call.
    auto layout = StridedLayoutAttr::get(
        context, ShapedType::kDynamic,
        SmallVector<int64_t>(type.getRank(), ShapedType::kDynamic));
    Value memref = bufferization::ToBufferOp::create(
        builder, loc,
        MemRefType::get(type.getShape(), type.getElementType(), layout), input,
        /*read_only=*/true);
    auto unranked = UnrankedMemRefType::get(type.getElementType(), 0);
    operands.push_back(memref::CastOp::create(builder, loc, unranked, memref));
    argTypes.push_back(unranked);
  }
  SmallVector<Value> buffers;
  for (Type t : outputTypes) {
    auto type = cast<RankedTensorType>(t);
    Value memref = memref::AllocOp::create(
        builder, loc, MemRefType::get(type.getShape(), type.getElementType()));
    buffers.push_back(memref);
    auto unranked = UnrankedMemRefType::get(type.getElementType(), 0);
    operands.push_back(memref::CastOp::create(builder, loc, unranked, memref));
    argTypes.push_back(unranked);
  }
  for (Value v : extra) {
    operands.push_back(v);
    argTypes.push_back(v.getType());
  }
  auto fn = module.lookupSymbol<func::FuncOp>(name);
  if (!fn) {
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointToEnd(module.getBody());
    fn = func::FuncOp::create(builder, module.getLoc(), name,
                              builder.getFunctionType(argTypes, {}));
    fn.setPrivate();
  }
  func::CallOp::create(builder, loc, fn, operands);
  SmallVector<Value> results;
  for (auto [t, memref] : llvm::zip(outputTypes, buffers))
    results.push_back(bufferization::ToTensorOp::create(
        builder, loc, t, memref, /*restrict=*/true, /*writable=*/true));
  return results;
}
