//===- VerifyPrograms.cpp - cross-rank verification -----------------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Checks a module's device programs as one distributed step, before anything
// runs: a fault found here would otherwise be a hang on thousands of ranks.
//
// Replicas of a role run its program symmetrically, so one instance per
// program stands for all of them: a collective whose members all run one
// program is reached by all of them at once, and a send reaches the peer
// replica with the same coordinates off the roles' axes. The deadlock check
// runs every stream symbolically with blocking semantics; the result does not
// depend on the order streams are tried in, because an instruction that can
// complete stays able to (progress is monotone), so a fixed point with
// unfinished streams is a deadlock whatever the timing.
//
//===----------------------------------------------------------------------===//

#include "piper/Dialect/Piper/Transforms/Buffers.h"
#include "piper/Dialect/Piper/Transforms/Passes.h"
#include "piper/Dialect/Piper/Transforms/Programs.h"

#include "llvm/ADT/TypeSwitch.h"

#include <map>

namespace mlir::piper {
#define GEN_PASS_DEF_PIPERVERIFYPROGRAMS
#include "piper/Dialect/Piper/Transforms/Passes.h.inc"
} // namespace mlir::piper

using namespace mlir;
using namespace mlir::piper;

std::string mlir::piper::getCommGroupKey(ProgramOp program, ArrayAttr axes) {
  std::string text;
  llvm::raw_string_ostream os(text);
  for (NamedAttribute axis : program.getRole())
    if (!llvm::is_contained(axes, axis.getName()))
      os << axis.getName().getValue() << "=" << axis.getValue() << ";";
  return text;
}

StringAttr mlir::piper::getProgramStream(Operation *op) {
  return llvm::TypeSwitch<Operation *, StringAttr>(op)
      .Case<LaunchOp, SendOp, RecvOp, CommOp, RecordOp, WaitOp, SumOp>(
          [](auto op) { return op.getStreamAttr(); })
      .Default([](Operation *) { return StringAttr(); });
}

namespace {

/// `@step.pp0 {pp=0}`: a program as diagnostics name it.
std::string describe(ProgramOp program) {
  return "@" + program.getSymName().str() + " " +
         formatDeviceGroup(program.getRole());
}

/// `recv 'x' (from @b, tag 1)`: an instruction as diagnostics name it.
std::string describe(Operation *op) {
  std::string text;
  llvm::raw_string_ostream os(text);
  llvm::TypeSwitch<Operation *>(op)
      .Case([&](SendOp send) {
        os << "send '" << send.getName() << "' (to " << send.getPeerAttr()
           << ", tag " << send.getTag() << ")";
      })
      .Case([&](RecvOp recv) {
        os << "recv '" << recv.getName() << "' (from " << recv.getPeerAttr()
           << ", tag " << recv.getTag() << ")";
      })
      .Case([&](CommOp comm) {
        os << stringifyCollectiveKind(comm.getKind()) << " '" << comm.getName()
           << "' (" << comm.getValue().getType() << ")";
      })
      .Case([&](WaitOp wait) { os << "wait for event " << wait.getEvent(); })
      .Case(
          [&](LaunchOp launch) { os << "launch '" << launch.getName() << "'"; })
      .Case([&](SumOp sum) { os << "sum '" << sum.getName() << "'"; })
      .Case([&](InputOp input) {
        os << "input " << input.getIndex();
        if (input.getMicrobatch())
          os << " (microbatch " << *input.getMicrobatch() << ")";
      })
      .Case([&](OutputOp output) { os << "output " << output.getIndex(); })
      .Default([&](Operation *op) { os << op->getName(); });
  return text;
}

/// `result #1 of launch 'F'`, `recv 'x' (from @b, tag 1)`: a value as
/// diagnostics name it.
std::string describeValue(Value value) {
  auto result = cast<OpResult>(value);
  if (result.getOwner()->getNumResults() == 1)
    return describe(result.getOwner());
  return "result #" + std::to_string(result.getResultNumber()) + " of " +
         describe(result.getOwner());
}

/// The members of one communicator: the collectives each member program
/// issues on it, in program order.
struct Communicator {
  std::string description;
  /// Member program index -> its collectives on this communicator.
  std::map<unsigned, SmallVector<CommOp>> members;
};

class Verifier {
public:
  explicit Verifier(ModuleOp module) {
    for (auto program : module.getOps<ProgramOp>()) {
      index[program.getSymNameAttr()] = programs.size();
      programs.push_back(program);
      for (NamedAttribute axis : program.getRole())
        roleAxes.insert(axis.getName());
    }
  }

