//===- LowerToGPU.cpp - The --target=cuda lowering pipeline ---------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// --piper-lower-to-gpu{chip features block-size format}: device programs to
// the LLVM dialect with every kernel compiled for an NVIDIA GPU.
//
//   the CPU pipeline's front (programs to functions, piper ops to linalg,
//     fusion, bufferization, results as out-parameters, deallocation,
//     piper-matmul-to-blas, outlined kernels)
//   piper-gpu-gemm                 BLAS calls -> piper_gpu_gemm (cuBLAS)
//   piper-gpu-serial-loops         host loops over buffers -> one thread
//   piper-gpu-device-memory        alloc/dealloc -> gpu.alloc/dealloc
//   piper-gpu-map-linalg           linalg -> scf.parallel on blocks/threads
//   convert-parallel-loops-to-gpu  -> gpu.launch
//   piper-gpu-verify-host          no device memory touched on the host
//   piper-expand-bf16              bf16 arithmetic as the CPU rounds it
//   gpu-kernel-outlining           -> gpu.module + gpu.func per kernel
//   piper-gpu-kernel-names         PTX-safe kernel names (no '.')
//   nvvm-attach-target             #nvvm.target<chip, features, O3>
//   in each gpu.module: lower-affine, expand-strided-metadata,
//     convert-scf-to-cf, convert-gpu-to-nvvm, canonicalize, cse
//   the CPU pipeline's host lowering (memref, math, arith, func, cf,
//     index to LLVM), gpu-to-llvm (launches, allocs -> mgpu* calls),
//     reconcile-unrealized-casts
//   gpu-module-to-binary           ptxas (+ fatbinary): cubin / PTX
//   piper-packed-entry
//
// This is the only file of the project that includes the NVVM target and
// its pass headers; keep it the only one (each costs ~28 s and 1.7 GB to
// compile).
//
//===----------------------------------------------------------------------===//

#include "piper/Conversion/GPU/Passes.h"
#include "piper/Conversion/Passes.h"

#include "mlir/Conversion/AffineToStandard/AffineToStandard.h"
#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/BufferizationToMemRef/BufferizationToMemRef.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVMPass.h"
#include "mlir/Conversion/GPUCommon/GPUCommonPass.h"
#include "mlir/Conversion/GPUCommon/GPUToLLVM.h"
#include "mlir/Conversion/GPUToNVVM/GPUToNVVM.h"
#include "mlir/Conversion/GPUToNVVM/GPUToNVVMPass.h"
#include "mlir/Conversion/IndexToLLVM/IndexToLLVM.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/NVVMToLLVM/NVVMToLLVM.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Conversion/SCFToGPU/SCFToGPUPass.h"
#include "mlir/Conversion/UBToLLVM/UBToLLVM.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVMIR/Dialect/GPU/GPUToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"
#include "mlir/Transforms/Passes.h"

#include "llvm/Support/Regex.h"

#include <cstdlib>

namespace mlir::piper {
#define GEN_PASS_DEF_LOWERTOGPUPASS
#define GEN_PASS_REGISTRATION
#include "piper/Conversion/GPU/Passes.h.inc"
} // namespace mlir::piper

using namespace mlir;
using namespace mlir::piper;

bool mlir::piper::validateGPUTargetOptions(const GPUTargetOptions &options,
                                           std::string &error) {
  // sm_70 (Volta) is the oldest architecture CUDA 13's ptxas accepts.
  llvm::SmallVector<StringRef> match;
  if (!llvm::Regex("^sm_([0-9]+)a?$").match(options.chip, &match) ||
      std::stoi(match[1].str()) < 70) {
    error = "unknown GPU architecture '" + options.chip +
            "' (expected sm_<NN> or sm_<NN>a with NN >= 70, e.g. sm_90)";
    return false;
  }
  if (options.blockSize < 32 || options.blockSize > 1024 ||
      options.blockSize % 32 != 0) {
    error = "block-size must be a multiple of 32 in [32, 1024], got " +
            std::to_string(options.blockSize);
    return false;
  }
  if (options.format != "fatbin" && options.format != "bin" &&
      options.format != "isa") {
    error = "unknown GPU binary format '" + options.format +
            "' (expected fatbin, bin or isa)";
    return false;
  }
  return true;
}

/// The CPU pipeline up to buffers with GEMM calls: the same kernels for
/// both targets (docs/Lowering.md). Mirrors buildLowerToLLVMPipeline's
/// front (LowerToLLVM.cpp) pass for pass; the host CPU's tiling and
/// OpenMP passes are what it leaves out.
static void buildKernelFront(OpPassManager &pm) {
  pm.addPass(createProgramToFuncPass());
  pm.addPass(createConvertToKernelsPass());
  pm.addPass(createFoldSplatConstantsPass());
  pm.addPass(createSymbolDCEPass());
  pm.addNestedPass<func::FuncOp>(createFuseElementwisePass());
  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  bufferize.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  bufferization::BufferResultsToOutParamsPassOptions outParams;
  outParams.hoistStaticAllocs = true;
  outParams.modifyPublicFunctions = true;
  pm.addPass(bufferization::createBufferResultsToOutParamsPass(outParams));
  pm.addNestedPass<func::FuncOp>(createElideResultCopiesPass());
  bufferization::buildBufferDeallocationPipeline(pm);
  pm.addPass(createMatmulToBlasPass());
  pm.addPass(createConvertBufferizationToMemRefPass());
  pm.addPass(createOutlineKernelsPass());
}

