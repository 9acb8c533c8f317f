//===- piper-compile.cpp - Model + directives to a runnable plan ----------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// piper-compile model.mlir [--directives=strategy.json|.mlir] -o PLAN_DIR
//
// model -> --piper-autodiff -> --piper-optimizer -> --piper-build-dag ->
// directives (transform script, or Piper's JSON list translated by
// lib/Directives) -> --piper-partition -> --piper-verify-programs -> per
// program: --piper-lower-to-llvm -> LLVM IR (O2) -> object -> shared object.
// The plan directory gets one <program>.so per role, the strategy script
// that was applied and plan.json (docs/Lowering.md describes the format).
//
// --emit=programs|lowered|llvm-ir prints an intermediate stage instead (for
// tests); `lowered` and `llvm-ir` also accept a module that already holds
// device programs.
//
//===----------------------------------------------------------------------===//

#include "EmitObject.h"

#include "piper/Conversion/Passes.h"
#include "piper/Conversion/ReplicaLayout.h"
#include "piper/Dialect/Piper/IR/PiperAttrs.h"
#include "piper/Dialect/Piper/IR/PiperDialect.h"
#include "piper/Dialect/Piper/IR/PiperOps.h"
#include "piper/Directives/JSONDirectives.h"
#include "piper/InitAllPiper.h"
#include "piper/Interpreter/Inputs.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Transform/Transforms/Passes.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Support/FileUtilities.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

#include <map>
#include <set>

using namespace mlir;
using namespace mlir::piper;
namespace cl = llvm::cl;

namespace {

cl::OptionCategory category("piper-compile options");
cl::opt<std::string> inputFilename(cl::Positional, cl::desc("<model.mlir>"),
                                   cl::Required, cl::cat(category));
cl::opt<std::string> outputName("o",
                                cl::desc("Plan directory (--emit=plan) or "
                                         "output file (default: stdout)"),
                                cl::value_desc("path"), cl::cat(category));
cl::opt<std::string>
    directives("directives",
               cl::desc("Strategy: a transform script (.mlir) or Piper's JSON "
                        "directive list (.json); none means serial"),
               cl::value_desc("file"), cl::cat(category));
enum class Emit { Plan, Programs, Kernels, Lowered, LLVMIR };
cl::opt<Emit> emit(
    "emit", cl::desc("What to produce"), cl::init(Emit::Plan),
    cl::values(clEnumValN(Emit::Plan, "plan", "the plan directory (default)"),
               clEnumValN(Emit::Programs, "programs",
                          "the verified device programs (MLIR)"),
               clEnumValN(Emit::Kernels, "kernels",
                          "programs as functions of linalg and kernel calls "
                          "(before bufferization)"),
               clEnumValN(Emit::Lowered, "lowered",
                          "the programs lowered to the LLVM dialect"),
               clEnumValN(Emit::LLVMIR, "llvm-ir", "optimised LLVM IR")),
    cl::cat(category));
cl::opt<std::string> optimizer("optimizer",
                               cl::desc("sgd or adamw (default adamw)"),
                               cl::init("adamw"), cl::cat(category));
cl::opt<double> lr("lr", cl::desc("Learning rate (default 1e-3)"),
                   cl::init(1e-3), cl::cat(category));
cl::opt<double> momentum("momentum", cl::desc("SGD momentum (default 0)"),
                         cl::init(0.0), cl::cat(category));
cl::opt<double> weightDecay("weight-decay",
                            cl::desc("Weight decay (default: the "
                                     "optimizer's, as --piper-optimizer)"),
                            cl::init(-1.0), cl::cat(category));
cl::opt<double> beta1("beta1", cl::desc("AdamW beta1 (default 0.9)"),
                      cl::init(0.9), cl::cat(category));
cl::opt<double> beta2("beta2", cl::desc("AdamW beta2 (default 0.999)"),
                      cl::init(0.999), cl::cat(category));
cl::opt<double> eps("eps", cl::desc("AdamW epsilon (default 1e-8)"),
                    cl::init(1e-8), cl::cat(category));

std::string formatDouble(double v) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << llvm::format("%.17g", v);
  return s;
}

/// The front half: model to verified device programs. `strategyPath` is the
/// transform script to apply, if any.
LogicalResult buildPrograms(ModuleOp module, StringRef strategyPath) {
  std::string pipeline =
      "piper-autodiff,piper-optimizer{optimizer=" + optimizer +
      " lr=" + formatDouble(lr) + " momentum=" + formatDouble(momentum) +
      " weight-decay=" + formatDouble(weightDecay) +
      " beta1=" + formatDouble(beta1) + " beta2=" + formatDouble(beta2) +
      " eps=" + formatDouble(eps) + "},piper-build-dag";
  if (!strategyPath.empty())
    pipeline += ",transform-preload-library{transform-library-paths=" +
                strategyPath.str() + "},transform-interpreter";
  pipeline += ",piper-partition,piper-verify-programs";
  PassManager pm(module.getContext());
  std::string error;
  llvm::raw_string_ostream errorStream(error);
  if (failed(parsePassPipeline(pipeline, pm, errorStream)))
    return module.emitError() << "piper-compile: bad pipeline: " << error;
  return pm.run(module);
}

