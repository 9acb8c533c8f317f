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
// lib/Directives) -> --piper-partition -> --piper-verify-programs ->
// --piper-number-communicators, --piper-stamp-peer-roles -> per program:
// --piper-lower-to-llvm -> LLVM IR (O2) -> object -> shared object.
// The plan directory gets one <program>.so per role, the strategy script
// that was applied and plan.json (docs/Lowering.md describes the format).
//
// --emit=programs|lowered|llvm-ir prints an intermediate stage instead (for
// tests); `lowered` and `llvm-ir` also accept a module that already holds
// device programs. Programs are lowered and emitted on --jobs threads
// (default: the cores available), each output the same whatever the
// count. --timing prints, on stderr, the time of every MLIR pass
// (front half and lowering, summed over programs) and of LLVM's translation,
// O2, codegen and the link.
//
// The stages live in lib/Compile (piper/Compile/Compile.h); this file only
// parses flags and calls them.
//
//===----------------------------------------------------------------------===//

#include "piper-rt/plan_manifest.h"
#include "piper-rt/train.h"
#include "piper/Compile/Compile.h"
#include "piper/Conversion/Passes.h"
#include "piper/Conversion/TraceKernels.h"
#include "piper/Dialect/Piper/IR/PiperOps.h"
#include "piper/Dialect/Piper/Transforms/MixedPrecision.h"
#include "piper/Dialect/Piper/Transforms/PlanAnnotations.h"
#include "piper/InitAllPiper.h"
#include "piper/ParserGuards.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Support/Timing.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ThreadPool.h"
#include "llvm/Support/ToolOutputFile.h"

#include <cmath>

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
// The optimizer flags and their defaults are piper-interp's and piper-run's
// (piper-rt/train.h).
cl::opt<std::string> optimizer("optimizer",
                               cl::desc("sgd or adamw (default adamw)"),
                               cl::init(::piper::train::kDefaultOptimizer),
                               cl::cat(category));
cl::opt<double> lr("lr",
                   cl::desc("Default learning rate, recorded in plan.json "
                            "(default 1e-3; piper-run --lr and its schedule "
                            "flags set it per step)"),
                   cl::init(::piper::train::kDefaultLr), cl::cat(category));
cl::opt<double> momentum("momentum", cl::desc("SGD momentum (default 0)"),
                         cl::init(::piper::train::kDefaultMomentum),
                         cl::cat(category));
cl::opt<double> weightDecay("weight-decay",
                            cl::desc("Weight decay (default: the "
                                     "optimizer's, as --piper-optimizer)"),
                            cl::init(-1.0), cl::cat(category));
cl::opt<std::string>
    noDecay("no-decay",
            cl::desc("Parameters without weight decay: rank<2 (default: "
                     "biases and norm gains), none, all, or name globs "
                     "(e.g. '*.bias,*norm*')"),
            cl::init(::piper::train::kDefaultNoDecay), cl::cat(category));
cl::opt<double> beta1("beta1", cl::desc("AdamW beta1 (default 0.9)"),
                      cl::init(::piper::train::kDefaultBeta1),
                      cl::cat(category));
cl::opt<double> beta2("beta2", cl::desc("AdamW beta2 (default 0.999)"),
                      cl::init(::piper::train::kDefaultBeta2),
                      cl::cat(category));
cl::opt<double> eps("eps", cl::desc("AdamW epsilon (default 1e-8)"),
                    cl::init(::piper::train::kDefaultEps), cl::cat(category));
cl::opt<double> clipGradNorm(
    "clip-grad-norm",
    cl::desc("Clip the global gradient norm (over every rank of the "
             "strategy) to this bound before each update; the plan records "
             "it and piper-run --clip-grad-norm overrides it (default 0: the "
             "plan does not clip)"),
    cl::init(0.0), cl::cat(category));
cl::opt<std::string>
    precision("precision",
              cl::desc("f32 (default) or bf16-mixed: bf16 compute, f32 master "
                       "weights, optimizer state, loss and gradient reduction "
                       "(--piper-mixed-precision, docs/MixedPrecision.md)"),
              cl::init("f32"), cl::cat(category));
cl::opt<std::string> gradReduceDtype(
    "grad-reduce-dtype",
    cl::desc("Element type of gradient reductions under bf16-mixed (f32)"),
    cl::init("f32"), cl::cat(category));

cl::opt<std::string> target("target",
                            cl::desc("cpu (default) or cuda: kernels as cubin "
                                     "for --gpu-arch (docs/GPU.md)"),
                            cl::init("cpu"), cl::cat(category));
cl::opt<std::string> gpuArch("gpu-arch",
                             cl::desc("The GPU architecture of --target=cuda "
                                      "(default sm_90)"),
                             cl::init("sm_90"), cl::cat(category));

