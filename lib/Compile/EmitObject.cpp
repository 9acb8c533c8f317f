//===- EmitObject.cpp - LLVM dialect to a loadable shared object ----------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The only file of the compile driver that includes LLVM's codegen headers
// (they cost ~28 s and 1.7 GB per translation unit here; build-notes.md).
//
// Why an ahead-of-time shared object rather than mlir::ExecutionEngine in
// piper-run: every MPI rank would JIT the same code again, piper-run would
// link all of MLIR and LLVM (the runtime must not), and a plan directory
// that holds native code can be inspected, cached and shipped to a cluster.
//
//===----------------------------------------------------------------------===//

#include "piper/Compile/EmitObject.h"
#include "piper-rt/plan_validate.h"
#include "piper/Compile/ShareKernels.h"

#include "mlir/Support/Timing.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/OpenMP/OpenMPToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"

#include "llvm/IR/Constants.h"
#include "llvm/IR/GlobalVariable.h"
#include "llvm/IR/InstrTypes.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/Transforms/IPO/Internalize.h"

using namespace mlir;

namespace {

std::unique_ptr<llvm::TargetMachine> hostMachine(std::string &error) {
  // Once per process: programs are emitted on several threads.
  static const bool initialized = [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    return true;
  }();
  (void)initialized;
  llvm::Triple triple(llvm::sys::getDefaultTargetTriple());
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return nullptr;
  // PIC: the object goes into a shared library (R_X86_64_32S otherwise).
  return std::unique_ptr<llvm::TargetMachine>(target->createTargetMachine(
      triple, llvm::sys::getHostCPUName(), "", llvm::TargetOptions(),
      llvm::Reloc::PIC_, std::nullopt, llvm::CodeGenOptLevel::Aggressive));
}

/// Translation plus the default O2 pipeline for `machine`.
/// Whether `value` is part of the plan ABI: only the packed entry points
/// (runtime/include/piper-rt/plan_abi.h) are looked up by name.
/// Kernels shared by the programs of a plan (ShareKernels.h) stay external
/// too: each role's object resolves them from the shared kernels' object.
bool isPlanEntry(const llvm::GlobalValue &value) {
  return value.getName().starts_with("piper_entry_") ||
         value.getName().starts_with(mlir::piper::kSharedKernelPrefix);
}

/// Marks every internal function called from exactly one place always
/// inline: the program function (a few hundred to a few thousand descriptor
/// fields as arguments, called once from its entry point) is above O2's
/// inlining threshold, so its caller would pass every field on the stack
/// and it would read them back. Inlined, they are loads from the
/// descriptors the entry point receives: the same code, 17% less codegen
/// time for a qwen3_1b stage. Code size cannot grow (one call site).
void inlineSingleCallers(llvm::Module &module) {
  for (llvm::Function &fn : module) {
    if (fn.isDeclaration() || !fn.hasLocalLinkage() || !fn.hasOneUse() ||
        fn.hasFnAttribute(llvm::Attribute::NoInline))
      continue;
    auto *call = dyn_cast<llvm::CallBase>(fn.user_back());
    if (call && call->getCalledFunction() == &fn && call->getFunction() != &fn)
      fn.addFnAttr(llvm::Attribute::AlwaysInline);
  }
}

std::unique_ptr<llvm::Module> translate(ModuleOp module,
                                        llvm::LLVMContext &context,
                                        llvm::TargetMachine &machine,
                                        TimingScope &timing) {
  TimingScope translateTiming = timing.nest("translate to LLVM IR");
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(module, context, "piper-plan");
  translateTiming.stop();
  if (!llvmModule)
    return nullptr;
  llvmModule->setDataLayout(machine.createDataLayout());
  llvmModule->setTargetTriple(machine.getTargetTriple());

  // Everything but the entry points becomes internal. The lowering leaves
  // every function public, with each memref argument expanded into its
  // descriptor's fields: the program function of a GPT step takes ~2,000
  // scalars and calls its bodies with hundreds. Public, those calls reach
  // instruction selection as thousands of stack stores in one block, whose
  // store merging is quadratic (5 of the 4-layer GPT's 14 s went into the
  // 963-line program function alone). Internal, functions called once are
  // inlined into their caller and the descriptors vanish; the object keeps
  // the same ABI (nothing else is looked up by name).
  TimingScope optTiming = timing.nest("LLVM O2");
  llvm::internalizeModule(*llvmModule, isPlanEntry);
  inlineSingleCallers(*llvmModule);
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  // Two O2 passes that cost more than they give here (--timing of the
  // 4-layer GPT: 0.7 s each, 60% of O2, the rest of O2 0.9 s): the SLP
  // vectoriser, because the kernels arrive vectorised (--piper-tile-linalg)
  // and what is left is descriptor and call glue, and called-value
  // propagation, which only resolves indirect calls (the plans make none
  // but OpenMP's fork calls, whose targets are already constants) and
  // whose lattice grows with every pointer stored in the program function.
  llvm::PipelineTuningOptions tuning;
  tuning.SLPVectorization = false;
  llvm::PassInstrumentationCallbacks callbacks;
  callbacks.registerShouldRunOptionalPassCallback(
      [](llvm::StringRef pass, llvm::Any) {
        return pass != "CalledValuePropagationPass";
      });
  llvm::PassBuilder builder(&machine, tuning, std::nullopt, &callbacks);
  builder.registerModuleAnalyses(mam);
  builder.registerCGSCCAnalyses(cgam);
  builder.registerFunctionAnalyses(fam);
  builder.registerLoopAnalyses(lam);
  builder.crossRegisterProxies(lam, fam, cgam, mam);
  builder.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O2)
      .run(*llvmModule, mam);
  return llvmModule;
}

