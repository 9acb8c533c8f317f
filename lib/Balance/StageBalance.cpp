//===- StageBalance.cpp - Assign a model's layers to pipeline stages ------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The step's top-level ops (PP chunks inlined) are the units. A stage may
// start only where exactly one value crosses from earlier units to later
// ones (before a layer, between attention and MLP, before the LM head), so
// a stage boundary costs one activation transfer, as a hand-written split
// does. The units between two such places form a segment; an exact dynamic
// program over segments minimises the largest stage cost (ties: the
// smaller sum of squared costs, i.e. the more even split) among splits
// whose every stage fits the memory limit.
//
//===----------------------------------------------------------------------===//

#include "piper/Balance/StageBalance.h"

#include "piper/Dialect/Piper/IR/PiperAttrs.h"
#include "piper/Dialect/Piper/IR/PiperOps.h"
#include "piper/Simulator/CostModel.h"
#include "piper/Simulator/OpCounts.h"

#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/StringExtras.h"

#include <limits>

using namespace mlir;
using namespace mlir::piper;
namespace sim = ::piper::sim;

namespace {

bool isPPChunk(Operation *op) {
  auto chunk = dyn_cast<AnnotateOp>(op);
  return chunk && chunk.getTags().get("PP");
}

double tensorBytes(Type type) {
  auto shaped = dyn_cast<ShapedType>(type);
  if (!shaped || !shaped.hasStaticShape())
    return 0;
  unsigned bits = shaped.getElementType().getIntOrFloatBitWidth();
  return double(shaped.getNumElements()) * double(std::max(8u, bits) / 8);
}

sim::Precision precisionOf(Operation *op) {
  for (Type t :
       llvm::concat<Type>(op->getResultTypes(), op->getOperandTypes())) {
    Type element = getElementTypeOrSelf(t);
    if (element.isF64())
      return sim::Precision::F64;
    if (element.isBF16() || element.isF16())
      return sim::Precision::BF16;
    if (isa<FloatType>(element))
      return sim::Precision::F32;
  }
  return sim::Precision::F32;
}

/// The step's units and what crosses between them.
struct Units {
  SmallVector<Operation *> ops;
  DenseMap<Operation *, int64_t> index;
  /// Per unit: forward kernels (seconds or FLOPs, one microbatch), expert
  /// all-to-all seconds (one microbatch, forward and backward), activation
  /// bytes, and the step arguments (parameters) it reads.
  SmallVector<double> compute, allToAll, activations;
  SmallVector<llvm::BitVector> params;
  /// Per unit: whether it reads a float value another unit computed, so
  /// its backward has an input gradient to produce.
  SmallVector<bool> readsActivation;
  /// Per boundary b (before unit b): values crossing it and their bytes.
  SmallVector<int64_t> crossing;
  SmallVector<double> crossingBytes;
};

class Balancer {
public:
  Balancer(func::FuncOp step, const BalanceOptions &options,
           function_ref<InFlightDiagnostic()> emitError)
      : step(step), options(options), emitError(emitError) {}

  FailureOr<StageBalance> run();

private:
  LogicalResult collectUnits();
  LogicalResult setUpCosts();
  void costUnits();
  void measureCrossings();
  int64_t unitOf(Operation *op) const;
  Value canonical(Value value) const;
  /// Link of mesh axis `name` as the simulator models it.
  sim::LinkSpec linkOf(MeshAxisAttr axis) const;
  FailureOr<std::vector<sim::AxisLink>> axisLinks(ArrayRef<std::string> names);

