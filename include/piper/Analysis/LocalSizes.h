//===- LocalSizes.h - What one device holds of a task body ------*- C++ -*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// In the global view a tensor-parallel (Megatron) strategy keeps task bodies
// at their global shapes; a device holds and computes less. Given what one
// device holds of each argument of a body (a split parameter's shard), this
// analysis asks each op's distribution rule (DistributionOpInterface,
// PiperDistributionRule.h), the rule the native lowering's re-typer follows
// too, for every value's local type, how many times smaller it is than its
// global one, and how many times fewer FLOPs each op does on one device
// (its cost at the global types over its cost at the local ones).
//
// Beyond the rules: a collective's result is whole except an all_reduce's,
// which is its (partial-sum) operand's; piper.annotate's results are its
// yield's. An op without a rule, or whose rule rejects the types it reads,
// is taken as whole (FLOP divisor 1), as is work that is no smaller on one
// device (expert parallelism keeps its global-view figures: the tokens
// after the all_to_all multiply by what the experts divide).
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_ANALYSIS_LOCALSIZES_H
#define PIPER_ANALYSIS_LOCALSIZES_H

#include "piper/Dialect/Piper/IR/PiperOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseMap.h"

namespace mlir::piper {

class LocalSizes {
public:
  /// `argTypes`: what one device holds of each argument of `body` (its
  /// global type when whole); missing trailing entries are whole.
  LocalSizes(func::FuncOp body, ArrayRef<Type> argTypes);

  /// One device's type of `value` (its own type when whole or unknown).
  Type getLocalType(Value value) const;
  /// How many times fewer elements one device holds of `value` (>= 1).
  int64_t getDivisor(Value value) const;
  /// How many times fewer FLOPs `op` does on one device (>= 1).
  int64_t getFlopDivisor(Operation *op) const;
  /// One device's types of the body's results.
  SmallVector<Type> getResultTypes() const;
  /// Whether any argument is split (if not, every divisor is 1).
  bool isSplit() const { return split; }

private:
  void visit(Operation *op);
  void set(Value value, Type type);

  // Mutable: FuncOp's accessors are not const.
  mutable func::FuncOp body;
  bool split = false;
  DenseMap<Value, Type> local;
  DenseMap<Operation *, int64_t> flopDivisor;
};

/// How many times fewer elements `local` has than `global` (1 when not both
/// static ranked tensors or not a whole divisor).
int64_t getElementDivisor(Type global, Type local);

/// What one device holds of a parameter of global `type` under its
/// placement's split dims (ZeRO shards apart); `type` when unplaced.
Type getLocalParamType(ParamAttr param, Type type, Operation *from);

} // namespace mlir::piper

#endif // PIPER_ANALYSIS_LOCALSIZES_H
