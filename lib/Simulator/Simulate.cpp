//===- Simulate.cpp - Simulating a module's device programs ---------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Turns `piper.program`s into the engine's costed instructions. A launch
// becomes compute segments (the roofline of its body's kernels) separated by
// communication segments (the collectives inside the body, which run as
// part of the launch on the links of their axes); a send becomes one
// communication segment on the link of the axes its two roles differ in; a
// program-level collective one segment, a rendezvous when its members run
// other programs. Replicas of a role are in lockstep, so a collective among
// replicas only waits for its own program.
//
//===----------------------------------------------------------------------===//

#include "piper/Simulator/Simulate.h"

#include "piper/Analysis/KernelKind.h"
#include "piper/Analysis/LocalSizes.h"
#include "piper/Dialect/Piper/IR/PiperOps.h"
#include "piper/Dialect/Piper/Transforms/MemoryPlan.h"
#include "piper/Dialect/Piper/Transforms/Programs.h"
#include "piper/Simulator/OpCounts.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"

#include <map>
#include <tuple>

using namespace mlir;
using namespace mlir::piper;

namespace {

sim::Precision precisionOf(Type type) {
  Type element = getElementTypeOrSelf(type);
  if (element.isF64())
    return sim::Precision::F64;
  if (element.isBF16() || element.isF16())
    return sim::Precision::BF16;
  return sim::Precision::F32;
}

/// The first float type among an op's results and operands.
std::optional<sim::Precision> precisionOf(Operation *op) {
  for (Type t : llvm::concat<Type>(op->getResultTypes(), op->getOperandTypes()))
    if (isa<FloatType>(getElementTypeOrSelf(t)))
      return precisionOf(t);
  return std::nullopt;
}

double tensorBytes(Type type) {
  auto shaped = dyn_cast<ShapedType>(type);
  if (!shaped || !shaped.hasStaticShape())
    return 0;
  unsigned bits = shaped.getElementType().getIntOrFloatBitWidth();
  return double(shaped.getNumElements()) * double(std::max(8u, bits) / 8);
}

/// `F` of `F{PP=0,MB=1}`.
StringRef categoryOf(StringRef taskName) {
  return taskName.take_until([](char c) { return c == '{'; });
}

class ProblemBuilder {
public:
  ProblemBuilder(ModuleOp module, const SimulateOptions &options,
                 const sim::DeviceSpec &device)
      : module(module), options(options), device(device) {
    params = options.params;
    if (options.calibration)
      options.calibration->applyTo(params);
  }

  LogicalResult build(function_ref<InFlightDiagnostic()> emitError);

  SmallVector<ProgramOp> programs;
  MeshOp mesh;
  llvm::SetVector<StringAttr> roleAxes;
  sim::Problem problem;
  std::vector<double> flops;
  sim::CostParameters params;
  std::optional<sim::Precision> modelPrecision;
  /// Each counted op of every launch, in body order (recordKernels).
  std::vector<KernelRecord> kernels;

  sim::LinkSpec linkOf(StringRef axis) {
    MeshAxisAttr attr = mesh.getAxis(axis);
    std::string cls;
    if (attr && attr.getLink())
      cls = stringifyLinkClass(*attr.getLink()).str();
    sim::LinkSpec link = sim::getDefaultLink(cls, device);
    if (attr && attr.getBandwidth())
      link.bandwidth = attr.getBandwidth().getValueAsDouble() * 1e9;
    if (attr && attr.getLatency())
      link.latency = attr.getLatency().getValueAsDouble() * 1e-6;
    // A measured link replaces the mesh's numbers.
    if (options.calibration)
      if (const sim::LinkFit *fit = options.calibration->link(axis.str())) {
        link.latency = fit->latency;
        link.bandwidth = fit->bandwidth;
      }
    return link;
  }

private:
  /// The links of a collective of `kind` over `axes`: the mesh's (or the
  /// calibrated axes'), unless the calibration measured that kind itself.
  std::vector<sim::AxisLink> axisLinks(ArrayAttr axes, StringRef kind) {
    const sim::LinkFit *measured = nullptr;
    if (options.calibration)
      if (auto it = options.calibration->collectives.find(kind.str());
          it != options.calibration->collectives.end())
        measured = &it->second;
    std::vector<sim::AxisLink> out;
    for (auto name : axes.getAsRange<StringAttr>()) {
      MeshAxisAttr attr = mesh.getAxis(name);
      sim::LinkSpec link = linkOf(name);
      if (measured) {
        link.latency = measured->latency;
        link.bandwidth = measured->bandwidth;
      }
      out.push_back({name.str(), attr ? attr.getSize() : 1, link});
    }
    return out;
  }

