//===- AssignBuffers.cpp - buffers of device programs ---------------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Gives every value a device program defines a buffer, and reuses a buffer
// once the value in it is dead on every stream that may still touch it.
//
// Streams run concurrently, so "dead" is not program order: a value whose
// last use is on stream "pp" may only give its buffer to a value defined on
// "compute" when an event orders that use before the definition. The
// happens-before relation is a vector clock per instruction, built in one
// pass over the program (records come before their waits in program order,
// which the verifier checks), so a query is one comparison.
//
// Assignment is greedy in program order, like a caching allocator: a value
// takes a freed buffer of its size class (the next power of two, as
// --piper-memory-plan rounds) or a new one; all-reduces and sums write in
// place over their (first) operand when it dies there; optimizer updates
// write the parameter's and state's persistent buffers. Checking only a
// buffer's latest holder suffices: holders form a chain in which each one
// ends before the next begins, and happens-before is transitive.
//
//===----------------------------------------------------------------------===//

#include "piper/Dialect/Piper/Transforms/Buffers.h"
#include "piper/Dialect/Piper/Transforms/CommReport.h"
#include "piper/Dialect/Piper/Transforms/Passes.h"
#include "piper/Dialect/Piper/Transforms/Programs.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/MathExtras.h"

#include <map>

namespace mlir::piper {
#define GEN_PASS_DEF_PIPERASSIGNBUFFERS
#include "piper/Dialect/Piper/Transforms/Passes.h.inc"
} // namespace mlir::piper

using namespace mlir;
using namespace mlir::piper;

//===----------------------------------------------------------------------===//
// Happens-before and lifetimes
//===----------------------------------------------------------------------===//

ProgramOrder::ProgramOrder(ProgramOp program) {
  DenseMap<StringAttr, unsigned> streams;
  for (Attribute stream : program.getStreams())
    streams.try_emplace(cast<StringAttr>(stream), streams.size());
  unsigned n = streams.size();
  // Per stream: what is known finished at its current point; per event:
  // what its record covers.
  std::vector<SmallVector<int64_t>> current(n, SmallVector<int64_t>(n, 0));
  DenseMap<int64_t, SmallVector<int64_t>> recorded;
  for (Operation &op : program.getBody().front()) {
    StringAttr stream = getProgramStream(&op);
    if (!stream)
      continue;
    auto it = streams.find(stream);
    if (it == streams.end())
      continue; // the program verifier rejects undeclared streams
    unsigned s = it->second;
    SmallVector<int64_t> &now = current[s];
    if (auto wait = dyn_cast<WaitOp>(op)) {
      if (auto rec = recorded.find(wait.getEvent()); rec != recorded.end())
        for (unsigned i = 0; i < n; ++i)
          now[i] = std::max(now[i], rec->second[i]);
    }
    clock[&op] = now;
    int64_t position = now[s] + 1;
    place[&op] = {s, position};
    // Later instructions of this stream start after this one finished.
    now[s] = position;
    if (auto record = dyn_cast<RecordOp>(op))
      recorded[record.getEvent()] = now;
  }
}

bool ProgramOrder::happensBefore(Operation *before, Operation *after) const {
  auto from = place.find(before);
  auto to = clock.find(after);
  if (from == place.end() || to == clock.end())
    return false;
  return from->second.second <= to->second[from->second.first];
}

BufferLifetime mlir::piper::getBufferLifetime(Value value) {
  BufferLifetime lifetime;
  Operation *def = value.getDefiningOp();
  if (!isa<InputOp>(def)) {
    lifetime.def = def;
    lifetime.ends.push_back(def);
  }
  for (Operation *user : value.getUsers()) {
    if (isa<OutputOp>(user))
      lifetime.output = user;
    else if (!llvm::is_contained(lifetime.ends, user))
      lifetime.ends.push_back(user);
  }
  return lifetime;
}

bool mlir::piper::mayWriteInPlace(Operation *op, Value value, bool persistent) {
  return llvm::TypeSwitch<Operation *, bool>(op)
      .Case([&](CommOp comm) { return comm.getValue() == value; })
      .Case([&](SumOp sum) { return sum.getValues().front() == value; })
      .Case([&](LaunchOp launch) {
        return persistent && llvm::is_contained(launch.getInputs(), value);
      })
      .Default([](Operation *) { return false; });
}

