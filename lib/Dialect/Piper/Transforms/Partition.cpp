//===- Partition.cpp - one program per device role ------------------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// From a scheduled, placed DAG to one `piper.program` per device group.
//
// Every program lists its nodes in one global topological order of the
// DAG's data and temporal edges, ties broken by IR position (the order
// `--piper-export-schedule` reads back, so the programs run the schedule it
// prints). Because all programs follow one global order and a transfer's
// send and receive sit at the same place in it, the globally earliest
// unfinished instruction can always run: the programs are deadlock-free by
// construction. `--piper-verify-programs` checks that independently.
//
// A microbatch's contribution to an accumulator is added into a running sum
// (foldIntoAccumulators): a launch's output right after the launch, on its
// stream; a reduce-scatter's shard when the next contribution arrives. So
// no microbatch gradient outlives its microbatch, as the memory plan counts
// it (MemoryPlan.cpp); one sum of every microbatch's gradient at the end of
// the step held all of them at once (a stage's parameter bytes per
// microbatch).
//
// Replicas along the axes a device group does not name are never expanded,
// so the work here is linear in the DAG and independent of the mesh size.
//
//===----------------------------------------------------------------------===//

#include "piper/Dialect/Piper/Transforms/Passes.h"
#include "piper/Dialect/Piper/Transforms/Programs.h"

#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Format.h"

#include <queue>

namespace mlir::piper {
#define GEN_PASS_DEF_PIPERPARTITION
#include "piper/Dialect/Piper/Transforms/Passes.h.inc"
} // namespace mlir::piper

using namespace mlir;
using namespace mlir::piper;

namespace {

/// Where a program value comes from: the instruction and its stream (null
/// for inputs, which every stream sees from the start).
struct Producer {
  Operation *op = nullptr;
  StringAttr stream;
  int64_t position = -1;
};

/// A program under construction.
struct Program {
  ProgramOp op;
  DictionaryAttr role;
  /// DAG value -> program value.
  DenseMap<Value, Value> values;
  DenseMap<Value, Producer> producers;
  /// The instruction a DAG task became, for its `after` edges.
  llvm::StringMap<Producer> tasks;
  /// The last `piper.input`, so that inputs stay together at the top.
  Operation *lastInput = nullptr;
  int64_t nextPosition = 0;
  int64_t nextEvent = 0;
  /// Producer instruction -> the event recorded right after it.
  DenseMap<Operation *, int64_t> events;
  /// (waiting stream, recording stream) -> the latest position of the
  /// recording stream the waiting stream has already waited for.
  DenseMap<std::pair<StringAttr, StringAttr>, int64_t> waited;
  llvm::SetVector<StringAttr> streams;
};

class Partitioner {
public:
  Partitioner(func::FuncOp step, DAGOp dag, MeshOp mesh)
      : step(step), dag(dag), mesh(mesh), builder(step.getContext()) {}

  LogicalResult run();

private:
  FailureOr<SmallVector<Operation *>> order();
  Program &getProgram(DictionaryAttr role);
  FailureOr<DictionaryAttr> roleOf(Operation *node);
  FailureOr<Value> resolve(Program &program, Value value, Operation *user);
  /// Makes `stream` of `program` wait until `producer` has run.
  void dependOn(Program &program, StringAttr stream, const Producer &producer);
  /// Resolves the operands of `node` in `program`, adds the events its
  /// stream needs and sets the builder to the end of the program.
  FailureOr<SmallVector<Value>> prepare(Program &program, Operation *node,
                                        ValueRange operands, StringAttr stream);
  void define(Program &program, Operation *inst, ValueRange dagValues,
              StringAttr stream);
  LogicalResult checkBody(FlatSymbolRefAttr callee, Operation *task);
  LogicalResult emitNode(Operation *node);
  /// Adds each result of `node` that an accumulator sums into its running
  /// sum, right after `node` in the result's program.
  void foldIntoAccumulators(Operation *node);
  struct RunningSum;
  /// Adds operand `index` of `accumulate` (`mapped` in its program) into
  /// `sum` on `stream`; the last one scales and defines the result.
  void addToSum(RunningSum &sum, AccumulateOp accumulate, unsigned index,
                Value mapped, StringAttr stream);

