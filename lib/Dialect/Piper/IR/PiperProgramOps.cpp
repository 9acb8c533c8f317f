//===- PiperProgramOps.cpp - per-device programs --------------------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Verifiers of the device-program ops. What one program can check alone
// lives here; what needs the whole set of programs (matching sends and
// receives, collective order, deadlock freedom, events waited on but never
// recorded) is `--piper-verify-programs`, so that hand-written faulty
// programs still parse and reach it.
//
//===----------------------------------------------------------------------===//

#include "piper/Dialect/Piper/IR/PiperOps.h"

#include "SumVerifier.h"

#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::piper;

/// The stream an instruction runs on, or null for inputs and outputs.
static StringAttr getInstructionStream(Operation *op) {
  return llvm::TypeSwitch<Operation *, StringAttr>(op)
      .Case<LaunchOp, SendOp, RecvOp, CommOp, RecordOp, WaitOp, SumOp>(
          [](auto op) { return op.getStreamAttr(); })
      .Default([](Operation *) { return StringAttr(); });
}

//===----------------------------------------------------------------------===//
// ProgramOp
//===----------------------------------------------------------------------===//

/// Checks the `buffers` of one instruction against its program's buffer
/// table: present exactly when the table is, one per result, in range.
static LogicalResult
verifyInstructionBuffers(Operation *op,
                         std::optional<ArrayRef<int64_t>> table) {
  if (!isa<InputOp, LaunchOp, RecvOp, CommOp, SumOp>(op))
    return success();
  auto buffers = op->getAttrOfType<DenseI64ArrayAttr>("buffers");
  if (!table) {
    if (buffers)
      return op->emitOpError()
             << "names buffers, but its program has no buffer table "
                "(`buffers [...]`)";
    return success();
  }
  if (!buffers)
    return op->emitOpError() << "names no buffers, but its program has a "
                                "buffer table; every result needs one";
  if (buffers.size() != (int64_t)op->getNumResults())
    return op->emitOpError() << "names " << buffers.size() << " buffers for "
                             << op->getNumResults() << " results";
  for (int64_t buffer : buffers.asArrayRef())
    if (buffer < 0 || buffer >= (int64_t)table->size())
      return op->emitOpError()
             << "names buffer " << buffer << ", but the program has "
             << table->size() << " buffers";
  return success();
}

bool ProgramOp::hasStream(StringRef stream) {
  return llvm::is_contained(getStreams().getAsValueRange<StringAttr>(), stream);
}

LogicalResult ProgramOp::verify() {
  if (getStreams().empty())
    return emitOpError() << "declares no stream";
  llvm::StringSet<> streams;
  for (StringRef stream : getStreams().getAsValueRange<StringAttr>())
    if (!streams.insert(stream).second)
      return emitOpError() << "declares stream \"" << stream << "\" twice";
  std::optional<ArrayRef<int64_t>> table = getBufferBytes();
  if (table) {
    for (auto [i, bytes] : llvm::enumerate(*table))
      if (bytes < 0)
        return emitOpError() << "buffer " << i << " has " << bytes
                             << " bytes; buffer sizes must be non-negative";
  }
  if (std::optional<int64_t> persistent = getPersistentBuffers()) {
    if (!table)
      return emitOpError() << "declares persistent buffers without a buffer "
                              "table (`buffers [...]`)";
    if (*persistent < 0 || *persistent > (int64_t)table->size())
      return emitOpError() << "declares " << *persistent
                           << " persistent buffers, but has " << table->size()
                           << " buffers";
  }
  llvm::DenseMap<int64_t, RecordOp> recorded;
  for (Operation &op : getBody().front()) {
    if (failed(verifyInstructionBuffers(&op, table)))
      return failure();
    if (!isa<InputOp, OutputOp, LaunchOp, SendOp, RecvOp, CommOp, RecordOp,
             WaitOp, SumOp>(op))
      return op.emitOpError()
             << "is inside a piper.program, which holds only program "
                "instructions (piper.input, piper.output, piper.launch, "
                "piper.send, piper.recv, piper.comm, piper.record, "
                "piper.wait, piper.sum)";
    if (StringAttr stream = getInstructionStream(&op);
        stream && !streams.contains(stream.getValue()))
      return op.emitOpError()
             << "runs on stream \"" << stream.getValue()
             << "\", which the program does not declare (streams: "
             << getStreams() << ")";
    if (auto record = dyn_cast<RecordOp>(op)) {
      auto [it, inserted] = recorded.try_emplace(record.getEvent(), record);
      if (!inserted) {
        InFlightDiagnostic diag = record.emitOpError()
                                  << "records event " << record.getEvent()
                                  << ", which is already recorded";
        diag.attachNote(it->second.getLoc()) << "the first record";
        return diag;
      }
    }
  }
  return success();
}

