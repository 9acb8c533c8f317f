//===- PiperDAGOps.cpp - The global training DAG --------------------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "piper/Dialect/Piper/IR/PiperOps.h"

#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

using namespace mlir;
using namespace mlir::piper;

//===----------------------------------------------------------------------===//
// DAGOp
//===----------------------------------------------------------------------===//

std::string mlir::piper::formatTags(ArrayRef<NamedAttribute> tags) {
  std::string text = "{";
  llvm::raw_string_ostream os(text);
  llvm::interleave(
      tags, os,
      [&](NamedAttribute tag) {
        os << tag.getName().getValue() << "=";
        if (auto integer = dyn_cast<IntegerAttr>(tag.getValue()))
          os << integer.getInt();
        else if (auto string = dyn_cast<StringAttr>(tag.getValue()))
          os << string.getValue();
        else
          os << tag.getValue();
      },
      ",");
  os << "}";
  return text;
}

std::string mlir::piper::formatDeviceGroup(DictionaryAttr devices) {
  return formatTags(devices.getValue());
}

StringRef mlir::piper::getNodeName(Operation *node) {
  if (auto task = dyn_cast<TaskOp>(node))
    return task.getName();
  if (auto transfer = dyn_cast<TransferOp>(node))
    return transfer.getName();
  if (auto collective = dyn_cast<CollectiveOp>(node))
    return collective.getName();
  if (auto microbatch = dyn_cast<MicrobatchOp>(node))
    return microbatch.getName();
  if (auto accumulate = dyn_cast<AccumulateOp>(node))
    return accumulate.getName();
  return {};
}

RegionKind DAGOp::getRegionKind(unsigned index) { return RegionKind::Graph; }

LogicalResult DAGOp::verify() {
  // Nodes only: computation lives in the outlined bodies, so that every
  // piece of work is something directives can select and place.
  for (Operation &op : getBody().front().without_terminator())
    if (!isa<TaskOp, TransferOp, CollectiveOp, MicrobatchOp, AccumulateOp>(op))
      return op.emitOpError()
             << "is inside a piper.dag, which holds only nodes (piper.task, "
                "piper.transfer, piper.collective, piper.microbatch, "
                "piper.accumulate)";
  llvm::StringMap<Operation *> names;
  for (Operation &op : getBody().front().without_terminator()) {
    StringRef name = getNodeName(&op);
    auto [it, inserted] = names.try_emplace(name, &op);
    if (!inserted) {
      InFlightDiagnostic diag = op.emitOpError()
                                << "has the name '" << name
                                << "' of another node of the DAG";
      diag.attachNote(it->second->getLoc()) << "the other node";
      return diag;
    }
  }
  llvm::StringMap<TaskOp> tasks;
  for (auto task : getBody().getOps<TaskOp>())
    tasks[task.getName()] = task;
  for (auto task : getBody().getOps<TaskOp>()) {
    for (StringRef before : task.getAfter().getAsValueRange<StringAttr>()) {
      if (before == task.getName())
        return task.emitOpError()
               << "'" << before << "' is ordered after itself";
      if (!tasks.count(before))
        return task.emitOpError() << "is ordered after '" << before
                                  << "', which is not a node of the DAG";
    }
  }
  auto yield = cast<DAGYieldOp>(getBody().front().getTerminator());
  if (yield.getOperandTypes() != getResultTypes())
    return emitOpError() << "yields " << yield.getNumOperands()
                         << " values whose types differ from its "
                         << getNumResults() << " results";
  return success();
}

//===----------------------------------------------------------------------===//
// TaskOp
//===----------------------------------------------------------------------===//