  func::FuncOp step;
  DAGOp dag;
  MeshOp mesh;
  OpBuilder builder;
  llvm::StringSet<> roleAxes;
  bool anyPlaced = false;
  /// Roles in creation order; std::map keeps programs sorted by role.
  std::map<std::string, std::unique_ptr<Program>> programs;
  DenseMap<Value, Program *> home;
  std::map<std::pair<Program *, Program *>, int64_t> nextTag;
  DenseMap<Attribute, LogicalResult> checkedBodies;
  llvm::StringSet<> overlapSeen;
  /// An accumulator's sum so far: the program it runs in, the partial sum
  /// (a program value) and the positions of the operands it holds.
  struct RunningSum {
    Program *program = nullptr;
    Value partial;
    DenseSet<unsigned> operands;
    /// Contributions that wait for the next one (or the accumulator).
    SmallVector<std::pair<unsigned, Value>> deferred;
  };
  DenseMap<Operation *, RunningSum> running;
};

/// `pp0`, `pp1_dir0`: a role as part of a symbol name.
std::string roleSuffix(DictionaryAttr role) {
  if (role.empty())
    return "all";
  std::string text;
  llvm::raw_string_ostream os(text);
  llvm::interleave(
      role, os,
      [&](NamedAttribute axis) {
        os << axis.getName().getValue();
        if (auto coordinate = dyn_cast<IntegerAttr>(axis.getValue()))
          os << coordinate.getInt();
      },
      "_");
  return text;
}

/// A sort key that orders roles by their coordinates numerically.
std::string roleKey(DictionaryAttr role) {
  std::string text;
  llvm::raw_string_ostream os(text);
  for (NamedAttribute axis : role) {
    os << axis.getName().getValue() << '=';
    if (auto coordinate = dyn_cast<IntegerAttr>(axis.getValue()))
      os << llvm::format("%012lld", (long long)coordinate.getInt());
    os << ';';
  }
  return text;
}

DictionaryAttr devicesOf(Operation *node) {
  if (auto task = dyn_cast<TaskOp>(node))
    return task.getDevicesAttr();
  if (auto collective = dyn_cast<CollectiveOp>(node))
    return collective.getDevicesAttr();
  return nullptr;
}

/// ZeRO-3 prefetch, one task ahead: a gather of a step argument is ready
/// from the start of the step, and the global order would issue it where
/// its IR position falls: long before its consumer (its buffer live across
/// every task in between) or right before it (nothing to overlap). It
/// moves to just before the task that precedes its first consumer in the
/// consumer's program (or before the consumer, when none does), so the
/// gather overlaps that task and its buffer lives for two tasks, as the
/// memory plan counts it (MemoryFacts.cpp, orderGroup).
/// Collectives over replicas run in every member's same program, and the
/// gather is nonblocking, so the order stays deadlock-free.
void prefetchOneAhead(SmallVector<Operation *> &nodes) {
  DenseMap<Operation *, unsigned> index;
  for (auto [i, node] : llvm::enumerate(nodes))
    index[node] = i;
  DenseMap<Operation *, SmallVector<Operation *>> before;
  DenseSet<Operation *> moved;
  for (auto [i, node] : llvm::enumerate(nodes)) {
    auto gather = dyn_cast<CollectiveOp>(node);
    if (!gather || gather.getKind() != CollectiveKind::AllGather ||
        !isa<BlockArgument>(gather.getValue()))
      continue;
    Operation *consumer = nullptr;
    for (Operation *user : gather.getResult().getUsers())
      if (auto it = index.find(user);
          it != index.end() && (!consumer || it->second < index[consumer]))
        consumer = user;
    auto task = dyn_cast_or_null<TaskOp>(consumer);
    if (!task)
      continue;
    Operation *anchor = consumer;
    for (unsigned j = index[consumer]; j-- > 0;)
      if (auto previous = dyn_cast<TaskOp>(nodes[j]);
          previous && previous.getDevicesAttr() == task.getDevicesAttr()) {
        anchor = previous;
        break;
      }
    if (index[anchor] == i + 1)
      continue;
    before[anchor].push_back(node);
    moved.insert(node);
  }
  if (moved.empty())
    return;
  SmallVector<Operation *> result;
  result.reserve(nodes.size());
  for (Operation *node : nodes) {
    if (moved.contains(node))
      continue;
    if (auto it = before.find(node); it != before.end())
      result.append(it->second.begin(), it->second.end());
    result.push_back(node);
  }
  nodes = std::move(result);
}

} // namespace

