//===- PiperNNOps.cpp - Piper neural-network operations -------------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Verifiers of the model-level NN ops. Each checks, in this order, that the
// float operands and results share one element type, the operand ranks, the
// relations between operand dims, the attributes, and finally the result
// type against the one the operands imply. A `?` dim matches anything, but
// every relation between static sizes is checked, also through a `?`
// (q: ?, k: 8, v: 16 is rejected).
//
//===----------------------------------------------------------------------===//

#include "piper/Dialect/Piper/IR/PiperOps.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/Support/Format.h"

using namespace mlir;
using namespace mlir::piper;

//===----------------------------------------------------------------------===//
// Shared checks
//===----------------------------------------------------------------------===//

namespace {
/// A value's type and the name diagnostics call it by (the ODS name).
struct NamedType {
  StringRef name;
  Type type;
};

/// A set of dims that must all have one size. Each static dim is compared
/// with the first static dim added (the reference), so a `?` among them does
/// not hide a mismatch between the others.
class EqualDims {
public:
  explicit EqualDims(Operation *op) : op(op) {}

  /// Adds the dim described by `desc` (e.g. "dim 0 of w") of size `size`.
  LogicalResult add(const Twine &desc, int64_t size) {
    if (ShapedType::isDynamic(size))
      return success();
    if (ShapedType::isDynamic(known)) {
      known = size;
      knownDesc = desc.str();
      return success();
    }
    if (size == known)
      return success();
    return op->emitOpError()
           << knownDesc << " (size " << known << ") does not match " << desc
           << " (size " << size << ")";
  }

  /// The common size, or `ShapedType::kDynamic` if every dim was `?`.
  int64_t size() const { return known; }
  /// Description of the dim the size was taken from.
  StringRef sizeDesc() const { return knownDesc; }

private:
  Operation *op;
  int64_t known = ShapedType::kDynamic;
  std::string knownDesc;
};
} // namespace

/// Prints `type` for a diagnostic, without the quotes `<< Type` adds, so that
/// messages read "expected result type tensor<4x32xf32>, got ...".
static std::string str(Type type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << type;
  return text;
}

static Type getElementType(Type type) {
  return cast<ShapedType>(type).getElementType();
}

/// Checks that all `values` have the element type of the first.
static LogicalResult verifyElementTypes(Operation *op,
                                        ArrayRef<NamedType> values) {
  Type expected = getElementType(values.front().type);
  for (const NamedType &value : values.drop_front()) {
    Type actual = getElementType(value.type);
    if (actual != expected)
      return op->emitOpError()
             << "element type of " << value.name << " (" << str(actual)
             << ") does not match element type of " << values.front().name
             << " (" << str(expected) << ")";
  }
  return success();
}

static LogicalResult verifyRank(Operation *op, StringRef name,
                                RankedTensorType type, int64_t rank) {
  if (type.getRank() == rank)
    return success();
  return op->emitOpError() << name << " must have rank " << rank << ", got "
                           << str(type);
}

static LogicalResult verifyMinRank(Operation *op, StringRef name,
                                   RankedTensorType type, int64_t rank) {
  if (type.getRank() >= rank)
    return success();
  return op->emitOpError() << name << " must have rank >= " << rank << ", got "
                           << str(type);
}

/// Checks the result `name` of type `actual` against the type the operands
/// imply, `shape` x `elementType`; `?` on either side matches any size.
static LogicalResult verifyResultType(Operation *op, StringRef name,
                                      Type actual, ArrayRef<int64_t> shape,
                                      Type elementType) {
  auto expected = RankedTensorType::get(shape, elementType);
  auto ranked = cast<RankedTensorType>(actual);
  if (ranked.getElementType() == elementType &&
      succeeded(verifyCompatibleShape(ranked.getShape(), shape)))
    return success();
  return op->emitOpError() << "expected " << name << " type " << str(expected)
                           << ", got " << str(actual);
}

