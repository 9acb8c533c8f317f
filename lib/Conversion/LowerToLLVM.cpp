//===- LowerToLLVM.cpp - The lowering pipeline to the LLVM dialect --------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// --piper-lower-to-llvm: programs to functions, piper ops to linalg and
// kernel calls, then upstream MLIR 22 passes (the set build-notes.md found
// to work out of tree):
//
//   one-shot-bufferize{bufferize-function-boundaries,
//                      function-boundary-type-conversion=identity-layout-map}
//   buffer-results-to-out-params{hoist-static-allocs modify-public-functions}
//   buffer-deallocation-pipeline
//   piper-matmul-to-blas
//   convert-bufferization-to-memref,
//   piper-tile-linalg{parallel-grain vector-bytes}, convert-linalg-to-loops,
//   piper-parallel-to-openmp, convert-vector-to-scf, lower-affine,
//   convert-scf-to-cf, expand-strided-metadata, lower-affine,
//   convert-vector-to-llvm, finalize-memref-to-llvm{use-generic-functions},
//   convert-math-to-llvm, convert-arith-to-llvm, convert-openmp-to-llvm,
//   convert-func-to-llvm,
//   convert-cf-to-llvm, convert-index-to-llvm, reconcile-unrealized-casts
//   piper-packed-entry
//
// with piper-fuse-elementwise on tensors right after the kernels. The host
// CPU's tiling choices (HostKernelOptions) are the options of
// piper-tile-linalg; the kernels themselves stay target-independent linalg.
//
// Results become caller-allocated out-parameters so the host owns every
// buffer it sees and the plan frees all of its temporaries each step. The
// plan allocates through MLIR's generic functions (_mlir_memref_to_llvm_alloc,
// _aligned_alloc, _free), which piper-run implements on the runtime's
// buffers with a per-size-class cache, so a step reuses the last step's
// buffers instead of asking the C library (and the kernel, for page faults)
// for fresh memory every time.
//
//===----------------------------------------------------------------------===//

#include "ConversionDriver.h"
#include "KernelPatterns.h"

#include "piper/Conversion/Passes.h"

#include "mlir/Conversion/AffineToStandard/AffineToStandard.h"
#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/BufferizationToMemRef/BufferizationToMemRef.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVMPass.h"
#include "mlir/Conversion/IndexToLLVM/IndexToLLVM.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/OpenMPToLLVM/ConvertOpenMPToLLVM.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Conversion/UBToLLVM/UBToLLVM.h"
#include "mlir/Conversion/VectorToLLVM/ConvertVectorToLLVMPass.h"
#include "mlir/Conversion/VectorToSCF/VectorToSCF.h"
#include "mlir/Dialect/Arith/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/FuncBufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/Linalg/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Linalg/Transforms/TilingInterfaceImpl.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Transforms/AllocationOpInterfaceImpl.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Tensor/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Transforms/Passes.h"

namespace mlir::piper {
#define GEN_PASS_DEF_MATMULTOBLASPASS
#define GEN_PASS_DEF_PACKEDENTRYPASS
#define GEN_PASS_DEF_LOWERTOLLVMPASS
#include "piper/Conversion/Passes.h.inc"
} // namespace mlir::piper

using namespace mlir;
using namespace mlir::piper;

//===----------------------------------------------------------------------===//
// linalg.matmul on buffers -> piper_k_gemm_<t>
//===----------------------------------------------------------------------===//

bool mlir::piper::isBlasMatmul(Operation *op) {
  if (isBlasBatchMatmul(op))
    return true;
  auto matmul = dyn_cast<linalg::MatmulOp>(op);
  if (!matmul || !matmul.hasPureBufferSemantics())
    return false;
  // Only the plain C += A B form (no transposing indexing maps, no casts):
  // what --piper-convert-to-kernels emits.
  if (!matmul.getIndexingMaps().empty() &&
      matmul.getIndexingMapsArray() !=
          matmul.getDefaultIndexingMaps(matmul.getContext()))
    return false;
  return !blasGemmName("", matmul).empty();
}