FailureOr<SmallVector<Operation *>> Partitioner::order() {
  Block &body = dag.getBody().front();
  SmallVector<Operation *> nodes;
  DenseMap<Operation *, unsigned> index;
  llvm::StringMap<unsigned> byName;
  for (Operation &node : body.without_terminator()) {
    index[&node] = nodes.size();
    if (isa<TaskOp>(node))
      byName[getNodeName(&node)] = nodes.size();
    nodes.push_back(&node);
  }
  std::vector<SmallVector<unsigned>> successors(nodes.size());
  std::vector<unsigned> pending(nodes.size(), 0);
  for (auto [i, node] : llvm::enumerate(nodes)) {
    for (Operation *user : node->getUsers())
      if (auto it = index.find(user); it != index.end()) {
        successors[i].push_back(it->second);
        ++pending[it->second];
      }
    if (auto task = dyn_cast<TaskOp>(node))
      for (StringRef before : task.getAfter().getAsValueRange<StringAttr>())
        if (auto it = byName.find(before); it != byName.end()) {
          successors[it->second].push_back(i);
          ++pending[i];
        }
  }
  // Kahn's algorithm, smallest IR position first: the same tie-break as
  // ScheduleDAG's recovery of per-rank schedules.
  std::priority_queue<unsigned, std::vector<unsigned>, std::greater<unsigned>>
      ready;
  for (unsigned i = 0; i < nodes.size(); ++i)
    if (pending[i] == 0)
      ready.push(i);
  SmallVector<Operation *> result;
  while (!ready.empty()) {
    unsigned i = ready.top();
    ready.pop();
    result.push_back(nodes[i]);
    for (unsigned s : successors[i])
      if (--pending[s] == 0)
        ready.push(s);
  }
  if (result.size() != nodes.size()) {
    for (auto [i, node] : llvm::enumerate(nodes))
      if (pending[i] != 0)
        return node->emitOpError()
               << "lies on a cycle of data and temporal edges; the DAG "
                  "cannot be partitioned";
  }
  return result;
}

Program &Partitioner::getProgram(DictionaryAttr role) {
  std::unique_ptr<Program> &slot = programs[roleKey(role)];
  if (!slot) {
    slot = std::make_unique<Program>();
    slot->role = role;
  }
  return *slot;
}

FailureOr<DictionaryAttr> Partitioner::roleOf(Operation *node) {
  DictionaryAttr devices = devicesOf(node);
  if (devices)
    return devices;
  if (anyPlaced)
    return node->emitOpError()
           << "node '" << getNodeName(node)
           << "' is not placed, but others are; place every task "
              "(transform.piper.place) before partitioning";
  return DictionaryAttr::get(step.getContext());
}