static LogicalResult verifyEpsilon(Operation *op, double epsilon) {
  if (epsilon > 0)
    return success();
  // %g keeps the message short: "-1e-06", not "-9.9999999999999995E-7".
  std::string text;
  llvm::raw_string_ostream(text) << llvm::format("%g", epsilon);
  return op->emitOpError() << "epsilon must be > 0, got " << text;
}

//===----------------------------------------------------------------------===//
// MatmulOp
//===----------------------------------------------------------------------===//

LogicalResult MatmulOp::verify() {
  RankedTensorType lhs = getLhs().getType(), rhs = getRhs().getType();
  if (failed(verifyElementTypes(
          *this, {{"lhs", lhs}, {"rhs", rhs}, {"result", getType()}})) ||
      failed(verifyMinRank(*this, "lhs", lhs, 2)))
    return failure();
  int64_t rank = lhs.getRank(), rhsRank = rhs.getRank();
  if (rank == 2 && failed(verifyRank(*this, "rhs", rhs, 2)))
    return failure();
  if (rhsRank != 2 && rhsRank != rank)
    return emitOpError() << "rhs must have rank 2 or the rank of lhs (" << rank
                         << "), got " << str(rhs);

  SmallVector<int64_t> shape;
  for (int64_t i = 0; i < rank - 2; ++i) {
    EqualDims batch(*this);
    if (failed(
            batch.add("batch dim " + Twine(i) + " of lhs", lhs.getDimSize(i))))
      return failure();
    // A rank-2 rhs is shared by the whole batch.
    if (rhsRank == rank && failed(batch.add("batch dim " + Twine(i) + " of rhs",
                                            rhs.getDimSize(i))))
      return failure();
    shape.push_back(batch.size());
  }
  EqualDims contracting(*this);
  if (failed(contracting.add("contracting dim of lhs",
                             lhs.getDimSize(rank - 1))) ||
      failed(contracting.add("dim " + Twine(rhsRank - 2) + " of rhs",
                             rhs.getDimSize(rhsRank - 2))))
    return failure();
  shape.push_back(lhs.getDimSize(rank - 2));
  shape.push_back(rhs.getDimSize(rhsRank - 1));
  return verifyResultType(*this, "result", getType(), shape,
                          lhs.getElementType());
}

//===----------------------------------------------------------------------===//
// LinearOp
//===----------------------------------------------------------------------===//

LogicalResult LinearOp::verify() {
  RankedTensorType x = getX().getType(), w = getW().getType();
  SmallVector<NamedType> floats = {{"x", x}, {"w", w}};
  if (getBias())
    floats.push_back({"bias", getBias().getType()});
  floats.push_back({"result", getType()});
  if (failed(verifyElementTypes(*this, floats)) ||
      failed(verifyMinRank(*this, "x", x, 1)) ||
      failed(verifyRank(*this, "w", w, 2)) ||
      (getBias() && failed(verifyRank(*this, "bias", getBias().getType(), 1))))
    return failure();

  EqualDims in(*this), out(*this);
  if (failed(in.add("last dim of x", x.getShape().back())) ||
      failed(in.add("dim 0 of w", w.getDimSize(0))) ||
      failed(out.add("dim 1 of w", w.getDimSize(1))) ||
      (getBias() &&
       failed(out.add("dim 0 of bias", getBias().getType().getDimSize(0)))))
    return failure();
  SmallVector<int64_t> shape(x.getShape());
  shape.back() = out.size();
  return verifyResultType(*this, "result", getType(), shape,
                          x.getElementType());
}

//===----------------------------------------------------------------------===//
// SoftmaxOp
//===----------------------------------------------------------------------===//

LogicalResult SoftmaxOp::verify() {
  return verifyMinRank(*this, "x", getX().getType(), 1);
}

//===----------------------------------------------------------------------===//
// RmsNormOp and LayerNormOp
//===----------------------------------------------------------------------===//