  LogicalResult run() {
    if (failed(matchMessages()) || failed(checkEvents()) ||
        failed(matchCollectives()) || failed(simulate()) ||
        failed(checkParameterReads()))
      return failure();
    for (ProgramOp program : programs)
      if (failed(checkBuffers(program)))
        return failure();
    return success();
  }

private:
  LogicalResult matchMessages();
  LogicalResult checkEvents();
  LogicalResult matchCollectives();
  LogicalResult simulate();
  LogicalResult checkBuffers(ProgramOp program);
  LogicalResult checkParameterReads();

  SmallVector<ProgramOp> programs;
  DenseMap<StringAttr, unsigned> index;
  llvm::SetVector<StringAttr> roleAxes;
  /// Send <-> recv.
  DenseMap<Operation *, Operation *> partner;
  /// Communicator key -> members; and each collective's place in it.
  std::map<std::string, Communicator> communicators;
  DenseMap<Operation *, std::pair<Communicator *, unsigned>> placeOf;
  /// (program, event) -> its record.
  std::map<std::pair<unsigned, int64_t>, RecordOp> records;
};

} // namespace

LogicalResult Verifier::matchMessages() {
  // (sender, receiver, tag) -> op, on each side.
  std::map<std::tuple<unsigned, unsigned, int64_t>, SendOp> sends;
  std::map<std::tuple<unsigned, unsigned, int64_t>, RecvOp> recvs;
  for (auto [p, program] : llvm::enumerate(programs)) {
    for (Operation &op : program.getBody().front()) {
      if (auto send = dyn_cast<SendOp>(op)) {
        unsigned peer = index.lookup(send.getPeerAttr().getAttr());
        auto [it, inserted] =
            sends.try_emplace({(unsigned)p, peer, send.getTag()}, send);
        if (!inserted) {
          InFlightDiagnostic diag = send.emitOpError()
                                    << describe(program) << " sends twice to "
                                    << send.getPeerAttr() << " with tag "
                                    << send.getTag();
          diag.attachNote(it->second.getLoc()) << "the other send";
          return diag;
        }
      } else if (auto recv = dyn_cast<RecvOp>(op)) {
        unsigned peer = index.lookup(recv.getPeerAttr().getAttr());
        auto [it, inserted] =
            recvs.try_emplace({peer, (unsigned)p, recv.getTag()}, recv);
        if (!inserted) {
          InFlightDiagnostic diag =
              recv.emitOpError()
              << describe(program) << " receives twice from "
              << recv.getPeerAttr() << " with tag " << recv.getTag();
          diag.attachNote(it->second.getLoc()) << "the other recv";
          return diag;
        }
      }
    }
  }
  for (auto &[key, send] : sends) {
    auto [from, to, tag] = key;
    auto it = recvs.find(key);
    if (it == recvs.end())
      return send.emitOpError()
             << describe(send) << " of " << describe(programs[from])
             << " has no matching recv in " << describe(programs[to]);
    RecvOp recv = it->second;
    if (send.getValue().getType() != recv.getType()) {
      InFlightDiagnostic diag =
          send.emitOpError()
          << describe(send) << " of " << describe(programs[from]) << " sends "
          << send.getValue().getType() << ", but " << describe(recv) << " of "
          << describe(programs[to]) << " receives " << recv.getType();
      diag.attachNote(recv.getLoc()) << "the recv";
      return diag;
    }
    partner[send] = recv;
    partner[recv] = send;
  }
  for (auto &[key, recv] : recvs)
    if (!partner.count(recv))
      return recv.emitOpError()
             << describe(recv) << " of " << describe(programs[std::get<1>(key)])
             << " has no matching send in "
             << describe(programs[std::get<0>(key)]);
  return success();
}