FailureOr<Value> Partitioner::resolve(Program &program, Value value,
                                      Operation *user) {
  if (Value mapped = program.values.lookup(value))
    return mapped;
  // Step arguments and microbatches of them are read where they are used:
  // every program feeds itself, so data never travels between roles.
  std::optional<int64_t> argument, microbatch, count, dim;
  Type type = value.getType();
  if (auto arg = dyn_cast<BlockArgument>(value);
      arg && arg.getOwner()->getParentOp() == step) {
    argument = arg.getArgNumber();
  } else if (auto slice = value.getDefiningOp<MicrobatchOp>()) {
    auto arg = dyn_cast<BlockArgument>(slice.getValue());
    if (!arg || arg.getOwner()->getParentOp() != step)
      return slice.emitOpError()
             << "slices a value that is not an argument of the step";
    argument = arg.getArgNumber();
    microbatch = slice.getIndex();
    count = slice.getCount();
    dim = slice.getDim();
  }
  if (argument) {
    if (program.lastInput)
      builder.setInsertionPointAfter(program.lastInput);
    else
      builder.setInsertionPointToStart(&program.op.getBody().front());
    auto input = InputOp::create(builder, value.getLoc(), type, *argument);
    if (microbatch) {
      input.setMicrobatch(*microbatch);
      input.setCount(*count);
      input.setDim(*dim);
    }
    program.lastInput = input;
    program.values[value] = input;
    program.producers[input] = Producer{input, nullptr, -1};
    return Value(input);
  }
  Program *owner = home.lookup(value);
  InFlightDiagnostic diag = user->emitOpError()
                            << "node '" << getNodeName(user) << "' on "
                            << formatDeviceGroup(program.role)
                            << " uses a value of "
                            << formatDeviceGroup(owner ? owner->role
                                                       : DictionaryAttr())
                            << " without a transfer";
  return diag;
}

void Partitioner::dependOn(Program &program, StringAttr stream,
                           const Producer &producer) {
  // Inputs are there from the start; on one stream, program order holds.
  if (!producer.op || !producer.stream || producer.stream == stream)
    return;
  // A wait covers everything its record's stream did before the record, so
  // a stream already waiting for a later point needs no new event.
  std::pair<StringAttr, StringAttr> key{stream, producer.stream};
  if (auto it = program.waited.find(key);
      it != program.waited.end() && it->second >= producer.position)
    return;
  auto [it, inserted] =
      program.events.try_emplace(producer.op, program.nextEvent);
  if (inserted) {
    ++program.nextEvent;
    builder.setInsertionPointAfter(producer.op);
    RecordOp::create(builder, producer.op->getLoc(), it->second,
                     producer.stream);
  }
  builder.setInsertionPointToEnd(&program.op.getBody().front());
  WaitOp::create(builder, producer.op->getLoc(), it->second, stream);
  program.waited[key] = producer.position;
}

FailureOr<SmallVector<Value>> Partitioner::prepare(Program &program,
                                                   Operation *node,
                                                   ValueRange operands,
                                                   StringAttr stream) {
  // Per stream, only the latest producer needs an event: its record covers
  // everything before it on that stream (one wait for a gradient update
  // that reads a hundred all-reduced tensors, not a hundred).
  llvm::MapVector<StringAttr, Producer> latest;
  auto need = [&](const Producer &producer) {
    if (!producer.stream)
      return;
    Producer &slot = latest[producer.stream];
    if (!slot.op || slot.position < producer.position)
      slot = producer;
  };
  SmallVector<Value> mapped;
  for (Value operand : operands) {
    FailureOr<Value> value = resolve(program, operand, node);
    if (failed(value))
      return failure();
    mapped.push_back(*value);
    need(program.producers.lookup(*value));
  }
  if (auto task = dyn_cast<TaskOp>(node))
    for (StringRef before : task.getAfter().getAsValueRange<StringAttr>())
      if (auto it = program.tasks.find(before); it != program.tasks.end())
        need(it->second);
  for (auto &[from, producer] : latest)
    dependOn(program, stream, producer);
  program.streams.insert(stream);
  builder.setInsertionPointToEnd(&program.op.getBody().front());
  return mapped;
}