LogicalResult withHostModule(
    ModuleOp module, TimingScope &timing,
    llvm::function_ref<LogicalResult(llvm::Module &, llvm::TargetMachine &)>
        use) {
  std::string error;
  std::unique_ptr<llvm::TargetMachine> machine = hostMachine(error);
  if (!machine)
    return module.emitError() << "no host target: " << error;
  llvm::LLVMContext context;
  std::unique_ptr<llvm::Module> llvmModule =
      translate(module, context, *machine, timing);
  if (!llvmModule)
    return module.emitError() << "translation to LLVM IR failed";
  return use(*llvmModule, *machine);
}

} // namespace

void mlir::piper::registerObjectEmission(MLIRContext *context) {
  DialectRegistry registry;
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  registerOpenMPDialectTranslation(registry);
  context->appendDialectRegistry(registry);
}

LogicalResult mlir::piper::emitLLVMIR(ModuleOp module, llvm::raw_ostream &os,
                                      TimingScope &timing) {
  return withHostModule(module, timing,
                        [&](llvm::Module &llvmModule, llvm::TargetMachine &) {
                          llvmModule.print(os, nullptr);
                          return success();
                        });
}

LogicalResult mlir::piper::emitObjectFile(ModuleOp module,
                                          const std::string &objectPath,
                                          TimingScope &timing,
                                          llvm::StringRef signature) {
  return withHostModule(
      module, timing,
      [&](llvm::Module &llvmModule,
          llvm::TargetMachine &machine) -> LogicalResult {
        // Added after internalization and O2, so it stays exported.
        if (!signature.empty()) {
          llvm::Constant *text = llvm::ConstantDataArray::getString(
              llvmModule.getContext(), signature);
          new llvm::GlobalVariable(llvmModule, text->getType(),
                                   /*isConstant=*/true,
                                   llvm::GlobalValue::ExternalLinkage, text,
                                   ::piper::plan::kSignatureSymbol);
        }
        std::error_code ec;
        llvm::raw_fd_ostream out(objectPath, ec, llvm::sys::fs::OF_None);
        if (ec)
          return module.emitError()
                 << "cannot write " << objectPath << ": " << ec.message();
        TimingScope codegenTiming = timing.nest("LLVM codegen");
        llvm::legacy::PassManager pm;
        if (machine.addPassesToEmitFile(pm, out, nullptr,
                                        llvm::CodeGenFileType::ObjectFile))
          return module.emitError() << "the host target cannot emit objects";
        pm.run(llvmModule);
        return success();
      });
}

LogicalResult mlir::piper::linkSharedObject(
    const std::string &objectPath, const std::string &sharedPath,
    llvm::ArrayRef<std::string> sharedKernels, std::string &error) {
  // The kernel library and the reference it wraps are linked in statically
  // so that a plan object depends on nothing Piper-specific at run time.
  // libomp (the generated parallel loops) lives in LLVM's directory, which
  // the dynamic loader does not search.
  std::string ompRpath =
      "-Wl,-rpath," + llvm::sys::path::parent_path(PIPER_OMP_LIBRARY).str();
  std::vector<std::string> libraries(sharedKernels.begin(),
                                     sharedKernels.end());
  // compiler-rt's builtins after the archives, for LLVM's libcalls in any
  // of them (__truncsfbf2 on a CPU without AVX512-BF16: lib/Compile's
  // CMakeLists.txt).
  libraries.insert(libraries.end(),
                   {PIPER_KERNELS_ARCHIVE, PIPER_REFERENCE_ARCHIVE,
                    PIPER_BUILTINS_ARCHIVE, PIPER_OPENBLAS_LIBRARY,
                    PIPER_OMP_LIBRARY, ompRpath, "-lstdc++", "-lm"});
  return linkSharedObjectWith(objectPath, sharedPath, libraries, error);
}

LogicalResult mlir::piper::linkSharedObjectWith(
    const std::string &objectPath, const std::string &sharedPath,
    llvm::ArrayRef<std::string> libraries, std::string &error) {
  llvm::ErrorOr<std::string> cc = llvm::sys::findProgramByName(PIPER_LINKER);
  if (!cc) {
    error = "cannot find the linker driver '" PIPER_LINKER "' on PATH";
    return failure();
  }
  std::vector<std::string> args = {*cc,  "-shared",  "-fuse-ld=lld",
                                   "-o", sharedPath, objectPath};
  args.insert(args.end(), libraries.begin(), libraries.end());
  SmallVector<llvm::StringRef> argRefs(args.begin(), args.end());
  std::string message;
  int rc =
      llvm::sys::ExecuteAndWait(*cc, argRefs, std::nullopt, {}, 0, 0, &message);
  if (rc != 0) {
    error = "linking " + sharedPath + " failed (" + *cc + " exited with " +
            std::to_string(rc) + (message.empty() ? "" : ": " + message) + ")";
    return failure();
  }
  return success();
}
