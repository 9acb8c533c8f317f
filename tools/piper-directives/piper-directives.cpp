//===- piper-directives.cpp - JSON directive lists to transform IR --------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// piper-directives strategy.json -o strategy.mlir
// piper-opt model.mlir ... --transform-preload-library=\
//     "transform-library-paths=strategy.mlir" --transform-interpreter
//
//===----------------------------------------------------------------------===//

#include "piper/Directives/JSONDirectives.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/WithColor.h"

using namespace llvm;

static cl::opt<std::string>
    inputFile(cl::Positional, cl::desc("<directives.json>"), cl::init("-"));
static cl::opt<std::string> outputFile("o", cl::desc("Output file"),
                                       cl::value_desc("filename"),
                                       cl::init("-"));

int main(int argc, char **argv) {
  InitLLVM init(argc, argv);
  cl::ParseCommandLineOptions(
      argc, argv,
      "piper-directives: translates a strategy written as Piper's JSON "
      "directive list into a transform.piper script for piper-opt\n");
  ErrorOr<std::unique_ptr<MemoryBuffer>> input =
      MemoryBuffer::getFileOrSTDIN(inputFile);
  if (!input) {
    WithColor::error(errs(), "piper-directives")
        << "cannot read '" << inputFile << "': " << input.getError().message()
        << "\n";
    return 1;
  }
  Expected<std::string> script = mlir::piper::translateJSONDirectives(
      (*input)->getBuffer(),
      inputFile == "-" ? std::string("<stdin>") : std::string(inputFile));
  if (!script) {
    WithColor::error(errs(), "piper-directives")
        << toString(script.takeError()) << "\n";
    return 1;
  }
  std::error_code error;
  ToolOutputFile output(outputFile, error, llvm::sys::fs::OF_Text);
  if (error) {
    WithColor::error(errs(), "piper-directives")
        << "cannot write '" << outputFile << "': " << error.message() << "\n";
    return 1;
  }
  output.os() << *script;
  output.keep();
  return 0;
}