LogicalResult Verifier::checkEvents() {
  for (auto [p, program] : llvm::enumerate(programs)) {
    // Program order is issue order: a wait issued before its record would
    // not wait at all on a GPU (cudaStreamWaitEvent on an unrecorded event
    // returns at once).
    DenseMap<int64_t, RecordOp> seen;
    for (Operation &op : program.getBody().front())
      if (auto record = dyn_cast<RecordOp>(op))
        records[{(unsigned)p, record.getEvent()}] = record;
    for (Operation &op : program.getBody().front()) {
      if (auto record = dyn_cast<RecordOp>(op)) {
        seen[record.getEvent()] = record;
        continue;
      }
      auto wait = dyn_cast<WaitOp>(op);
      if (!wait || seen.count(wait.getEvent()))
        continue;
      auto it = records.find({(unsigned)p, wait.getEvent()});
      if (it == records.end())
        return wait.emitOpError()
               << "stream \"" << wait.getStream() << "\" of "
               << describe(program) << " waits for event " << wait.getEvent()
               << ", which is never recorded";
      InFlightDiagnostic diag = wait.emitOpError()
                                << "stream \"" << wait.getStream() << "\" of "
                                << describe(program) << " waits for event "
                                << wait.getEvent()
                                << " before it is recorded (on stream \""
                                << it->second.getStream() << "\")";
      diag.attachNote(it->second.getLoc()) << "the record";
      return diag;
    }
  }
  return success();
}

LogicalResult Verifier::matchCollectives() {
  for (auto [p, program] : llvm::enumerate(programs)) {
    for (auto comm : program.getBody().getOps<CommOp>()) {
      std::string text;
      llvm::raw_string_ostream os(text);
      os << comm.getAxes() << " on \"" << comm.getStream() << "\"";
      std::string key = text + "|" + getCommGroupKey(program, comm.getAxes());
      Communicator &communicator = communicators[key];
      communicator.description = text;
      SmallVector<CommOp> &issued = communicator.members[p];
      placeOf[comm] = {&communicator, issued.size()};
      issued.push_back(comm);
    }
  }
  // Every program in a communicator's group is a member, also one that
  // issues nothing on it.
  for (auto &[key, communicator] : communicators) {
    ArrayAttr axes = communicator.members.begin()->second.front().getAxes();
    std::string group = key.substr(key.find('|') + 1);
    for (auto [p, program] : llvm::enumerate(programs))
      if (getCommGroupKey(program, axes) == group)
        communicator.members.try_emplace(p);
    auto &[first, reference] = *communicator.members.begin();
    for (auto &[p, issued] : communicator.members) {
      for (size_t i = 0, e = std::max(issued.size(), reference.size()); i < e;
           ++i) {
        CommOp mine = i < issued.size() ? issued[i] : CommOp();
        CommOp theirs = i < reference.size() ? reference[i] : CommOp();
        if (mine && theirs && mine.getKind() == theirs.getKind() &&
            mine.getValue().getType() == theirs.getValue().getType())
          continue;
        CommOp at = mine ? mine : theirs;
        InFlightDiagnostic diag =
            at.emitOpError()
            << "collective order differs between members of communicator "
            << communicator.description << ": collective #" << i << " of "
            << describe(programs[p]) << " is "
            << (mine ? describe(mine) : std::string("missing")) << ", but of "
            << describe(programs[first]) << " it is "
            << (theirs ? describe(theirs) : std::string("missing"));
        if (mine && theirs)
          diag.attachNote(theirs.getLoc()) << "the other member's collective";
        return diag;
      }
    }
  }
  return success();
}

