//===- Compile.cpp - A model and a strategy to a runnable plan ------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "piper/Compile/Compile.h"

#include "piper-rt/plan_validate.h"
#include "piper/Compile/EmitObject.h"
#include "piper/Compile/FrontHalf.h"
#include "piper/Compile/GPUTarget.h"
#include "piper/Compile/LowerProgram.h"
#include "piper/Compile/PlanManifest.h"
#include "piper/Compile/ShareKernels.h"
#include "piper/Conversion/TraceKernels.h"
#include "piper/Dialect/Piper/Transforms/EvalPrograms.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Threading.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/ToolOutputFile.h"

using namespace mlir;
using namespace mlir::piper;

namespace {

/// The model: the only public function with a body.
FailureOr<func::FuncOp> findModel(ModuleOp module) {
  func::FuncOp model;
  for (auto fn : module.getOps<func::FuncOp>())
    if (fn.isPublic() && !fn.isExternal()) {
      if (model)
        return fn.emitError() << "piper-compile: several public functions; "
                                 "the model must be the only one";
      model = fn;
    }
  if (!model)
    return module.emitError() << "piper-compile: no public function to "
                                 "compile";
  return model;
}

/// One module per program of the prepared `module`, each holding that
/// program alone, with what the lowering threads would otherwise load or
/// register concurrently loaded first.
SmallVector<OwningOpRef<ModuleOp>>
cloneEachProgram(ModuleOp module, TimingScope &timing,
                 const GPUTargetOptions *gpu) {
  MLIRContext *context = module.getContext();
  loadLoweringDialects(context, gpu);
  registerObjectEmission(context);
  // Cloned here, on one thread, from the module all programs share.
  TimingScope cloneTiming = timing.nest("clone the programs");
  SmallVector<OwningOpRef<ModuleOp>> clones;
  // An evaluation program is lowered with its training program.
  for (ProgramOp program : module.getOps<ProgramOp>())
    if (!isEvalProgram(program))
      clones.push_back(cloneProgram(module, program.getSymName()));
  return clones;
}

/// Lowers each program of the prepared `module` to `depth` alone, several at
/// once on the context's threads, and calls `use` with its index and the
/// lowered module (on the thread that lowered it). Diagnostics come out in
/// program order.
LogicalResult
forEachLoweredProgram(ModuleOp module, LoweringDepth depth, TimingScope &timing,
                      function_ref<LogicalResult(size_t, ModuleOp)> use,
                      const GPUTargetOptions *gpu = nullptr) {
  SmallVector<OwningOpRef<ModuleOp>> clones =
      cloneEachProgram(module, timing, gpu);
  return failableParallelForEachN(
      module.getContext(), 0, clones.size(), [&](size_t i) {
        OwningOpRef<ModuleOp> clone = std::move(clones[i]);
        if (failed(lowerProgramModule(*clone, depth, timing, gpu)))
          return failure();
        return use(i, *clone);
      });
}

/// `planDir`/`name`.`extension`.
std::string planFile(StringRef planDir, const Twine &name,
                     StringRef extension) {
  SmallString<128> path(planDir);
  llvm::sys::path::append(path, name + extension);
  return std::string(path);
}

/// Emits each GPU program of `module` as `planDir`/<program>.so, defining
/// its role's signature (piper-rt/plan_validate.h); a GPU object links
/// nothing else in (GPUTarget.h).
LogicalResult emitGPUObjects(ModuleOp module, ArrayRef<ProgramOp> programs,
                             ArrayRef<std::string> signatures,
                             StringRef planDir, TimingScope &timing,
                             const GPUTargetOptions &gpu) {
  return forEachLoweredProgram(
      module, LoweringDepth::LLVM, timing,
      [&](size_t i, ModuleOp lowered) {
        StringRef name = ProgramOp(programs[i]).getSymName();
        std::string object = planFile(planDir, name, ".o");
        std::string shared = planFile(planDir, name, ".so");
        if (failed(emitObjectFile(lowered, object, timing, signatures[i])))
          return failure();
        TimingScope linkTiming = timing.nest("link the shared object");
        std::string error;
        if (failed(linkGPUSharedObject(object, shared, error))) {
          llvm::errs() << "piper-compile: " << error << "\n";
          return failure();
        }
        llvm::sys::fs::remove(object);
        return success();
      },
      &gpu);
}

/// Emits each CPU program of `module` as `planDir`/<program>.so, defining
/// its role's signature. All programs are lowered first, so that each
/// kernel they have in common is compiled once (ShareKernels.h) into an
/// object every role's link takes in.
LogicalResult emitCPUObjects(ModuleOp module, ArrayRef<ProgramOp> programs,
                             ArrayRef<std::string> signatures,
                             StringRef planDir, TimingScope &timing) {
  MLIRContext *context = module.getContext();
  SmallVector<OwningOpRef<ModuleOp>> modules =
      cloneEachProgram(module, timing, nullptr);
  if (failed(
          failableParallelForEachN(context, 0, modules.size(), [&](size_t i) {
            return lowerProgramModule(*modules[i], LoweringDepth::LLVM, timing,
                                      nullptr);
          })))
    return failure();
  TimingScope shareTiming = timing.nest("share kernels");
  SmallVector<ModuleOp> lowered;
  for (OwningOpRef<ModuleOp> &program : modules)
    lowered.push_back(*program);
  unsigned parts =
      context->isMultithreadingEnabled() ? context->getNumThreads() : 1;
  SmallVector<OwningOpRef<ModuleOp>> kernels = shareKernels(lowered, parts);
  shareTiming.stop();

  // Objects of the programs, then of the shared kernels, all at once.
  size_t count = programs.size();
  SmallVector<std::string> objects, kernelObjects;
  for (ProgramOp program : programs)
    objects.push_back(planFile(planDir, program.getSymName(), ".o"));
  for (size_t k = 0; k < kernels.size(); ++k)
    kernelObjects.push_back(planFile(planDir, "kernels." + Twine(k), ".o"));
  auto removeObjects = [&] {
    for (const std::string &object :
         llvm::concat<std::string>(objects, kernelObjects))
      llvm::sys::fs::remove(object);
  };
  if (failed(failableParallelForEachN(
          context, 0, count + kernels.size(), [&](size_t i) {
            if (i < count)
              return emitObjectFile(lowered[i], objects[i], timing,
                                    signatures[i]);
            return emitObjectFile(*kernels[i - count], kernelObjects[i - count],
                                  timing);
          }))) {
    removeObjects();
    return failure();
  }
  LogicalResult linked =
      failableParallelForEachN(context, 0, count, [&](size_t i) {
        TimingScope linkTiming = timing.nest("link the shared object");
        std::string error;
        if (failed(linkSharedObject(
                objects[i],
                planFile(planDir, ProgramOp(programs[i]).getSymName(), ".so"),
                kernelObjects, error))) {
          llvm::errs() << "piper-compile: " << error << "\n";
          return failure();
        }
        return success();
      });
  removeObjects();
  return linked;
}

/// Adds the evaluation programs (EvalPrograms.h) and checks them as one
/// step, alone: matched transfers and collectives, no deadlock. Then the
/// sampling programs, the same with the logits, when the model has them
/// (plan.json lists a "sample" entry only then).
LogicalResult addVerifiedEvalPrograms(ModuleOp module, TimingScope &timing) {
  TimingScope evalTiming = timing.nest("derive the evaluation programs");
  FailureOr<SmallVector<ProgramOp>> evals = addEvalPrograms(module);
  if (failed(evals))
    return failure();
  std::string whyNot;
  (void)addSamplePrograms(module, *evals, whyNot);
  OwningOpRef<ModuleOp> evalOnly = module.clone();
  for (ProgramOp program :
       llvm::make_early_inc_range(evalOnly->getOps<ProgramOp>()))
    if (!isEvalProgram(program))
      program.erase();
  PassManager pm(module.getContext());
  pm.addPass(createPiperVerifyPrograms());
  return pm.run(*evalOnly);
}

/// Records each role's object size and checksum in `manifest`, which
/// piper-run verifies before it loads the object.
LogicalResult recordObjects(::piper::plan::Manifest &manifest,
                            StringRef planDir) {
  for (::piper::plan::Role &role : manifest.roles) {
    SmallString<128> path(planDir);
    llvm::sys::path::append(path, role.object);
    llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> bytes =
        llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                    /*RequiresNullTerminator=*/false);
    if (!bytes) {
      llvm::errs() << "piper-compile: cannot read " << path << ": "
                   << bytes.getError().message() << "\n";
      return failure();
    }
    role.objectBytes = static_cast<int64_t>((*bytes)->getBufferSize());
    role.objectChecksum = ::piper::plan::checksum((*bytes)->getBufferStart(),
                                                  (*bytes)->getBufferSize());
  }
  return success();
}

} // namespace