  sim::Segment commSegment(const sim::CommTime &t, StringRef name,
                           StringRef kind) const {
    sim::Segment seg;
    seg.kind = sim::SegmentKind::Comm;
    seg.label = name.str();
    seg.share = t.smShare;
    if (std::optional<double> measured = calibrated(
            options.calibration ? &options.calibration->comms : nullptr, name,
            kind)) {
      seg.work = *measured;
      return seg;
    }
    seg.fixed = t.fixed;
    seg.work = t.work;
    return seg;
  }

  static std::optional<double>
  calibrated(const std::map<std::string, double> *table, StringRef first,
             StringRef second) {
    if (!table)
      return std::nullopt;
    if (auto it = table->find(first.str()); it != table->end())
      return it->second;
    if (auto it = table->find(second.str()); it != table->end())
      return it->second;
    return std::nullopt;
  }

  void launchSegments(LaunchOp launch, sim::Instr &instr, double &launchFlops);
  /// What a launch of a body on given local argument types and SM share
  /// costs: its FLOPs, its results' local types and (withSegments) its
  /// segments.
  struct BodyKey {
    Operation *body;
    double share;
    bool withSegments;
    std::vector<const void *> types;
    bool operator<(const BodyKey &o) const {
      return std::tie(body, share, withSegments, types) <
             std::tie(o.body, o.share, o.withSegments, o.types);
    }
  };
  struct BodyCost {
    double flops = 0;
    SmallVector<Type> resultTypes;
    std::vector<sim::Segment> segments;
  };
  const BodyCost &bodyCost(LaunchOp launch, func::FuncOp body,
                           ArrayRef<Type> argTypes, double share,
                           bool withSegments);
  std::map<BodyKey, BodyCost> bodyCosts;
  /// The last cost computed while kernels are recorded (never cached).
  BodyCost uncachedCost;
  void bodySegments(func::FuncOp body, std::vector<sim::Segment> &segments,
                    double &compute, double &launchFlops, double share,
                    const LocalSizes *sizes);

  /// What one device holds of each program value smaller than its type:
  /// parameters and optimizer state split by their placements (tensor and
  /// expert parallelism), launch results by their bodies (LocalSizes), and
  /// what sums and type-preserving collectives carry. Received values are
  /// taken as whole.
  DenseMap<Value, Type> localTypes;
  Type localOf(Value value) const {
    auto it = localTypes.find(value);
    return it == localTypes.end() ? value.getType() : it->second;
  }
  void recordLocal(Value value, Type type) {
    if (type && type != value.getType() &&
        getElementDivisor(value.getType(), type) > 1)
      localTypes[value] = type;
  }
  /// The program and launch whose body is being costed (KernelRecord).
  std::string currentProgram, currentLaunch;
  /// The local type of the step argument an input without microbatches
  /// reads.
  void recordInput(ProgramOp program, InputOp input);

