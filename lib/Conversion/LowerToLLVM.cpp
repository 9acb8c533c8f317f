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
//   convert-bufferization-to-memref, convert-linalg-to-loops, lower-affine,
//   convert-scf-to-cf, expand-strided-metadata, lower-affine,
//   finalize-memref-to-llvm{use-generic-functions}, convert-arith-to-llvm,
//   convert-func-to-llvm,
//   convert-cf-to-llvm, convert-index-to-llvm, reconcile-unrealized-casts
//   piper-packed-entry
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

#include "piper/Conversion/Passes.h"

#include "mlir/Conversion/AffineToStandard/AffineToStandard.h"
#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/BufferizationToMemRef/BufferizationToMemRef.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVMPass.h"
#include "mlir/Conversion/IndexToLLVM/IndexToLLVM.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Dialect/Arith/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/FuncBufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/Linalg/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/Tensor/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace mlir::piper;

namespace {

//===----------------------------------------------------------------------===//
// linalg.matmul on buffers -> piper_k_gemm_<t>
//===----------------------------------------------------------------------===//

struct MatmulToBlasPass
    : PassWrapper<MatmulToBlasPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(MatmulToBlasPass)
  StringRef getArgument() const override { return "piper-matmul-to-blas"; }
  StringRef getDescription() const override {
    return "Replace f32/f64 linalg.matmul on buffers by BLAS kernel calls";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<func::FuncDialect, memref::MemRefDialect>();
  }
  void runOnOperation() override {
    ModuleOp module = getOperation();
    OpBuilder b(module.getContext());
    SmallVector<linalg::MatmulOp> matmuls;
    module.walk([&](linalg::MatmulOp op) {
      if (op.hasPureBufferSemantics())
        matmuls.push_back(op);
    });
    for (linalg::MatmulOp op : matmuls) {
      // Only the plain C += A B form (no transposing indexing maps, no
      // casts): what --piper-convert-to-kernels emits.
      if (!op.getIndexingMaps().empty() &&
          op.getIndexingMapsArray() !=
              op.getDefaultIndexingMaps(op.getContext()))
        continue;
      auto c = cast<MemRefType>(op.getOutputs()[0].getType());
      Type elt = c.getElementType();
      if (!elt.isF32() && !elt.isF64())
        continue;
      std::string name = elt.isF32() ? "piper_k_gemm_f32" : "piper_k_gemm_f64";
      b.setInsertionPoint(op);
      SmallVector<Value> args;
      for (Value v : {op.getInputs()[0], op.getInputs()[1], op.getOutputs()[0]})
        args.push_back(memref::CastOp::create(
            b, op.getLoc(), UnrankedMemRefType::get(elt, 0), v));
      auto fn = module.lookupSymbol<func::FuncOp>(name);
      if (!fn) {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToEnd(module.getBody());
        fn = func::FuncOp::create(
            b, module.getLoc(), name,
            b.getFunctionType(ValueRange(args).getTypes(), {}));
        fn.setPrivate();
      }
      func::CallOp::create(b, op.getLoc(), fn, args);
      op.erase();
    }
  }
};

//===----------------------------------------------------------------------===//
// Packed entry points
//===----------------------------------------------------------------------===//

struct PackedEntryPass : PassWrapper<PackedEntryPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(PackedEntryPass)
  StringRef getArgument() const override { return "piper-packed-entry"; }
  StringRef getDescription() const override {
    return "Add `void piper_entry_<program>(void **args)` for every program";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<LLVM::LLVMDialect>();
  }
  void runOnOperation() override {
    ModuleOp module = getOperation();
    OpBuilder b(module.getContext());
    auto ptr = LLVM::LLVMPointerType::get(module.getContext());
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
      // A fixed signature for the host: one array of descriptor pointers,
      // whatever the number and ranks of the program's tensors.
      b.setInsertionPointToEnd(module.getBody());
      auto entry = LLVM::LLVMFuncOp::create(
          b, fn.getLoc(), (kEntryPrefix + fn.getSymName()).str(),
          LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(b.getContext()),
                                      {ptr}));
      Block *block = entry.addEntryBlock(b);
      b.setInsertionPointToStart(block);
      Value argv = block->getArgument(0);
      SmallVector<Value> args;
      for (unsigned i = 0, e = target.getNumArguments(); i < e; ++i) {
        Value slot = LLVM::GEPOp::create(b, fn.getLoc(), ptr, ptr, argv,
                                         ArrayRef<LLVM::GEPArg>{int32_t(i)});
        args.push_back(LLVM::LoadOp::create(b, fn.getLoc(), ptr, slot));
      }
      LLVM::CallOp::create(b, fn.getLoc(), target, args);
      LLVM::ReturnOp::create(b, fn.getLoc(), ValueRange{});
    }
  }
};

struct LowerToLLVMPass : PassWrapper<LowerToLLVMPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(LowerToLLVMPass)
  StringRef getArgument() const override { return "piper-lower-to-llvm"; }
  StringRef getDescription() const override {
    return "Lower device programs and their bodies to the LLVM dialect";
  }
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

std::unique_ptr<Pass> mlir::piper::createMatmulToBlasPass() {
  return std::make_unique<MatmulToBlasPass>();
}
std::unique_ptr<Pass> mlir::piper::createPackedEntryPass() {
  return std::make_unique<PackedEntryPass>();
}
std::unique_ptr<Pass> mlir::piper::createLowerToLLVMPass() {
  return std::make_unique<LowerToLLVMPass>();
}

void mlir::piper::buildLowerToLLVMPipeline(OpPassManager &pm) {
  pm.addPass(createProgramToFuncPass());
  pm.addPass(createConvertToKernelsPass());
  pm.addPass(createSymbolDCEPass());

  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  bufferize.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  bufferization::BufferResultsToOutParamsPassOptions outParams;
  outParams.hoistStaticAllocs = true;
  outParams.modifyPublicFunctions = true;
  pm.addPass(bufferization::createBufferResultsToOutParamsPass(outParams));
  bufferization::buildBufferDeallocationPipeline(pm);

  pm.addPass(createMatmulToBlasPass());
  pm.addPass(createConvertBufferizationToMemRefPass());
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToLoopsPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  FinalizeMemRefToLLVMConversionPassOptions memrefOptions;
  memrefOptions.useGenericFunctions = true;
  pm.addPass(createFinalizeMemRefToLLVMConversionPass(memrefOptions));
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(createPackedEntryPass());
}

void mlir::piper::registerPiperConversionPasses() {
  registerPass(createProgramToFuncPass);
  registerPass(createConvertToKernelsPass);
  registerPass(createMatmulToBlasPass);
  registerPass(createPackedEntryPass);
  registerPass(createLowerToLLVMPass);
}

void mlir::piper::registerPiperConversionInterfaces(DialectRegistry &registry) {
  // One-shot bufferization of what --piper-convert-to-kernels emits.
  arith::registerBufferizableOpInterfaceExternalModels(registry);
  bufferization::func_ext::registerBufferizableOpInterfaceExternalModels(
      registry);
  linalg::registerBufferizableOpInterfaceExternalModels(registry);
  tensor::registerBufferizableOpInterfaceExternalModels(registry);
}