  func::FuncOp step;
  const BalanceOptions &options;
  function_ref<InFlightDiagnostic()> emitError;
  Units units;
  MeshOp mesh;
  const sim::DeviceSpec *device = nullptr;
  sim::CostParameters params;
  std::vector<sim::AxisLink> gradLinks, expertLinks;
  sim::LinkSpec pipelineLink;
  bool roofline = true;
};

int64_t Balancer::unitOf(Operation *op) const {
  for (; op; op = op->getParentOp())
    if (auto it = units.index.find(op); it != units.index.end())
      return it->second;
  return -1;
}

/// A result of a top-level PP chunk stands for the value its yield returns.
Value Balancer::canonical(Value value) const {
  while (auto result = dyn_cast<OpResult>(value)) {
    Operation *owner = result.getOwner();
    if (!isPPChunk(owner) || owner->getParentOp() != step)
      break;
    value =
        cast<AnnotateOp>(owner).getBody().front().getTerminator()->getOperand(
            result.getResultNumber());
  }
  return value;
}

LogicalResult Balancer::collectUnits() {
  Block &body = step.getBody().front();
  auto add = [&](Operation *op) {
    if (op->hasTrait<OpTrait::ConstantLike>())
      return;
    units.index[op] = units.ops.size();
    units.ops.push_back(op);
  };
  for (Operation &op : body.without_terminator()) {
    if (!isPPChunk(&op)) {
      add(&op);
      continue;
    }
    auto chunk = cast<AnnotateOp>(op);
    if (chunk.getTags().size() != 1 || chunk.getPass())
      return emitError() << "balance re-cuts PP chunks that carry only the PP "
                            "tag; a chunk has tags "
                         << chunk.getTags();
    for (Operation &inner : chunk.getBody().front().without_terminator())
      add(&inner);
  }
  WalkResult nested = step.walk([&](AnnotateOp chunk) {
    if (isPPChunk(chunk) && chunk->getParentOp() != step)
      return WalkResult::interrupt();
    return WalkResult::advance();
  });
  if (nested.wasInterrupted())
    return emitError() << "balance expects the PP chunks of '@"
                       << step.getSymName() << "' at the top level of its body";
  if (units.ops.empty())
    return emitError() << "'@" << step.getSymName()
                       << "' has no ops to assign to stages";
  return success();
}

sim::LinkSpec Balancer::linkOf(MeshAxisAttr axis) const {
  std::string cls;
  if (axis.getLink())
    cls = stringifyLinkClass(*axis.getLink()).str();
  sim::LinkSpec link = sim::getDefaultLink(cls, *device);
  if (axis.getBandwidth())
    link.bandwidth = axis.getBandwidth().getValueAsDouble() * 1e9;
  if (axis.getLatency())
    link.latency = axis.getLatency().getValueAsDouble() * 1e-6;
  return link;
}

FailureOr<std::vector<sim::AxisLink>>
Balancer::axisLinks(ArrayRef<std::string> names) {
  std::vector<sim::AxisLink> links;
  if (names.empty())
    return links;
  if (!mesh) {
    emitError() << "balance over mesh axes needs a piper.mesh in the model";
    return failure();
  }
  for (const std::string &name : names) {
    MeshAxisAttr axis = mesh.getAxis(name);
    if (!axis) {
      emitError() << "mesh @" << mesh.getSymName() << " has no axis '" << name
                  << "' (axes: " << mesh.getAxisNamesForDiagnostic() << ")";
      return failure();
    }
    links.push_back({name, axis.getSize(), linkOf(axis)});
  }
  return links;
}

LogicalResult Balancer::setUpCosts() {
  if (options.numStages < 1)
    return emitError() << "balance needs at least one stage, got "
                       << options.numStages;
  if (options.costSource != "roofline" && options.costSource != "flops")
    return emitError() << "unknown cost source '" << options.costSource
                       << "'; expected \"roofline\" or \"flops\"";
  roofline = options.costSource == "roofline";
  device = sim::lookupDeviceSpec(options.device);
  if (!device)
    return emitError() << "unknown device '" << options.device
                       << "'; expected one of " << sim::listDeviceSpecNames();
  if (auto module = step->getParentOfType<ModuleOp>()) {
    auto meshes = module.getOps<MeshOp>();
    if (!meshes.empty())
      mesh = *meshes.begin();
  }
  auto grad = axisLinks(options.gradAxes);
  auto expert = axisLinks(options.expertAxes);
  if (failed(grad) || failed(expert))
    return failure();
  gradLinks = *grad;
  expertLinks = *expert;
  MeshAxisAttr pipelineAxis =
      mesh ? mesh.getAxis(options.pipelineAxis) : MeshAxisAttr();
  pipelineLink =
      pipelineAxis ? linkOf(pipelineAxis) : sim::getDefaultLink("", *device);
  return success();
}

void Balancer::costUnits() {
  unsigned numArgs = step.getNumArguments();
  Block &body = step.getBody().front();
  for (Operation *unit : units.ops) {
    double compute = 0, allToAll = 0, activations = 0;
    bool readsActivation = false;
    llvm::BitVector used(numArgs);
    unit->walk([&](Operation *op) {
      for (Value operand : op->getOperands()) {
        Value value = canonical(operand);
        if (Operation *def = value.getDefiningOp())
          readsActivation |= unitOf(def) >= 0 && unitOf(def) != unitOf(op) &&
                             isa<FloatType>(getElementTypeOrSelf(value));
        auto arg = dyn_cast<BlockArgument>(value);
        if (arg && arg.getOwner() == &body &&
            step.getArgAttr(arg.getArgNumber(), "piper.param"))
          used.set(arg.getArgNumber());
      }
      if (isa<AnnotateOp, YieldOp>(op))
        return;
      for (Type type : op->getResultTypes())
        activations += tensorBytes(type);
      // Tokens cross the expert axes twice per microbatch: forward and
      // the transposed exchange of the backward.
      if (isa<DispatchOp>(op) && !expertLinks.empty())
        allToAll += 2 * sim::collectiveTime(
                            "all_to_all", tensorBytes(op->getResultTypes()[0]),
                            expertLinks)
                            .total();
      if (isa<CombineOp>(op) && !expertLinks.empty())
        allToAll += 2 * sim::collectiveTime(
                            "all_to_all", tensorBytes(op->getOperandTypes()[0]),
                            expertLinks)
                            .total();
      OpCount count = countOp(op);
      if (count.kernels == 0)
        return;
      compute += roofline ? sim::kernelTime(count.matrixFlops,
                                            count.vectorFlops, count.bytes,
                                            precisionOf(op), *device, params)
                          : count.flops();
    });
    // A backward costs about twice its forward (input and weight gradient).
    units.compute.push_back(3 * compute);
    units.allToAll.push_back(roofline ? allToAll : 0);
    units.activations.push_back(activations);
    units.params.push_back(std::move(used));
    units.readsActivation.push_back(readsActivation);
  }
}

void Balancer::measureCrossings() {
  int64_t n = units.ops.size();
  DenseMap<Value, int64_t> lastUse;
  for (int64_t i = 0; i < n; ++i)
    units.ops[i]->walk([&](Operation *op) {
      for (Value operand : op->getOperands()) {
        Value value = canonical(operand);
        int64_t def =
            value.getDefiningOp() ? unitOf(value.getDefiningOp()) : -1;
        if (def >= 0 && def != i)
          lastUse[value] = std::max<int64_t>(lastUse.lookup(value), i);
      }
    });
  for (Value operand : step.getBody().front().getTerminator()->getOperands()) {
    Value value = canonical(operand);
    if (value.getDefiningOp() && unitOf(value.getDefiningOp()) >= 0)
      lastUse[value] = n;
  }
  // crossing[b]: values defined before unit b and used at or after it.
  SmallVector<int64_t> delta(n + 2, 0);
  SmallVector<double> deltaBytes(n + 2, 0);
  for (auto [value, last] : lastUse) {
    int64_t def = unitOf(value.getDefiningOp());
    delta[def + 1] += 1;
    delta[std::min(last, n) + 1] -= 1;
    deltaBytes[def + 1] += tensorBytes(value.getType());
    deltaBytes[std::min(last, n) + 1] -= tensorBytes(value.getType());
  }
  units.crossing.assign(n, 0);
  units.crossingBytes.assign(n, 0);
  int64_t running = 0;
  double runningBytes = 0;
  for (int64_t b = 0; b < n; ++b) {
    running += delta[b];
    runningBytes += deltaBytes[b];
    units.crossing[b] = running;
    units.crossingBytes[b] = runningBytes;
  }
}

/// The best split of segments [0, k) into `stages` stages.
struct Split {
  double max = std::numeric_limits<double>::infinity();
  double squares = 0;
  int64_t parent = -1;
  bool better(double m, double s) const {
    return m < max * (1 - 1e-12) || (m <= max * (1 + 1e-12) && s < squares);
  }
};

FailureOr<StageBalance> Balancer::run() {
  if (failed(setUpCosts()) || failed(collectUnits()))
    return failure();
  costUnits();
  measureCrossings();

  // Segment starts: unit 0 and every boundary one value crosses.
  SmallVector<int64_t> starts = {0};
  for (int64_t b = 1, n = units.ops.size(); b < n; ++b)
    if (units.crossing[b] == 1)
      starts.push_back(b);
  int64_t k = starts.size(), stages = options.numStages;
  auto segEnd = [&](int64_t s) {
    return s + 1 < k ? starts[s + 1] : int64_t(units.ops.size());
  };
  // With several stages, the first must hold more than the embedding: a
  // stage whose backward produces no input gradient (the embedding's ids
  // have none) has no BI task for the schedules to place.
  int64_t firstEnd = 1;
  while (stages > 1 && firstEnd <= k &&
         !llvm::any_of(llvm::seq<int64_t>(0, segEnd(firstEnd - 1)),
                       [&](int64_t u) { return units.readsActivation[u]; }))
    ++firstEnd;
  int64_t places = k - (firstEnd - 1);
  if (places < stages)
    return emitError() << "cannot split '@" << step.getSymName() << "' into "
                       << stages << " stages: it has " << places
                       << " places a stage can start (op boundaries that "
                          "exactly one activation crosses)",
           failure();

  int64_t m = options.microbatches > 0 ? options.microbatches : stages;
  int64_t numArgs = step.getNumArguments();
  SmallVector<double> paramComm(numArgs, 0), paramBytes(numArgs, 0);
  for (int64_t a = 0; a < numArgs; ++a) {
    auto param = step.getArgAttrOfType<ParamAttr>(a, "piper.param");
    if (!param)
      continue;
    double bytes = tensorBytes(step.getArgument(a).getType());
    double local = bytes;
    bool split = false;
    if (PlacementAttr placement = param.getPlacement(); placement && mesh) {
      for (StringAttr axis : placement.getSplitAxes()) {
        if (MeshAxisAttr attr = mesh.getAxis(axis.getValue()))
          local /= attr.getSize();
        split |= llvm::any_of(options.gradAxes, [&](const std::string &g) {
          return g == axis.getValue();
        });
      }
    }
    // Parameter, gradient and two optimizer moments.
    paramBytes[a] = 4 * local;
    if (roofline && !split && !gradLinks.empty())
      paramComm[a] =
          sim::collectiveTime("reduce_scatter", bytes, gradLinks).total() +
          sim::collectiveTime("all_gather", bytes, gradLinks).total();
  }

  // Cost and memory of every segment range [a, b).
  std::vector<std::vector<double>> cost(k, std::vector<double>(k + 1, 0)),
      fixedMem = cost, actMem = cost;
  for (int64_t a = 0; a < k; ++a) {
    llvm::BitVector used(numArgs);
    double perMicrobatch = 0, activations = 0;
    for (int64_t b = a + 1; b <= k; ++b) {
      for (int64_t u = starts[b - 1]; u < segEnd(b - 1); ++u) {
        perMicrobatch += units.compute[u] + units.allToAll[u];
        activations += units.activations[u];
        used |= units.params[u];
      }
      double comm = 0, bytes = 0;
      for (unsigned p : used.set_bits()) {
        comm += paramComm[p];
        bytes += paramBytes[p];
      }
      // The activation in and out, and their gradients back, per
      // microbatch over the pipeline link.
      double transfers = 0;
      if (roofline) {
        if (a > 0)
          transfers +=
              2 * sim::sendTime(units.crossingBytes[starts[a]], pipelineLink)
                      .total();
        if (b < k)
          transfers +=
              2 * sim::sendTime(units.crossingBytes[starts[b]], pipelineLink)
                      .total();
      }
      cost[a][b] = m * (perMicrobatch + transfers) + comm;
      fixedMem[a][b] = bytes;
      actMem[a][b] = activations;
    }
  }

  // best[s][j]: segments [0, j) in s stages.
  std::vector<std::vector<Split>> best(stages + 1, std::vector<Split>(k + 1));
  best[0][0] = {0, 0, -1};
  for (int64_t s = 1; s <= stages; ++s) {
    int64_t inFlight = std::min<int64_t>(m, stages - (s - 1));
    for (int64_t j = s; j <= k - (stages - s); ++j)
      for (int64_t i = s - 1; i < j; ++i) {
        const Split &prev = best[s - 1][i];
        if (prev.parent < 0 && !(s == 1 && i == 0))
          continue;
        if (s == 1 && j < firstEnd)
          continue;
        if (options.memoryLimit > 0 &&
            fixedMem[i][j] + inFlight * actMem[i][j] > options.memoryLimit)
          continue;
        double c = cost[i][j];
        double mx = std::max(prev.max, c), sq = prev.squares + c * c;
        if (best[s][j].better(mx, sq))
          best[s][j] = {mx, sq, i};
      }
  }
  if (best[stages][k].parent < 0)
    return emitError() << "no split of '@" << step.getSymName() << "' into "
                       << stages << " stages keeps every stage within "
                       << "memory_limit = " << int64_t(options.memoryLimit)
                       << " bytes",
           failure();

  StageBalance result;
  result.numUnits = units.ops.size();
  SmallVector<int64_t> segStarts;
  for (int64_t s = stages, j = k; s > 0; --s) {
    int64_t i = best[s][j].parent;
    segStarts.push_back(i);
    int64_t inFlight = std::min<int64_t>(m, stages - (s - 1));
    result.cost.push_back(cost[i][j]);
    result.memory.push_back(fixedMem[i][j] + inFlight * actMem[i][j]);
    j = i;
  }
  std::reverse(segStarts.begin(), segStarts.end());
  std::reverse(result.cost.begin(), result.cost.end());
  std::reverse(result.memory.begin(), result.memory.end());
  for (int64_t seg : segStarts) {
    Operation *first = units.ops[starts[seg]];
    result.firstUnit.push_back(starts[seg]);
    auto name = first->getLoc()->findInstanceOf<NameLoc>();
    result.firstUnitName.push_back(
        (name ? name.getName().str() : first->getName().getStringRef().str()) +
        " (op " + std::to_string(starts[seg]) + ")");
  }
  return result;
}

} // namespace