  ModuleOp module;
  const SimulateOptions &options;
  const sim::DeviceSpec &device;
};

void ProblemBuilder::recordInput(ProgramOp program, InputOp input) {
  if (input.getMicrobatch())
    return;
  auto step = module.lookupSymbol<func::FuncOp>(program.getStepAttr());
  if (!step || input.getIndex() >= int64_t(step.getNumArguments()))
    return;
  unsigned index = input.getIndex();
  Type type = step.getArgumentTypes()[index];
  if (type != input.getType())
    return;
  auto param =
      step.getArgAttrOfType<ParamAttr>(index, PiperDialect::getParamAttrName());
  if (auto state = step.getArgAttrOfType<OptStateAttr>(
          index, PiperDialect::getStateAttrName()))
    for (unsigned i = 0, e = step.getNumArguments(); i < e && !param; ++i)
      if (auto other = step.getArgAttrOfType<ParamAttr>(
              i, PiperDialect::getParamAttrName());
          other && other.getName() == state.getParam() &&
          step.getArgumentTypes()[i] == type)
        param = other;
  if (param)
    recordLocal(input.getResult(), getLocalParamType(param, type, program));
}

void ProblemBuilder::bodySegments(func::FuncOp body,
                                  std::vector<sim::Segment> &segments,
                                  double &compute, double &launchFlops,
                                  double share, const LocalSizes *sizes) {
  auto flush = [&]() {
    if (compute <= 0)
      return;
    sim::Segment seg;
    seg.work = compute;
    seg.share = share;
    seg.label = "compute";
    segments.push_back(seg);
    compute = 0;
  };
  body->walk([&](Operation *op) {
    if (auto call = dyn_cast<func::CallOp>(op)) {
      if (auto callee = module.lookupSymbol<func::FuncOp>(call.getCalleeAttr()))
        bodySegments(callee, segments, compute, launchFlops, share, nullptr);
      return;
    }
    if (auto collective = dyn_cast<CollectiveOp>(op)) {
      flush();
      StringRef kind = stringifyCollectiveKind(collective.getKind());
      sim::CommTime t =
          sim::collectiveTime(kind.str(), tensorBytes(collective.getType()),
                              axisLinks(collective.getAxes(), kind));
      segments.push_back(commSegment(t, collective.getName(), kind));
      return;
    }
    if (isa<AnnotateOp>(op))
      return;
    OpCount count = countOp(op, sizes);
    if (count.kernels == 0)
      return;
    std::optional<sim::Precision> precision = precisionOf(op);
    if (!modelPrecision && precision && count.matrixFlops > 0)
      modelPrecision = precision;
    launchFlops += count.flops();
    std::string kind = kernelKindOf(op).value_or("");
    if (options.recordKernels)
      kernels.push_back({currentProgram, currentLaunch, kind, count.matrixFlops,
                         count.vectorFlops, count.bytes});
    // Ops of other dialects (a step counter's arith.addi) have no kind and
    // no span: the roofline's (negligible) time.
    const sim::KernelRate *rate = options.calibration && !kind.empty()
                                      ? options.calibration->kernelRate(kind)
                                      : nullptr;
    compute += rate ? rate->seconds(count.flops(), count.bytes)
                    : sim::kernelTime(count.matrixFlops, count.vectorFlops,
                                      count.bytes,
                                      precision.value_or(sim::Precision::F32),
                                      device, params);
  });
}

const ProblemBuilder::BodyCost &
ProblemBuilder::bodyCost(LaunchOp launch, func::FuncOp body,
                         ArrayRef<Type> argTypes, double share,
                         bool withSegments) {
  // Launches of one body on the same local types cost the same (a stage's
  // F of every microbatch): walked once per simulation. Not when the
  // kernels are recorded, which are per launch.
  BodyKey key{body.getOperation(), share, withSegments, {}};
  for (Type type : argTypes)
    key.types.push_back(type.getAsOpaquePointer());
  if (!options.recordKernels)
    if (auto it = bodyCosts.find(key); it != bodyCosts.end())
      return it->second;
  BodyCost cost;
  if (body) {
    LocalSizes sizes(body, argTypes);
    cost.flops = countBody(body, &sizes).flops();
    llvm::append_range(cost.resultTypes, sizes.getResultTypes());
    if (withSegments) {
      double compute = params.launchOverhead, ignored = 0;
      currentLaunch = launch.getName().str();
      bodySegments(body, cost.segments, compute, ignored, share, &sizes);
      if (compute > 0) {
        sim::Segment seg;
        seg.work = compute;
        seg.share = share;
        seg.label = "compute";
        cost.segments.push_back(seg);
      }
    }
  }
  if (options.recordKernels)
    return uncachedCost = std::move(cost);
  return bodyCosts[key] = std::move(cost);
}

void ProblemBuilder::launchSegments(LaunchOp launch, sim::Instr &instr,
                                    double &launchFlops) {
  auto body = module.lookupSymbol<func::FuncOp>(launch.getCalleeAttr());
  // One device's share of a tensor-parallel body.
  SmallVector<Type> argTypes;
  for (Value operand : launch->getOperands())
    argTypes.push_back(localOf(operand));
  double share =
      launch.getSmShare() ? launch.getSmShare()->convertToDouble() : 0;
  std::optional<double> measured;
  if (!options.unitCosts)
    measured = calibrated(options.calibration ? &options.calibration->launches
                                              : nullptr,
                          launch.getName(), ("@" + launch.getCallee()).str());
  const BodyCost &cost =
      bodyCost(launch, body, argTypes, share, !options.unitCosts && !measured);
  launchFlops += cost.flops;
  for (auto [result, type] : llvm::zip(launch->getResults(), cost.resultTypes))
    recordLocal(result, type);
  if (options.unitCosts) {
    // F = BI = BW = 1 (a fused B is both); updates and the rest are free.
    double work = llvm::StringSwitch<double>(instr.category)
                      .Cases({"F", "BI", "BW"}, 1)
                      .Case("B", 2)
                      .Default(0);
    if (work > 0) {
      sim::Segment seg;
      seg.work = work;
      seg.label = "compute";
      instr.segments.push_back(seg);
    }
    return;
  }
  if (measured) {
    sim::Segment seg;
    seg.work = *measured;
    seg.share = share;
    seg.label = "compute";
    instr.segments.push_back(seg);
    return;
  }
  llvm::append_range(instr.segments, cost.segments);
}

LogicalResult
ProblemBuilder::build(function_ref<InFlightDiagnostic()> emitError) {
  for (auto program : module.getOps<ProgramOp>())
    programs.push_back(program);
  if (programs.empty())
    return emitError() << "no piper.program to simulate; partition a "
                          "scheduled DAG first (--piper-partition)";
  mesh = lookupMesh(programs.front(), programs.front().getMeshAttr());
  if (!mesh)
    return emitError() << "unknown mesh " << programs.front().getMeshAttr();
  DenseMap<StringAttr, unsigned> index;
  for (auto [i, program] : llvm::enumerate(programs)) {
    index[program.getSymNameAttr()] = i;
    for (NamedAttribute axis : program.getRole())
      roleAxes.insert(axis.getName());
  }

  std::map<std::tuple<unsigned, unsigned, int64_t>, int> messages;
  std::map<std::string, int> collectives;
  std::map<std::string, unsigned> sequence;
  auto rendezvous = [&](int participants) {
    problem.rendezvous.push_back(participants);
    return int(problem.rendezvous.size() - 1);
  };

  flops.assign(programs.size(), 0);
  for (auto [p, program] : llvm::enumerate(programs)) {
    sim::Program simProgram;
    simProgram.name = program.getSymName().str();
    currentProgram = simProgram.name;
    DenseMap<StringAttr, unsigned> streamIndex;
    for (auto name : program.getStreams().getAsRange<StringAttr>()) {
      streamIndex[name] = simProgram.streams.size();
      simProgram.streams.push_back({name.str(), {}});
    }
    // Launches by task name, to pair overlapped ones afterwards.
    llvm::StringMap<std::pair<int, int>> launchAt;
    SmallVector<std::tuple<int, int, StringRef>> pairs;
    // The bucket of the last collective per stream: a fused call pays
    // latency once.
    DenseMap<StringAttr, std::pair<int64_t, CollectiveKind>> lastBucket;

    for (Operation &op : program.getBody().front()) {
      if (auto input = dyn_cast<InputOp>(op))
        recordInput(program, input);
      else if (!isa<LaunchOp>(op) && op.getNumResults() == 1 &&
               op.getNumOperands() >= 1 &&
               op.getResult(0).getType() == op.getOperand(0).getType())
        recordLocal(op.getResult(0), localOf(op.getOperand(0)));
      StringAttr streamName = getProgramStream(&op);
      if (!streamName)
        continue;
      sim::Instr instr;
      if (auto launch = dyn_cast<LaunchOp>(op)) {
        instr.kind = sim::Instr::Kind::Launch;
        instr.name = launch.getName().str();
        instr.category = categoryOf(launch.getName()).str();
        launchSegments(launch, instr, flops[p]);
        if (launch.getOverlap())
          pairs.push_back(
              {int(streamIndex[streamName]),
               int(simProgram.streams[streamIndex[streamName]].instrs.size()),
               *launch.getOverlap()});
        launchAt[launch.getName()] = {
            int(streamIndex[streamName]),
            int(simProgram.streams[streamIndex[streamName]].instrs.size())};
      } else if (auto sum = dyn_cast<SumOp>(op)) {
        instr.kind = sim::Instr::Kind::Launch;
        instr.name = sum.getName().str();
        instr.category = "sum";
        double n = sum.getValues().size();
        double elements = 0;
        if (auto shaped = dyn_cast<ShapedType>(sum.getType());
            shaped && shaped.hasStaticShape())
          elements = shaped.getNumElements();
        // n - 1 additions per element, and the microbatch scale's multiply:
        // a running sum of two-operand sums (one per microbatch) counts what
        // one sum of all of them would.
        double operations =
            n - 1 + (sum.getScale().isExactlyValue(1.0) ? 0 : 1);
        flops[p] += operations * elements;
        if (!options.unitCosts) {
          sim::Segment seg;
          seg.label = "compute";
          seg.work = sim::kernelTime(
              0, operations * elements, (n + 1) * tensorBytes(sum.getType()),
              precisionOf(sum.getType()), device, params);
          instr.segments.push_back(seg);
        }
      } else if (auto send = dyn_cast<SendOp>(op)) {
        instr.kind = sim::Instr::Kind::Comm;
        instr.name = send.getName().str();
        instr.category = "send";
        unsigned peer = index.lookup(send.getPeerAttr().getAttr());
        auto key = std::make_tuple(unsigned(p), peer, send.getTag());
        auto [it, inserted] = messages.try_emplace(key, 0);
        if (inserted)
          it->second = rendezvous(2);
        instr.rendezvous = it->second;
        if (!options.unitCosts) {
          // The link of the axes the two roles differ in; the slowest.
          DictionaryAttr mine = program.getRole(),
                         theirs = programs[peer].getRole();
          std::optional<sim::LinkSpec> link;
          for (StringAttr axis : roleAxes)
            if (mine.get(axis) != theirs.get(axis)) {
              sim::LinkSpec l = linkOf(axis);
              if (!link || l.bandwidth < link->bandwidth)
                link = l;
            }
          if (!link)
            link = sim::getDefaultLink("", device);
          instr.segments.push_back(commSegment(
              sim::sendTime(tensorBytes(send.getValue().getType()), *link),
              send.getName(), "send"));
        }
      } else if (auto recv = dyn_cast<RecvOp>(op)) {
        instr.kind = sim::Instr::Kind::Comm;
        instr.name = recv.getName().str();
        instr.category = "recv";
        unsigned peer = index.lookup(recv.getPeerAttr().getAttr());
        auto key = std::make_tuple(peer, unsigned(p), recv.getTag());
        auto [it, inserted] = messages.try_emplace(key, 0);
        if (inserted)
          it->second = rendezvous(2);
        instr.rendezvous = it->second;
      } else if (auto comm = dyn_cast<CommOp>(op)) {
        instr.kind = sim::Instr::Kind::Comm;
        instr.name = comm.getName().str();
        StringRef kind = stringifyCollectiveKind(comm.getKind());
        instr.category = kind.str();
        std::string group = getCommGroupKey(program, comm.getAxes());
        unsigned members = 0;
        for (ProgramOp other : programs)
          members += getCommGroupKey(other, comm.getAxes()) == group;
        if (members > 1) {
          std::string key;
          llvm::raw_string_ostream os(key);
          os << comm.getAxes() << "|" << comm.getStream() << "|" << group;
          unsigned n = sequence[key + "|" + std::to_string(p)]++;
          key += "#" + std::to_string(n);
          auto [it, inserted] = collectives.try_emplace(key, 0);
          if (inserted)
            it->second = rendezvous(int(members));
          instr.rendezvous = it->second;
        }
        if (!options.unitCosts) {
          sim::CommTime t =
              sim::collectiveTime(kind.str(), tensorBytes(comm.getType()),
                                  axisLinks(comm.getAxes(), kind));
          std::optional<int64_t> bucket = comm.getBucket();
          if (bucket) {
            auto previous = lastBucket.find(streamName);
            if (previous != lastBucket.end() &&
                previous->second == std::make_pair(*bucket, comm.getKind()))
              t.fixed = 0;
            lastBucket[streamName] = {*bucket, comm.getKind()};
          }
          instr.segments.push_back(commSegment(t, comm.getName(), kind));
        }
      } else if (auto record = dyn_cast<RecordOp>(op)) {
        instr.kind = sim::Instr::Kind::Record;
        instr.event = record.getEvent();
        instr.name = "record " + std::to_string(record.getEvent());
      } else if (auto wait = dyn_cast<WaitOp>(op)) {
        instr.kind = sim::Instr::Kind::Wait;
        instr.event = wait.getEvent();
        instr.name = "wait " + std::to_string(wait.getEvent());
      }
      simProgram.streams[streamIndex[streamName]].instrs.push_back(
          std::move(instr));
    }
    for (auto [stream, at, partner] : pairs) {
      auto it = launchAt.find(partner);
      if (it == launchAt.end() || it->second.first == stream)
        continue;
      sim::Instr &instr = simProgram.streams[stream].instrs[at];
      instr.partnerStream = it->second.first;
      instr.partnerInstr = it->second.second;
    }
    problem.programs.push_back(std::move(simProgram));
  }
  problem.interference = options.unitCosts ? 0 : params.interference;
  return success();
}

/// Peak memory per program from the memory plan of the module's DAG, or
/// nothing when there is no DAG or it cannot be planned.
std::vector<int64_t> peakMemory(ModuleOp module, ArrayRef<ProgramOp> programs) {
  std::vector<int64_t> peaks(programs.size(), -1);
  DAGOp dag;
  module.walk([&](DAGOp op) {
    dag = op;
    return WalkResult::interrupt();
  });
  if (!dag)
    return peaks;
  // A DAG that cannot be planned only costs us the memory column.
  ScopedDiagnosticHandler silence(module.getContext(),
                                  [](Diagnostic &) { return success(); });
  FailureOr<std::vector<DeviceMemoryPlan>> plans =
      planMemory(dag, [&]() { return dag.emitError(); });
  if (failed(plans))
    return peaks;
  for (auto [i, constProgram] : llvm::enumerate(programs))
    for (const DeviceMemoryPlan &plan : *plans) {
      ProgramOp program = constProgram;
      bool empty = !plan.devices || plan.devices.empty();
      if ((empty && program.getRole().empty()) ||
          plan.devices == program.getRole())
        peaks[i] = plan.peakBytes();
    }
  return peaks;
}

} // namespace