/// Lowers a clone of `module` holding only `program` (and what it calls).
OwningOpRef<ModuleOp> lowerProgram(ModuleOp module, StringRef program,
                                   bool kernelsOnly = false) {
  OwningOpRef<ModuleOp> clone = module.clone();
  // The lowering turns a send or receive's peer program into a world rank
  // from the peer's role; the peer is erased from this clone, so its role
  // travels on the op (kPeerRoleAttrName).
  llvm::StringMap<DictionaryAttr> roles;
  for (ProgramOp p : clone->getOps<ProgramOp>())
    roles[p.getSymName()] = p.getRole();
  for (ProgramOp p : clone->getOps<ProgramOp>())
    p.walk([&](Operation *op) {
      if (auto send = dyn_cast<SendOp>(op))
        op->setAttr(kPeerRoleAttrName, roles.lookup(send.getPeer()));
      else if (auto recv = dyn_cast<RecvOp>(op))
        op->setAttr(kPeerRoleAttrName, roles.lookup(recv.getPeer()));
    });
  for (ProgramOp other : llvm::make_early_inc_range(clone->getOps<ProgramOp>()))
    if (other.getSymName() != program)
      other.erase();
  PassManager pm(module.getContext());
  if (kernelsOnly) {
    pm.addPass(createProgramToFuncPass());
    pm.addPass(createConvertToKernelsPass());
  } else {
    buildLowerToLLVMPipeline(pm);
  }
  if (failed(pm.run(*clone)))
    return nullptr;
  return clone;
}

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

/// plan.json: what piper-run needs to feed and read every program.
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

FailureOr<llvm::json::Object> buildManifest(ModuleOp module,
                                            ArrayRef<ArgumentInfo> modelArgs,
                                            ArrayRef<ProgramOp> programs,
                                            ArrayRef<CommKey> communicators) {
  ProgramOp first = programs.front();
  func::FuncOp step = module.lookupSymbol<func::FuncOp>(first.getStep());
  llvm::json::Object manifest;
  manifest["format"] = "piper-plan";
  manifest["version"] = 1;
  manifest["function"] = step.getSymName().str();
  manifest["source"] = llvm::sys::path::filename(inputFilename).str();

  // The mesh.
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
  manifest["mesh"] = std::move(mesh);

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

  llvm::json::Object opt{{"kind", optimizer.getValue()}, {"lr", lr.getValue()}};
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
  for (ProgramOp program : programs) {
    std::set<int64_t> inputs, outputs;
    for (Operation &op : program.getBody().front()) {
      if (auto input = dyn_cast<InputOp>(op))
        inputs.insert(input.getIndex());
      if (auto output = dyn_cast<OutputOp>(op))
        outputs.insert(output.getIndex());
    }
    llvm::json::Object role;
    for (NamedAttribute coord : program.getRole())
      role[coord.getName().str()] =
          cast<IntegerAttr>(coord.getValue()).getInt();
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
    roles.push_back(llvm::json::Object{
        {"program", program.getSymName().str()},
        {"role", std::move(role)},
        {"object", (program.getSymName() + ".so").str()},
        {"entry", (kEntryPrefix + program.getSymName()).str()},
        {"inputs", std::move(in)},
        {"outputs", std::move(out)},
        {"launches", std::move(launches)},
        {"streams", std::move(streams)}});
  }
  manifest["roles"] = std::move(roles);
  return manifest;
}

LogicalResult writeFile(StringRef path, StringRef text) {
  std::string error;
  auto file = openOutputFile(path, &error);
  if (!file) {
    llvm::errs() << "piper-compile: " << error << "\n";
    return failure();
  }
  file->os() << text;
  file->keep();
  return success();
}

