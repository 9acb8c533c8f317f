//===- PlanManifest.cpp - plan.json from the compiled module --------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Fills the runtime's manifest schema (piper-rt/plan_manifest.h, the only
// declaration of plan.json) from the partitioned module: the mesh, the
// replica layout of every step argument and result (ReplicaLayout.h,
// computed once here and written down, so the runtime never re-derives
// it), the communicators the programs index and one entry per role.
//
//===----------------------------------------------------------------------===//

#include "piper/Compile/PlanManifest.h"

#include "piper/Conversion/Passes.h"
#include "piper/Conversion/ReplicaLayout.h"
#include "piper/Dialect/Piper/IR/PiperAttrs.h"
#include "piper/Dialect/Piper/Transforms/EvalPrograms.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/Path.h"

#include <map>
#include <set>

using namespace mlir;
using namespace mlir::piper;
namespace plan = ::piper::plan;

namespace {

plan::DType dtypeOf(Type type) {
  Type elt = cast<ShapedType>(type).getElementType();
  if (elt.isF64())
    return plan::DType::F64;
  if (elt.isF32())
    return plan::DType::F32;
  if (elt.isBF16())
    return plan::DType::BF16;
  if (elt.isInteger(64))
    return plan::DType::I64;
  return plan::DType::Other;
}

/// The entry of a step argument or result: index, dtype, shape and how a
/// device holds it (the layout's flat shard or split dimensions).
plan::Tensor tensorEntry(unsigned index, Type type,
                         const std::map<unsigned, FlatShard> &shards,
                         const std::map<unsigned, TensorSplit> &splits) {
  plan::Tensor t;
  t.index = index;
  t.dtype = dtypeOf(type);
  llvm::append_range(t.shape, cast<ShapedType>(type).getShape());
  if (auto it = shards.find(index); it != shards.end())
    t.shard = plan::Shard{{it->second.axes.begin(), it->second.axes.end()},
                          it->second.members,
                          it->second.chunk};
  if (auto it = splits.find(index); it != splits.end())
    for (const DimSplit &d : it->second.dims)
      t.split.push_back(
          plan::Split{d.dim, {d.axes.begin(), d.axes.end()}, d.parts});
  return t;
}

/// The mesh: its name and axes in declared (row-major rank) order.
plan::Mesh meshEntry(MeshOp mesh) {
  plan::Mesh out;
  out.name = mesh.getSymName().str();
  for (Attribute a : mesh.getAxes()) {
    auto axis = cast<MeshAxisAttr>(a);
    out.axes.push_back({axis.getName().str(), axis.getSize()});
  }
  return out;
}

/// The SM share of each stream an overlapped launch with `sm_share` runs on
/// (`compute`, `compute_overlap`): one partition per stream, so two shares
/// on one stream are an error at the second launch.
LogicalResult smSharesOf(ProgramOp program,
                         std::map<std::string, double> &out) {
  for (LaunchOp launch : program.getBody().front().getOps<LaunchOp>()) {
    std::optional<APFloat> share = launch.getSmShare();
    if (!share)
      continue;
    double value = share->convertToDouble();
    auto [it, added] = out.try_emplace(launch.getStream().str(), value);
    auto text = [](double share) {
      std::string out;
      llvm::raw_string_ostream(out) << llvm::format("%g", share);
      return out;
    };
    if (!added && it->second != value)
      return launch.emitError()
             << "piper-compile: SM share " << text(value) << " on stream '"
             << launch.getStream() << "' of " << program.getSymName()
             << ", which an earlier launch gave " << text(it->second)
             << " (one SM partition per stream)";
  }
  return success();
}

/// A role's entry: its program's object, entry point, the step arguments
/// it reads and results it writes, its launches and its streams.
plan::Role roleEntry(ProgramOp program) {
  std::set<int64_t> inputs, outputs;
  for (Operation &op : program.getBody().front()) {
    if (auto input = dyn_cast<InputOp>(op))
      inputs.insert(input.getIndex());
    if (auto output = dyn_cast<OutputOp>(op))
      outputs.insert(output.getIndex());
  }
  plan::Role role;
  role.program = program.getSymName().str();
  role.object = (program.getSymName() + ".so").str();
  role.entry = (kEntryPrefix + program.getSymName()).str();
  for (NamedAttribute coord : program.getRole())
    role.role[coord.getName().str()] =
        cast<IntegerAttr>(coord.getValue()).getInt();
  role.inputs.assign(inputs.begin(), inputs.end());
  role.outputs.assign(outputs.begin(), outputs.end());
  // In program order: the index the lowering's trace hooks pass.
  for (LaunchOp launch : program.getBody().front().getOps<LaunchOp>())
    role.launches.push_back(launch.getName().str());
  // The program's streams: what the lowered record/wait calls index.
  for (Attribute name : program.getStreams())
    role.streams.push_back(cast<StringAttr>(name).str());
  return role;
}

/// The evaluation or sampling entry of `eval` (EvalPrograms.h): its entry
/// point, the step arguments and results it reads and writes, and the
/// logits it writes past the step's `numResults` results.
plan::EvalEntry evalEntry(ProgramOp eval, unsigned numResults) {
  plan::Role role = roleEntry(eval);
  plan::EvalEntry entry{role.entry, role.inputs, {}, {}, plan::DType::F64};
  for (int64_t j : role.outputs)
    if (j < static_cast<int64_t>(numResults))
      entry.outputs.push_back(j);
  for (auto output : eval.getBody().front().getOps<OutputOp>())
    if (output.getIndex() >= numResults) {
      auto type = cast<RankedTensorType>(output.getValue().getType());
      entry.logitsShape.assign(type.getShape().begin(), type.getShape().end());
      entry.logitsDtype =
          type.getElementType().isF32() ? plan::DType::F32 : plan::DType::F64;
    }
  return entry;
}

/// What a step argument is: optimizer state (from its piper.state
/// attribute), a parameter or data (as the interpreter classifies the
/// model's arguments). Records where parameters and state live for the
/// results that update them.
LogicalResult describeArgument(func::FuncOp step, unsigned i,
                               const ArgumentInfo *info, plan::Tensor &entry,
                               std::map<std::string, int64_t> &paramArg,
                               std::map<std::string, int64_t> &stateArg) {
  if (auto state = step.getArgAttrOfType<OptStateAttr>(i, "piper.state")) {
    entry.kind = "state";
    entry.param = state.getParam().str();
    entry.slot = state.getSlot().str();
    entry.init = "zeros";
    stateArg[*entry.param + "/" + *entry.slot] = i;
    return success();
  }
  if (!info)
    return step.emitError() << "piper-compile: argument #" << i
                            << " is neither a model argument nor "
                               "optimizer state";
  if (!info->isParameter()) {
    entry.kind = "data";
    if (info->kind == ArgumentInfo::Kind::IndexData)
      entry.bound = info->bound;
    return success();
  }
  entry.kind = "param";
  entry.name = info->param.getName().str();
  paramArg[*entry.name] = i;
  switch (info->param.getInit()) {
  case InitKind::Normal:
    entry.init = "normal";
    entry.std = info->param.getStd().getValueAsDouble();
    break;
  case InitKind::Zeros:
    entry.init = "zeros";
    break;
  case InitKind::Ones:
    entry.init = "ones";
    break;
  }
  return success();
}

/// What a step result is: the loss (result 0), an updated parameter or
/// state (and the argument it replaces at the next step), or other.
void describeResult(func::FuncOp step, unsigned j, plan::Tensor &entry,
                    const std::map<std::string, int64_t> &paramArg,
                    const std::map<std::string, int64_t> &stateArg) {
  if (auto name = step.getResultAttrOfType<StringAttr>(j, "piper.updated")) {
    entry.kind = "param";
    entry.updates = paramArg.at(name.str());
  } else if (auto state =
                 step.getResultAttrOfType<OptStateAttr>(j, "piper.state")) {
    entry.kind = "state";
    entry.updates =
        stateArg.at(state.getParam().str() + "/" + state.getSlot().str());
  } else {
    entry.kind = j == 0 ? "loss" : "other";
  }
}

} // namespace