LogicalResult Verifier::simulate() {
  // One queue per (program, stream); inputs and outputs belong to none.
  struct Queue {
    unsigned program;
    StringAttr stream;
    SmallVector<Operation *> ops;
    size_t head = 0;
    bool done() const { return head == ops.size(); }
    Operation *current() const { return ops[head]; }
  };
  std::vector<Queue> queues;
  DenseMap<Operation *, unsigned> queueOf;
  for (auto [p, program] : llvm::enumerate(programs)) {
    DenseMap<StringAttr, unsigned> byStream;
    for (Attribute stream : program.getStreams()) {
      byStream[cast<StringAttr>(stream)] = queues.size();
      queues.push_back(Queue{(unsigned)p, cast<StringAttr>(stream), {}});
    }
    for (Operation &op : program.getBody().front())
      if (StringAttr stream = getProgramStream(&op)) {
        unsigned q = byStream.lookup(stream);
        queueOf[&op] = q;
        queues[q].ops.push_back(&op);
      }
  }
  DenseSet<Operation *> recorded;
  auto atHead = [&](Operation *op) {
    const Queue &queue = queues[queueOf.lookup(op)];
    return !queue.done() && queue.current() == op;
  };
  // The collectives of `comm`'s other members that it completes with.
  auto counterparts = [&](CommOp comm) {
    auto [communicator, i] = placeOf.lookup(comm);
    SmallVector<Operation *> ops;
    for (auto &[p, issued] : communicator->members)
      if (issued[i] != comm)
        ops.push_back(issued[i]);
    return ops;
  };

  // Run to the fixed point: sweep the queues, advancing each as far as its
  // head can complete, until a sweep changes nothing.
  bool progress = true;
  while (progress) {
    progress = false;
    for (Queue &queue : queues) {
      while (!queue.done()) {
        Operation *op = queue.current();
        SmallVector<Operation *> together;
        bool ready = llvm::TypeSwitch<Operation *, bool>(op)
                         .Case<SendOp, RecvOp>([&](auto) {
                           together.push_back(partner.lookup(op));
                           return atHead(together.front());
                         })
                         .Case([&](CommOp comm) {
                           together = counterparts(comm);
                           return llvm::all_of(together, atHead);
                         })
                         .Case([&](WaitOp wait) {
                           return recorded.contains(
                               records.at({queue.program, wait.getEvent()}));
                         })
                         .Default([](Operation *) { return true; });
        if (!ready)
          break;
        if (isa<RecordOp>(op))
          recorded.insert(op);
        for (Operation *other : together)
          ++queues[queueOf.lookup(other)].head;
        ++queue.head;
        progress = true;
      }
    }
  }
  if (llvm::all_of(queues, [](const Queue &queue) { return queue.done(); }))
    return success();

  // Deadlock. Every blocked queue waits for at least one other blocked
  // queue (a counterpart never reached, or the stream of a record), so
  // following the first such edge from the first blocked queue must close
  // a cycle.
  auto waitsFor = [&](unsigned q) -> unsigned {
    Operation *op = queues[q].current();
    if (auto wait = dyn_cast<WaitOp>(op))
      return queueOf.lookup(records.at({queues[q].program, wait.getEvent()}));
    if (auto comm = dyn_cast<CommOp>(op)) {
      for (Operation *other : counterparts(comm))
        if (!atHead(other))
          return queueOf.lookup(other);
    }
    return queueOf.lookup(partner.lookup(op));
  };
  unsigned start = 0;
  while (queues[start].done())
    ++start;
  SmallVector<unsigned> path;
  DenseMap<unsigned, unsigned> onPath;
  unsigned q = start;
  while (!onPath.count(q)) {
    onPath[q] = path.size();
    path.push_back(q);
    q = waitsFor(q);
  }
  ArrayRef<unsigned> cycle = ArrayRef(path).drop_front(onPath[q]);

  auto describeQueue = [&](unsigned q) {
    return "stream \"" + queues[q].stream.str() + "\" of " +
           describe(programs[queues[q].program]);
  };
  Operation *first = queues[cycle.front()].current();
  InFlightDiagnostic diag = first->emitError() << "deadlock: ";
  for (auto [i, q] : llvm::enumerate(cycle))
    diag << (i ? ", which blocks in " : "") << (i ? "" : describeQueue(q))
         << (i ? "" : " blocks in ") << describe(queues[q].current())
         << ", waiting for " << describeQueue(cycle[(i + 1) % cycle.size()]);
  for (unsigned q : cycle.drop_front())
    diag.attachNote(queues[q].current()->getLoc())
        << describeQueue(q) << " blocks here";
  return diag;
}

