//===- StampPeerRoles.cpp - Each transfer carries its peer's role ---------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// A send or receive names its peer by program symbol, but the lowering turns
// the peer into a world-rank offset from the peer's role, and the compile
// driver lowers each program in a module that no longer holds its peers. The
// role therefore travels on the op. It is also checked here, where both
// programs are still at hand, that the role locates exactly one peer device
// for every device of the sender's role.
//
//===----------------------------------------------------------------------===//

#include "piper/Dialect/Piper/Transforms/Passes.h"
#include "piper/Dialect/Piper/Transforms/PlanAnnotations.h"

#include "mlir/IR/SymbolTable.h"

namespace mlir::piper {
#define GEN_PASS_DEF_PIPERSTAMPPEERROLES
#include "piper/Dialect/Piper/Transforms/Passes.h.inc"
} // namespace mlir::piper

using namespace mlir;
using namespace mlir::piper;

namespace {

/// The role of `peer` as seen from `op` in `self`, or a located error when
/// it does not name one device per device of `self`'s role: a transfer
/// reaches the device with the sender's coordinates off the peer role's
/// axes, so the peer's role may only name axes the sender's role names, and
/// must differ from it on one of them.
FailureOr<DictionaryAttr> peerRoleOf(Operation *op, ProgramOp self,
                                     FlatSymbolRefAttr peer,
                                     SymbolTable &symbols) {
  auto program = symbols.lookup<ProgramOp>(peer.getValue());
  if (!program)
    return op->emitOpError()
           << "peer " << peer << " is not a piper.program of the module";
  DictionaryAttr role = program.getRole(), mine = self.getRole();
  bool differs = false;
  for (NamedAttribute coord : role) {
    Attribute own = mine.get(coord.getName());
    if (!own)
      return op->emitOpError()
             << "cannot stamp the role of peer " << peer << " (" << role
             << "): it names axis '" << coord.getName().getValue()
             << "', which the role of @" << self.getSymName() << " (" << mine
             << ") does not, so every replica along it would reach the same "
                "peer device";
    differs |= own != coord.getValue();
  }
  if (!differs)
    return op->emitOpError()
           << "cannot stamp the role of peer " << peer << " (" << role
           << "): it agrees with the role of @" << self.getSymName() << " ("
           << mine
           << ") on every axis it names, so the peer device would be "
              "the sender itself";
  return role;
}

struct PiperStampPeerRolesPass
    : public mlir::piper::impl::PiperStampPeerRolesBase<
          PiperStampPeerRolesPass> {
  void runOnOperation() override {
    if (failed(stampPeerRoles(getOperation())))
      signalPassFailure();
  }
};

} // namespace

LogicalResult mlir::piper::stampPeerRoles(ModuleOp module) {
  SymbolTable symbols(module);
  for (ProgramOp program : module.getOps<ProgramOp>())
    for (Operation &op : program.getBody().front()) {
      FlatSymbolRefAttr peer;
      if (auto send = dyn_cast<SendOp>(op))
        peer = send.getPeerAttr();
      else if (auto recv = dyn_cast<RecvOp>(op))
        peer = recv.getPeerAttr();
      else
        continue;
      FailureOr<DictionaryAttr> role = peerRoleOf(&op, program, peer, symbols);
      if (failed(role))
        return failure();
      op.setAttr(kPeerRoleAttrName, *role);
    }
  return success();
}
