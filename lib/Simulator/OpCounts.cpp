//===- OpCounts.cpp - FLOPs and bytes of piper ops ------------------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Forward costs are the textbook ones (a [M, K] x [K, N] product is 2MKN
// FLOPs). A `piper.vjp` computes the cotangent of one operand; its cost is
// that operand's share of the op's backward, chosen so that the shares of
// a matrix product add up to twice its forward (the 6N FLOPs per token of
// training), and elementwise ops cost twice their forward per operand. The
// reference kernels recompute from the primals; real kernels read what the
// forward saved, which is what is counted.
//
//===----------------------------------------------------------------------===//

#include "piper/Simulator/OpCounts.h"

#include "piper/Analysis/LocalSizes.h"

#include "piper/Dialect/Piper/IR/PiperOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/StringSwitch.h"

using namespace mlir;
using namespace mlir::piper;

namespace {

/// Static extents of a shaped type (a dynamic extent counts as 1).
SmallVector<double> dims(Type type) {
  SmallVector<double> out;
  if (auto shaped = dyn_cast<ShapedType>(type); shaped && shaped.hasRank())
    for (int64_t d : shaped.getShape())
      out.push_back(ShapedType::isDynamic(d) ? 1.0 : double(d));
  return out;
}

double numel(Type type) {
  double n = 1;
  for (double d : dims(type))
    n *= d;
  return isa<ShapedType>(type) ? n : 0;
}

double bytesOf(Type type) {
  auto shaped = dyn_cast<ShapedType>(type);
  if (!shaped)
    return 0;
  unsigned bits = shaped.getElementType().getIntOrFloatBitWidth();
  return numel(type) * double(std::max(8u, bits) / 8);
}

double last(Type type, unsigned fromEnd = 0) {
  SmallVector<double> d = dims(type);
  return d.size() > fromEnd ? d[d.size() - 1 - fromEnd] : 1;
}

double dim(Type type, unsigned i) {
  SmallVector<double> d = dims(type);
  return i < d.size() ? d[i] : 1;
}

/// Vector FLOPs per element of the elementwise and row-wise ops.
double elementwiseFlops(StringRef name) {
  return llvm::StringSwitch<double>(name)
      .Cases({"piper.add", "piper.sub", "piper.mul", "piper.relu"}, 1)
      .Case("piper.gelu", 8)
      .Case("piper.silu", 4)
      .Case("piper.swiglu", 5)
      .Case("piper.softmax", 5)
      .Case("piper.rmsnorm", 4)
      .Case("piper.layernorm", 8)
      .Default(-1);
}

/// The forward cost of op `name` on operands `ins` giving `outs`.
OpCount forward(StringRef name, TypeRange ins, TypeRange outs) {
  OpCount c;
  Type out = outs.empty() ? Type() : outs.front();
  if (name == "piper.matmul") {
    c.matrixFlops = 2 * numel(out) * last(ins[0]);
  } else if (name == "piper.linear") {
    c.matrixFlops = 2 * numel(out) * last(ins[0]);
    if (ins.size() > 2)
      c.vectorFlops = numel(out);
  } else if (name == "piper.attention") {
    // Causal: QK^T and PV over half the S x S scores, 2 FLOPs a product.
    double b = dim(ins[0], 0), s = dim(ins[0], 1), d = dim(ins[0], 2);
    c.matrixFlops = 2 * b * s * s * d;
    c.vectorFlops = 2.5 * b * s * s;
  } else if (name == "piper.cross_entropy") {
    c.vectorFlops = 5 * numel(ins[0]);
  } else if (name == "piper.router") {
    double t = dim(ins[0], 0), h = dim(ins[0], 1), e = last(ins[1]);
    c.matrixFlops = 2 * t * h * e;
    c.vectorFlops = 5 * t * e;
  } else if (name == "piper.expert_ffn") {
    // Gate, up and down products over every slot of every expert.
    double e = dim(ins[0], 0), cap = dim(ins[0], 1), h = dim(ins[0], 2),
           f = last(ins[1]);
    c.matrixFlops = 6 * e * cap * h * f;
    c.vectorFlops = 5 * e * cap * f;
  } else if (name == "piper.combine") {
    c.vectorFlops = 2 * numel(ins[1]) * last(out);
  } else if (name == "piper.adamw_update") {
    c.vectorFlops = 12 * numel(ins[0]);
  } else if (name == "piper.sgd_update") {
    c.vectorFlops = 4 * numel(ins[0]);
  } else if (double per = elementwiseFlops(name); per >= 0) {
    c.vectorFlops = per * numel(out);
  } else if (name == "piper.embedding" || name == "piper.dispatch" ||
             name == "piper.transpose") {
    // Data movement only.
  } else if (name == "piper.reshape") {
    return c; // A view: no kernel.
  } else {
    c.vectorFlops = out ? numel(out) : 0;
  }
  for (Type t : ins)
    c.bytes += bytesOf(t);
  for (Type t : outs)
    c.bytes += bytesOf(t);
  c.kernels = 1;
  return c;
}

/// The cost of the cotangent of operand `wrt` of op `name`.
OpCount backward(StringRef name, int64_t wrt, TypeRange primals,
                 TypeRange cotangents, TypeRange grads) {
  OpCount fwd = forward(name, primals, cotangents);
  OpCount c;
  if (name == "piper.linear" || name == "piper.matmul") {
    if (wrt < 2)
      c.matrixFlops = 2 * numel(cotangents[0]) * last(primals[0]);
    else
      c.vectorFlops = numel(cotangents[0]);
  } else if (name == "piper.attention") {
    // FlashAttention's backward is about 2.5x its forward; a third each.
    c.matrixFlops = 2.5 / 3 * fwd.matrixFlops;
    c.vectorFlops = 2.5 / 3 * fwd.vectorFlops;
  } else if (name == "piper.expert_ffn") {
    // d buf: d h = dy w_down^T, then d gate w_gate^T + d up w_up^T (6ECHF);
    // each weight one product (2ECHF): twice the forward in all.
    c.matrixFlops = (wrt == 0 ? 1.0 : 1.0 / 3) * fwd.matrixFlops;
    c.vectorFlops = wrt == 0 ? 2 * fwd.vectorFlops : 0;
  } else if (name == "piper.router") {
    c.matrixFlops = fwd.matrixFlops;
    c.vectorFlops = fwd.vectorFlops;
  } else if (name == "piper.combine") {
    c.vectorFlops = fwd.vectorFlops;
  } else if (name == "piper.embedding" || name == "piper.dispatch") {
    // Scatter-add of the cotangent rows.
    c.vectorFlops = numel(cotangents[0]);
  } else if (name == "piper.cross_entropy") {
    c.vectorFlops = 3 * numel(primals[0]);
  } else {
    c.vectorFlops = 2 * fwd.vectorFlops;
  }
  for (Type t : primals)
    c.bytes += bytesOf(t);
  for (Type t : cotangents)
    c.bytes += bytesOf(t);
  for (Type t : grads)
    c.bytes += bytesOf(t);
  c.kernels = 1;
  return c;
}

/// The cost of `op` with `typeOf` giving its values' types.
OpCount costWith(Operation *op, function_ref<Type(Value)> typeOf) {
  auto typesOf = [&](ValueRange values) {
    SmallVector<Type> types;
    for (Value v : values)
      types.push_back(typeOf(v));
    return types;
  };
  if (auto vjp = dyn_cast<VJPOp>(op)) {
    OpCount total;
    SmallVector<Type> primals = typesOf(vjp.getPrimals());
    SmallVector<Type> cts = typesOf(vjp.getCotangents());
    for (auto [i, wrt] : llvm::enumerate(vjp.getWrt()))
      total += backward(vjp.getOp(), wrt, primals, cts,
                        TypeRange(typeOf(vjp.getResult(i))));
    return total;
  }
  bool hasTensor =
      llvm::any_of(op->getOperandTypes(), llvm::IsaPred<ShapedType>) ||
      llvm::any_of(op->getResultTypes(), llvm::IsaPred<ShapedType>);
  if (!hasTensor)
    return {};
  return forward(op->getName().getStringRef(), typesOf(op->getOperands()),
                 typesOf(op->getResults()));
}

} // namespace