LogicalResult run(MLIRContext &context) {
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler handler(sourceMgr, &context);
  std::string error;
  auto input = openInputFile(inputFilename, &error);
  if (!input) {
    llvm::errs() << "piper-compile: " << error << "\n";
    return failure();
  }
  sourceMgr.AddNewSourceBuffer(std::move(input), llvm::SMLoc());
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!module)
    return failure();

  bool hasPrograms = !module->getOps<ProgramOp>().empty();
  SmallVector<ArgumentInfo> modelArgs;
  if (!hasPrograms) {
    // The model: the public function with parameters.
    func::FuncOp model;
    for (auto fn : module->getOps<func::FuncOp>())
      if (fn.isPublic() && !fn.isExternal()) {
        if (model)
          return fn.emitError() << "piper-compile: several public functions; "
                                   "the model must be the only one";
        model = fn;
      }
    if (!model)
      return module->emitError() << "piper-compile: no public function to "
                                    "compile";
    FailureOr<SmallVector<ArgumentInfo>> infos = analyzeArguments(model);
    if (failed(infos))
      return failure();
    modelArgs = std::move(*infos);

    std::string strategyPath;
    if (!directives.empty()) {
      strategyPath = directives;
      if (StringRef(directives).ends_with(".json")) {
        auto json = openInputFile(directives, &error);
        if (!json) {
          llvm::errs() << "piper-compile: " << error << "\n";
          return failure();
        }
        llvm::Expected<std::string> script =
            translateJSONDirectives(json->getBuffer(), directives);
        if (!script) {
          llvm::errs() << llvm::toString(script.takeError()) << "\n";
          return failure();
        }
        // Keep the translated script: with the plan when there is one.
        SmallString<128> path;
        if (emit == Emit::Plan) {
          if (std::error_code ec =
                  llvm::sys::fs::create_directories(outputName)) {
            llvm::errs() << "piper-compile: cannot create " << outputName
                         << ": " << ec.message() << "\n";
            return failure();
          }
          path = outputName;
          llvm::sys::path::append(path, "strategy.mlir");
        } else if (llvm::sys::fs::createTemporaryFile("strategy", "mlir",
                                                      path)) {
          llvm::errs() << "piper-compile: cannot create a temporary file\n";
          return failure();
        }
        if (failed(writeFile(path, *script)))
          return failure();
        strategyPath = std::string(path);
      }
    }
    if (failed(buildPrograms(*module, strategyPath)))
      return failure();
  }

  auto print = [&](Operation *op) -> LogicalResult {
    std::string out = outputName.empty() ? "-" : outputName.getValue();
    auto file = openOutputFile(out, &error);
    if (!file) {
      llvm::errs() << "piper-compile: " << error << "\n";
      return failure();
    }
    op->print(file->os());
    file->os() << "\n";
    file->keep();
    return success();
  };
  if (emit == Emit::Programs)
    return print(*module);

  SmallVector<ProgramOp> programs(module->getOps<ProgramOp>());
  if (programs.empty())
    return module->emitError() << "piper-compile: no device program";
  // Communicators are numbered over all programs, before each is lowered
  // alone.
  FailureOr<SmallVector<CommKey>> communicators =
      annotateCommunicators(*module);
  if (failed(communicators))
    return failure();

  if (emit == Emit::Kernels || emit == Emit::Lowered || emit == Emit::LLVMIR) {
    std::string out = outputName.empty() ? "-" : outputName.getValue();
    auto file = openOutputFile(out, &error);
    if (!file) {
      llvm::errs() << "piper-compile: " << error << "\n";
      return failure();
    }
    for (ProgramOp program : programs) {
      OwningOpRef<ModuleOp> lowered =
          lowerProgram(*module, program.getSymName(), emit == Emit::Kernels);
      if (!lowered)
        return failure();
      if (emit != Emit::LLVMIR)
        lowered->print(file->os());
      else if (failed(emitLLVMIR(*lowered, file->os())))
        return failure();
      file->os() << "\n";
    }
    file->keep();
    return success();
  }

  // The plan directory.
  if (outputName.empty()) {
    llvm::errs() << "piper-compile: -o PLAN_DIR is required for --emit=plan\n";
    return failure();
  }
  if (hasPrograms)
    return module->emitError()
           << "piper-compile: a plan is compiled from a model (its arguments "
              "decide initialisation and data); this module already holds "
              "device programs";
  if (std::error_code ec = llvm::sys::fs::create_directories(outputName)) {
    llvm::errs() << "piper-compile: cannot create " << outputName << ": "
                 << ec.message() << "\n";
    return failure();
  }
  FailureOr<llvm::json::Object> manifest =
      buildManifest(*module, modelArgs, programs, *communicators);
  if (failed(manifest))
    return failure();
  for (ProgramOp program : programs) {
    OwningOpRef<ModuleOp> lowered = lowerProgram(*module, program.getSymName());
    if (!lowered)
      return failure();
    SmallString<128> object(outputName), shared(outputName);
    llvm::sys::path::append(object, program.getSymName() + ".o");
    llvm::sys::path::append(shared, program.getSymName() + ".so");
    if (failed(emitObjectFile(*lowered, std::string(object))))
      return failure();
    if (failed(linkSharedObject(std::string(object), std::string(shared),
                                error))) {
      llvm::errs() << "piper-compile: " << error << "\n";
      return failure();
    }
    llvm::sys::fs::remove(object);
  }
  SmallString<128> manifestPath(outputName);
  llvm::sys::path::append(manifestPath, "plan.json");
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::formatv("{0:2}", llvm::json::Value(std::move(*manifest))) << "\n";
  return writeFile(manifestPath, text);
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  mlir::transform::registerTransformPasses();
  registerPiperConversionPasses();
  DialectRegistry registry;
  registerPiper(registry);
  registerPiperConversionInterfaces(registry);
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(
      argc, argv,
      "piper-compile: a model and a strategy to a plan of native code per "
      "device role\n");
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  return failed(run(context)) ? 1 : 0;
}