double StageBalance::maxCost() const {
  double max = 0;
  for (double c : cost)
    max = std::max(max, c);
  return max;
}

FailureOr<StageBalance>
mlir::piper::balanceStages(func::FuncOp step, const BalanceOptions &options,
                           function_ref<InFlightDiagnostic()> emitError) {
  return Balancer(step, options, emitError).run();
}

func::FuncOp mlir::piper::findStepFunction(ModuleOp model) {
  auto funcs = llvm::to_vector(model.getOps<func::FuncOp>());
  for (func::FuncOp f : funcs)
    for (unsigned a = 0; a < f.getNumArguments(); ++a)
      if (f.getArgAttr(a, "piper.param"))
        return f;
  for (func::FuncOp f : funcs)
    if (!f.isExternal() && llvm::any_of(f.getBody().front(), [](Operation &op) {
          return isPPChunk(&op);
        }))
      return f;
  return funcs.size() == 1 ? funcs.front() : func::FuncOp();
}

FailureOr<StageBalance> mlir::piper::balanceStages(ModuleOp model,
                                                   int64_t numStages,
                                                   StringRef costSource,
                                                   BalanceOptions options) {
  func::FuncOp step = findStepFunction(model);
  if (!step || step.isExternal())
    return model.emitError() << "balance found no step function (a func.func "
                                "with piper.param arguments)",
           failure();
  options.numStages = numStages;
  options.costSource = costSource.str();
  return balanceStages(step, options, [&] { return step.emitError(); });
}