/// Verifies a normalisation of `x[..., H]` with the per-channel parameters
/// `params` (each `[H]`) and result `result`.
static LogicalResult verifyNorm(Operation *op, RankedTensorType x,
                                ArrayRef<NamedType> params, double epsilon,
                                Type result) {
  SmallVector<NamedType> floats = {{"x", x}};
  llvm::append_range(floats, params);
  floats.push_back({"result", result});
  if (failed(verifyElementTypes(op, floats)) ||
      failed(verifyMinRank(op, "x", x, 1)))
    return failure();
  for (const NamedType &param : params)
    if (failed(
            verifyRank(op, param.name, cast<RankedTensorType>(param.type), 1)))
      return failure();

  EqualDims hidden(op);
  if (failed(hidden.add("last dim of x", x.getShape().back())))
    return failure();
  for (const NamedType &param : params)
    if (failed(hidden.add("dim 0 of " + param.name,
                          cast<RankedTensorType>(param.type).getDimSize(0))))
      return failure();
  if (failed(verifyEpsilon(op, epsilon)))
    return failure();
  SmallVector<int64_t> shape(x.getShape());
  shape.back() = hidden.size();
  return verifyResultType(op, "result", result, shape, x.getElementType());
}

LogicalResult RmsNormOp::verify() {
  // A weight shorter than the channels normalises groups of its size (the
  // per-head q/k norm); that needs only divisibility, checked here before
  // the common checks see the weight as the whole channel dim.
  RankedTensorType x = getX().getType(), w = getW().getType();
  int64_t hidden = x.getRank() ? x.getShape().back() : ShapedType::kDynamic;
  int64_t group = w.getRank() == 1 ? w.getDimSize(0) : ShapedType::kDynamic;
  if (ShapedType::isDynamic(hidden) || ShapedType::isDynamic(group) ||
      group == hidden)
    return verifyNorm(*this, x, {{"w", w}}, getEpsilon().convertToDouble(),
                      getType());
  if (group < 1 || hidden % group != 0)
    return emitOpError() << "dim 0 of w (size " << group
                         << ") does not divide the last dim of x (size "
                         << hidden << ")";
  auto wide = RankedTensorType::get({hidden}, w.getElementType());
  return verifyNorm(*this, x, {{"w", wide}}, getEpsilon().convertToDouble(),
                    getType());
}

LogicalResult LayerNormOp::verify() {
  return verifyNorm(*this, getX().getType(),
                    {{"w", getW().getType()}, {"b", getB().getType()}},
                    getEpsilon().convertToDouble(), getType());
}

//===----------------------------------------------------------------------===//
// AttentionOp
//===----------------------------------------------------------------------===//

LogicalResult AttentionOp::verify() {
  SmallVector<NamedType> qkv = {{"q", getQ().getType()},
                                {"k", getK().getType()},
                                {"v", getV().getType()}};
  SmallVector<NamedType> floats(qkv);
  floats.push_back({"result", getType()});
  if (failed(verifyElementTypes(*this, floats)))
    return failure();
  for (const NamedType &operand : qkv)
    if (failed(verifyRank(*this, operand.name,
                          cast<RankedTensorType>(operand.type), 3)))
      return failure();

  // Self-attention: q, k and v share [B, S]; k and v share their channels,
  // which are q's unless there are fewer key/value heads.
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < 2; ++d) {
    EqualDims dim(*this);
    for (const NamedType &operand : qkv)
      if (failed(dim.add("dim " + Twine(d) + " of " + operand.name,
                         cast<RankedTensorType>(operand.type).getDimSize(d))))
        return failure();
    shape.push_back(dim.size());
  }
  EqualDims kvDim(*this);
  if (failed(kvDim.add("dim 2 of k", getK().getType().getDimSize(2))) ||
      failed(kvDim.add("dim 2 of v", getV().getType().getDimSize(2))))
    return failure();
  int64_t hidden = getQ().getType().getDimSize(2);
  shape.push_back(hidden);

  int64_t numHeads = getNumHeadsAttr().getInt();
  if (numHeads < 1)
    return emitOpError() << "num_heads must be >= 1, got " << numHeads;
  if (!ShapedType::isDynamic(hidden) && hidden % numHeads != 0)
    return emitOpError() << "dim 2 of q (size " << hidden
                         << ") is not divisible by num_heads (" << numHeads
                         << ")";
  int64_t kvHeads = getNumKvHeads().value_or(numHeads);
  if (kvHeads < 1 || numHeads % kvHeads != 0)
    return emitOpError() << "num_kv_heads (" << kvHeads
                         << ") must be >= 1 and divide num_heads (" << numHeads
                         << ")";
  int64_t kvHidden = kvDim.size();
  if (!ShapedType::isDynamic(hidden) && !ShapedType::isDynamic(kvHidden) &&
      kvHidden * numHeads != hidden * kvHeads)
    return emitOpError() << "dim 2 of k and v (size " << kvHidden
                         << ") must be num_kv_heads * head dim = " << kvHeads
                         << " * " << hidden / numHeads;
  return verifyResultType(*this, "result", getType(), shape,
                          getQ().getType().getElementType());
}