cl::opt<bool> traceKernels(
    "trace-kernels",
    cl::desc("Bracket each op of every launched body with a trace span "
             "named by its kind (matmul, softmax, rmsnorm_vjp, ...), which "
             "piper-run --trace records inside the launch's span (CPU "
             "target; docs/Runtime.md)"),
    cl::init(false), cl::cat(category));
cl::opt<unsigned> jobs(
    "jobs",
    cl::desc("Programs lowered and emitted at once (default 0: one per core "
             "available; 1: one after another)"),
    cl::init(0), cl::cat(category));
cl::opt<int64_t> globalBatch(
    "global-batch",
    cl::desc("Fail unless the model and strategy train on this many "
             "sequences (MLP: samples) per step: the model's batch times "
             "the data-parallel replicas (piper-gen --global-batch derives "
             "the model's batch)"),
    cl::value_desc("N"), cl::cat(category));
cl::opt<bool> timing("timing",
                     cl::desc("Print the time of each compile stage and MLIR "
                              "pass to stderr"),
                     cl::init(false), cl::cat(category));

CompileOptions compileOptions() {
  CompileOptions options;
  options.directives = directives;
  options.sourceName = inputFilename;
  options.optimizer.optimizer = optimizer;
  options.optimizer.lr = lr;
  options.optimizer.momentum = momentum;
  options.optimizer.weightDecay = weightDecay;
  options.optimizer.beta1 = beta1;
  options.optimizer.beta2 = beta2;
  options.optimizer.eps = eps;
  options.optimizer.noDecay = noDecay;
  options.clipGradNorm = clipGradNorm;
  options.traceKernels = traceKernels;
  if (target == "cuda") {
    options.gpu.emplace();
    options.gpu->chip = gpuArch;
  }
  return options;
}

/// Opens -o (default stdout), runs `write` on it and keeps it on success.
LogicalResult writeOutput(function_ref<LogicalResult(raw_ostream &)> write) {
  std::string error;
  std::string out = outputName.empty() ? "-" : outputName.getValue();
  auto file = openOutputFile(out, &error);
  if (!file) {
    llvm::errs() << "piper-compile: " << error << "\n";
    return failure();
  }
  if (failed(write(file->os())))
    return failure();
  file->keep();
  return success();
}

/// One statement of the batch the plan trains on: the global batch (the
/// step's data arguments hold one replica's share along dim 0; the batch
/// axes multiply it), the tokens per step of an integer (token) argument,
/// and what each rank holds per microbatch.
void printBatchSummary(ModuleOp module, StringRef planDir) {
  ::piper::plan::Manifest manifest;
  std::string error;
  if (!::piper::plan::loadManifest(planDir.str(), manifest, error))
    return;
  int64_t replicas = 1;
  for (const std::string &axis : manifest.batchAxes)
    for (const ::piper::plan::MeshAxis &a : manifest.mesh.axes)
      if (a.name == axis)
        replicas *= a.size;
  int64_t microbatches = 1;
  for (auto program : module.getOps<ProgramOp>())
    for (auto input : program.getOps<InputOp>())
      microbatches =
          std::max<int64_t>(microbatches, input.getCount().value_or(1));
  std::string line;
  llvm::raw_string_ostream os(line);
  bool first = true;
  for (const ::piper::plan::Tensor &arg : manifest.arguments) {
    if (arg.kind != "data" || arg.shape.empty())
      continue;
    int64_t rows = arg.shape[0];
    if (first) {
      os << "piper-compile: global batch " << rows * replicas << " = " << rows
         << " per replica x " << replicas << " replica(s) over ["
         << llvm::join(manifest.batchAxes, ", ") << "], " << microbatches
         << " microbatch(es) of " << rows / std::max<int64_t>(1, microbatches)
         << " per replica";
      if (arg.dtype == ::piper::plan::DType::I64)
        os << "; " << arg.numel() * replicas << " tokens per step";
      os << "\npiper-compile: per rank per microbatch:";
      first = false;
    }
    std::vector<int64_t> shape = arg.shape;
    shape[0] /= std::max<int64_t>(1, microbatches);
    os << " #" << arg.index << " [";
    llvm::interleaveComma(shape, os);
    os << "]";
  }
  if (first)
    return;
  llvm::outs() << line << "\n";
}

