//===- Shard.cpp - transform.piper.shard ----------------------------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Expert and tensor parallelism. Both keep replicas symbolic: the directive
// marks the parameters it splits (their `#piper.param` placement) and puts
// the communication inside the outlined task bodies, where the expert block
// and the linear layers are. Bodies are shared by microbatch copies of a
// task, so each body is rewritten once.
//
//===----------------------------------------------------------------------===//

#include "piper/Analysis/LocalSizes.h"
#include "piper/Dialect/Piper/IR/PiperDialect.h"
#include "piper/Dialect/Piper/IR/PiperDistributionRule.h"
#include "piper/Dialect/Piper/IR/PiperOps.h"
#include "piper/Dialect/Piper/Transforms/CommReport.h"
#include "piper/TransformOps/PiperTransformOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/GlobPattern.h"

using namespace mlir;
using namespace mlir::piper;

static constexpr StringLiteral kExpert = "expert";
static constexpr StringLiteral kTensor = "tensor";

//===----------------------------------------------------------------------===//
// Syntax and verification
//===----------------------------------------------------------------------===//

ParseResult ShardOp::parseShardMode(OpAsmParser &parser, StringAttr &mode) {
  SMLoc loc = parser.getCurrentLocation();
  StringRef keyword;
  if (parser.parseKeyword(&keyword))
    return failure();
  if (keyword != kExpert && keyword != kTensor)
    return parser.emitError(loc)
           << "expected 'expert' or 'tensor', got '" << keyword << "'";
  mode = parser.getBuilder().getStringAttr(keyword);
  return success();
}

void ShardOp::printShardMode(OpAsmPrinter &printer, Operation *,
                             StringAttr mode) {
  printer << mode.getValue();
}

LogicalResult ShardOp::verify() {
  if (getMode() != kExpert && getMode() != kTensor)
    return emitOpError() << "mode must be 'expert' or 'tensor', got '"
                         << getMode() << "'";
  if (getAxes().size() != 1)
    return emitOpError() << "shards over exactly one mesh axis, got "
                         << getAxes().size();
  bool hasPatterns = getColumn() || getRow();
  if (getMode() == kExpert && (hasPatterns || getSequenceParallel()))
    return emitOpError() << "column, row and sequence_parallel apply to "
                            "'tensor' sharding only";
  if (getMode() == kTensor && !hasPatterns)
    return emitOpError() << "tensor sharding needs 'column' or 'row' "
                            "parameter patterns";
  return success();
}

void ShardOp::getEffects(
    SmallVectorImpl<MemoryEffects::EffectInstance> &effects) {
  transform::onlyReadsHandle(getNodesMutable(), effects);
  transform::producesHandle(getOperation()->getOpResults(), effects);
  transform::modifiesPayload(effects);
}

//===----------------------------------------------------------------------===//
// Shared machinery
//===----------------------------------------------------------------------===//

namespace {

/// A parameter of the step function: its argument and attribute.
struct Param {
  BlockArgument arg;
  ParamAttr attr;
  StringRef name() const { return attr.getName().getValue(); }
};

/// The parameter `value` (an operand of a DAG node) carries, looking through
/// transfers and ZeRO-3 gathers.
std::optional<Param> paramOf(Value value) {
  ParamAttr attr = getCarriedParam(value);
  if (!attr)
    return std::nullopt;
  return Param{getCarriedArgument(value), attr};
}

/// What the directive works on: each distinct body once, with one task that
/// calls it (microbatch copies pass the same parameters).
struct Body {
  func::FuncOp fn;
  TaskOp task;
};

/// Rewrites shared by both modes: collectives on the axis and parameter
/// placements.
class Sharder {
public:
  Sharder(ShardOp op, transform::TransformRewriter &rewriter, MeshOp mesh)
      : op(op), rewriter(rewriter), mesh(mesh),
        axis(cast<StringAttr>(op.getAxes()[0])),
        size(mesh.getAxis(axis.getValue()).getSize()) {}