FailureOr<SimulationReport>
mlir::piper::simulatePrograms(ModuleOp module, const SimulateOptions &options,
                              function_ref<InFlightDiagnostic()> emitError) {
  const sim::DeviceSpec *device = sim::lookupDeviceSpec(options.device);
  if (!device)
    return emitError() << "unknown device '" << options.device
                       << "'; expected one of " << sim::listDeviceSpecNames();
  ProblemBuilder builder(module, options, *device);
  if (failed(builder.build(emitError)))
    return failure();

  SimulationReport report;
  report.device = device->name;
  report.deviceDescription = device->description;
  report.unitCosts = options.unitCosts;
  report.memoryCapacity = device->memoryBytes;
  report.numDevices = builder.mesh.getNumDevices();
  {
    llvm::raw_string_ostream os(report.mesh);
    llvm::interleave(
        builder.mesh.getAxisList(), os,
        [&](MeshAxisAttr axis) {
          sim::LinkSpec link = builder.linkOf(axis.getName());
          os << axis.getName().getValue() << "=" << axis.getSize() << " ("
             << link.linkClass << " "
             << llvm::format("%g", link.bandwidth / 1e9) << " GB/s, "
             << llvm::format("%g", link.latency * 1e6) << " us)";
        },
        ", ");
  }

  report.problem = std::move(builder.problem);
  report.kernels = std::move(builder.kernels);
  report.trace = sim::simulate(report.problem);
  if (!report.trace.error.empty())
    return emitError() << report.trace.error;
  report.stepTime = report.trace.makespan;
  double t = report.stepTime;

  std::vector<int64_t> peaks =
      options.planMemory ? peakMemory(module, builder.programs)
                         : std::vector<int64_t>(builder.programs.size(), -1);
  int64_t roleDevices = 1;
  for (StringAttr axis : builder.roleAxes)
    if (MeshAxisAttr attr = builder.mesh.getAxis(axis))
      roleDevices *= attr.getSize();
  double replicas = double(report.numDevices) / double(roleDevices);

  for (auto [p, program] : llvm::enumerate(builder.programs)) {
    DeviceSummary d;
    d.program = "@" + program.getSymName().str();
    d.role = formatDeviceGroup(program.getRole());
    std::vector<std::pair<double, double>> compute, comm;
    for (const sim::Span &span : report.trace.spans)
      if (span.isSegment && span.program == int(p))
        (span.kind == sim::SegmentKind::Compute ? compute : comm)
            .push_back({span.start, span.end});
    d.compute = sim::unionLength(compute);
    d.comm = sim::unionLength(comm);
    d.hiddenComm = sim::overlapLength(compute, comm);
    d.exposedComm = d.comm - d.hiddenComm;
    std::vector<std::pair<double, double>> all = compute;
    all.insert(all.end(), comm.begin(), comm.end());
    d.idle = t - sim::unionLength(all);
    d.flops = builder.flops[p];
    d.peakMemory = peaks[p];
    report.devices.push_back(d);
    report.flopsPerStep += d.flops * replicas;
    if (t > 0)
      report.bubbleFraction += d.idle / t;
    report.exposedComm += d.exposedComm;
    report.hiddenComm += d.hiddenComm;
  }
  double n = double(report.devices.size());
  report.bubbleFraction /= n;
  report.exposedComm /= n;
  report.hiddenComm /= n;

  // Tokens: the largest integer data input (ids, labels) of a microbatch,
  // times the microbatches, times the replicas that see different data
  // (axes off the roles, but not tensor-parallel ones, whose ranks share
  // their tokens).
  double perReplica = 0;
  for (ProgramOp program : builder.programs)
    program.walk([&](InputOp input) {
      auto shaped = dyn_cast<ShapedType>(input.getType());
      if (!input.getCount() || !shaped || !shaped.hasStaticShape() ||
          !isa<IntegerType>(shaped.getElementType()))
        return;
      perReplica = std::max(perReplica, double(shaped.getNumElements()) *
                                            double(*input.getCount()));
    });
  llvm::SetVector<StringAttr> tensorAxes;
  module.walk([&](CollectiveOp op) {
    if (op.getKind() != CollectiveKind::AllToAll)
      for (auto axis : op.getAxes().getAsRange<StringAttr>())
        tensorAxes.insert(axis);
  });
  double dataReplicas = 1;
  for (MeshAxisAttr axis : builder.mesh.getAxisList())
    if (!builder.roleAxes.contains(axis.getName()) &&
        !tensorAxes.contains(axis.getName()))
      dataReplicas *= double(axis.getSize());
  report.tokensPerStep = perReplica * dataReplicas;
  if (!options.unitCosts && t > 0) {
    report.tokensPerSecond = report.tokensPerStep / t;
    report.mfu =
        report.flopsPerStep /
        (double(report.numDevices) * t *
         sim::matrixPeak(builder.modelPrecision.value_or(sim::Precision::BF16),
                         *device));
  }
  return report;
}
