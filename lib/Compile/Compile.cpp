//===- Compile.cpp - A model and a strategy to a runnable plan ------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "piper/Compile/Compile.h"

#include "piper/Compile/EmitObject.h"
#include "piper/Compile/FrontHalf.h"
#include "piper/Compile/LowerProgram.h"
#include "piper/Compile/PlanManifest.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Support/FileUtilities.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
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

/// Lowers `program` to the LLVM dialect and links it into
/// `planDir`/<program>.so.
LogicalResult emitProgramObject(ModuleOp module, ProgramOp program,
                                StringRef planDir, TimingScope &timing) {
  OwningOpRef<ModuleOp> lowered =
      lowerProgram(module, program.getSymName(), LoweringDepth::LLVM, timing);
  if (!lowered)
    return failure();
  SmallString<128> object(planDir), shared(planDir);
  llvm::sys::path::append(object, program.getSymName() + ".o");
  llvm::sys::path::append(shared, program.getSymName() + ".so");
  if (failed(emitObjectFile(*lowered, std::string(object), timing)))
    return failure();
  TimingScope linkTiming = timing.nest("link the shared object");
  std::string error;
  if (failed(
          linkSharedObject(std::string(object), std::string(shared), error))) {
    llvm::errs() << "piper-compile: " << error << "\n";
    return failure();
  }
  llvm::sys::fs::remove(object);
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

LogicalResult mlir::piper::printLowered(ModuleOp module, LoweredForm form,
                                        llvm::raw_ostream &os,
                                        TimingScope &timing) {
  LoweringDepth depth = form == LoweredForm::Kernels ? LoweringDepth::Kernels
                                                     : LoweringDepth::LLVM;
  for (ProgramOp program : module.getOps<ProgramOp>()) {
    OwningOpRef<ModuleOp> lowered =
        lowerProgram(module, program.getSymName(), depth, timing);
    if (!lowered)
      return failure();
    if (form != LoweredForm::LLVMIR)
      lowered->print(os);
    else if (failed(emitLLVMIR(*lowered, os, timing)))
      return failure();
    os << "\n";
  }
  return success();
}

LogicalResult mlir::piper::compilePlan(ModuleOp module,
                                       ArrayRef<ArgumentInfo> modelArgs,
                                       ArrayRef<CommKey> communicators,
                                       const CompileOptions &options,
                                       StringRef planDir,
                                       TimingScope &timing) {
  if (std::error_code ec = llvm::sys::fs::create_directories(planDir)) {
    llvm::errs() << "piper-compile: cannot create " << planDir << ": "
                 << ec.message() << "\n";
    return failure();
  }
  SmallVector<ProgramOp> programs(module.getOps<ProgramOp>());
  FailureOr<::piper::plan::Manifest> manifest =
      buildPlanManifest(module, programs, modelArgs, communicators,
                        options.sourceName, options.optimizer);
  if (failed(manifest))
    return failure();
  for (ProgramOp program : programs)
    if (failed(emitProgramObject(module, program, planDir, timing)))
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
