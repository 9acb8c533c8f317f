//===- NumberCommunicators.cpp - One index per (axes, stream) -------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The runtime creates every communicator of a plan at start-up, in one
// order that all ranks share, and a lowered program names a communicator by
// its index in that order. The index must therefore be decided over all
// programs at once, before each is lowered alone: the sorted list of
// (axes in mesh order, stream) keys that any program's piper.comm, or any
// collective inside a body a program launches, uses.
//
//===----------------------------------------------------------------------===//

#include "piper/Dialect/Piper/Transforms/Passes.h"
#include "piper/Dialect/Piper/Transforms/PlanAnnotations.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/SmallPtrSet.h"

namespace mlir::piper {
#define GEN_PASS_DEF_PIPERNUMBERCOMMUNICATORS
#include "piper/Dialect/Piper/Transforms/Passes.h.inc"
} // namespace mlir::piper

using namespace mlir;
using namespace mlir::piper;

SmallVector<std::string>
mlir::piper::inMeshOrder(const std::set<std::string> &axes, MeshOp mesh) {
  SmallVector<std::string> ordered;
  for (MeshAxisAttr axis : mesh.getAxisList())
    if (axes.count(axis.getName().str()))
      ordered.push_back(axis.getName().str());
  return ordered;
}

SmallVector<std::string>
mlir::piper::collectBatchAxes(ArrayRef<ProgramOp> programs, MeshOp mesh) {
  std::set<std::string> axes;
  for (ProgramOp program : programs)
    program.walk([&](CommOp comm) {
      if (comm.getKind() == CollectiveKind::AllReduce ||
          comm.getKind() == CollectiveKind::ReduceScatter)
        for (Attribute a : comm.getAxes())
          axes.insert(cast<StringAttr>(a).str());
    });
  return inMeshOrder(axes, mesh);
}

FailureOr<SmallVector<CommKey>>
mlir::piper::numberCommunicators(ModuleOp module) {
  SmallVector<ProgramOp> programs(module.getOps<ProgramOp>());
  SmallVector<MeshOp> meshes(module.getOps<MeshOp>());
  if (meshes.size() != 1)
    return module.emitError() << "needs exactly one piper.mesh to lower "
                                 "device programs, found "
                              << meshes.size();
  MeshOp mesh = meshes.front();
  SmallVector<std::string> batchAxes = collectBatchAxes(programs, mesh);
  Builder b(module.getContext());
  SmallVector<Attribute> names;
  for (const std::string &axis : batchAxes)
    names.push_back(b.getStringAttr(axis));
  module->setAttr(kBatchAxesAttrName, b.getArrayAttr(names));

  std::set<CommKey> keys;
  auto keyOf = [&](ArrayAttr commAxes, StringRef stream) {
    std::set<std::string> axes;
    for (Attribute a : commAxes)
      axes.insert(cast<StringAttr>(a).str());
    return CommKey{inMeshOrder(axes, mesh), stream.str()};
  };
  WalkResult walk = module.walk([&](CommOp comm) {
    if (comm.getKind() == CollectiveKind::AllToAll) {
      comm.emitError() << "cannot lower '" << comm.getName()
                       << "': all_to_all between programs is not lowered "
                          "(only data-parallel gradient and ZeRO collectives "
                          "are)";
      return WalkResult::interrupt();
    }
    keys.insert(keyOf(comm.getAxes(), comm.getStream()));
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();
  // The collectives inside the bodies the programs launch (expert
  // all-to-alls): each runs on the communicator of its axes and stream.
  SymbolTable symbols(module);
  SmallVector<CollectiveOp> inBodies;
  llvm::SmallPtrSet<Operation *, 16> bodies;
  for (ProgramOp program : programs)
    program.walk([&](LaunchOp launch) {
      auto body = symbols.lookup<func::FuncOp>(launch.getCallee());
      if (body && bodies.insert(body).second)
        body.walk([&](CollectiveOp op) { inBodies.push_back(op); });
    });
  for (CollectiveOp op : inBodies)
    keys.insert(keyOf(op.getAxes(), op.getStream()));
  SmallVector<CommKey> list(keys.begin(), keys.end());
  SmallVector<Attribute> entries;
  for (const CommKey &key : list) {
    SmallVector<Attribute> axes;
    for (const std::string &axis : key.axes)
      axes.push_back(b.getStringAttr(axis));
    entries.push_back(
        b.getArrayAttr({b.getArrayAttr(axes), b.getStringAttr(key.stream)}));
  }
  module->setAttr(kCommunicatorsAttrName, b.getArrayAttr(entries));
  module.walk([&](CommOp comm) {
    auto index = llvm::find(list, keyOf(comm.getAxes(), comm.getStream())) -
                 list.begin();
    comm->setAttr(kCommIndexAttrName, b.getI64IntegerAttr(index));
  });
  for (CollectiveOp op : inBodies) {
    auto index =
        llvm::find(list, keyOf(op.getAxes(), op.getStream())) - list.begin();
    op->setAttr(kCommIndexAttrName, b.getI64IntegerAttr(index));
  }
  return list;
}

namespace {

struct PiperNumberCommunicatorsPass
    : public mlir::piper::impl::PiperNumberCommunicatorsBase<
          PiperNumberCommunicatorsPass> {
  void runOnOperation() override {
    if (failed(numberCommunicators(getOperation())))
      signalPassFailure();
  }
};

} // namespace