namespace {

/// linalg.matmul(A, B, C) -> piper_k_gemm_<t>(A, B, C) on unranked memrefs.
struct MatmulToGemmCall : OpConversionPattern<linalg::MatmulOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(linalg::MatmulOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (!isBlasMatmul(op))
      return failure();
    Location loc = op.getLoc();
    std::string name = blasGemmName("piper_k_gemm_", op);
    SmallVector<Value> args;
    for (Value v : {adaptor.getInputs()[0], adaptor.getInputs()[1],
                    adaptor.getOutputs()[0]})
      args.push_back(memref::CastOp::create(
          rewriter, loc,
          UnrankedMemRefType::get(
              cast<MemRefType>(v.getType()).getElementType(), 0),
          v));
    auto module = op->getParentOfType<ModuleOp>();
    auto fn = module.lookupSymbol<func::FuncOp>(name);
    if (!fn) {
      OpBuilder::InsertionGuard guard(rewriter);
      rewriter.setInsertionPointToEnd(module.getBody());
      fn = func::FuncOp::create(
          rewriter, module.getLoc(), name,
          rewriter.getFunctionType(ValueRange(args).getTypes(), {}));
      fn.setPrivate();
    }
    func::CallOp::create(rewriter, loc, fn, args);
    rewriter.eraseOp(op);
    return success();
  }
};

struct MatmulToBlasPass
    : mlir::piper::impl::MatmulToBlasPassBase<MatmulToBlasPass> {
  void runOnOperation() override {
    MLIRContext *context = &getContext();
    RewritePatternSet patterns(context);
    populateMatmulToBlasPatterns(patterns);
    ConversionTarget target(*context);
    target.markUnknownOpDynamicallyLegal(
        [](Operation *op) { return !isBlasMatmul(op); });
    if (failed(applyLowering(getOperation(), target, std::move(patterns),
                             /*full=*/false)))
      signalPassFailure();
  }
};

//===----------------------------------------------------------------------===//
// Packed entry points
//===----------------------------------------------------------------------===//

/// `void piper_entry_<program>(void **args)` calling `target` (the C
/// interface wrapper of `program`) with the descriptor pointers in args.
void buildPackedEntry(OpBuilder &b, ModuleOp module, LLVM::LLVMFuncOp program,
                      LLVM::LLVMFuncOp target) {
  auto ptr = LLVM::LLVMPointerType::get(module.getContext());
  Location loc = program.getLoc();
  // A fixed signature for the host: one array of descriptor pointers,
  // whatever the number and ranks of the program's tensors.
  b.setInsertionPointToEnd(module.getBody());
  auto entry = LLVM::LLVMFuncOp::create(
      b, loc, (kEntryPrefix + program.getSymName()).str(),
      LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(b.getContext()),
                                  {ptr}));
  Block *block = entry.addEntryBlock(b);
  b.setInsertionPointToStart(block);
  Value argv = block->getArgument(0);
  SmallVector<Value> args;
  for (unsigned i = 0, e = target.getNumArguments(); i < e; ++i) {
    Value slot = LLVM::GEPOp::create(b, loc, ptr, ptr, argv,
                                     ArrayRef<LLVM::GEPArg>{int32_t(i)});
    args.push_back(LLVM::LoadOp::create(b, loc, ptr, slot));
  }
  LLVM::CallOp::create(b, loc, target, args);
  LLVM::ReturnOp::create(b, loc, ValueRange{});
}

/// Adds functions rather than rewriting ops, so it is no conversion.
struct PackedEntryPass
    : mlir::piper::impl::PackedEntryPassBase<PackedEntryPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    OpBuilder b(module.getContext());
    SmallVector<LLVM::LLVMFuncOp> programs;
    for (auto fn : module.getOps<LLVM::LLVMFuncOp>())
      // The C-interface wrapper copies the attributes; skip it.
      if (fn->hasAttr(kInputsAttrName) &&
          !fn.getSymName().starts_with("_mlir_ciface_"))
        programs.push_back(fn);
    for (LLVM::LLVMFuncOp fn : programs) {
      std::string ciface = ("_mlir_ciface_" + fn.getSymName()).str();
      auto target = module.lookupSymbol<LLVM::LLVMFuncOp>(ciface);
      if (!target) {
        fn.emitError() << "has no C interface wrapper @" << ciface;
        return signalPassFailure();
      }
      buildPackedEntry(b, module, fn, target);
    }
  }
};