//===----------------------------------------------------------------------===//
// RopeOp
//===----------------------------------------------------------------------===//

LogicalResult RopeOp::verify() {
  RankedTensorType x = getX().getType();
  if (failed(verifyRank(*this, "x", x, 3)))
    return failure();
  int64_t headDim = getHeadDim();
  if (headDim < 2 || headDim % 2 != 0)
    return emitOpError() << "head_dim must be even and >= 2, got " << headDim;
  int64_t hidden = x.getDimSize(2);
  if (!ShapedType::isDynamic(hidden) && hidden % headDim != 0)
    return emitOpError() << "head_dim (" << headDim
                         << ") does not divide dim 2 of x (size " << hidden
                         << ")";
  if (!(getTheta().convertToDouble() > 0))
    return emitOpError() << "theta must be > 0, got "
                         << getTheta().convertToDouble();
  // I64Attr getters return unsigned values: read the attributes signed.
  if (int64_t offset = getOffsetAttr().getInt(); offset < 0)
    return emitOpError() << "offset must be >= 0, got " << offset;
  if (IntegerAttr rotAttr = getRotaryDimAttr()) {
    int64_t rot = rotAttr.getInt();
    if (rot < 2 || rot % 2 != 0 || rot > headDim)
      return emitOpError() << "rotary_dim must be even, >= 2 and <= head_dim ("
                           << headDim << "), got " << rot;
  }
  return success();
}

//===----------------------------------------------------------------------===//
// EmbeddingOp
//===----------------------------------------------------------------------===//

LogicalResult EmbeddingOp::verify() {
  RankedTensorType table = getTable().getType();
  if (failed(verifyElementTypes(*this,
                                {{"table", table}, {"result", getType()}})) ||
      failed(verifyRank(*this, "table", table, 2)))
    return failure();
  SmallVector<int64_t> shape(getIds().getType().getShape());
  shape.push_back(table.getDimSize(1));
  return verifyResultType(*this, "result", getType(), shape,
                          table.getElementType());
}

//===----------------------------------------------------------------------===//
// CrossEntropyOp
//===----------------------------------------------------------------------===//

LogicalResult CrossEntropyOp::verify() {
  RankedTensorType logits = getLogits().getType(),
                   labels = getLabels().getType();
  if (failed(verifyElementTypes(*this,
                                {{"logits", logits}, {"result", getType()}})) ||
      failed(verifyRank(*this, "logits", logits, 2)) ||
      failed(verifyRank(*this, "labels", labels, 1)))
    return failure();
  EqualDims rows(*this);
  if (failed(rows.add("dim 0 of logits", logits.getDimSize(0))) ||
      failed(rows.add("dim 0 of labels", labels.getDimSize(0))))
    return failure();
  return verifyResultType(*this, "result", getType(), {},
                          logits.getElementType());
}

//===----------------------------------------------------------------------===//
// ReshapeOp
//===----------------------------------------------------------------------===//