LogicalResult Verifier::checkBuffers(ProgramOp program) {
  std::optional<ArrayRef<int64_t>> table = program.getBufferBytes();
  if (!table)
    return success();
  int64_t persistent = program.getPersistentBuffers().value_or(0);
  // Buffer -> its values in program order (the op verifier checked that
  // every value names one, in range).
  std::vector<SmallVector<Value>> holders(table->size());
  for (Operation &op : program.getBody().front()) {
    auto buffers = op.getAttrOfType<DenseI64ArrayAttr>("buffers");
    if (!buffers)
      continue;
    for (auto [result, buffer] :
         llvm::zip(op.getResults(), buffers.asArrayRef())) {
      int64_t bytes = getBufferBytes(result);
      if (bytes > (*table)[buffer])
        return op.emitOpError()
               << describeValue(result) << " (" << result.getType() << ", "
               << bytes << " bytes) does not fit buffer " << buffer << " of "
               << describe(program) << " (" << (*table)[buffer] << " bytes)";
      holders[buffer].push_back(result);
    }
  }
  ProgramOrder order(program);
  auto streamOf = [](Operation *op) {
    return "on stream \"" + getProgramStream(op).str() + "\"";
  };
  for (auto [buffer, values] : llvm::enumerate(holders)) {
    bool isPersistent = (int64_t)buffer < persistent;
    for (auto [i, later] : llvm::enumerate(values)) {
      for (Value earlier : ArrayRef(values).take_front(i)) {
        Operation *witness;
        if (succeeded(checkBufferSharing(order, earlier, later, isPersistent,
                                         witness)))
          continue;
        Operation *def = later.getDefiningOp();
        InFlightDiagnostic diag = def->emitOpError();
        diag << (isPersistent ? "persistent buffer " : "buffer ") << buffer
             << " of " << describe(program) << " holds "
             << describeValue(earlier) << " and " << describeValue(later);
        if (isa<InputOp>(def)) {
          diag << ", but inputs are all there from the start of the step";
        } else if (!witness) {
          diag << ", which is not an in-place update of it; a persistent "
                  "buffer keeps its value for the next step";
        } else if (isa<OutputOp>(witness)) {
          diag << ", whose lifetimes overlap: " << describe(witness)
               << " reads the first at the end of the step";
        } else {
          diag << ", whose lifetimes may overlap: " << describe(witness) << " "
               << streamOf(witness) << ", which "
               << (witness == earlier.getDefiningOp() ? "writes" : "reads")
               << " the first, does not happen before " << describe(def) << " "
               << streamOf(def) << ", which writes the second";
        }
        diag.attachNote(earlier.getDefiningOp()->getLoc()) << "the first value";
        if (witness && witness != earlier.getDefiningOp())
          diag.attachNote(witness->getLoc()) << "the first value's use";
        return diag;
      }
    }
  }
  return success();
}

LogicalResult Verifier::checkParameterReads() {
  // A program that reads a parameter keeps its own copy between steps: the
  // runtime replaces an argument only by the results this program writes.
  // If another program writes the update and this one does not, this one
  // reads the value of step 1 for ever (a tied weight placed by hand).
  for (ProgramOp program : programs) {
    auto step = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
        program, program.getStepAttr());
    if (!step)
      continue;
    // Parameter name -> the result that updates it.
    llvm::StringMap<uint64_t> updateOf;
    for (unsigned j = 0, e = step.getNumResults(); j < e; ++j)
      if (auto name = step.getResultAttrOfType<StringAttr>(
              j, PiperDialect::getUpdatedAttrName()))
        updateOf[name.getValue()] = j;
    DenseSet<uint64_t> written;
    for (auto output : program.getBody().getOps<OutputOp>())
      written.insert(output.getIndex());
    for (auto input : program.getBody().getOps<InputOp>()) {
      if (input.getIndex() >= step.getNumArguments())
        continue;
      auto param = step.getArgAttrOfType<ParamAttr>(
          input.getIndex(), PiperDialect::getParamAttrName());
      if (!param)
        continue;
      auto it = updateOf.find(param.getName().getValue());
      if (it == updateOf.end() || written.contains(it->second))
        continue;
      ProgramOp writer;
      for (ProgramOp other : programs)
        if (other.getStep() == program.getStep() &&
            llvm::any_of(other.getBody().getOps<OutputOp>(), [&](OutputOp o) {
              return o.getIndex() == it->second;
            }))
          writer = other;
      if (!writer)
        continue;
      InFlightDiagnostic diag =
          input.emitError()
          << describe(program) << " reads parameter '"
          << param.getName().getValue() << "' (argument " << input.getIndex()
          << "), but only " << describe(writer) << " writes its update (result "
          << it->second
          << "): from the second step on it would read a stale value; every "
             "program that reads a parameter must write its update";
      return diag;
    }
  }
  return success();
}

LogicalResult mlir::piper::verifyPrograms(ModuleOp module) {
  return Verifier(module).run();
}

namespace {
struct PiperVerifyProgramsPass
    : public mlir::piper::impl::PiperVerifyProgramsBase<
          PiperVerifyProgramsPass> {
  void runOnOperation() override {
    if (failed(verifyPrograms(getOperation())))
      return signalPassFailure();
    markAllAnalysesPreserved();
  }
};
} // namespace
