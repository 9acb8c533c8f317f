//===- MoELinalg.h - Builders of the MoE ops' linalg kernels ----*- C++ -*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Shared by RouterToLinalg.cpp (the router and its VJP) and MoEToLinalg.cpp
// (slot assignment, dispatch, expert FFN, combine, their VJPs and the
// patterns): small tensor-level builders, element-type generic.
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_LIB_CONVERSION_MOELINALG_H
#define PIPER_LIB_CONVERSION_MOELINALG_H

#include "mlir/Dialect/Utils/StructuredOpsUtils.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"

namespace mlir::piper::moe {

/// An i64 value as an index.
Value toIndex(OpBuilder &b, Location loc, Value v);

/// A tensor of `shape` and `elt` with every element `value` (tensor.empty +
/// linalg.fill: no constant of the tensor's size in the plan).
Value filled(OpBuilder &b, Location loc, ArrayRef<int64_t> shape, Type elt,
             Value value);

/// The map from `numLoops` loops to the loop dims `dims`.
AffineMap loopMap(OpBuilder &b, unsigned numLoops, ArrayRef<unsigned> dims);

/// A linalg.generic with one output `init`: `fn` gets the input elements
/// and the output element and returns the new output element.
Value buildGeneric(OpBuilder &b, Location loc, ValueRange inputs, Value init,
                   ArrayRef<AffineMap> maps,
                   ArrayRef<utils::IteratorType> iterators,
                   function_ref<Value(OpBuilder &, Location, ValueRange)> fn);

/// The router's results, recomputed by its VJP: softmax probabilities
/// `probs` [T, E], the chosen experts `indices` [T, k] (i64) with their
/// probabilities `chosen` [T, k], and their sum `chosenSum` [T], all in
/// the compute type.
struct Routing {
  Value probs, chosen, indices, chosenSum;
};

/// Routes tokens `x` [T, H] with router weight `w` [H, E], `k` experts per
/// token (1 <= k <= E), as ref::router does.
Routing buildRouting(OpBuilder &b, Location loc, Value x, Value w, int64_t k);

/// The router's weights [T, k] (chosen / chosenSum) in `elt`.
Value buildRouterWeights(OpBuilder &b, Location loc, const Routing &r,
                         Type elt);

/// The cotangent of the router logits x w, [T, E] in `elt`, for the
/// cotangent `dWeights` [T, k] of the router's weights.
Value buildRouterLogitsCotangent(OpBuilder &b, Location loc, const Routing &r,
                                 Value dWeights, Type elt);

} // namespace mlir::piper::moe

#endif // PIPER_LIB_CONVERSION_MOELINALG_H
