//===- InitAllPiper.cpp - One entry point to register Piper ---------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "piper/InitAllPiper.h"

#include "piper/Conversion/GPU/Passes.h"
#include "piper/Conversion/Passes.h"
#include "piper/Dialect/Piper/IR/PiperDialect.h"
#include "piper/Dialect/Piper/Transforms/Autodiff.h"
#include "piper/Dialect/Piper/Transforms/Passes.h"
#include "piper/Simulator/Passes.h"
#include "piper/TransformOps/PiperTransformOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Transform/IR/TransformDialect.h"

void mlir::piper::registerPiper(DialectRegistry &registry) {
  registry.insert<PiperDialect, arith::ArithDialect, func::FuncDialect,
                  linalg::LinalgDialect, math::MathDialect, scf::SCFDialect,
                  tensor::TensorDialect, transform::TransformDialect>();
  registerVJPInterfaceExternalModels(registry);
  registerTransformDialectExtension(registry);
  registerPiperConversionInterfaces(registry);
  registerGPUTargetInterfaces(registry);

  // Pass registration is global and must happen once per process even when
  // several hosts or tests call this entry point.
  static bool passesRegistered = [] {
    registerPiperPasses();
    registerSimulatorPasses();
    registerPiperConversionPasses();
    registerGPUTargetPasses();
    return true;
  }();
  (void)passesRegistered;
}