FailureOr<SmallVector<ArgumentInfo>>
mlir::piper::compileModel(ModuleOp module, const CompileOptions &options,
                          const std::optional<std::string> &keepDir,
                          TimingScope &timing) {
  FailureOr<func::FuncOp> model = findModel(module);
  if (failed(model))
    return failure();
  FailureOr<SmallVector<ArgumentInfo>> modelArgs = analyzeArguments(*model);
  if (failed(modelArgs))
    return failure();
  FailureOr<std::string> strategyPath =
      prepareStrategy(options.directives, keepDir);
  if (failed(strategyPath) ||
      failed(runFrontHalf(module, options.optimizer, *strategyPath, timing)))
    return failure();
  // The lowering clips (lib/Conversion/ClipGradNorm.h) and plan.json records
  // the bound, from this attribute.
  if (options.clipGradNorm > 0)
    module->setAttr(kClipGradNormAttrName,
                    FloatAttr::get(Float64Type::get(module.getContext()),
                                   options.clipGradNorm));
  if (options.traceKernels)
    markKernelTracing(module);
  return modelArgs;
}

FailureOr<SmallVector<CommKey>>
mlir::piper::prepareForLowering(ModuleOp module) {
  if (module.getOps<ProgramOp>().empty())
    return module.emitError() << "piper-compile: no device program";
  // Communicators are numbered over all programs, and each send and receive
  // learns its peer's role, before each program is lowered alone.
  FailureOr<SmallVector<CommKey>> communicators = numberCommunicators(module);
  if (failed(communicators) || failed(stampPeerRoles(module)))
    return failure();
  return communicators;
}

