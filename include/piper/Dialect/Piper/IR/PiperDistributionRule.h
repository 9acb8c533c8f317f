//===- PiperDistributionRule.h - Asking an op how it splits -----*- C++ -*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// What the consumers of `DistributionOpInterface` call: the shard directive,
// the local-size analysis, the lowering's re-typing of bodies and the
// simulator's op counts. A `DistributionRule` pairs an op with the static
// rule that applies to it (its own, or for a `piper.vjp` the rule of the op
// it differentiates) and builds the queries; callers give one device's
// types and never name ops.
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_DIALECT_PIPER_IR_PIPERDISTRIBUTIONRULE_H
#define PIPER_DIALECT_PIPER_IR_PIPERDISTRIBUTIONRULE_H

#include "piper/Dialect/Piper/IR/PiperOps.h"

namespace mlir::piper {

class DistributionRule {
public:
  /// The rule of `op`; none when neither it nor the op it differentiates
  /// implements `DistributionOpInterface`.
  static std::optional<DistributionRule> get(Operation *op);

  /// The op asked about.
  DistributionOpInterface getOp() const { return op; }
  /// The op whose rule applies ("piper.linear" for the VJP of a linear).
  StringRef getRuleName() const { return ruleName; }

  /// One device's local form given what it holds of each operand. The
  /// op's own operand types are the global view unless `globalOperands` is
  /// given (a body re-typed in place keeps its original types elsewhere).
  /// `form.partialSums` has one entry per result.
  LogicalResult inferLocalForm(TypeRange localOperands, LocalForm &form,
                               DistributionErrorFn error = nullptr,
                               TypeRange globalOperands = {}) const;
  /// Makes the op its per-device form.
  void applyLocalForm(const LocalForm &form) const { op.applyLocalForm(form); }

  /// The op's FLOPs and bytes at the given operand and result types (its
  /// own types for the global view). A VJP costs the sum of its
  /// gradients, one kernel each.
  OpCount getCost(TypeRange operandTypes, TypeRange resultTypes) const;
  /// The same at the op's own types.
  OpCount getGlobalCost() const;

  /// Tensor parallelism: the weight operand a column (last dim) or row
  /// (dim 0) pattern splits, if any.
  std::optional<unsigned> getWeightOperand() const;
  /// Whether the op runs with its weight split; `error` completes the
  /// diagnostic.
  LogicalResult verifyWeightSplit(DistributionErrorFn error) const;
  /// Which results are partial sums when one device holds `localOperands`
  /// (one entry per result).
  SmallVector<bool> getPartialSums(TypeRange localOperands) const;
  /// Sequence parallelism: the operands to gather whole along the tokens
  /// when one device holds `localOperands`.
  SmallVector<unsigned> getTokenGatheredOperands(TypeRange localOperands) const;
  /// Expert parallelism: the operands holding expert weights.
  SmallVector<unsigned> getExpertWeightOperands() const;
  /// Expert parallelism: where each result goes (one entry per result).
  SmallVector<ExpertExchange> getExpertExchanges() const;
  /// Whether the op differentiates another (its results are gradients).
  bool isGradient() const { return ruleName != op->getName().getStringRef(); }
  /// Whether the result is partial when every operand is.
  bool propagatesPartialSums() const;
  /// The groups (heads) a split of the op's channels must divide; 0: any.
  int64_t getChannelGroups() const;

private:
  DistributionRule(DistributionOpInterface op,
                   const DistributionOpInterface::Concept *rule,
                   StringRef ruleName)
      : op(op), rule(rule), ruleName(ruleName) {}

  DistributionQuery query(TypeRange localOperands,
                          TypeRange localResults) const {
    return op.getDistributionQuery(localOperands, localResults);
  }

  // Mutable: interface accessors are not const.
  mutable DistributionOpInterface op;
  const DistributionOpInterface::Concept *rule;
  StringRef ruleName;
};

} // namespace mlir::piper

#endif // PIPER_DIALECT_PIPER_IR_PIPERDISTRIBUTIONRULE_H