void Partitioner::define(Program &program, Operation *inst,
                         ValueRange dagValues, StringAttr stream) {
  Producer producer{inst, stream, program.nextPosition++};
  for (auto [dagValue, value] : llvm::zip(dagValues, inst->getResults())) {
    program.values[dagValue] = value;
    program.producers[value] = producer;
    home[dagValue] = &program;
  }
}

LogicalResult Partitioner::checkBody(FlatSymbolRefAttr callee,
                                     Operation *task) {
  auto it = checkedBodies.find(callee);
  if (it != checkedBodies.end())
    return it->second;
  // In-body collectives run inside the launch; that only works when all of
  // their members run the same program, i.e. along axes that are not roles.
  LogicalResult result = success();
  if (auto body = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
          step, callee.getAttr()))
    body.walk([&](CollectiveOp collective) {
      for (StringRef axis : collective.getAxes().getAsValueRange<StringAttr>())
        if (roleAxes.contains(axis)) {
          task->emitOpError()
              << "body " << callee << " holds collective '"
              << collective.getName() << "' over '" << axis
              << "', an axis that tells device programs apart; in-body "
                 "collectives must stay within one program";
          result = failure();
          return WalkResult::interrupt();
        }
      return WalkResult::advance();
    });
  checkedBodies.try_emplace(callee, result);
  return result;
}