LogicalResult ReshapeOp::verify() {
  RankedTensorType x = getX().getType(), result = getType();
  if (failed(verifyElementTypes(*this, {{"x", x}, {"result", result}})))
    return failure();
  if (!x.hasStaticShape())
    return emitOpError() << "x must have a static shape, got " << str(x);
  if (!result.hasStaticShape())
    return emitOpError() << "result must have a static shape, got "
                         << str(result);
  if (x.getNumElements() != result.getNumElements())
    return emitOpError() << "x (" << str(x) << ") has " << x.getNumElements()
                         << " elements but the result (" << str(result)
                         << ") has " << result.getNumElements();
  return success();
}

//===----------------------------------------------------------------------===//
// TransposeOp
//===----------------------------------------------------------------------===//

LogicalResult TransposeOp::verify() {
  RankedTensorType x = getX().getType();
  if (failed(verifyElementTypes(*this, {{"x", x}, {"result", getType()}})))
    return failure();
  ArrayRef<int64_t> permutation = getPermutation();
  int64_t rank = x.getRank();
  if (static_cast<int64_t>(permutation.size()) != rank)
    return emitOpError() << "permutation has " << permutation.size()
                         << " entries but x has rank " << rank;
  SmallVector<bool> seen(rank, false);
  SmallVector<int64_t> shape;
  for (int64_t dim : permutation) {
    if (dim < 0 || dim >= rank)
      return emitOpError() << "permutation entry " << dim
                           << " is out of range for rank " << rank;
    if (seen[dim])
      return emitOpError() << "permutation lists " << dim << " twice";
    seen[dim] = true;
    shape.push_back(x.getDimSize(dim));
  }
  return verifyResultType(*this, "result", getType(), shape,
                          x.getElementType());
}

//===----------------------------------------------------------------------===//
// RouterOp
//===----------------------------------------------------------------------===//

LogicalResult RouterOp::verify() {
  RankedTensorType x = getX().getType(), w = getW().getType();
  if (failed(verifyElementTypes(
          *this, {{"x", x}, {"w", w}, {"weights", getWeights().getType()}})) ||
      failed(verifyRank(*this, "x", x, 2)) ||
      failed(verifyRank(*this, "w", w, 2)))
    return failure();
  EqualDims hidden(*this);
  if (failed(hidden.add("dim 1 of x", x.getDimSize(1))) ||
      failed(hidden.add("dim 0 of w", w.getDimSize(0))))
    return failure();

  int64_t topK = getTopKAttr().getInt();
  int64_t numExperts = w.getDimSize(1);
  if (topK < 1)
    return emitOpError() << "top_k must be >= 1, got " << topK;
  if (!ShapedType::isDynamic(numExperts) && topK > numExperts)
    return emitOpError() << "top_k (" << topK
                         << ") exceeds the number of experts (dim 1 of w, "
                            "size "
                         << numExperts << ")";

  SmallVector<int64_t> shape = {x.getDimSize(0), topK};
  if (failed(verifyResultType(*this, "weights", getWeights().getType(), shape,
                              x.getElementType())))
    return failure();
  return verifyResultType(*this, "indices", getIndices().getType(), shape,
                          getIndices().getType().getElementType());
}

//===----------------------------------------------------------------------===//
// DispatchOp
//===----------------------------------------------------------------------===//

LogicalResult DispatchOp::verify() {
  RankedTensorType x = getX().getType(), indices = getIndices().getType(),
                   result = getType();
  if (failed(verifyElementTypes(*this, {{"x", x}, {"result", result}})) ||
      failed(verifyRank(*this, "x", x, 2)) ||
      failed(verifyRank(*this, "indices", indices, 2)) ||
      failed(verifyRank(*this, "result", result, 3)))
    return failure();
  EqualDims tokens(*this);
  if (failed(tokens.add("dim 0 of x", x.getDimSize(0))) ||
      failed(tokens.add("dim 0 of indices", indices.getDimSize(0))))
    return failure();

  int64_t capacity = getCapacityAttr().getInt();
  if (capacity < 1)
    return emitOpError() << "capacity must be >= 1, got " << capacity;
  if (!ShapedType::isDynamic(result.getDimSize(1)) &&
      result.getDimSize(1) != capacity)
    return emitOpError() << "capacity (" << capacity
                         << ") does not match dim 1 of the result (size "
                         << result.getDimSize(1) << ")";
  // The number of experts is read from the result type.
  return verifyResultType(*this, "result", result,
                          {result.getDimSize(0), capacity, x.getDimSize(1)},
                          x.getElementType());
}