struct LowerToLLVMPass
    : mlir::piper::impl::LowerToLLVMPassBase<LowerToLLVMPass> {
  void getDependentDialects(DialectRegistry &registry) const override {
    OpPassManager pm(ModuleOp::getOperationName());
    buildLowerToLLVMPipeline(pm);
    pm.getDependentDialects(registry);
  }
  void runOnOperation() override {
    OpPassManager pm(ModuleOp::getOperationName());
    buildLowerToLLVMPipeline(pm);
    if (failed(runPipeline(pm, getOperation())))
      signalPassFailure();
  }
};

} // namespace

void mlir::piper::populateMatmulToBlasPatterns(RewritePatternSet &patterns) {
  patterns.add<MatmulToGemmCall>(patterns.getContext());
  populateBatchMatmulToBlasPatterns(patterns);
}

void mlir::piper::buildLowerToLLVMPipeline(OpPassManager &pm,
                                           const HostKernelOptions &host) {
  pm.addPass(createProgramToFuncPass());
  pm.addPass(createTraceKernelsPass());
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
  pm.addNestedPass<func::FuncOp>(createEarlyDeallocPass());

  pm.addPass(createMatmulToBlasPass());
  pm.addPass(createConvertBufferizationToMemRefPass());
  pm.addPass(createOutlineKernelsPass());
  TileLinalgPassOptions tiling;
  tiling.parallelGrain = host.parallelGrain;
  tiling.vectorBytes = host.vectorBytes;
  pm.addNestedPass<func::FuncOp>(createTileLinalgPass(tiling));
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToLoopsPass());
  pm.addPass(createParallelToOpenMPPass());
  pm.addPass(createConvertVectorToSCFPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createExpandBF16Pass());
  pm.addPass(createErfToLibmPass());
  pm.addPass(createConvertVectorToLLVMPass());
  pm.addPass(createBarePtrCallsPass());
  FinalizeMemRefToLLVMConversionPassOptions memrefOptions;
  memrefOptions.useGenericFunctions = true;
  pm.addPass(createFinalizeMemRefToLLVMConversionPass(memrefOptions));
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createArithToLLVMConversionPass());
  // Vectorised reads pad with ub.poison.
  pm.addPass(createUBToLLVMConversionPass());
  pm.addPass(createConvertOpenMPToLLVMPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(createPackedEntryPass());
}

void mlir::piper::registerPiperConversionInterfaces(DialectRegistry &registry) {
  // The dialects of the lowering's stages, so that an opt tool can read
  // them (each pass of Passes.td on its own).
  registry.insert<bufferization::BufferizationDialect, LLVM::LLVMDialect,
                  memref::MemRefDialect>();
  // One-shot bufferization of what --piper-convert-to-kernels emits.
  arith::registerBufferizableOpInterfaceExternalModels(registry);
  bufferization::func_ext::registerBufferizableOpInterfaceExternalModels(
      registry);
  linalg::registerBufferizableOpInterfaceExternalModels(registry);
  scf::registerBufferizableOpInterfaceExternalModels(registry);
  tensor::registerBufferizableOpInterfaceExternalModels(registry);
  // memref.alloc as an AllocationOpInterface: without it
  // buffer-results-to-out-params{hoist-static-allocs} hoists nothing and
  // copies every result into its out-parameter (443 memref.copy in the
  // 4-layer GPT's step, every parameter, moment and gradient once more).
  memref::registerAllocationOpInterfaceExternalModels(registry);
  // linalg::splitOp in --piper-tile-linalg (a loop's vector-width part and
  // its tail).
  linalg::registerTilingInterfaceExternalModels(registry);
}