  /// The parameter a body value is, when it is an argument of the body.
  /// Under mixed precision a linear reads its parameter's bf16 copy: a
  /// `piper.cast` of the argument in this body, or (a backward node) the
  /// copy a forward node made and passed on.
  std::optional<Param> paramOf(Body body, Value value) {
    if (auto copy = value.getDefiningOp<CastOp>())
      value = copy.getX();
    auto arg = dyn_cast<BlockArgument>(value);
    if (!arg || arg.getOwner()->getParentOp() != body.fn)
      return std::nullopt;
    Value carried = body.task->getOperand(arg.getArgNumber());
    if (std::optional<Param> param = ::paramOf(carried))
      return param;
    return paramOfCopy(carried);
  }

  /// The parameter whose cast an output of another node is.
  std::optional<Param> paramOfCopy(Value carried) {
    while (auto transfer = carried.getDefiningOp<TransferOp>())
      carried = transfer.getValue();
    auto maker = carried.getDefiningOp<TaskOp>();
    if (!maker)
      return std::nullopt;
    auto fn = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
        maker, maker.getCalleeAttr());
    if (!fn || fn.isExternal())
      return std::nullopt;
    Value yielded = fn.getBody().front().getTerminator()->getOperand(
        cast<OpResult>(carried).getResultNumber());
    auto copy = yielded.getDefiningOp<CastOp>();
    auto arg = copy ? dyn_cast<BlockArgument>(copy.getX()) : BlockArgument();
    if (!arg || arg.getOwner()->getParentOp() != fn)
      return std::nullopt;
    return ::paramOf(maker->getOperand(arg.getArgNumber()));
  }

  CollectiveOp create(Location loc, CollectiveKind kind, Value value,
                      const Twine &name) {
    auto collective = CollectiveOp::create(
        rewriter, loc, value.getType(), rewriter.getStringAttr(name),
        CollectiveKindAttr::get(op.getContext(), kind), value, op.getAxesAttr(),
        op.getMeshAttr(), rewriter.getStringAttr(op.getStreamName()),
        /*devices=*/DictionaryAttr(), /*bucket=*/IntegerAttr());
    created.push_back(collective);
    return collective;
  }

  /// Sets the insertion point right after `value` is defined.
  void setInsertionAfter(Value value) {
    if (Operation *def = value.getDefiningOp())
      rewriter.setInsertionPointAfter(def);
    else
      rewriter.setInsertionPointToStart(cast<BlockArgument>(value).getOwner());
  }

  /// Every later use of `value` sees it after the collective.
  void after(Value value, CollectiveKind kind, const Twine &name) {
    setInsertionAfter(value);
    CollectiveOp collective = create(value.getLoc(), kind, value, name);
    value.replaceAllUsesExcept(collective.getResult(), collective);
  }

  /// `use` sees its value gathered; one gather per value and body.
  void gatherFor(OpOperand &use, const Twine &name) {
    Value &gathered = gathers[use.get()];
    if (!gathered) {
      setInsertionAfter(use.get());
      gathered =
          create(use.get().getLoc(), CollectiveKind::AllGather, use.get(), name)
              .getResult();
    }
    use.set(gathered);
  }