FailureOr<::piper::plan::Manifest> mlir::piper::buildPlanManifest(
    ModuleOp module, ArrayRef<ProgramOp> programs,
    ArrayRef<ArgumentInfo> modelArgs, ArrayRef<CommKey> communicators,
    StringRef sourceName, const PiperOptimizerOptions &optimizer) {
  ProgramOp first = programs.front();
  func::FuncOp step = module.lookupSymbol<func::FuncOp>(first.getStep());
  MeshOp mesh = *module.getOps<MeshOp>().begin();
  plan::Manifest manifest;
  manifest.function = step.getSymName().str();
  manifest.source = llvm::sys::path::filename(sourceName).str();
  manifest.mesh = meshEntry(mesh);
  manifest.optimizer = plan::Optimizer{optimizer.optimizer, optimizer.lr};
  if (auto bound = module->getAttrOfType<FloatAttr>(kClipGradNormAttrName))
    manifest.optimizer->clipGradNorm = bound.getValueAsDouble();

  // Replicas: the batch axes --piper-number-communicators recorded, the
  // communicators and the flat shards (piper/Conversion/ReplicaLayout.h).
  if (auto axes = module->getAttrOfType<ArrayAttr>(kBatchAxesAttrName))
    for (Attribute a : axes)
      manifest.batchAxes.push_back(cast<StringAttr>(a).str());
  SmallVector<std::string> batchAxes(manifest.batchAxes.begin(),
                                     manifest.batchAxes.end());
  ReplicaLayout layout = computeReplicaLayout(step, mesh, batchAxes);
  for (const CommKey &key : communicators)
    manifest.communicators.push_back(
        {{key.axes.begin(), key.axes.end()}, key.stream});

  std::map<unsigned, const ArgumentInfo *> byIndex;
  for (const ArgumentInfo &info : modelArgs)
    byIndex[info.index] = &info;
  std::map<std::string, int64_t> paramArg, stateArg;
  for (BlockArgument arg : step.getArguments()) {
    unsigned i = arg.getArgNumber();
    plan::Tensor entry =
        tensorEntry(i, arg.getType(), layout.argShards, layout.argSplits);
    auto it = byIndex.find(i);
    if (failed(describeArgument(step, i,
                                it == byIndex.end() ? nullptr : it->second,
                                entry, paramArg, stateArg)))
      return failure();
    manifest.arguments.push_back(std::move(entry));
  }
  for (unsigned j = 0, e = step.getNumResults(); j < e; ++j) {
    plan::Tensor entry = tensorEntry(j, step.getResultTypes()[j],
                                     layout.resultShards, layout.resultSplits);
    describeResult(step, j, entry, paramArg, stateArg);
    manifest.results.push_back(std::move(entry));
  }
  for (ProgramOp program : programs) {
    manifest.roles.push_back(roleEntry(program));
    if (auto eval = module.lookupSymbol<ProgramOp>(
            (program.getSymName() + kEvalSuffix).str()))
      manifest.roles.back().eval = evalEntry(eval, step.getNumResults());
    if (auto sample = module.lookupSymbol<ProgramOp>(
            (program.getSymName() + kSampleSuffix).str()))
      manifest.roles.back().sample = evalEntry(sample, step.getNumResults());
    if (failed(smSharesOf(program, manifest.roles.back().smShares)))
      return failure();
  }
  return manifest;
}
