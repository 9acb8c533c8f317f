//===- ExpandBF16.cpp - bf16 arithmetic in f32, conversions as bits -------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// --piper-expand-bf16, in the LLVM lowering after vectorisation. bf16 is a
// storage type on the host CPU: the kernels load it, widen it, compute in
// f32 and round once on the way out (computeWidened, the accumulators of
// every reduction). What is left for this pass:
//
//  - any arith/vector op still on bf16 (upstream
//    arith-emulate-unsupported-floats: extf, the op in f32, truncf) and any
//    math op (math-extend-to-supported-types), so LLVM never legalises bf16
//    arithmetic itself;
//  - every arith.extf/truncf between bf16 and f32 as integer code (upstream
//    populateExpandBFloat16Patterns: a shift for the exact widening, round
//    to nearest even with NaN kept for the narrowing). LLVM would otherwise
//    emit calls to __truncsfbf2, which Debian 12's libgcc (GCC 12) lacks,
//    and the rounding is then the kernel library's and the interpreter's,
//    bit for bit.
//
// A module without bf16 is left untouched, so f32 and f64 plans compile as
// before.
//
//===----------------------------------------------------------------------===//

#include "piper/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::piper {
#define GEN_PASS_DEF_EXPANDBF16PASS
#include "piper/Conversion/Passes.h.inc"
} // namespace mlir::piper

using namespace mlir;

namespace {

/// Whether any value of `module` has bf16 elements.
bool holdsBF16(ModuleOp module) {
  auto isBF16 = [](Type t) { return getElementTypeOrSelf(t).isBF16(); };
  WalkResult found = module.walk([&](Operation *op) {
    for (Region &region : op->getRegions())
      for (Block &block : region)
        if (llvm::any_of(block.getArgumentTypes(), isBF16))
          return WalkResult::interrupt();
    if (llvm::any_of(op->getResultTypes(), isBF16))
      return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return found.wasInterrupted();
}

struct ExpandBF16Pass : mlir::piper::impl::ExpandBF16PassBase<ExpandBF16Pass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (!holdsBF16(module))
      return;
    OpPassManager pm(ModuleOp::getOperationName());
    arith::ArithEmulateUnsupportedFloatsOptions emulate;
    emulate.sourceTypeStrs = {"bf16"};
    pm.addPass(arith::createArithEmulateUnsupportedFloats(emulate));
    pm.addPass(math::createMathExtendToSupportedTypes());
    if (failed(runPipeline(pm, module)))
      return signalPassFailure();
    RewritePatternSet patterns(&getContext());
    arith::populateExpandBFloat16Patterns(patterns);
    if (failed(applyPatternsGreedily(module, std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
