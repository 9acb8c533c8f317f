//===- LocalBodies.h - Task bodies on a device's local types ----*- C++ -*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Under expert parallelism a device holds E / N of each expert weight
// (ReplicaLayout.h, split tensors) and the expert-side buffers the expert
// all-to-alls produce. A body the DAG types globally is cloned with the
// local types of its launch's operands and the types propagated, in order:
//
//  - `piper.collective all_to_all` whose operand still has its (token-side)
//    type [E, C, H] yields the expert-side [E / N, N C, H] ("to the
//    experts' owners"), and one whose operand is expert-side yields
//    [E, C, H] ("back"); either becomes a call of the shim
//    piper_comm_all_to_all_<t>(in, out, comm, direction) (CommCalls.h),
//    direction 0 to the experts and 1 back;
//  - `piper.collective all_reduce` (tensor parallelism's partial sums)
//    becomes a call of piper_comm_all_reduce_<t>;
//  - every other op reading a value whose type changed takes the per-device
//    form its distribution rule gives (DistributionOpInterface: local
//    result types, attention's share of the heads; a piper.vjp follows the
//    op it differentiates); piper.annotate its yield's types;
//  - an op without a rule, or whose rule rejects the types, is an error
//    (the rule says why).
//
// The clone's results (saved expert-side activations, updated expert
// weights) keep their local types for the launches that read them.
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_LIB_CONVERSION_LOCALBODIES_H
#define PIPER_LIB_CONVERSION_LOCALBODIES_H

#include "piper/Dialect/Piper/IR/PiperOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir::piper {

/// Whether `body` holds collectives (which only a local clone lowers).
bool hasBodyCollectives(func::FuncOp body);

/// `<body><suffix>`, or `<body><suffix>_1`, `_2`, ...: the first name no
/// symbol of `body`'s module has (clones of one body made by the lowerings
/// of several programs must not collide).
std::string freshBodyName(func::FuncOp body, StringRef suffix);

/// A clone of `body` (inserted after it, a fresh symbol `<body>.local`)
/// whose arguments have `argTypes` and whose collectives are shim calls;
/// fails with an error at `at` (the launch) on an op it cannot re-type.
FailureOr<func::FuncOp> cloneLocalBody(func::FuncOp body,
                                       ArrayRef<Type> argTypes, MeshOp mesh,
                                       Operation *at);

} // namespace mlir::piper

#endif // PIPER_LIB_CONVERSION_LOCALBODIES_H