  /// Records that `param` is split on `dim` over the axis; `what` describes
  /// the dimension for the divisibility diagnostic.
  DiagnosedSilenceableFailure split(const Param &param, unsigned dim,
                                    StringRef what) {
    auto [it, inserted] = splits.try_emplace(param.arg, dim);
    if (!inserted)
      return DiagnosedSilenceableFailure::success();
    auto type = cast<RankedTensorType>(param.arg.getType());
    int64_t extent = type.getDimSize(dim);
    if (!ShapedType::isDynamic(extent) && extent % size != 0)
      return op.emitDefiniteFailure()
             << "parameter '" << param.name() << "' (" << what << "): axis '"
             << axis.getValue() << "' of " << op.getMeshAttr() << " has size "
             << size << "; dim " << dim << " (size " << extent
             << ") is not divisible by it";
    if (PlacementAttr placement = param.attr.getPlacement()) {
      if (placement.getMesh() != op.getMeshAttr())
        return op.emitDefiniteFailure()
               << "parameter '" << param.name() << "' is placed on "
               << placement.getMesh() << ", not " << op.getMeshAttr();
      for (auto [d, axes] : llvm::enumerate(placement.getDims()))
        if (llvm::is_contained(axes, axis)) {
          // The expert split a model may already declare (piper-gen
          // --mesh=...,ep=N) is the one this directive makes.
          if (d == dim && axes.size() == 1 && op.getMode() == kExpert)
            return DiagnosedSilenceableFailure::success();
          return op.emitDefiniteFailure()
                 << "parameter '" << param.name() << "' is already split over '"
                 << axis.getValue() << "' (dim " << d << ")";
        }
      if (llvm::is_contained(placement.getReplicated(), axis))
        return op.emitDefiniteFailure()
               << "parameter '" << param.name() << "' is replicated over '"
               << axis.getValue() << "'; it cannot also be split over it";
    }
    return DiagnosedSilenceableFailure::success();
  }

  /// Writes the recorded splits into the parameters' placements.
  void commitSplits() {
    MLIRContext *ctx = op.getContext();
    for (auto [arg, dim] : splits) {
      auto fn = cast<FunctionOpInterface>(arg.getOwner()->getParentOp());
      auto attr = fn.getArgAttrOfType<ParamAttr>(
          arg.getArgNumber(), PiperDialect::getParamAttrName());
      PlacementAttr placement = attr.getPlacement();
      auto rank = cast<RankedTensorType>(arg.getType()).getRank();
      SmallVector<ArrayAttr> dims;
      ArrayAttr replicated = ArrayAttr::get(ctx, {});
      unsigned zero = 0;
      if (placement) {
        llvm::append_range(dims, placement.getDims());
        replicated = placement.getReplicated();
        zero = placement.getZero();
      } else {
        dims.assign(rank, ArrayAttr::get(ctx, {}));
      }
      if (llvm::is_contained(dims[dim], axis))
        continue;
      SmallVector<Attribute> axes(dims[dim].begin(), dims[dim].end());
      axes.push_back(axis);
      dims[dim] = ArrayAttr::get(ctx, axes);
      fn.setArgAttr(arg.getArgNumber(), PiperDialect::getParamAttrName(),
                    ParamAttr::get(ctx, attr.getName(), attr.getInit(),
                                   attr.getStd(),
                                   PlacementAttr::get(ctx, op.getMeshAttr(),
                                                      dims, replicated, zero)));
    }
  }

  void startBody() { gathers.clear(); }

  ShardOp op;
  transform::TransformRewriter &rewriter;
  MeshOp mesh;
  StringAttr axis;
  int64_t size;
  SmallVector<Operation *> created;

private:
  llvm::MapVector<BlockArgument, unsigned> splits;
  DenseMap<Value, Value> gathers;
};

//===----------------------------------------------------------------------===//
// Expert parallelism
//===----------------------------------------------------------------------===//