LogicalResult mlir::piper::checkBufferSharing(const ProgramOrder &order,
                                              Value earlier, Value later,
                                              bool persistent,
                                              Operation *&witness) {
  witness = nullptr;
  Operation *def = later.getDefiningOp();
  // Inputs are all there from the start of the step.
  if (isa<InputOp>(def))
    return failure();
  bool inPlace = mayWriteInPlace(def, earlier, persistent);
  // A persistent buffer keeps its value for the next step: only an in-place
  // update may take it over.
  if (persistent && !inPlace)
    return failure();
  BufferLifetime lifetime = getBufferLifetime(earlier);
  // A value the step returns is live until every stream has finished.
  if (lifetime.output) {
    witness = lifetime.output;
    return failure();
  }
  for (Operation *end : lifetime.ends) {
    if (inPlace && end == def)
      continue;
    if (!order.happensBefore(end, def)) {
      witness = end;
      return failure();
    }
  }
  return success();
}

int64_t mlir::piper::getBufferBytes(Value value) {
  return getTensorBytes(value.getType());
}

//===----------------------------------------------------------------------===//
// Assignment
//===----------------------------------------------------------------------===//

namespace {

struct Buffer {
  int64_t bytes = 0;
  bool persistent = false;
  /// The latest value written into it.
  Value holder;
};

/// The step argument each of the step's results updates in place (updated
/// parameters and their optimizer state), by result index.
DenseMap<int64_t, int64_t> getUpdatedArguments(func::FuncOp step) {
  DenseMap<int64_t, int64_t> updated;
  if (!step)
    return updated;
  DenseMap<Attribute, int64_t> byParam, byState;
  for (unsigned i = 0, e = step.getNumArguments(); i < e; ++i) {
    if (auto param = step.getArgAttrOfType<ParamAttr>(
            i, PiperDialect::getParamAttrName()))
      byParam[param.getName()] = i;
    if (Attribute state = step.getArgAttr(i, PiperDialect::getStateAttrName()))
      byState[state] = i;
  }
  for (unsigned i = 0, e = step.getNumResults(); i < e; ++i) {
    if (Attribute name =
            step.getResultAttr(i, PiperDialect::getUpdatedAttrName())) {
      if (auto it = byParam.find(name); it != byParam.end())
        updated[i] = it->second;
    } else if (Attribute state =
                   step.getResultAttr(i, PiperDialect::getStateAttrName())) {
      if (auto it = byState.find(state); it != byState.end())
        updated[i] = it->second;
    }
  }
  return updated;
}

bool isPersistentArgument(func::FuncOp step, int64_t index) {
  return step && index < (int64_t)step.getNumArguments() &&
         (step.getArgAttr(index, PiperDialect::getParamAttrName()) ||
          step.getArgAttr(index, PiperDialect::getStateAttrName()));
}

} // namespace