LogicalResult
mlir::piper::printLowered(ModuleOp module, LoweredForm form,
                          llvm::raw_ostream &os, TimingScope &timing,
                          const std::optional<GPUTargetOptions> &gpu) {
  LoweringDepth depth = form == LoweredForm::Kernels ? LoweringDepth::Kernels
                                                     : LoweringDepth::LLVM;
  // Printed into one buffer per program, then written in program order.
  SmallVector<std::string> texts(llvm::range_size(module.getOps<ProgramOp>()));
  if (failed(forEachLoweredProgram(
          module, depth, timing,
          [&](size_t i, ModuleOp lowered) {
            llvm::raw_string_ostream text(texts[i]);
            if (form != LoweredForm::LLVMIR)
              lowered->print(text);
            else if (failed(emitLLVMIR(lowered, text, timing)))
              return failure();
            return success();
          },
          gpu ? &*gpu : nullptr)))
    return failure();
  for (const std::string &text : texts)
    os << text << "\n";
  return success();
}

LogicalResult mlir::piper::compilePlan(ModuleOp module,
                                       ArrayRef<ArgumentInfo> modelArgs,
                                       ArrayRef<CommKey> communicators,
                                       const CompileOptions &options,
                                       StringRef planDir, TimingScope &timing) {
  if (std::error_code ec = llvm::sys::fs::create_directories(planDir)) {
    llvm::errs() << "piper-compile: cannot create " << planDir << ": "
                 << ec.message() << "\n";
    return failure();
  }
  if (failed(addVerifiedEvalPrograms(module, timing)))
    return failure();
  SmallVector<ProgramOp> programs;
  for (ProgramOp program : module.getOps<ProgramOp>())
    if (!isEvalProgram(program))
      programs.push_back(program);
  FailureOr<::piper::plan::Manifest> manifest =
      buildPlanManifest(module, programs, modelArgs, communicators,
                        options.sourceName, options.optimizer);
  if (failed(manifest))
    return failure();
  if (auto kinds = module->getAttrOfType<ArrayAttr>(kTraceKernelsAttrName))
    for (auto kind : kinds.getAsRange<StringAttr>())
      manifest->kernelKinds.push_back(kind.str());
  if (options.gpu) {
    manifest->target = "cuda";
    manifest->gpuArch = options.gpu->chip;
  }
  // Roles are in program order (buildPlanManifest).
  SmallVector<std::string> signatures;
  for (const ::piper::plan::Role &role : manifest->roles)
    signatures.push_back(::piper::plan::roleSignature(*manifest, role));
  if (failed(options.gpu ? emitGPUObjects(module, programs, signatures, planDir,
                                          timing, *options.gpu)
                         : emitCPUObjects(module, programs, signatures, planDir,
                                          timing)))
    return failure();
  if (failed(recordObjects(*manifest, planDir)))
    return failure();
  SmallString<128> manifestPath(planDir);
  llvm::sys::path::append(manifestPath, ::piper::plan::kManifestFile);
  std::string error;
  auto file = openOutputFile(manifestPath, &error);
  if (!file) {
    llvm::errs() << "piper-compile: " << error << "\n";
    return failure();
  }
  file->os() << ::piper::plan::writeManifest(*manifest);
  file->keep();
  return success();
}