LogicalResult ProgramOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  MeshOp mesh = lookupMesh(*this, getMeshAttr());
  if (!mesh)
    return emitOpError() << "unknown mesh " << getMeshAttr();
  for (NamedAttribute entry : getRole()) {
    MeshAxisAttr axis = mesh.getAxis(entry.getName());
    if (!axis)
      return emitOpError() << "role names axis '" << entry.getName().getValue()
                           << "', but mesh " << getMeshAttr()
                           << " has no such axis (axes: "
                           << mesh.getAxisNamesForDiagnostic() << ")";
    auto coordinate = dyn_cast<IntegerAttr>(entry.getValue());
    if (!coordinate || coordinate.getType().isInteger(1) ||
        coordinate.getInt() < 0 || coordinate.getInt() >= axis.getSize())
      return emitOpError() << "role coordinate of axis '"
                           << entry.getName().getValue()
                           << "' must be an integer in [0, " << axis.getSize()
                           << ")";
  }
  auto step = symbolTable.lookupNearestSymbolFrom<FunctionOpInterface>(
      *this, getStepAttr());
  if (!step)
    return emitOpError() << "step " << getStepAttr() << " is not a function";
  ArrayRef<Type> stepInputs = step.getArgumentTypes();
  ArrayRef<Type> stepResults = step.getResultTypes();
  for (Operation &op : getBody().front()) {
    if (auto comm = dyn_cast<CommOp>(op)) {
      for (StringRef axis : comm.getAxes().getAsValueRange<StringAttr>())
        if (!mesh.getAxis(axis))
          return comm.emitOpError()
                 << "mesh " << getMeshAttr() << " has no axis '" << axis
                 << "' (axes: " << mesh.getAxisNamesForDiagnostic() << ")";
    } else if (auto output = dyn_cast<OutputOp>(op)) {
      int64_t index = output.getIndexAttr().getInt();
      if (index < 0 || index >= (int64_t)stepResults.size())
        return output.emitOpError()
               << "result " << index << " is out of range: " << getStepAttr()
               << " has " << (int64_t)stepResults.size() << " results";
      if (stepResults[index] != output.getValue().getType())
        return output.emitOpError()
               << "type " << output.getValue().getType() << " differs from "
               << stepResults[index] << " of result " << index << " of "
               << getStepAttr();
    } else if (auto input = dyn_cast<InputOp>(op)) {
      int64_t index = input.getIndexAttr().getInt();
      if (index < 0 || index >= (int64_t)stepInputs.size())
        return input.emitOpError()
               << "argument " << index << " is out of range: " << getStepAttr()
               << " has " << (int64_t)stepInputs.size() << " arguments";
      Type expected = stepInputs[index];
      if (input.getMicrobatch()) {
        auto tensor = dyn_cast<RankedTensorType>(expected);
        int64_t dim = *input.getDim(), count = *input.getCount();
        if (!tensor || dim >= tensor.getRank() || tensor.isDynamicDim(dim) ||
            tensor.getDimSize(dim) % count != 0)
          return input.emitOpError() << "argument " << index << " of type "
                                     << expected << " has no static dimension "
                                     << dim << " divisible by " << count;
        SmallVector<int64_t> shape(tensor.getShape());
        shape[dim] /= count;
        expected = tensor.clone(shape);
      }
      if (expected != input.getType())
        return input.emitOpError()
               << "type " << input.getType() << " differs from " << expected
               << " (argument " << index << " of " << getStepAttr() << ")";
    }
  }
  return success();
}