DiagnosedSilenceableFailure shardExperts(Sharder &sharder,
                                         ArrayRef<Body> bodies) {
  ShardOp op = sharder.op;
  unsigned blocks = 0;
  for (Body body : bodies) {
    SmallVector<AnnotateOp> chunks;
    body.fn.walk([&](AnnotateOp chunk) {
      if (chunk.getTags().get("EP"))
        chunks.push_back(chunk);
    });
    for (AnnotateOp chunk : chunks) {
      ++blocks;
      std::string tags = formatTags(chunk.getAllTags());
      bool sharded = false;
      chunk.walk([&](CollectiveOp collective) {
        sharded |= collective.getKind() == CollectiveKind::AllToAll;
      });
      if (sharded)
        return op.emitDefiniteFailure()
               << "expert block " << tags << " in the body of node '"
               << body.task.getName() << "' is already sharded";
      auto expertWeights =
          [&](ArrayRef<Value> weights) -> DiagnosedSilenceableFailure {
        for (Value weight : weights)
          if (std::optional<Param> param = sharder.paramOf(body, weight))
            if (DiagnosedSilenceableFailure result =
                    sharder.split(*param, 0, "experts");
                !result.succeeded())
              return result;
        return DiagnosedSilenceableFailure::success();
      };
      // Token side -> expert owners: the dispatched buffer (F) and the
      // cotangent of the expert outputs (BI); back: the expert outputs (F)
      // and the cotangent of the dispatched buffer (BI). BW only uses
      // values that already live with the experts. Each op's distribution
      // rule says which of its results move and which operands are expert
      // weights.
      SmallVector<Operation *> ops;
      chunk.walk([&](Operation *nested) { ops.push_back(nested); });
      for (Operation *nested : ops) {
        std::optional<DistributionRule> rule = DistributionRule::get(nested);
        if (!rule)
          continue;
        SmallVector<Value> weights;
        for (unsigned index : rule->getExpertWeightOperands())
          weights.push_back(nested->getOperand(index));
        if (auto result = expertWeights(weights); !result.succeeded())
          return result;
        for (auto [result, exchange] :
             llvm::zip(nested->getResults(), rule->getExpertExchanges())) {
          if (exchange == ExpertExchange::None)
            continue;
          sharder.after(result, CollectiveKind::AllToAll,
                        (exchange == ExpertExchange::ToExperts
                             ? "to_experts"
                             : "from_experts") +
                            tags);
        }
      }
    }
  }
  if (blocks == 0) {
    std::string names;
    for (Body body : bodies)
      names += (names.empty() ? "'" : ", '") + body.task.getName().str() + "'";
    return op.emitDefiniteFailure()
           << "no expert block (a chunk tagged EP) in the bodies of the "
              "nodes given ("
           << (names.empty() ? "only updates" : names) << ")";
  }
  return DiagnosedSilenceableFailure::success();
}

//===----------------------------------------------------------------------===//
// Tensor parallelism
//===----------------------------------------------------------------------===//

enum class Role { None, Column, Row };

/// Partial sums of a body: per-device outputs of a row-parallel linear (F)
/// and input gradients of a column-parallel one (BI), as the ops'
/// distribution rules say. A sum of partial sums is partial, so it is
/// reduced once after the sum (the three input gradients of q, k and v take
/// one all-reduce, as in Megatron).
class PartialSums {
public:
  /// `value` is partial; `source` names the parameters it sums over.
  void insert(Value value, std::string source) {
    partial.insert(value);
    sources[value] = std::move(source);
  }

  /// Closes the set under the ops whose rule propagates partial sums.
  void close(ArrayRef<Operation *> ops) {
    for (Operation *op : ops) {
      if (!propagates(op) || op->getNumOperands() == 0 ||
          !llvm::all_of(op->getOperands(),
                        [&](Value v) { return partial.contains(v); }))
        continue;
      std::string name;
      for (Value operand : op->getOperands())
        name += (name.empty() ? "" : "+") + sources[operand];
      insert(op->getResult(0), name);
    }
  }

  /// Reduces (`kind`) every partial sum that no sum absorbs; its other
  /// users read the reduced value.
  void reduce(Sharder &sharder, CollectiveKind kind) {
    for (Value value : partial) {
      if (llvm::all_of(value.getUsers(),
                       [&](Operation *user) { return absorbs(user); }))
        continue;
      sharder.setInsertionAfter(value);
      std::string name =
          (stringifyCollectiveKind(kind) + "(" + sources[value] + ")").str();
      CollectiveOp collective =
          sharder.create(value.getLoc(), kind, value, name);
      value.replaceUsesWithIf(collective.getResult(), [&](OpOperand &use) {
        Operation *user = use.getOwner();
        return user != collective && !absorbs(user);
      });
    }
  }

private:
  static bool propagates(Operation *op) {
    std::optional<DistributionRule> rule = DistributionRule::get(op);
    return rule && rule->propagatesPartialSums() && op->getNumResults() == 1;
  }
  bool absorbs(Operation *user) const {
    return propagates(user) && partial.contains(user->getResult(0));
  }

