//===- Passes.h - The CUDA target's passes ----------------------*- C++ -*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// `piper-compile --target=cuda` (docs/GPU.md): the CPU pipeline's linalg
// kernels mapped to blocks and threads, outlined into gpu.modules and
// compiled to cubin (+PTX) for an NVIDIA architecture; GEMMs become calls of
// the plan ABI's piper_gpu_gemm (runtime/include/piper-rt/plan_abi_gpu.h).
// Only this library includes the GPU and NVVM headers (each such file costs
// ~28 s and 1.7 GB to compile), so this header names none of them.
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_CONVERSION_GPU_PASSES_H
#define PIPER_CONVERSION_GPU_PASSES_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

#include <string>

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace mlir::piper {

#define GEN_PASS_DECL
#include "piper/Conversion/GPU/Passes.h.inc"

/// The GEMM entry point of the GPU plan ABI.
constexpr llvm::StringLiteral kGPUGemmName = "piper_gpu_gemm";
/// The plan ABI's clipping calls of --piper-gpu-clip (plan_abi.h).
constexpr llvm::StringLiteral kGPUClipAddSquaresName = "piper_clip_add_squares";
constexpr llvm::StringLiteral kGPUClipCoefficientName =
    "piper_clip_coefficient";

/// The GPU target's choices: what --target=cuda and --gpu-arch set.
struct GPUTargetOptions {
  /// The SM architecture (`sm_90`, `sm_80`, `sm_90a`, ...).
  std::string chip = "sm_90";
  /// PTX ISA features: MLIR's default PTX 6.0 does not assemble for sm_90.
  std::string features = "+ptx80";
  /// Threads per block of the mapped elementwise and reduction kernels.
  /// 256 threads (8 warps) keep an H100/H200 SM's 64 warp slots full with
  /// eight resident blocks; these kernels use no shared memory.
  int64_t blockSize = 256;
  /// gpu-module-to-binary's format: fatbin (cubin + PTX), bin, isa.
  std::string format = "fatbin";
};

/// Checks `options.chip` (`sm_<NN>[a]`, NN >= 70) and the block size; on
/// failure returns false with one line in `error`.
bool validateGPUTargetOptions(const GPUTargetOptions &options,
                              std::string &error);

/// The --target=cuda lowering: device programs to the LLVM dialect, each
/// kernel a gpu.binary for `options.chip`, the host calling mgpu* and
/// piper_gpu_gemm.
void buildLowerToGPUPipeline(OpPassManager &pm,
                             const GPUTargetOptions &options = {});

/// The dialects, interfaces and translations the GPU pipeline and the
/// translation of its result to LLVM IR need (NVVM target attributes,
/// gpu.binary offloading): without them the release libraries crash
/// without a message.
void registerGPUTargetInterfaces(DialectRegistry &registry);

/// The tool-wide registration of this library's passes.
void registerGPUTargetPasses();

} // namespace mlir::piper

#endif // PIPER_CONVERSION_GPU_PASSES_H
