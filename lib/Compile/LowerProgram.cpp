//===- LowerProgram.cpp - One device program, lowered alone ---------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "piper/Compile/LowerProgram.h"

#include "piper/Conversion/Passes.h"
#include "piper/Dialect/Piper/IR/PiperOps.h"
#include "piper/Dialect/Piper/Transforms/EvalPrograms.h"

#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"

using namespace mlir;
using namespace mlir::piper;

OwningOpRef<ModuleOp> mlir::piper::cloneProgram(ModuleOp module,
                                                StringRef program) {
  OwningOpRef<ModuleOp> clone = module.clone();
  // The other programs go: each becomes its own object. Sends and receives
  // to them keep the peer's role (kPeerRoleAttrName). The program's
  // evaluation program, when there is one, shares its object.
  std::string eval = (program + kEvalSuffix).str(),
              sample = (program + kSampleSuffix).str();
  for (ProgramOp other : llvm::make_early_inc_range(clone->getOps<ProgramOp>()))
    if (other.getSymName() != program && other.getSymName() != eval &&
        other.getSymName() != sample)
      other.erase();
  return clone;
}

/// The lowering to `depth` as a pass pipeline.
static void buildLowering(OpPassManager &pm, LoweringDepth depth,
                          const GPUTargetOptions *gpu) {
  if (depth == LoweringDepth::Kernels) {
    pm.addPass(createProgramToFuncPass());
    pm.addPass(createTraceKernelsPass());
    pm.addPass(createConvertToKernelsPass());
    pm.addPass(createFoldSplatConstantsPass());
  } else if (gpu) {
    buildLowerToGPUPipeline(pm, *gpu);
  } else {
    buildLowerToLLVMPipeline(pm);
  }
}

LogicalResult mlir::piper::lowerProgramModule(ModuleOp programModule,
                                              LoweringDepth depth,
                                              TimingScope &timing,
                                              const GPUTargetOptions *gpu) {
  // Declared first: the pass manager's timing instrumentation refers to it.
  TimingScope passTiming = timing.nest("lower to the LLVM dialect");
  PassManager pm(programModule.getContext());
  pm.enableTiming(passTiming);
  // Verified once, at the end, rather than after each of the ~25 passes:
  // that is 30% of the lowering's time on qwen3_1b. `piper-opt
  // --piper-lower-to-llvm` (the same pipeline) verifies after each pass, to
  // find the pass that breaks the IR.
  pm.enableVerifier(false);
  buildLowering(pm, depth, gpu);
  if (failed(pm.run(programModule)))
    return failure();
  TimingScope verifyTiming = timing.nest("verify the lowered program");
  return verify(programModule);
}

void mlir::piper::loadLoweringDialects(MLIRContext *context,
                                       const GPUTargetOptions *gpu) {
  OpPassManager pm(ModuleOp::getOperationName());
  buildLowering(pm, LoweringDepth::LLVM, gpu);
  DialectRegistry registry;
  if (gpu)
    registerGPUTargetInterfaces(registry);
  pm.getDependentDialects(registry);
  context->appendDialectRegistry(registry);
  for (StringRef name : registry.getDialectNames())
    context->getOrLoadDialect(name);
}