  llvm::SetVector<Value> partial;
  DenseMap<Value, std::string> sources;
};

/// `op`'s operand types with operand `weight` split `ways` ways by column
/// (its last dim) or row (dim 0): what one device holds once the directive
/// splits the weight, which is what its rule is asked about.
/// `t` split `ways` ways by column (last dim) or row (dim 0).
Type withSplit(Type t, Role role, int64_t ways) {
  auto type = cast<RankedTensorType>(t);
  SmallVector<int64_t> shape(type.getShape());
  unsigned dim = role == Role::Column ? shape.size() - 1 : 0;
  if (!ShapedType::isDynamic(shape[dim]))
    shape[dim] /= ways;
  return RankedTensorType::get(shape, type.getElementType());
}

SmallVector<Type> withWeightSplit(Operation *op, unsigned weight, Role role,
                                  int64_t ways) {
  SmallVector<Type> types(op->getOperandTypes());
  types[weight] = withSplit(types[weight], role, ways);
  return types;
}

/// The partial sums of ops without a weight of their own, which sum over
/// channels that the splits of earlier ops leave split (a grouped RMSNorm's
/// weight gradient, over a device's share of the heads). What one device
/// holds of each value follows the rules (LocalSizes) from `argType`; the
/// body's outputs are recorded in `outputTypes` for the bodies after it.
void insertDerivedPartialSums(
    Sharder &sharder, Body body, ArrayRef<Operation *> ops,
    function_ref<Type(Body, BlockArgument)> argType,
    DenseMap<std::pair<Operation *, unsigned>, Type> &outputTypes,
    PartialSums &partial) {
  SmallVector<Type> args;
  for (BlockArgument arg : body.fn.getArguments()) {
    Type local = argType(body, arg);
    args.push_back(local ? local : arg.getType());
  }
  LocalSizes sizes(body.fn, args);
  for (auto [index, type] : llvm::enumerate(sizes.getResultTypes()))
    outputTypes[{body.fn, index}] = type;
  if (!sizes.isSplit())
    return;
  for (Operation *nested : ops) {
    std::optional<DistributionRule> rule = DistributionRule::get(nested);
    if (!rule || rule->getWeightOperand())
      continue;
    SmallVector<Type> locals;
    for (Value operand : nested->getOperands())
      locals.push_back(sizes.getLocalType(operand));
    for (auto [result, isPartial] :
         llvm::zip(nested->getResults(), rule->getPartialSums(locals))) {
      if (!isPartial)
        continue;
      std::string name = rule->getRuleName().str();
      for (Value operand : nested->getOperands())
        if (std::optional<Param> param = sharder.paramOf(body, operand))
          name = param->name().str();
      partial.insert(result, (rule->isGradient() ? "d " : "") + name);
    }
  }
}

