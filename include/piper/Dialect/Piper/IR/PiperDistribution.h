//===- PiperDistribution.h - What distribution rules read -------*- C++ -*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The vocabulary of `DistributionOpInterface` (PiperInterfaces.td): the
// question a rule is asked (an op, or the VJP of one, with its types in the
// global view and on one device), what one device runs (its local form) and
// what it costs. Kept apart from PiperOps.h because the generated interface
// declarations use these types.
//
// The `detail::` functions are the default rules (elementwise ops, a VJP
// whose gradients follow their primals) and the shape arithmetic the rules
// share; ops call them from their own rules.
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_DIALECT_PIPER_IR_PIPERDISTRIBUTION_H
#define PIPER_DIALECT_PIPER_IR_PIPERDISTRIBUTION_H

#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/TypeRange.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"

namespace mlir::piper {

/// The cost of one op, or a sum of them.
struct OpCount {
  /// Multiply-adds count two. Matrix products (tensor cores) apart from
  /// elementwise work (vector units), since their peaks differ 8-16x.
  double matrixFlops = 0;
  double vectorFlops = 0;
  /// Bytes read and written, every operand and result once (no fusion).
  double bytes = 0;
  /// Ops with a cost (kernels).
  int64_t kernels = 0;

  double flops() const { return matrixFlops + vectorFlops; }
  OpCount &operator+=(const OpCount &o) {
    matrixFlops += o.matrixFlops;
    vectorFlops += o.vectorFlops;
    bytes += o.bytes;
    kernels += o.kernels;
    return *this;
  }
};

/// What a distribution rule is asked about: an op, or the VJP of one (then
/// `wrt` is non-empty), at its types in the global view and on one device.
struct DistributionQuery {
  /// Operand types in the global view. For a VJP: the primals, then the
  /// cotangents of the forward op's results.
  TypeRange operands;
  /// What one device holds of each operand (`operands` when whole).
  TypeRange localOperands;
  /// Result types in the global view (a VJP: one gradient per `wrt`).
  TypeRange results;
  /// One device's result types; given when costing, empty when inferring.
  TypeRange localResults;
  /// The op's attributes (a VJP: the forward op's `forward_attrs`).
  DictionaryAttr attrs;
  /// A VJP: the primals differentiated, in order.
  ArrayRef<int64_t> wrt;
  /// How many of the operands are primals (all of them for a forward op).
  unsigned numPrimals = 0;

  bool isVJP() const { return !wrt.empty(); }
  /// Whether one device holds less than the whole of operand `i`.
  bool isSplit(unsigned i) const { return operands[i] != localOperands[i]; }
  TypeRange primals() const { return operands.take_front(numPrimals); }
  TypeRange localPrimals() const {
    return localOperands.take_front(numPrimals);
  }
  TypeRange cotangents() const { return operands.drop_front(numPrimals); }
  TypeRange localCotangents() const {
    return localOperands.drop_front(numPrimals);
  }
  /// The forward op a VJP differentiates: its primals giving (results of)
  /// the cotangents' types.
  DistributionQuery getForward() const;
  /// Result `i`'s local type when given, else its global one.
  Type localResult(unsigned i) const {
    return i < localResults.size() ? localResults[i] : results[i];
  }
};

/// What one device runs of an op: its result types, which of them are
/// partial sums over the split axis (an all_reduce makes them whole), and
/// the attributes that differ from the global op's (attention's heads).
struct LocalForm {
  SmallVector<Type> resultTypes;
  SmallVector<bool> partialSums;
  SmallVector<NamedAttribute> attrs;
};

/// Where expert parallelism moves a result: to the devices owning the
/// experts (all-to-all after a dispatch), back to the tokens' devices (after
/// the experts), or nowhere.
enum class ExpertExchange { None, ToExperts, FromExperts };

/// Gives a diagnostic that a rule completes with why it fails; null when the
/// caller wants no diagnostic (analyses take a failing op as whole).
using DistributionErrorFn = llvm::function_ref<InFlightDiagnostic()>;

namespace detail {
/// Static extents of a shaped type (a dynamic extent counts as 1).
SmallVector<double> getDims(Type type);
/// Elements of a shaped type (0 for anything else).
double getNumElements(Type type);
/// Bytes of a shaped type (at least one a element).
double getBytes(Type type);
/// Dim `i` of `type` (1 if absent).
double getDim(Type type, unsigned i);
/// The `fromEnd`-th last dim of `type` (1 if absent).
double getLastDim(Type type, unsigned fromEnd = 0);
/// How many times smaller `local`'s last dim is than `global`'s, the other
/// dims equal (a tensor-parallel split of channels); 0 if not such a split.
int64_t getChannelSplit(Type global, Type local);

/// The rule of an elementwise op: its tensor operands share one local type,
/// which every tensor result takes.
LogicalResult inferElementwiseLocalForm(const DistributionQuery &query,
                                        LocalForm &form,
                                        DistributionErrorFn error);
/// The rule of a VJP whose gradients are held as their primals are.
LogicalResult inferFollowPrimalsLocalForm(const DistributionQuery &query,
                                          LocalForm &form);
/// The rule of an op that runs only on whole operands (softmax, norms:
/// they reduce over the channels a split would cut); its VJP's gradients
/// follow their primals.
LogicalResult inferWholeOnlyLocalForm(const DistributionQuery &query,
                                      LocalForm &form);
/// The elementwise rule over the first `count` operands (an optimizer
/// update's tensors, not its step).
LogicalResult inferCommonLocalForm(const DistributionQuery &query,
                                   unsigned count, LocalForm &form,
                                   DistributionErrorFn error);
/// `perElement` vector FLOPs a local result element, plus the bytes.
OpCount getElementwiseCost(const DistributionQuery &query, double perElement);
/// The bytes of every operand and result at their local types, as one
/// kernel; the FLOPs are the caller's.
OpCount getKernelBytes(const DistributionQuery &query);
/// A VJP (one `wrt`) that costs twice its forward's vector FLOPs.
OpCount getDefaultVJPCost(const DistributionQuery &query, OpCount forward);
} // namespace detail

} // namespace mlir::piper

#endif // PIPER_DIALECT_PIPER_IR_PIPERDISTRIBUTION_H