LogicalResult Partitioner::emitNode(Operation *node) {
  MLIRContext *context = step.getContext();
  if (isa<MicrobatchOp>(node))
    return success(); // read by `resolve` where used
  if (auto task = dyn_cast<TaskOp>(node)) {
    FailureOr<DictionaryAttr> role = roleOf(node);
    if (failed(role) || failed(checkBody(task.getCalleeAttr(), node)))
      return failure();
    Program &program = getProgram(*role);
    // The second task of an overlapped pair runs beside the first.
    bool second = task.getOverlap() && overlapSeen.contains(*task.getOverlap());
    overlapSeen.insert(task.getName());
    StringAttr stream =
        StringAttr::get(context, second ? "compute_overlap" : "compute");
    FailureOr<SmallVector<Value>> operands =
        prepare(program, node, task.getInputs(), stream);
    if (failed(operands))
      return failure();
    auto launch = LaunchOp::create(
        builder, task.getLoc(), task.getOutputs().getTypes(), task.getName(),
        task.getCalleeAttr(), *operands, stream.getValue());
    launch.setOverlapAttr(task.getOverlapAttr());
    launch.setSmShareAttr(task.getSmShareAttr());
    if (Attribute original = task->getAttr(kCopyOfAttrName))
      launch->setAttr(kCopyOfAttrName, original);
    define(program, launch, task.getOutputs(), stream);
    program.tasks[task.getName()] =
        Producer{launch, stream, program.nextPosition - 1};
    return success();
  }
  if (auto transfer = dyn_cast<TransferOp>(node)) {
    Program &from = getProgram(transfer.getFrom());
    Program &to = getProgram(transfer.getTo());
    StringAttr stream = transfer.getStreamAttr();
    int64_t tag = nextTag[{&from, &to}]++;
    FailureOr<SmallVector<Value>> value =
        prepare(from, node, transfer.getValue(), stream);
    if (failed(value))
      return failure();
    auto send = SendOp::create(builder, transfer.getLoc(),
                               transfer.getNameAttr(), value->front(),
                               FlatSymbolRefAttr::get(to.op.getSymNameAttr()),
                               builder.getI64IntegerAttr(tag), stream);
    from.tasks[transfer.getName()] =
        Producer{send, stream, from.nextPosition++};
    to.streams.insert(stream);
    builder.setInsertionPointToEnd(&to.op.getBody().front());
    auto recv = RecvOp::create(builder, transfer.getLoc(), transfer.getType(),
                               transfer.getNameAttr(),
                               FlatSymbolRefAttr::get(from.op.getSymNameAttr()),
                               builder.getI64IntegerAttr(tag), stream);
    define(to, recv, transfer.getResult(), stream);
    return success();
  }
  if (auto collective = dyn_cast<CollectiveOp>(node)) {
    DictionaryAttr devices = collective.getDevicesAttr();
    Program *program =
        devices ? &getProgram(devices) : home.lookup(collective.getValue());
    if (!program) {
      FailureOr<DictionaryAttr> role = roleOf(node);
      if (failed(role))
        return failure();
      program = &getProgram(*role);
    }
    for (StringRef axis : collective.getAxes().getAsValueRange<StringAttr>())
      if (roleAxes.contains(axis))
        return collective.emitOpError()
               << "collective '" << collective.getName() << "' is over '"
               << axis
               << "', an axis that tells device programs apart; collectives "
                  "across programs are not partitioned yet";
    StringAttr stream = collective.getStreamAttr();
    FailureOr<SmallVector<Value>> value =
        prepare(*program, node, collective.getValue(), stream);
    if (failed(value))
      return failure();
    auto comm = CommOp::create(builder, collective.getLoc(),
                               collective.getName(), collective.getKind(),
                               value->front(), collective.getAxes(),
                               stream.getValue(), collective.getBucketAttr());
    define(*program, comm, collective.getResult(), stream);
    return success();
  }
  if (auto accumulate = dyn_cast<AccumulateOp>(node)) {
    // Every operand already folded: the last fold defined the result.
    if (home.count(accumulate.getResult()))
      return success();
    auto sumSoFar = running.find(node);
    Program *program =
        sumSoFar != running.end() ? sumSoFar->second.program : nullptr;
    for (Value value : accumulate.getValues())
      if (!program && (program = home.lookup(value)))
        break;
    if (!program) {
      FailureOr<DictionaryAttr> role = roleOf(node);
      if (failed(role))
        return failure();
      program = &getProgram(*role);
    }
    // What the running sum does not hold yet (operands of another program
    // or stream order), summed after it.
    SmallVector<Value> rest;
    for (auto [i, value] : llvm::enumerate(accumulate.getValues()))
      if (sumSoFar == running.end() || !sumSoFar->second.operands.contains(i))
        rest.push_back(value);
    StringAttr stream = StringAttr::get(context, "compute");
    FailureOr<SmallVector<Value>> values =
        prepare(*program, node, rest, stream);
    if (failed(values))
      return failure();
    if (sumSoFar != running.end() && sumSoFar->second.partial) {
      dependOn(*program, stream,
               program->producers.lookup(sumSoFar->second.partial));
      builder.setInsertionPointToEnd(&program->op.getBody().front());
      values->insert(values->begin(), sumSoFar->second.partial);
    }
    auto sum = SumOp::create(builder, accumulate.getLoc(), accumulate.getType(),
                             accumulate.getNameAttr(), *values,
                             accumulate.getScaleAttr(), stream);
    define(*program, sum, accumulate.getResult(), stream);
    return success();
  }
  return node->emitOpError() << "cannot be partitioned";
}

void Partitioner::addToSum(RunningSum &sum, AccumulateOp accumulate,
                           unsigned index, Value mapped, StringAttr stream) {
  Program &program = *sum.program;
  sum.operands.insert(index);
  if (!sum.partial) {
    sum.partial = mapped;
    return;
  }
  dependOn(program, stream, program.producers.lookup(mapped));
  dependOn(program, stream, program.producers.lookup(sum.partial));
  program.streams.insert(stream);
  builder.setInsertionPointToEnd(&program.op.getBody().front());
  bool last = sum.operands.size() == accumulate.getValues().size();
  auto partial = SumOp::create(
      builder, accumulate.getLoc(), accumulate.getType(),
      accumulate.getNameAttr(), ValueRange{sum.partial, mapped},
      last ? accumulate.getScaleAttr() : builder.getF64FloatAttr(1.0), stream);
  if (last)
    define(program, partial, accumulate.getResult(), stream);
  else
    program.producers[partial] =
        Producer{partial, stream, program.nextPosition++};
  sum.partial = partial;
}