LogicalResult mlir::piper::assignBuffers(ProgramOp program) {
  if (program.getBufferBytes())
    return program.emitOpError() << "already has buffers; assign them once";
  auto step = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
      program, program.getStepAttr());
  DenseMap<int64_t, int64_t> updatedArgument = getUpdatedArguments(step);
  ProgramOrder order(program);
  Block &body = program.getBody().front();
  Builder builder(program.getContext());

  std::vector<Buffer> buffers;
  DenseMap<Value, unsigned> bufferOf;
  /// Step argument -> its persistent buffer.
  DenseMap<int64_t, unsigned> persistentOf;
  /// Free-list candidates per size class, in creation order.
  std::map<int64_t, SmallVector<unsigned>> byClass;

  // Persistent buffers first, so that they are the table's first entries.
  for (auto input : body.getOps<InputOp>()) {
    int64_t index = input.getIndex();
    if (input.getMicrobatch() || !isPersistentArgument(step, index) ||
        persistentOf.count(index))
      continue;
    persistentOf[index] = buffers.size();
    bufferOf[input] = buffers.size();
    // Allocated once for the whole run: exact bytes.
    buffers.push_back({getBufferBytes(input), true, input});
  }
  unsigned numPersistent = buffers.size();

  // Which persistent buffer an update result writes in place.
  auto persistentTarget = [&](Operation *op,
                              Value result) -> std::optional<unsigned> {
    auto launch = dyn_cast<LaunchOp>(op);
    if (!launch)
      return std::nullopt;
    for (Operation *user : result.getUsers()) {
      auto output = dyn_cast<OutputOp>(user);
      if (!output)
        continue;
      auto arg = updatedArgument.find(output.getIndex());
      if (arg == updatedArgument.end())
        continue;
      auto slot = persistentOf.find(arg->second);
      if (slot == persistentOf.end())
        continue;
      return slot->second;
    }
    return std::nullopt;
  };
  auto mayTake = [&](unsigned slot, Value value) {
    Operation *witness;
    return succeeded(checkBufferSharing(order, buffers[slot].holder, value,
                                        buffers[slot].persistent, witness));
  };

  for (Operation &op : body) {
    if (!isa<InputOp, LaunchOp, RecvOp, CommOp, SumOp>(op))
      continue;
    SmallVector<int64_t> assigned;
    for (Value result : op.getResults()) {
      if (auto it = bufferOf.find(result); it != bufferOf.end()) {
        assigned.push_back(it->second); // a persistent input
        continue;
      }
      int64_t sizeClass = llvm::PowerOf2Ceil(uint64_t(getBufferBytes(result)));
      std::optional<unsigned> chosen;
      // In place: an update into its persistent buffer; a collective or a
      // sum over the operand that dies there.
      if (std::optional<unsigned> target = persistentTarget(&op, result);
          target && buffers[*target].bytes == getBufferBytes(result) &&
          mayTake(*target, result))
        chosen = target;
      Value inPlaceOperand;
      if (auto comm = dyn_cast<CommOp>(op))
        inPlaceOperand = comm.getValue();
      else if (auto sum = dyn_cast<SumOp>(op))
        inPlaceOperand = sum.getValues().front();
      if (!chosen && inPlaceOperand) {
        auto it = bufferOf.find(inPlaceOperand);
        if (it != bufferOf.end() && !buffers[it->second].persistent &&
            buffers[it->second].holder == inPlaceOperand &&
            buffers[it->second].bytes == sizeClass &&
            mayTake(it->second, result))
          chosen = it->second;
      }
      if (!chosen)
        for (unsigned slot : byClass[sizeClass])
          if (mayTake(slot, result)) {
            chosen = slot;
            break;
          }
      if (!chosen) {
        chosen = buffers.size();
        buffers.push_back({sizeClass, false, Value()});
        byClass[sizeClass].push_back(*chosen);
      }
      buffers[*chosen].holder = result;
      bufferOf[result] = *chosen;
      assigned.push_back(*chosen);
    }
    op.setAttr("buffers", builder.getDenseI64ArrayAttr(assigned));
  }

  program.setBufferBytes(llvm::to_vector(llvm::map_range(
      buffers, [](const Buffer &buffer) { return buffer.bytes; })));
  program.setPersistentBuffers(numPersistent);
  return success();
}

namespace {
struct PiperAssignBuffersPass
    : public mlir::piper::impl::PiperAssignBuffersBase<PiperAssignBuffersPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto programs = llvm::to_vector(module.getOps<ProgramOp>());
    if (programs.empty()) {
      module.emitError() << "no piper.program to assign buffers in; partition "
                            "the DAG into device programs (--piper-partition) "
                            "first";
      return signalPassFailure();
    }
    for (ProgramOp program : programs) {
      if (failed(assignBuffers(program)))
        return signalPassFailure();
      if (!report)
        continue;
      ArrayRef<int64_t> bytes = *program.getBufferBytes();
      int64_t persistent = *program.getPersistentBuffers();
      int64_t values = 0, persistentBytes = 0, transientBytes = 0;
      for (Operation &op : program.getBody().front())
        if (auto assigned = op.getAttrOfType<DenseI64ArrayAttr>("buffers"))
          values += assigned.size();
      for (auto [i, size] : llvm::enumerate(bytes))
        (int64_t(i) < persistent ? persistentBytes : transientBytes) += size;
      llvm::outs() << "buffers of @" << program.getSymName() << " "
                   << formatDeviceGroup(program.getRole()) << ": " << values
                   << " values in " << bytes.size() << " buffers ("
                   << persistent << " persistent, " << persistentBytes
                   << " bytes; " << bytes.size() - persistent << " transient, "
                   << transientBytes << " bytes), "
                   << persistentBytes + transientBytes << " bytes reserved\n";
    }
  }
};
} // namespace
