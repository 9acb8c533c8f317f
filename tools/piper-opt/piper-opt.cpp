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
#include "piper/ParserGuards.h"

#include "mlir/Dialect/Transform/DebugExtension/DebugExtension.h"
#include "mlir/Dialect/Transform/Transforms/Passes.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

#include "mlir/Transforms/Passes.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/SourceMgr.h"

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

/// MLIR 22's parser crashes on some inputs (ParserGuards.h). MlirOptMain
/// reads the file itself, so the input is checked here first; an input
/// that would crash gets one located line. False when `path` cannot be
/// read (MlirOptMain reports that) and for standard input, which can be
/// read only once, by MlirOptMain.
static bool crashesParser(llvm::StringRef path) {
  if (path == "-")
    return false;
  std::string error;
  std::unique_ptr<llvm::MemoryBuffer> file = mlir::openInputFile(path, &error);
  if (!file)
    return false;
  std::optional<mlir::piper::UpstreamParserCrash> crash =
      mlir::piper::findUpstreamParserCrash(file->getBuffer());
  if (!crash)
    return false;
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
  const llvm::MemoryBuffer *buffer = sourceMgr.getMemoryBuffer(1);
  auto [line, column] = sourceMgr.getLineAndColumn(
      llvm::SMLoc::getFromPointer(buffer->getBufferStart() + crash->offset));
  llvm::errs() << path << ":" << line << ":" << column
               << ": error: " << crash->message << "\n";
  return true;
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
  auto [input, output] = mlir::registerAndParseCLIOptions(
      argc, argv, "Piper optimizer driver\n", registry);
  if (crashesParser(input))
    return 1;
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, input, output, registry));
}