//===----------------------------------------------------------------------===//
// InputOp, OutputOp
//===----------------------------------------------------------------------===//

LogicalResult InputOp::verify() {
  if (getIndexAttr().getInt() < 0)
    return emitOpError() << "argument index must be non-negative";
  bool any = getMicrobatch() || getCount() || getDim();
  bool all = getMicrobatch() && getCount() && getDim();
  if (any && !all)
    return emitOpError() << "a microbatch needs 'microbatch', 'of' and "
                            "'along' together";
  if (!all)
    return success();
  int64_t microbatch = getMicrobatchAttr().getInt();
  int64_t count = getCountAttr().getInt(), dim = getDimAttr().getInt();
  if (count < 1 || microbatch < 0 || microbatch >= count || dim < 0)
    return emitOpError() << "microbatch " << microbatch << " of " << count
                         << " along " << dim << " is out of range";
  return success();
}

LogicalResult OutputOp::verify() {
  if (getIndexAttr().getInt() < 0)
    return emitOpError() << "result index must be non-negative";
  return success();
}

//===----------------------------------------------------------------------===//
// LaunchOp, SendOp, RecvOp
//===----------------------------------------------------------------------===//

LogicalResult LaunchOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  auto callee = symbolTable.lookupNearestSymbolFrom<FunctionOpInterface>(
      *this, getCalleeAttr());
  if (!callee)
    return emitOpError() << "launches " << getCalleeAttr()
                         << ", which is not a function";
  if (TypeRange(callee.getArgumentTypes()) != getInputs().getTypes() ||
      TypeRange(callee.getResultTypes()) != getOutputs().getTypes())
    return emitOpError() << "types differ from those of " << getCalleeAttr();
  return success();
}

/// Checks the peer and tag shared by sends and receives.
static LogicalResult verifyPeer(Operation *op, FlatSymbolRefAttr peer,
                                int64_t tag,
                                SymbolTableCollection &symbolTable) {
  auto program =
      symbolTable.lookupNearestSymbolFrom<ProgramOp>(op, peer.getAttr());
  if (!program)
    return op->emitOpError() << "peer " << peer << " is not a piper.program";
  if (program == op->getParentOp())
    return op->emitOpError()
           << "peer " << peer << " is the program the op is in";
  if (tag < 0)
    return op->emitOpError() << "tag must be non-negative, got " << tag;
  return success();
}

LogicalResult SendOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  return verifyPeer(*this, getPeerAttr(), getTagAttr().getInt(), symbolTable);
}

LogicalResult RecvOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  return verifyPeer(*this, getPeerAttr(), getTagAttr().getInt(), symbolTable);
}

//===----------------------------------------------------------------------===//
// CommOp, RecordOp, WaitOp, SumOp
//===----------------------------------------------------------------------===//

LogicalResult CommOp::verify() {
  if (getAxes().empty())
    return emitOpError() << "needs at least one mesh axis";
  llvm::StringSet<> seen;
  for (StringRef axis : getAxes().getAsValueRange<StringAttr>())
    if (!seen.insert(axis).second)
      return emitOpError() << "axis '" << axis << "' is listed twice";
  return success();
}

LogicalResult RecordOp::verify() {
  // I64Attr getters are unsigned: read the signed value.
  if (int64_t event = getEventAttr().getInt(); event < 0)
    return emitOpError() << "event must be non-negative, got " << event;
  return success();
}

LogicalResult WaitOp::verify() {
  // I64Attr getters are unsigned: read the signed value.
  if (int64_t event = getEventAttr().getInt(); event < 0)
    return emitOpError() << "event must be non-negative, got " << event;
  return success();
}

LogicalResult SumOp::verify() {
  return detail::verifySum(*this, getValues(), getType());
}