/// --global-batch: the model's data arguments hold one microbatch of one
/// replica; the strategy's microbatch count (the programs' input counts)
/// and the axes gradients are reduced over (collectBatchAxes) multiply
/// them. Checked on the device programs, before the back half runs.
LogicalResult checkGlobalBatch(ModuleOp module,
                               ArrayRef<ArgumentInfo> modelArgs) {
  if (!globalBatch.getNumOccurrences())
    return success();
  if (globalBatch < 1) {
    llvm::errs() << "piper-compile: --global-batch must be a positive "
                    "integer, got "
                 << globalBatch << "\n";
    return failure();
  }
  const ArgumentInfo *data = nullptr;
  for (const ArgumentInfo &arg : modelArgs)
    if (!arg.isParameter() && !arg.shape.empty()) {
      data = &arg;
      break;
    }
  if (!data) {
    llvm::errs() << "piper-compile: --global-batch: the model has no data "
                    "argument with a batch dimension\n";
    return failure();
  }
  SmallVector<ProgramOp> programs(module.getOps<ProgramOp>());
  SmallVector<MeshOp> meshes(module.getOps<MeshOp>());
  SmallVector<std::string> axes;
  int64_t replicas = 1;
  if (meshes.size() == 1) {
    axes = collectBatchAxes(programs, meshes.front());
    for (MeshAxisAttr axis : meshes.front().getAxisList())
      if (llvm::is_contained(axes, axis.getName().str()))
        replicas *= axis.getSize();
  }
  int64_t microbatches = 1;
  for (ProgramOp program : programs)
    for (auto input : program.getOps<InputOp>())
      microbatches =
          std::max<int64_t>(microbatches, input.getCount().value_or(1));
  int64_t rows = data->shape[0];
  int64_t global = rows * microbatches * replicas;
  if (global == globalBatch)
    return success();
  llvm::errs() << "piper-compile: --global-batch=" << globalBatch
               << ", but the model and strategy train on " << global << " ("
               << microbatches << " microbatch(es) of " << rows << " x "
               << replicas << " replica(s) over [" << llvm::join(axes, ", ")
               << "]); regenerate the model with piper-gen --global-batch="
               << globalBatch << " --strategy=...\n";
  return failure();
}

/// Without a strategy every device of the mesh runs the whole step on the
/// whole batch: a mesh of dp=2 compiled alone trains two identical copies.
/// Said once, at the mesh, rather than left for the user to discover.
void warnUnusedMesh(ModuleOp module) {
  for (MeshOp mesh : module.getOps<MeshOp>())
    if (mesh.getNumDevices() > 1)
      mesh.emitWarning()
          << "piper-compile: mesh @" << mesh.getSymName() << " has "
          << mesh.getNumDevices()
          << " devices but no --directives: every device runs the whole "
             "step on the whole batch (give a strategy, or a mesh of one "
             "device)";
}

/// Without a strategy nothing splits a computation over a mesh axis, so a
/// parameter whose placement splits a dimension over devices (piper-gen's
/// experts over `ep`, a hand-placed column over `tp`) cannot be lowered:
/// said at the parameter, before the front half fails deep in the lowering.
LogicalResult checkSplitWithoutStrategy(ModuleOp module) {
  for (auto fn : module.getOps<func::FuncOp>()) {
    for (unsigned i = 0, e = fn.getNumArguments(); i < e; ++i) {
      auto param =
          fn.getArgAttrOfType<ParamAttr>(i, PiperDialect::getParamAttrName());
      PlacementAttr placement = param ? param.getPlacement() : PlacementAttr();
      if (!placement)
        continue;
      auto mesh =
          SymbolTable::lookupNearestSymbolFrom<MeshOp>(fn, placement.getMesh());
      if (!mesh)
        continue;
      for (ArrayAttr axes : placement.getDims()) {
        for (Attribute axis : axes) {
          StringRef name = cast<StringAttr>(axis).getValue();
          for (MeshAxisAttr a : mesh.getAxisList())
            if (a.getName() == name && a.getSize() > 1)
              return emitError(fn.getArgument(i).getLoc())
                     << "piper-compile: parameter '"
                     << param.getName().getValue() << "' is split over mesh "
                     << "axis '" << name << "' (" << a.getSize()
                     << " devices) by its placement, but no --directives "
                        "shard its computation; give a strategy that does "
                        "(e.g. {\"shard\": {\"filter\": {}, \"kind\": "
                        "\"expert\", \"devices\": [\""
                     << name << "\"]}}), or a mesh without '" << name << "'";
        }
      }
    }
  }
  return success();
}

