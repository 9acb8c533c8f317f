//===- PlanManifest.cpp - plan.json from the compiled module --------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "piper/Compile/PlanManifest.h"

#include "piper/Conversion/Passes.h"
#include "piper/Conversion/ReplicaLayout.h"
#include "piper/Dialect/Piper/IR/PiperAttrs.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/Path.h"

#include <map>
#include <set>

using namespace mlir;
using namespace mlir::piper;

namespace {

StringRef dtypeName(Type type) {
  Type elt = cast<ShapedType>(type).getElementType();
  if (elt.isF64())
    return "f64";
  if (elt.isF32())
    return "f32";
  if (elt.isBF16())
    return "bf16";
  if (elt.isInteger(64))
    return "i64";
  return "other";
}

llvm::json::Array shapeOf(Type type) {
  llvm::json::Array shape;
  for (int64_t d : cast<ShapedType>(type).getShape())
    shape.push_back(d);
  return shape;
}

/// A flat shard as plan.json describes it.
llvm::json::Object shardJSON(const FlatShard &shard) {
  llvm::json::Array axes;
  for (const std::string &axis : shard.axes)
    axes.push_back(axis);
  return llvm::json::Object{{"axes", std::move(axes)},
                            {"members", shard.members},
                            {"chunk", shard.chunk}};
}

/// A tensor's split dimensions as plan.json describes them.
llvm::json::Array splitJSON(const TensorSplit &split) {
  llvm::json::Array dims;
  for (const DimSplit &d : split.dims) {
    llvm::json::Array axes;
    for (const std::string &axis : d.axes)
      axes.push_back(axis);
    dims.push_back(llvm::json::Object{
        {"dim", d.dim}, {"axes", std::move(axes)}, {"parts", d.parts}});
  }
  return dims;
}

/// The mesh: its name and axes.
llvm::json::Object meshJSON(ModuleOp module) {
  llvm::json::Object mesh;
  for (MeshOp m : module.getOps<MeshOp>()) {
    mesh["name"] = m.getSymName().str();
    llvm::json::Array axes;
    for (Attribute a : m.getAxes()) {
      auto axis = cast<MeshAxisAttr>(a);
      axes.push_back(llvm::json::Object{{"name", axis.getName().str()},
                                        {"size", axis.getSize()}});
    }
    mesh["axes"] = std::move(axes);
  }
  return mesh;
}

/// A role's entry: its program's object, entry point, the step arguments
/// it reads and results it writes, its launches and its streams.
llvm::json::Object roleJSON(ProgramOp program) {
  std::set<int64_t> inputs, outputs;
  for (Operation &op : program.getBody().front()) {
    if (auto input = dyn_cast<InputOp>(op))
      inputs.insert(input.getIndex());
    if (auto output = dyn_cast<OutputOp>(op))
      outputs.insert(output.getIndex());
  }
  llvm::json::Object role;
  for (NamedAttribute coord : program.getRole())
    role[coord.getName().str()] = cast<IntegerAttr>(coord.getValue()).getInt();
  llvm::json::Array in, out, launches, streams;
  // The program's streams: what the lowered record/wait calls index.
  for (Attribute name : program.getStreams())
    streams.push_back(cast<StringAttr>(name).str());
  // In program order: the index the lowering's trace hooks pass.
  for (LaunchOp launch : program.getBody().front().getOps<LaunchOp>())
    launches.push_back(launch.getName().str());
  for (int64_t i : inputs)
    in.push_back(i);
  for (int64_t j : outputs)
    out.push_back(j);
  return llvm::json::Object{
      {"program", program.getSymName().str()},
      {"role", std::move(role)},
      {"object", (program.getSymName() + ".so").str()},
      {"entry", (kEntryPrefix + program.getSymName()).str()},
      {"inputs", std::move(in)},
      {"outputs", std::move(out)},
      {"launches", std::move(launches)},
      {"streams", std::move(streams)}};
}

} // namespace