OpCount mlir::piper::countOp(Operation *op, const LocalSizes *sizes) {
  if (isa<func::CallOp, func::ReturnOp, YieldOp, CollectiveOp>(op) ||
      op->hasTrait<OpTrait::ConstantLike>())
    return {};
  OpCount global = costWith(op, [](Value v) { return v.getType(); });
  int64_t divisor = sizes ? sizes->getFlopDivisor(op) : 1;
  if (divisor <= 1)
    return global;
  // A device's share of a tensor-parallel op: the FLOPs divided as the
  // work is, the bytes of what it reads and writes.
  OpCount local = costWith(op, [&](Value v) { return sizes->getLocalType(v); });
  local.matrixFlops = global.matrixFlops / double(divisor);
  local.vectorFlops = global.vectorFlops / double(divisor);
  return local;
}

OpCount mlir::piper::countBody(FunctionOpInterface body,
                               const LocalSizes *sizes) {
  OpCount total;
  body->walk([&](Operation *op) {
    if (auto call = dyn_cast<func::CallOp>(op)) {
      if (auto callee = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
              op, call.getCalleeAttr()))
        total += countBody(callee);
      return;
    }
    if (isa<AnnotateOp>(op))
      return;
    total += countOp(op, sizes);
  });
  return total;
}