void Partitioner::foldIntoAccumulators(Operation *node) {
  if (isa<AccumulateOp>(node))
    return;
  StringAttr compute = StringAttr::get(step.getContext(), "compute");
  for (Value result : node->getResults()) {
    Program *program = home.lookup(result);
    if (!program)
      continue;
    // Each accumulator once, even when it sums this value twice.
    llvm::SetVector<Operation *> users;
    for (Operation *user : result.getUsers())
      if (isa<AccumulateOp>(user))
        users.insert(user);
    for (Operation *user : users) {
      auto accumulate = cast<AccumulateOp>(user);
      RunningSum &sum = running[user];
      if (!sum.program)
        sum.program = program;
      if (sum.program != program)
        continue; // summed where the accumulator runs, after a transfer
      // A contribution that a collective or a receive may still be writing
      // (a ZeRO-2/3 reduce-scatter's shard) is added when the next one
      // arrives, by then most likely complete, on "compute" after waiting
      // for its event: adding it right away would stall "compute" on the
      // reduce-scatter just issued. A launch's output is added at once, on
      // the launch's stream.
      for (auto [index, value] : sum.deferred)
        addToSum(sum, accumulate, index, value, compute);
      sum.deferred.clear();
      Value mapped = program->values.lookup(result);
      Producer producer = program->producers.lookup(mapped);
      bool launched = isa_and_nonnull<LaunchOp>(producer.op);
      for (auto [i, value] : llvm::enumerate(accumulate.getValues())) {
        if (value != result)
          continue;
        if (launched)
          addToSum(sum, accumulate, i, mapped, producer.stream);
        else
          sum.deferred.push_back({unsigned(i), mapped});
      }
    }
  }
}

LogicalResult Partitioner::run() {
  Block &body = dag.getBody().front();
  // Roles: every device group a node names. Transfers name both ends.
  SmallVector<DictionaryAttr> roles;
  for (Operation &node : body.without_terminator()) {
    if (auto transfer = dyn_cast<TransferOp>(node)) {
      roles.push_back(transfer.getFrom());
      roles.push_back(transfer.getTo());
    } else if (DictionaryAttr devices = devicesOf(&node)) {
      roles.push_back(devices);
    }
  }
  anyPlaced = !roles.empty();
  if (!anyPlaced)
    roles.push_back(DictionaryAttr::get(step.getContext()));
  for (DictionaryAttr role : roles) {
    for (NamedAttribute axis : role)
      roleAxes.insert(axis.getName().getValue());
    getProgram(role);
  }

  // Create the programs up front, sorted by role, so that sends can name
  // peers that have no instruction yet.
  builder.setInsertionPointAfter(step);
  for (auto &[key, program] : programs) {
    program->op = ProgramOp::create(
        builder, step.getLoc(),
        builder.getStringAttr(step.getSymName() + "." +
                              roleSuffix(program->role)),
        program->role, FlatSymbolRefAttr::get(mesh.getSymNameAttr()),
        FlatSymbolRefAttr::get(step.getSymNameAttr()),
        builder.getArrayAttr({}));
    program->op.getBody().emplaceBlock();
    builder.setInsertionPointAfter(program->op);
  }
  auto eraseAll = [&] {
    for (auto &[key, program] : programs)
      program->op.erase();
    return failure();
  };

  FailureOr<SmallVector<Operation *>> nodes = order();
  if (failed(nodes))
    return eraseAll();
  prefetchOneAhead(*nodes);
  for (Operation *node : *nodes) {
    if (failed(emitNode(node)))
      return eraseAll();
    foldIntoAccumulators(node);
  }

  // The step's results, read where they are computed.
  auto ret = cast<func::ReturnOp>(step.getBody().front().getTerminator());
  Operation *yield = body.getTerminator();
  for (auto [index, result] : llvm::enumerate(ret.getOperands())) {
    Value dagValue = result;
    if (auto dagResult = dyn_cast<OpResult>(result);
        dagResult && dagResult.getOwner() == dag)
      dagValue = yield->getOperand(dagResult.getResultNumber());
    Program *program = home.lookup(dagValue);
    if (!program)
      program = programs.begin()->second.get();
    FailureOr<Value> value = resolve(*program, dagValue, yield);
    if (failed(value))
      return eraseAll();
    builder.setInsertionPointToEnd(&program->op.getBody().front());
    OutputOp::create(builder, ret.getLoc(), index, *value);
  }
  // A copy of a node (tieSharedParameters) writes the same step results as
  // the original, so every group holding a tied parameter reads its update.
  llvm::StringMap<Operation *> byName;
  for (Operation &node : body.without_terminator())
    if (!isa<MicrobatchOp>(node))
      byName[getNodeName(&node)] = &node;
  for (Operation &copy : body.without_terminator()) {
    auto original = copy.getAttrOfType<StringAttr>(kCopyOfAttrName);
    Operation *of = original ? byName.lookup(original.getValue()) : nullptr;
    Value first = copy.getNumResults() ? copy.getResult(0) : Value();
    Program *program = first ? home.lookup(first) : nullptr;
    if (!of || !program)
      continue;
    builder.setInsertionPointToEnd(&program->op.getBody().front());
    for (auto [index, result] : llvm::enumerate(ret.getOperands())) {
      auto dagResult = dyn_cast<OpResult>(result);
      if (!dagResult || dagResult.getOwner() != dag)
        continue;
      auto produced =
          dyn_cast<OpResult>(yield->getOperand(dagResult.getResultNumber()));
      if (produced && produced.getOwner() == of)
        OutputOp::create(
            builder, ret.getLoc(), index,
            program->values.lookup(copy.getResult(produced.getResultNumber())));
    }
  }
  for (auto &[key, program] : programs) {
    // `compute` first, then the streams in order of first use.
    SmallVector<Attribute> streams;
    StringAttr compute = builder.getStringAttr("compute");
    streams.push_back(compute);
    for (StringAttr stream : program->streams)
      if (stream != compute)
        streams.push_back(stream);
    program->op.setStreamsAttr(builder.getArrayAttr(streams));
  }
  return success();
}