FailureOr<llvm::json::Object> mlir::piper::buildPlanManifest(
    ModuleOp module, ArrayRef<ProgramOp> programs,
    ArrayRef<ArgumentInfo> modelArgs, ArrayRef<CommKey> communicators,
    StringRef sourceName, const PiperOptimizerOptions &optimizer) {
  ProgramOp first = programs.front();
  func::FuncOp step = module.lookupSymbol<func::FuncOp>(first.getStep());
  llvm::json::Object manifest;
  manifest["format"] = "piper-plan";
  manifest["version"] = 1;
  manifest["function"] = step.getSymName().str();
  manifest["source"] = llvm::sys::path::filename(sourceName).str();

  manifest["mesh"] = meshJSON(module);

  // Replicas: the batch axes, the communicators and the flat shards
  // (piper/Conversion/ReplicaLayout.h).
  SmallVector<std::string> batchAxes;
  if (auto axes = module->getAttrOfType<ArrayAttr>(kBatchAxesAttrName))
    for (Attribute a : axes)
      batchAxes.push_back(cast<StringAttr>(a).str());
  ReplicaLayout layout =
      computeReplicaLayout(step, *module.getOps<MeshOp>().begin(), batchAxes);
  if (!layout.splitAndSharded.empty())
    return step.emitError()
           << "piper-compile: parameter '" << layout.splitAndSharded.front()
           << "' is split over mesh axes and ZeRO-sharded over others; "
              "the native lowering holds split parameters whole per part "
              "(use zero = 0 for them)";
  llvm::json::Array batch;
  for (const std::string &axis : batchAxes)
    batch.push_back(axis);
  manifest["batch_axes"] = std::move(batch);
  llvm::json::Array comms;
  for (const CommKey &key : communicators) {
    llvm::json::Array axes;
    for (const std::string &axis : key.axes)
      axes.push_back(axis);
    comms.push_back(
        llvm::json::Object{{"axes", std::move(axes)}, {"stream", key.stream}});
  }
  manifest["communicators"] = std::move(comms);

  llvm::json::Object opt{{"kind", optimizer.optimizer}, {"lr", optimizer.lr}};
  manifest["optimizer"] = std::move(opt);

  // Step arguments: parameters and data as the interpreter classifies the
  // model's, optimizer state from its piper.state attribute.
  std::map<unsigned, const ArgumentInfo *> byIndex;
  for (const ArgumentInfo &info : modelArgs)
    byIndex[info.index] = &info;
  llvm::json::Array args;
  std::map<std::string, unsigned> paramArg, stateArg;
  for (BlockArgument arg : step.getArguments()) {
    unsigned i = arg.getArgNumber();
    llvm::json::Object entry{{"index", i},
                             {"dtype", dtypeName(arg.getType()).str()},
                             {"shape", shapeOf(arg.getType())}};
    if (auto state = step.getArgAttrOfType<OptStateAttr>(i, "piper.state")) {
      entry["kind"] = "state";
      entry["param"] = state.getParam().str();
      entry["slot"] = state.getSlot().str();
      entry["init"] = "zeros";
      stateArg[(state.getParam().str() + "/" + state.getSlot().str())] = i;
    } else if (auto it = byIndex.find(i); it != byIndex.end()) {
      const ArgumentInfo &info = *it->second;
      if (info.isParameter()) {
        entry["kind"] = "param";
        entry["name"] = info.param.getName().str();
        paramArg[info.param.getName().str()] = i;
        switch (info.param.getInit()) {
        case InitKind::Normal:
          entry["init"] = "normal";
          entry["std"] = info.param.getStd().getValueAsDouble();
          break;
        case InitKind::Zeros:
          entry["init"] = "zeros";
          break;
        case InitKind::Ones:
          entry["init"] = "ones";
          break;
        }
      } else {
        entry["kind"] = "data";
        if (info.kind == ArgumentInfo::Kind::IndexData)
          entry["bound"] = info.bound;
      }
    } else {
      return step.emitError() << "piper-compile: argument #" << i
                              << " is neither a model argument nor "
                                 "optimizer state";
    }
    if (auto it = layout.argShards.find(i); it != layout.argShards.end())
      entry["shard"] = shardJSON(it->second);
    if (auto it = layout.argSplits.find(i); it != layout.argSplits.end())
      entry["split"] = splitJSON(it->second);
    args.push_back(std::move(entry));
  }
  manifest["arguments"] = std::move(args);

  // Step results: the loss, updated parameters and state, and which
  // argument each one feeds at the next step.
  llvm::json::Array results;
  for (unsigned j = 0, e = step.getNumResults(); j < e; ++j) {
    Type type = step.getResultTypes()[j];
    llvm::json::Object entry{{"index", j},
                             {"dtype", dtypeName(type).str()},
                             {"shape", shapeOf(type)}};
    if (auto name = step.getResultAttrOfType<StringAttr>(j, "piper.updated")) {
      entry["kind"] = "param";
      entry["updates"] = paramArg.at(name.str());
    } else if (auto state =
                   step.getResultAttrOfType<OptStateAttr>(j, "piper.state")) {
      entry["kind"] = "state";
      entry["updates"] =
          stateArg.at(state.getParam().str() + "/" + state.getSlot().str());
    } else if (j == 0) {
      entry["kind"] = "loss";
    } else {
      entry["kind"] = "other";
    }
    if (auto it = layout.resultShards.find(j); it != layout.resultShards.end())
      entry["shard"] = shardJSON(it->second);
    if (auto it = layout.resultSplits.find(j); it != layout.resultSplits.end())
      entry["split"] = splitJSON(it->second);
    results.push_back(std::move(entry));
  }
  manifest["results"] = std::move(results);

  llvm::json::Array roles;
  for (ProgramOp program : programs)
    roles.push_back(roleJSON(program));
  manifest["roles"] = std::move(roles);
  return manifest;
}