DiagnosedSilenceableFailure shardTensors(Sharder &sharder,
                                         ArrayRef<Body> bodies) {
  ShardOp op = sharder.op;
  bool sequence = op.getSequenceParallel();
  CollectiveKind reduce =
      sequence ? CollectiveKind::ReduceScatter : CollectiveKind::AllReduce;

  struct Pattern {
    std::string text;
    llvm::GlobPattern glob;
    Role role;
    bool used = false;
  };
  SmallVector<Pattern> patterns;
  for (auto [attr, role] : {std::make_pair(op.getColumnAttr(), Role::Column),
                            std::make_pair(op.getRowAttr(), Role::Row)}) {
    if (!attr)
      continue;
    for (StringRef text : attr.getAsValueRange<StringAttr>()) {
      llvm::Expected<llvm::GlobPattern> glob =
          llvm::GlobPattern::create(text, /*MaxSubPatterns=*/64);
      if (!glob) {
        llvm::consumeError(glob.takeError());
        return op.emitDefiniteFailure()
               << "malformed parameter pattern '" << text << "'";
      }
      patterns.push_back({text.str(), std::move(*glob), role});
    }
  }
  // Column or row: the role of the parameter a linear's weight operand is.
  auto roleOf = [&](Body body, Value weight, std::optional<Param> &param,
                    Role &role) -> DiagnosedSilenceableFailure {
    role = Role::None;
    param = sharder.paramOf(body, weight);
    if (!param)
      return DiagnosedSilenceableFailure::success();
    for (Pattern &pattern : patterns) {
      if (!pattern.glob.match(param->name()))
        continue;
      pattern.used = true;
      if (role != Role::None && role != pattern.role)
        return op.emitDefiniteFailure()
               << "parameter '" << param->name()
               << "' matches both a column and a row pattern";
      role = pattern.role;
    }
    if (role == Role::None)
      return DiagnosedSilenceableFailure::success();
    return sharder.split(*param, role == Role::Column ? 1 : 0,
                         role == Role::Column ? "column-parallel"
                                              : "row-parallel");
  };

  // What one device holds of a body argument: a split parameter's shard,
  // or an output of a body visited before (by callee and result index);
  // null (whole) otherwise.
  DenseMap<std::pair<Operation *, unsigned>, Type> outputTypes;
  auto argType = [&](Body body, BlockArgument arg) -> Type {
    if (std::optional<Param> param = sharder.paramOf(body, arg)) {
      for (Pattern &pattern : patterns)
        if (pattern.glob.match(param->name()))
          return withSplit(arg.getType(), pattern.role, sharder.size);
      return Type();
    }
    Value carried = body.task->getOperand(arg.getArgNumber());
    while (auto transfer = carried.getDefiningOp<TransferOp>())
      carried = transfer.getValue();
    auto maker = carried.getDefiningOp<TaskOp>();
    if (!maker)
      return Type();
    auto callee = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
        maker, maker.getCalleeAttr());
    return callee ? outputTypes.lookup(
                        {callee, cast<OpResult>(carried).getResultNumber()})
                  : Type();
  };

  for (Body body : bodies) {
    sharder.startBody();
    StringRef node = body.task.getName();
    PartialSums partial;
    bool hasColumn = false;
    // Ops whose channels form groups (attention's heads) a column split
    // must divide.
    SmallVector<std::pair<DistributionRule, int64_t>> channelGroups;
    SmallVector<Operation *> ops;
    body.fn.walk([&](Operation *nested) { ops.push_back(nested); });
    for (Operation *nested : ops) {
      std::optional<DistributionRule> rule = DistributionRule::get(nested);
      if (!rule)
        continue;
      if (int64_t groups = rule->getChannelGroups())
        channelGroups.push_back({*rule, groups});
      std::optional<unsigned> weight = rule->getWeightOperand();
      if (!weight)
        continue;
      std::optional<Param> param;
      Role role;
      if (auto result = roleOf(body, nested->getOperand(*weight), param, role);
          !result.succeeded())
        return result;
      if (role == Role::None)
        continue;
      // "linear" for a linear and for its VJP.
      StringRef what = rule->getRuleName();
      what.consume_front("piper.");
      if (failed(rule->verifyWeightSplit([&]() {
            InFlightDiagnostic diag = op.emitError();
            diag << what << " with parameter '" << param->name()
                 << "' in the body of node '" << node << "' ";
            return diag;
          })))
        return DiagnosedSilenceableFailure::definiteFailure();
      hasColumn |= role == Role::Column;
      // What one device holds with the weight split: the rule says which
      // results are partial sums and which operands sequence parallelism
      // gathers whole.
      SmallVector<Type> locals =
          withWeightSplit(nested, *weight, role, sharder.size);
      for (auto [result, isPartial] :
           llvm::zip(nested->getResults(), rule->getPartialSums(locals)))
        if (isPartial)
          partial.insert(
              result, ((rule->isGradient() ? "d " : "") + param->name()).str());
      if (!sequence)
        continue;
      std::string gatherName = ("gather_tokens(" + param->name() + ")").str();
      for (unsigned index : rule->getTokenGatheredOperands(locals))
        sharder.gatherFor(nested->getOpOperand(index), gatherName);
    }
    insertDerivedPartialSums(sharder, body, ops, argType, outputTypes, partial);
    partial.close(ops);
    partial.reduce(sharder, reduce);
    if (hasColumn)
      for (auto [rule, groups] : channelGroups)
        if (groups % sharder.size != 0) {
          StringRef what = rule.getRuleName();
          what.consume_front("piper.");
          return op.emitDefiniteFailure()
                 << what << " in the body of node '" << node << "' has "
                 << groups << " heads; axis '" << sharder.axis.getValue()
                 << "' of " << op.getMeshAttr() << " has size " << sharder.size
                 << " and does not divide them";
        }
  }
  for (const Pattern &pattern : patterns)
    if (!pattern.used)
      return op.emitDefiniteFailure()
             << (pattern.role == Role::Column ? "column" : "row")
             << " pattern '" << pattern.text
             << "' matches no linear weight used by the nodes given";
  return DiagnosedSilenceableFailure::success();
}

} // namespace