//===----------------------------------------------------------------------===//
// ExpertFfnOp
//===----------------------------------------------------------------------===//

LogicalResult ExpertFfnOp::verify() {
  RankedTensorType buf = getBuf().getType(), gate = getWGate().getType(),
                   up = getWUp().getType(), down = getWDown().getType();
  SmallVector<NamedType> operands = {
      {"buf", buf}, {"w_gate", gate}, {"w_up", up}, {"w_down", down}};
  SmallVector<NamedType> floats(operands);
  floats.push_back({"result", getType()});
  if (failed(verifyElementTypes(*this, floats)))
    return failure();
  for (const NamedType &operand : operands)
    if (failed(verifyRank(*this, operand.name,
                          cast<RankedTensorType>(operand.type), 3)))
      return failure();

  EqualDims experts(*this), hidden(*this), ffn(*this);
  if (failed(experts.add("dim 0 of buf", buf.getDimSize(0))) ||
      failed(experts.add("dim 0 of w_gate", gate.getDimSize(0))) ||
      failed(experts.add("dim 0 of w_up", up.getDimSize(0))) ||
      failed(experts.add("dim 0 of w_down", down.getDimSize(0))) ||
      failed(hidden.add("dim 2 of buf", buf.getDimSize(2))) ||
      failed(hidden.add("dim 1 of w_gate", gate.getDimSize(1))) ||
      failed(hidden.add("dim 1 of w_up", up.getDimSize(1))) ||
      failed(hidden.add("dim 2 of w_down", down.getDimSize(2))) ||
      failed(ffn.add("dim 2 of w_gate", gate.getDimSize(2))) ||
      failed(ffn.add("dim 2 of w_up", up.getDimSize(2))) ||
      failed(ffn.add("dim 1 of w_down", down.getDimSize(1))))
    return failure();
  return verifyResultType(*this, "result", getType(),
                          {experts.size(), buf.getDimSize(1), hidden.size()},
                          buf.getElementType());
}

//===----------------------------------------------------------------------===//
// CombineOp
//===----------------------------------------------------------------------===//

LogicalResult CombineOp::verify() {
  RankedTensorType y = getY().getType(), weights = getWeights().getType(),
                   indices = getIndices().getType();
  if (failed(verifyElementTypes(
          *this, {{"y", y}, {"weights", weights}, {"result", getType()}})) ||
      failed(verifyRank(*this, "y", y, 3)) ||
      failed(verifyRank(*this, "weights", weights, 2)) ||
      failed(verifyRank(*this, "indices", indices, 2)))
    return failure();
  EqualDims tokens(*this), choices(*this);
  if (failed(tokens.add("dim 0 of weights", weights.getDimSize(0))) ||
      failed(tokens.add("dim 0 of indices", indices.getDimSize(0))) ||
      failed(choices.add("dim 1 of weights", weights.getDimSize(1))) ||
      failed(choices.add("dim 1 of indices", indices.getDimSize(1))))
    return failure();
  return verifyResultType(*this, "result", getType(),
                          {tokens.size(), y.getDimSize(2)}, y.getElementType());
}

//===----------------------------------------------------------------------===//
// CastOp
//===----------------------------------------------------------------------===//

LogicalResult CastOp::verify() {
  RankedTensorType x = getX().getType(), result = getType();
  if (x.getShape() != result.getShape())
    return emitOpError() << "x (" << str(x) << ") and the result ("
                         << str(result) << ") must have the same shape";
  if (x.getElementType() == result.getElementType())
    return emitOpError() << "x and the result have the same element type ("
                         << x.getElementType() << "); a cast must change it";
  return success();
}