LogicalResult mlir::piper::partitionIntoPrograms(func::FuncOp step) {
  DAGOp dag;
  for (Operation &op : step.getBody().front())
    if (auto found = dyn_cast<DAGOp>(op))
      dag = found;
  if (!dag)
    return step.emitOpError() << "holds no piper.dag to partition";
  auto module = step->getParentOfType<ModuleOp>();
  for (auto program : module.getOps<ProgramOp>())
    if (program.getStep() == step.getSymName())
      return program.emitOpError()
             << "already partitions " << program.getStepAttr()
             << "; partition a DAG once";
  // The mesh: the one collectives name, else the module's only mesh.
  MeshOp mesh;
  dag.walk([&](CollectiveOp collective) {
    mesh = lookupMesh(collective, collective.getMeshAttr());
    return WalkResult::interrupt();
  });
  if (!mesh) {
    auto meshes = llvm::to_vector(module.getOps<MeshOp>());
    if (meshes.size() != 1)
      return step.emitOpError()
             << "needs exactly one piper.mesh in the module to partition "
                "its DAG, found "
             << meshes.size();
    mesh = meshes.front();
  }
  if (failed(tieSharedParameters(step, dag)))
    return failure();
  return Partitioner(step, dag, mesh).run();
}

namespace {
struct PiperPartitionPass
    : public mlir::piper::impl::PiperPartitionBase<PiperPartitionPass> {
  void runOnOperation() override {
    SmallVector<func::FuncOp> steps;
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (!func.isExternal() &&
          llvm::any_of(func.getBody().front(),
                       [](Operation &op) { return isa<DAGOp>(op); }))
        steps.push_back(func);
    for (func::FuncOp step : steps)
      if (failed(partitionIntoPrograms(step)))
        return signalPassFailure();
  }
};
} // namespace