/// Replaces every top-level PP chunk of `step` by its body.
static void inlinePPChunks(func::FuncOp step) {
  Block &body = step.getBody().front();
  for (Operation &op : llvm::make_early_inc_range(body)) {
    if (!isPPChunk(&op))
      continue;
    auto chunk = cast<AnnotateOp>(op);
    Block &inner = chunk.getBody().front();
    Operation *yield = inner.getTerminator();
    chunk->replaceAllUsesWith(yield->getOperands());
    yield->erase();
    body.getOperations().splice(Block::iterator(chunk), inner.getOperations());
    chunk->erase();
  }
}

void mlir::piper::applyStageBalance(func::FuncOp step,
                                    const StageBalance &balance) {
  inlinePPChunks(step);
  Block &body = step.getBody().front();
  SmallVector<Operation *> unitOps;
  for (Operation &op : body.without_terminator())
    if (!op.hasTrait<OpTrait::ConstantLike>())
      unitOps.push_back(&op);
  assert(int64_t(unitOps.size()) == balance.numUnits &&
         "the step changed between balanceStages and applyStageBalance");

  MLIRContext *ctx = step.getContext();
  OpBuilder builder(ctx);
  int64_t stages = balance.firstUnit.size();
  for (int64_t s = 0; s < stages; ++s) {
    int64_t begin = balance.firstUnit[s];
    int64_t end = s + 1 < stages ? balance.firstUnit[s + 1] : balance.numUnits;
    ArrayRef<Operation *> ops(unitOps.data() + begin, end - begin);
    llvm::SmallPtrSet<Operation *, 32> members(ops.begin(), ops.end());
    auto inStage = [&](Operation *user) {
      for (; user; user = user->getParentOp())
        if (members.contains(user))
          return true;
      return false;
    };
    SmallVector<Value> escaping;
    for (Operation *op : ops)
      for (Value result : op->getResults())
        if (llvm::any_of(result.getUsers(),
                         [&](Operation *u) { return !inStage(u); }))
          escaping.push_back(result);

    builder.setInsertionPoint(ops.front());
    Location loc = NameLoc::get(
        StringAttr::get(ctx, "stage." + std::to_string(s)), step.getLoc());
    auto tags = DictionaryAttr::get(
        ctx, {builder.getNamedAttr("PP", builder.getI64IntegerAttr(s))});
    auto chunk = AnnotateOp::create(
        builder, loc, ValueRange(escaping).getTypes(), tags, PassKindAttr());
    Block *inner = builder.createBlock(&chunk.getBody());
    for (Operation *op : ops)
      op->moveBefore(inner, inner->end());
    // Constants defined outside: a copy in the chunk, so the chunk does
    // not depend on where they sat between stages.
    DenseMap<Operation *, Operation *> copies;
    builder.setInsertionPointToStart(inner);
    for (Operation *op : ops)
      op->walk([&](Operation *nested) {
        for (OpOperand &operand : nested->getOpOperands()) {
          Operation *def = operand.get().getDefiningOp();
          if (!def || def->getBlock() != &body ||
              !def->hasTrait<OpTrait::ConstantLike>())
            continue;
          Operation *&copy = copies[def];
          if (!copy)
            copy = builder.clone(*def);
          operand.set(
              copy->getResult(cast<OpResult>(operand.get()).getResultNumber()));
        }
      });
    builder.setInsertionPointToEnd(inner);
    YieldOp::create(builder, loc, escaping);
    for (auto [value, result] : llvm::zip(escaping, chunk.getResults()))
      value.replaceUsesWithIf(result, [&](OpOperand &use) {
        return !chunk->isAncestor(use.getOwner());
      });
  }
  for (Operation &op : llvm::make_early_inc_range(body.without_terminator()))
    if (op.hasTrait<OpTrait::ConstantLike>() && op.use_empty())
      op.erase();
}