/// Each gpu.module's kernels to NVVM (upstream gpu-lower-to-nvvm-pipeline's
/// device half).
static void buildKernelsToNVVM(OpPassManager &pm) {
  OpPassManager &kernels = pm.nest<gpu::GPUModuleOp>();
  kernels.addPass(createLowerAffinePass());
  kernels.addPass(memref::createExpandStridedMetadataPass());
  kernels.addPass(createSCFToControlFlowPass());
  kernels.addPass(createConvertGpuOpsToNVVMOps());
  kernels.addPass(createCanonicalizerPass());
  kernels.addPass(createCSEPass());
  kernels.addPass(createReconcileUnrealizedCastsPass());
}

/// The host functions to the LLVM dialect: the CPU pipeline's host passes
/// (no vectors, no OpenMP), then gpu-to-llvm for launches and device
/// memory.
static void buildHostToLLVM(OpPassManager &pm) {
  pm.addPass(createLowerAffinePass());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  FinalizeMemRefToLLVMConversionPassOptions memrefOptions;
  memrefOptions.useGenericFunctions = true;
  pm.addPass(createFinalizeMemRefToLLVMConversionPass(memrefOptions));
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createUBToLLVMConversionPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createGpuToLLVMConversionPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
}

void mlir::piper::buildLowerToGPUPipeline(OpPassManager &pm,
                                          const GPUTargetOptions &options) {
  buildKernelFront(pm);
  pm.addPass(createGPUGemmPass());
  pm.addPass(createGPUClipPass());
  pm.addPass(createGPUSerialLoopsPass());
  pm.addPass(createGPUDeviceMemoryPass());
  GPUMapLinalgPassOptions mapping;
  mapping.blockSize = options.blockSize;
  pm.addNestedPass<func::FuncOp>(createGPUMapLinalgPass(mapping));
  pm.addPass(createConvertParallelLoopToGpuPass());
  pm.addPass(createGPUVerifyHostPass());
  pm.addPass(createExpandBF16Pass());
  pm.addPass(createGpuKernelOutliningPass());
  pm.addPass(createGPUKernelNamesPass());
  GpuNVVMAttachTargetOptions target;
  target.chip = options.chip;
  target.features = options.features;
  target.optLevel = 3;
  pm.addPass(createGpuNVVMAttachTarget(target));
  buildKernelsToNVVM(pm);
  buildHostToLLVM(pm);
  GpuModuleToBinaryPassOptions binary;
  binary.compilationTarget = options.format;
  // ptxas, fatbinary and libdevice (math functions: __nv_expf, ...) come
  // from the toolkit; MLIR finds libdevice only through CUDA_HOME or this.
  const char *cudaHome = std::getenv("CUDA_HOME");
  binary.toolkitPath = cudaHome && *cudaHome ? cudaHome : "/usr/local/cuda";
  pm.addPass(createGpuModuleToBinaryPass(binary));
  pm.addPass(createPackedEntryPass());
}

void mlir::piper::registerGPUTargetInterfaces(DialectRegistry &registry) {
  registry.insert<gpu::GPUDialect, NVVM::NVVMDialect>();
  // The NVVM target attribute's serialisation (ptxas, fatbinary) and the
  // translation of gpu.binary and launches to LLVM IR: without them the
  // release libraries segfault without a message (build-notes.md).
  NVVM::registerNVVMTargetInterfaceExternalModels(registry);
  gpu::registerOffloadingLLVMTranslationInterfaceExternalModels(registry);
  registerGPUDialectTranslation(registry);
  registerNVVMDialectTranslation(registry);
  // convert-gpu-to-nvvm lowers what each dialect's interface provides.
  arith::registerConvertArithToLLVMInterface(registry);
  cf::registerConvertControlFlowToLLVMInterface(registry);
  registerConvertFuncToLLVMInterface(registry);
  registerConvertMemRefToLLVMInterface(registry);
  registerConvertMathToLLVMInterface(registry);
  index::registerConvertIndexToLLVMInterface(registry);
  ub::registerConvertUBToLLVMInterface(registry);
  registerConvertNVVMToLLVMInterface(registry);
  gpu::registerConvertGpuToLLVMInterface(registry);
  NVVM::registerConvertGpuToNVVMInterface(registry);
}

namespace {

struct LowerToGPUPass : mlir::piper::impl::LowerToGPUPassBase<LowerToGPUPass> {
  using LowerToGPUPassBase::LowerToGPUPassBase;

  GPUTargetOptions targetOptions() const {
    GPUTargetOptions o;
    o.chip = chip;
    o.features = features;
    o.blockSize = blockSize;
    o.format = format;
    return o;
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    OpPassManager pm(ModuleOp::getOperationName());
    buildLowerToGPUPipeline(pm, targetOptions());
    pm.getDependentDialects(registry);
  }
  void runOnOperation() override {
    GPUTargetOptions options = targetOptions();
    std::string error;
    if (!validateGPUTargetOptions(options, error)) {
      getOperation().emitError() << error;
      return signalPassFailure();
    }
    OpPassManager pm(ModuleOp::getOperationName());
    buildLowerToGPUPipeline(pm, options);
    if (failed(runPipeline(pm, getOperation())))
      signalPassFailure();
  }
};

} // namespace

void mlir::piper::registerGPUTargetPasses() {
  registerPiperGPUPasses();
  // The upstream stages of the pipeline, so that piper-opt can run (and the
  // tests check) each one alone.
  registerPass([] { return createConvertParallelLoopToGpuPass(); });
  registerPass([] { return createGpuKernelOutliningPass(); });
  registerPass([] { return createGpuNVVMAttachTarget(); });
  registerPass([] { return createConvertGpuOpsToNVVMOps(); });
  registerPass([] { return createGpuToLLVMConversionPass(); });
  registerPass([] { return createGpuModuleToBinaryPass(); });
}
