//===- PlanAnnotations.h - What programs carry to be lowered alone -*- C++ -*-//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The compile driver lowers each device program alone, in a clone of the
// module that holds no other program. What the lowering needs to know about
// the other programs is decided once, over all of them, and written onto the
// IR first by two passes that only wire the functions below:
//
//   --piper-number-communicators  every (axes, stream) communicator the
//                                 programs use, numbered; the batch axes
//   --piper-stamp-peer-roles      each send/recv carries its peer's role
//
// The attribute names are not under `piper.`: the dialect verifies its own
// attribute names, and these belong to the plan, not to the ops.
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_DIALECT_PIPER_TRANSFORMS_PLANANNOTATIONS_H
#define PIPER_DIALECT_PIPER_TRANSFORMS_PLANANNOTATIONS_H

#include "piper/Dialect/Piper/IR/PiperOps.h"

#include "mlir/IR/BuiltinOps.h"

#include <set>
#include <string>
#include <tuple>

namespace mlir::piper {

/// On the module: the batch axes (ArrayAttr of strings, mesh order).
constexpr llvm::StringLiteral kBatchAxesAttrName = "piper_plan.batch_axes";
/// On the module: the communicator list, [[axes...], stream] per entry.
constexpr llvm::StringLiteral kCommunicatorsAttrName =
    "piper_plan.communicators";
/// On a piper.comm (and a collective inside a launched body): its
/// communicator's index in the plan's list.
constexpr llvm::StringLiteral kCommIndexAttrName = "piper_plan.comm";
/// On a piper.send / piper.recv: the peer program's role, for when the peer
/// is not in the module being lowered (the compile driver lowers each
/// program alone).
constexpr llvm::StringLiteral kPeerRoleAttrName = "piper_plan.peer_role";

/// On the module: the default gradient-norm bound (F64Attr) of a plan that
/// clips gradients (piper-compile --clip-grad-norm; docs/Training.md).
constexpr llvm::StringLiteral kClipGradNormAttrName =
    "piper_plan.clip_grad_norm";

/// One communicator every program may use: (axes, stream).
struct CommKey {
  SmallVector<std::string> axes;
  std::string stream;
  bool operator<(const CommKey &other) const {
    return std::tie(axes, stream) < std::tie(other.axes, other.stream);
  }
  bool operator==(const CommKey &other) const {
    return axes == other.axes && stream == other.stream;
  }
};

/// `axes` sorted into the order of `mesh`'s axes (names `mesh` lacks are
/// dropped).
SmallVector<std::string> inMeshOrder(const std::set<std::string> &axes,
                                     MeshOp mesh);

/// The batch axes of `programs` (mesh order): the union of the axes of their
/// reducing collectives.
SmallVector<std::string> collectBatchAxes(ArrayRef<ProgramOp> programs,
                                          MeshOp mesh);

/// Every communicator the programs' piper.comm ops and the collectives in
/// the bodies they launch use, sorted; tags each with its index
/// (kCommIndexAttrName) and the module with the batch axes
/// (kBatchAxesAttrName) and the list (kCommunicatorsAttrName). Fails, with a
/// located error, on a module without exactly one mesh and on a collective
/// the native lowering cannot run (see `--piper-number-communicators`).
FailureOr<SmallVector<CommKey>> numberCommunicators(ModuleOp module);

/// Stamps every piper.send and piper.recv of the module's programs with its
/// peer program's role (kPeerRoleAttrName), so that the program can be
/// lowered without its peer. Fails, with a located error, on a peer that is
/// not a program of the module, or one whose role does not locate it (see
/// `--piper-stamp-peer-roles`).
LogicalResult stampPeerRoles(ModuleOp module);

} // namespace mlir::piper

#endif // PIPER_DIALECT_PIPER_TRANSFORMS_PLANANNOTATIONS_H