//===----------------------------------------------------------------------===//
// ShardOp::apply
//===----------------------------------------------------------------------===//

DiagnosedSilenceableFailure
ShardOp::apply(transform::TransformRewriter &rewriter,
               transform::TransformResults &results,
               transform::TransformState &state) {
  SmallVector<TaskOp> tasks;
  for (Operation *payload : state.getPayloadOps(getNodes())) {
    auto task = dyn_cast<TaskOp>(payload);
    if (!task)
      return emitDefiniteFailure()
             << "shard acts on DAG nodes (piper.task), got '"
             << payload->getName() << "'";
    tasks.push_back(task);
  }
  if (tasks.empty())
    return emitDefiniteFailure() << "no node to shard";
  MeshOp mesh = lookupMesh(tasks.front(), getMeshAttr());
  if (!mesh)
    return emitDefiniteFailure() << "unknown mesh " << getMeshAttr();
  if (!mesh.getAxis(getAxisName()))
    return emitDefiniteFailure()
           << "mesh " << getMeshAttr() << " has no axis '" << getAxisName()
           << "' (axes: " << mesh.getAxisNamesForDiagnostic() << ")";

  // Each body once; updates need no communication of their own (their
  // gradients are synchronised by `replicate`).
  SmallVector<Body> bodies;
  DenseSet<Operation *> seen;
  for (TaskOp task : tasks) {
    if (DictionaryAttr devices = task.getDevicesAttr())
      if (devices.get(getAxisName()))
        return emitDefiniteFailure()
               << "node '" << task.getName() << "' is placed on "
               << formatDeviceGroup(devices) << "; it must run on every '"
               << getAxisName() << "' coordinate to be sharded over it";
    if (task.getPass() == PassKind::UPD)
      continue;
    auto fn = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
        task, task.getCalleeAttr());
    if (!fn || fn.isExternal())
      return emitDefiniteFailure()
             << "node '" << task.getName() << "' calls " << task.getCalleeAttr()
             << ", which has no body to shard";
    if (seen.insert(fn).second)
      bodies.push_back({fn, task});
  }

  Sharder sharder(*this, rewriter, mesh);
  DiagnosedSilenceableFailure result = getMode() == kExpert
                                           ? shardExperts(sharder, bodies)
                                           : shardTensors(sharder, bodies);
  if (!result.succeeded())
    return result;
  sharder.commitSplits();
  results.set(cast<OpResult>(getCollectives()), sharder.created);
  return DiagnosedSilenceableFailure::success();
}
