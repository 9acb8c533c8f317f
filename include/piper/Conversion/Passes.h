//===- Passes.h - Lowering device programs to native code -------*- C++ -*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The compiler's back half (docs/Lowering.md): device programs
// (`piper.program`, from --piper-partition) to the LLVM dialect.
//
//   --piper-program-to-func     each program becomes a public func.func on
//                               tensors (inputs = step arguments, results =
//                               step results, launches = calls)
//   --piper-convert-to-kernels  piper ops become linalg (elementwise, 2-D
//                               GEMMs) or calls of the C-ABI kernel library
//                               (include/piper/Kernels/Kernels.h)
//   --piper-lower-to-llvm       both, then one-shot bufferization, buffer
//                               deallocation, GEMMs to BLAS, linalg to loops
//                               and the upstream conversions to LLVM, plus a
//                               packed entry point per program
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_CONVERSION_PASSES_H
#define PIPER_CONVERSION_PASSES_H

// The attributes the lowering reads that --piper-number-communicators and
// --piper-stamp-peer-roles write (kPeerRoleAttrName, kCommIndexAttrName, ...).
#include "piper/Dialect/Piper/Transforms/PlanAnnotations.h"

#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

#include <memory>

namespace mlir::piper {

/// Not under `piper.`: the dialect verifies its own attribute names.
/// The attribute a program's function carries: the step-argument index of
/// each of its arguments (DenseI64ArrayAttr).
constexpr llvm::StringLiteral kInputsAttrName = "piper_plan.inputs";
/// The step-result index of each of its results.
constexpr llvm::StringLiteral kOutputsAttrName = "piper_plan.outputs";
/// The program it came from (its role, as a DictionaryAttr).
constexpr llvm::StringLiteral kRoleAttrName = "piper_plan.role";
/// Prefix of the packed entry point `void <prefix><program>(void **args)`:
/// args[i] points to the memref descriptor of argument i, then of each
/// result (the caller allocates results).
constexpr llvm::StringLiteral kEntryPrefix = "piper_entry_";

std::unique_ptr<Pass> createProgramToFuncPass();
std::unique_ptr<Pass> createConvertToKernelsPass();
/// Rewrites linalg.matmul on buffers into piper_k_gemm_<t> (BLAS) calls.
std::unique_ptr<Pass> createMatmulToBlasPass();
/// Adds the packed entry point of every function with kInputsAttrName
/// (runs on the LLVM dialect; needs `llvm.emit_c_interface` wrappers).
std::unique_ptr<Pass> createPackedEntryPass();
std::unique_ptr<Pass> createLowerToLLVMPass();

/// The whole lowering as a pipeline on builtin.module.
void buildLowerToLLVMPipeline(OpPassManager &pm);

/// Registers the passes above with the global registry (for opt tools).
void registerPiperConversionPasses();

/// Registers the external interfaces the pipeline needs (bufferization of
/// arith, func, linalg and tensor ops) in a tool's registry.
void registerPiperConversionInterfaces(DialectRegistry &registry);

} // namespace mlir::piper

#endif // PIPER_CONVERSION_PASSES_H
