//===- ErfToLibm.cpp - math.erf as a call to libm's erf -------------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// LLVM has no erf intrinsic, so convert-math-to-llvm leaves math.erf (the
// exact GELU's) alone. Upstream's math-to-libm patterns call libm's erf/erff
// (unrolling vectors first); this pass applies them to math.erf only, as a
// partial conversion in which every other op is legal, so the math ops
// the rest of the pipeline already lowers (exp, tanh, ...) keep their
// intrinsics and existing plans their exact numbers.
//
//===----------------------------------------------------------------------===//

#include "KernelPatterns.h"

#include "mlir/Conversion/MathToLibm/MathToLibm.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Transforms/DialectConversion.h"

using namespace mlir;

namespace {

struct ErfToLibmPass
    : public PassWrapper<ErfToLibmPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(ErfToLibmPass)

  StringRef getArgument() const final { return "piper-erf-to-libm"; }
  StringRef getDescription() const final {
    return "math.erf as calls to libm's erf/erff";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<arith::ArithDialect, func::FuncDialect,
                    vector::VectorDialect>();
  }

  void runOnOperation() override {
    bool any = false;
    getOperation().walk([&](math::ErfOp) { any = true; });
    if (!any)
      return;
    RewritePatternSet patterns(&getContext());
    populateMathToLibmConversionPatterns(patterns);
    ConversionTarget target(getContext());
    target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
    target.addIllegalOp<math::ErfOp>();
    if (failed(applyPartialConversion(getOperation(), target,
                                      std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace

std::unique_ptr<Pass> mlir::piper::createErfToLibmPass() {
  return std::make_unique<ErfToLibmPass>();
}
