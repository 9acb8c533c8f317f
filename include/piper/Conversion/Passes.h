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
// The passes are declared in Passes.td (docs/reference/
// PiperConversionPasses.md); their rewrites are the populate*Patterns
// functions below and in ProgramToFunc.h.
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_CONVERSION_PASSES_H
#define PIPER_CONVERSION_PASSES_H

#include "mlir/IR/BuiltinOps.h"
// The attributes the lowering reads that --piper-number-communicators and
// --piper-stamp-peer-roles write (kPeerRoleAttrName, kCommIndexAttrName, ...).
#include "piper/Dialect/Piper/Transforms/PlanAnnotations.h"

#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/DialectConversion.h"

#include <memory>

namespace mlir::linalg {
class LinalgOp;
} // namespace mlir::linalg

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

/// create<Name>() for each pass of Passes.td.
#define GEN_PASS_DECL
#include "piper/Conversion/Passes.h.inc"

/// Ops with an ElementwiseOpInterface, and their piper.vjp, as elementwise
/// linalg.generic ops built from the interface's scalar rules.
void populateElementwiseToLinalgPatterns(RewritePatternSet &patterns);

/// The host CPU's choices for the generated kernels: the options of
/// --piper-tile-linalg that buildLowerToLLVMPipeline passes. Another target
/// lowers the same linalg with its own.
struct HostKernelOptions {
  /// The fewest iterations per thread's chunk of a parallel loop. A fork
  /// and join of a warm libomp team costs a few microseconds; 32,768
  /// elementwise f32 iterations (128 KiB per operand) take 10 to 30 us on
  /// one core, so a chunk pays for it several times over, and ops under
  /// twice that (most of a tiny model's) stay on the calling thread. An
  /// estimate, not a tuned value: the development machine was too loaded
  /// to measure the crossover (bench/README.md).
  int64_t parallelGrain = 32768;
  /// The widest vector the host's instructions take (AVX-512: 64 bytes);
  /// LLVM splits wider or narrower vectors for other hosts.
  int64_t vectorBytes = 64;
};

/// The whole lowering as a pipeline on builtin.module.
void buildLowerToLLVMPipeline(OpPassManager &pm,
                              const HostKernelOptions &host = {});

/// Piper ops on tensors to linalg and kernel-library calls (one pattern per
/// op kind; --piper-convert-to-kernels).
void populateConvertToKernelsPatterns(RewritePatternSet &patterns);
/// The legality of --piper-convert-to-kernels: no piper op and no op of
/// another dialect than func, arith, tensor, linalg, bufferization and
/// memref inside a function; arith.addi only on scalars.
void configureConvertToKernelsTarget(ConversionTarget &target);

/// Splat tensor constants of more than one element out of the tensor IR:
/// folded into the linalg.generic that reads them as a scalar, otherwise a
/// linalg.fill (--piper-fold-splat-constants).
void populateFoldSplatConstantsPatterns(RewritePatternSet &patterns);

/// linalg.matmul on f32/f64 buffers to piper_k_gemm_<t> (BLAS) calls.
void populateMatmulToBlasPatterns(RewritePatternSet &patterns);
/// Whether --piper-matmul-to-blas replaces `op`.
bool isBlasMatmul(Operation *op);

/// Single-use elementwise producers into their consumers, on tensors
/// (--piper-fuse-elementwise).
void populateFuseElementwisePatterns(RewritePatternSet &patterns);
/// --piper-tile-linalg, step 1: `op` (on buffers, static loops) with at
/// least 2 * `grain` iterations split over its outermost parallel loop into
/// an scf.parallel of chunks of at least `grain` iterations; returns the
/// chunk's op, or `op` itself when it stays whole.
linalg::LinalgOp tileLinalgForThreads(RewriterBase &rewriter,
                                      linalg::LinalgOp op, int64_t grain);
/// --piper-tile-linalg, step 2: `op` tiled into 1 x ... x 1 x W scf.for
/// tiles (W = `vectorBytes` / element size) and each tile vectorised;
/// failure (and `op` unchanged) when its body or shape does not vectorise.
LogicalResult tileAndVectorizeLinalg(RewriterBase &rewriter,
                                     linalg::LinalgOp op, int64_t vectorBytes);
/// The vectorised tiles' unit dims dropped (first, on their own).
void populateDropVectorUnitDimsPatterns(RewritePatternSet &patterns);
/// Then what they need before convert-vector-to-llvm: masks, permutations
/// and reductions lowered, 1-D transfers to vector loads and stores.
void populateLowerTiledVectorPatterns(RewritePatternSet &patterns);

/// registerPiperConversionPasses(): every pass above, for opt tools.
#define GEN_PASS_REGISTRATION
#include "piper/Conversion/Passes.h.inc"

/// Registers the external interfaces the pipeline needs (bufferization of
/// arith, func, linalg and tensor ops) and the dialects of its stages
/// (bufferization, memref, LLVM) in a tool's registry.
void registerPiperConversionInterfaces(DialectRegistry &registry);

} // namespace mlir::piper

#endif // PIPER_CONVERSION_PASSES_H
