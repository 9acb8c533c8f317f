//===- piper-opt.cpp - Piper optimizer driver -----------------------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// MlirOptMain with every Piper dialect, pass and transform op, plus the
// upstream passes (canonicalize, cse, transform interpreter) that Piper
// pipelines are built from.
//
//===----------------------------------------------------------------------===//

#include "piper/Config.h"
#include "piper/InitAllPiper.h"

#include "mlir/Dialect/Transform/DebugExtension/DebugExtension.h"
#include "mlir/Dialect/Transform/Transforms/Passes.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/CommandLine.h"

/// Errors are one located line: an op a pass fails on is printed only on
/// request (--mlir-print-op-on-diagnostic), since for a DAG task or a
/// program it is a page of generic IR. mlir-opt's default is the opposite.
static void quietOpOnDiagnostic() {
  mlir::registerMLIRContextCLOptions();
  auto &options = llvm::cl::getRegisteredOptions();
  auto it = options.find("mlir-print-op-on-diagnostic");
  if (it != options.end())
    static_cast<llvm::cl::opt<bool> *>(it->second)->setInitialValue(false);
}

int main(int argc, char **argv) {
  quietOpOnDiagnostic();
  mlir::registerTransformsPasses();
  mlir::transform::registerTransformPasses();

  mlir::DialectRegistry registry;
  mlir::piper::registerPiper(registry);
  // transform.debug.* lets lit tests report what a directive selected.
  mlir::transform::registerDebugExtension(registry);

  llvm::cl::AddExtraVersionPrinter([](llvm::raw_ostream &os) {
    os << "Piper version " << PIPER_VERSION << " (built with LLVM "
       << PIPER_LLVM_VERSION << ")\n";
  });
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "Piper optimizer driver\n", registry));
}