/// A hand-written placement must name devices that exist: with exactly one
/// mesh in scope (the case of every compiled model) each coordinate is
/// checked against its axis, as transform.piper.place does. Without a
/// single mesh only the sign is checked; partitioning then rejects the
/// module for its missing mesh.
static LogicalResult verifyDevices(TaskOp task) {
  DictionaryAttr devices = task.getDevicesAttr();
  if (!devices)
    return success();
  MeshOp mesh;
  if (Operation *table = SymbolTable::getNearestSymbolTable(task)) {
    unsigned meshes = 0;
    for (Region &region : table->getRegions())
      for (MeshOp candidate : region.getOps<MeshOp>()) {
        mesh = candidate;
        ++meshes;
      }
    if (meshes != 1)
      mesh = {};
  }
  for (NamedAttribute axis : devices) {
    auto coordinate = dyn_cast<IntegerAttr>(axis.getValue());
    if (!coordinate || coordinate.getType().isInteger(1) ||
        coordinate.getValue().isNegative())
      return task.emitOpError()
             << "coordinate of axis '" << axis.getName().getValue()
             << "' in 'devices' must be a non-negative integer";
    if (!mesh)
      continue;
    MeshAxisAttr meshAxis = mesh.getAxis(axis.getName().getValue());
    if (!meshAxis)
      return task.emitOpError()
             << "'devices' names axis '" << axis.getName().getValue()
             << "', which mesh @" << mesh.getSymName()
             << " does not have (axes: " << mesh.getAxisNamesForDiagnostic()
             << ")";
    uint64_t at = coordinate.getValue().getLimitedValue();
    if (at >= uint64_t(meshAxis.getSize()))
      return task.emitOpError()
             << "axis '" << axis.getName().getValue() << "' of @"
             << mesh.getSymName() << " has size " << meshAxis.getSize()
             << "; coordinate " << at << " is out of range";
  }
  return success();
}

LogicalResult TaskOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  auto callee = symbolTable.lookupNearestSymbolFrom<FunctionOpInterface>(
      *this, getCalleeAttr());
  if (!callee)
    return emitOpError() << "calls " << getCalleeAttr()
                         << ", which is not a function";
  if (TypeRange(callee.getArgumentTypes()) != getInputs().getTypes() ||
      TypeRange(callee.getResultTypes()) != getOutputs().getTypes())
    return emitOpError() << "types differ from those of " << getCalleeAttr();
  return verifyDevices(*this);
}

//===----------------------------------------------------------------------===//
// TransferOp
//===----------------------------------------------------------------------===//

LogicalResult TransferOp::verify() {
  if (getFrom() == getTo())
    return emitOpError() << "moves a value from " << getFrom()
                         << " to the same devices";
  return success();
}

//===----------------------------------------------------------------------===//
// CollectiveOp
//===----------------------------------------------------------------------===//

LogicalResult CollectiveOp::verify() {
  // A DAG node, or communication inside a task body; a collective nested
  // anywhere else would be run by nobody (or by the DAG without a node).
  if (isa<DAGOp>((*this)->getParentOp()))
    return success();
  if (!(*this)->getParentOfType<FunctionOpInterface>() ||
      (*this)->getParentOfType<DAGOp>())
    return emitOpError() << "must be a node of a piper.dag or inside a "
                            "function body (a task's outlined body)";
  if (getDevicesAttr())
    return emitOpError() << "inside a function body runs on the devices of "
                            "the task that calls it; only a DAG node has "
                            "'devices'";
  return success();
}

LogicalResult
CollectiveOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  MeshOp mesh = lookupMesh(*this, getMeshAttr());
  if (!mesh)
    return emitOpError() << "unknown mesh " << getMeshAttr();
  llvm::StringSet<> seen;
  for (StringRef axis : getAxes().getAsValueRange<StringAttr>()) {
    if (!mesh.getAxis(axis))
      return emitOpError() << "mesh " << getMeshAttr() << " has no axis '"
                           << axis
                           << "' (axes: " << mesh.getAxisNamesForDiagnostic()
                           << ")";
    if (!seen.insert(axis).second)
      return emitOpError() << "axis '" << axis << "' is listed twice";
  }
  return success();
}