LogicalResult run(MLIRContext &context, TimingScope &timing) {
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler handler(sourceMgr, &context);
  std::string error;
  auto input = openInputFile(inputFilename, &error);
  if (!input) {
    llvm::errs() << "piper-compile: " << error << "\n";
    return failure();
  }
  sourceMgr.AddNewSourceBuffer(std::move(input), llvm::SMLoc());
  if (failed(checkUpstreamParserCrashes(sourceMgr, &context)))
    return failure();
  TimingScope parseTiming = timing.nest("parse");
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  parseTiming.stop();
  if (!module)
    return failure();

  // The precision policy rewrites the model before the front half.
  std::string policyError;
  std::optional<PrecisionPolicy> policy =
      parsePrecisionPolicy(precision, gradReduceDtype, policyError);
  if (!policy) {
    llvm::errs() << "piper-compile: " << policyError << "\n";
    return failure();
  }
  for (auto fn : module->getOps<func::FuncOp>())
    if (failed(applyPrecisionPolicy(fn, *policy)))
      return failure();

  CompileOptions options = compileOptions();
  if (target != "cpu" && target != "cuda") {
    llvm::errs() << "piper-compile: unknown --target '" << target
                 << "' (cpu or cuda)\n";
    return failure();
  }
  if (gpuArch.getNumOccurrences() && !options.gpu) {
    llvm::errs() << "piper-compile: --gpu-arch needs --target=cuda\n";
    return failure();
  }
  if (options.gpu && !validateGPUTargetOptions(*options.gpu, policyError)) {
    llvm::errs() << "piper-compile: " << policyError << "\n";
    return failure();
  }
  if (traceKernels && options.gpu) {
    llvm::errs() << "piper-compile: --trace-kernels needs --target=cpu (the "
                    "CUDA runtime records no kernel spans)\n";
    return failure();
  }
  if (!(clipGradNorm >= 0.0 && std::isfinite(clipGradNorm))) {
    llvm::errs() << "piper-compile: --clip-grad-norm must be finite and "
                    "non-negative\n";
    return failure();
  }
  bool hasPrograms = !module->getOps<ProgramOp>().empty();
  if (hasPrograms && clipGradNorm > 0)
    (*module)->setAttr(
        kClipGradNormAttrName,
        FloatAttr::get(Float64Type::get(&context), clipGradNorm));
  if (hasPrograms && traceKernels)
    markKernelTracing(*module);
  SmallVector<ArgumentInfo> modelArgs;
  if (!hasPrograms && options.directives.empty()) {
    warnUnusedMesh(*module);
    if (failed(checkSplitWithoutStrategy(*module)))
      return failure();
  }
  if (!hasPrograms) {
    // A translated JSON strategy is kept with the plan when there is one.
    std::optional<std::string> keepDir;
    if (emit == Emit::Plan)
      keepDir = outputName;
    FailureOr<SmallVector<ArgumentInfo>> args =
        compileModel(*module, options, keepDir, timing);
    if (failed(args))
      return failure();
    modelArgs = std::move(*args);
    if (failed(checkGlobalBatch(*module, modelArgs)))
      return failure();
  }
  if (emit == Emit::Programs)
    return writeOutput([&](raw_ostream &os) {
      module->print(os);
      os << "\n";
      return success();
    });

  TimingScope prepareTiming = timing.nest("prepare for lowering");
  FailureOr<SmallVector<CommKey>> communicators = prepareForLowering(*module);
  prepareTiming.stop();
  if (failed(communicators))
    return failure();
  if (emit != Emit::Plan) {
    LoweredForm form = emit == Emit::Kernels   ? LoweredForm::Kernels
                       : emit == Emit::Lowered ? LoweredForm::LLVMDialect
                                               : LoweredForm::LLVMIR;
    return writeOutput([&](raw_ostream &os) {
      return printLowered(*module, form, os, timing, options.gpu);
    });
  }

  if (outputName.empty()) {
    llvm::errs() << "piper-compile: -o PLAN_DIR is required for --emit=plan\n";
    return failure();
  }
  if (hasPrograms)
    return module->emitError()
           << "piper-compile: a plan is compiled from a model (its arguments "
              "decide initialisation and data); this module already holds "
              "device programs";
  if (failed(compilePlan(*module, modelArgs, *communicators, options,
                         outputName, timing)))
    return failure();
  printBatchSummary(*module, outputName);
  return success();
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  DialectRegistry registry;
  registerPiper(registry);
  registerPiperConversionInterfaces(registry);
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(
      argc, argv,
      "piper-compile: a model and a strategy to a plan of native code per "
      "device role\n");
  // Each program is lowered and emitted on a thread of the context's pool
  // (declared first: it must outlive the context).
  std::optional<llvm::DefaultThreadPool> pool;
  MLIRContext context(registry, MLIRContext::Threading::DISABLED);
  if (jobs != 1) {
    pool.emplace(llvm::hardware_concurrency(jobs));
    context.setThreadPool(*pool);
  }
  // One located line per error: never the whole function the error is on.
  context.printOpOnDiagnostic(false);
  context.loadAllAvailableDialects();
  // The report is printed when the manager goes, after the root scope.
  DefaultTimingManager timingManager;
  timingManager.setEnabled(timing);
  timingManager.setDisplayMode(DefaultTimingManager::DisplayMode::Tree);
  TimingScope root = timingManager.getRootScope();
  LogicalResult result = run(context, root);
  root.stop();
  return failed(result) ? 1 : 0;
}
