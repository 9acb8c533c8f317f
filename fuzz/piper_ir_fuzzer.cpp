//===- piper_ir_fuzzer.cpp - libFuzzer target: parsing + verifying IR -----===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Feeds arbitrary text to MLIR's parser with Piper's dialects registered
// (registerPiper, as piper-opt and piper-compile do), which runs every op,
// attribute and type verifier of the piper dialect. A module that verifies
// then goes through the front-half checks that suit what it holds, each
// cheap on small inputs:
//
//   device programs (piper.program)  --piper-verify-programs
//   a DAG (piper.dag)                --piper-partition, --piper-verify-programs
//   a model (chunks, no DAG)         autodiff, optimizer, build-dag, then the
//                                    two above (buildFrontHalfPipeline with no
//                                    strategy: what piper-compile runs)
//
// A pass that fails must have said why (an error diagnostic); one that fails
// silently is a finding (abort). Inputs that hit a known crash in upstream
// MLIR's parser (docs/Limits.md, "MLIR parser crashes") are skipped with
// piper::findUpstreamParserCrash, the same guard the tools use, so that the
// fuzzer keeps looking past them. Built by bench/fuzz.sh with Piper's
// libraries instrumented; the Debian MLIR libraries are not.
//
//===----------------------------------------------------------------------===//

#include "piper/Compile/FrontHalf.h"
#include "piper/InitAllPiper.h"
#include "piper/ParserGuards.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

using namespace mlir;

namespace {

/// The registry every input's context is built from (dialects are loaded
/// lazily, per context: a context per input keeps uniqued attributes from
/// accumulating across millions of inputs).
DialectRegistry &registry() {
  static DialectRegistry *r = [] {
    auto *reg = new DialectRegistry();
    piper::registerPiper(*reg);
    return reg;
  }();
  return *r;
}

/// What the front half can do with a verified module.
enum class Holds { Nothing, Model, DAG, Programs };

Holds classify(ModuleOp module) {
  Holds holds = Holds::Nothing;
  module.walk([&](Operation *op) {
    StringRef name = op->getName().getStringRef();
    if (name == "piper.program")
      holds = Holds::Programs;
    else if (name == "piper.dag" && holds != Holds::Programs)
      holds = Holds::DAG;
    else if (holds == Holds::Nothing && name.starts_with("piper."))
      holds = Holds::Model;
  });
  return holds;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  StringRef text(reinterpret_cast<const char *>(data), size);
  // Skip what crashes upstream MLIR's parser (listed, not fixed here); -1
  // keeps such inputs out of the corpus.
  if (piper::findUpstreamParserCrash(text))
    return -1;

  MLIRContext context(registry(), MLIRContext::Threading::DISABLED);
  unsigned errors = 0;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
    if (diag.getSeverity() == DiagnosticSeverity::Error)
      ++errors;
    return success();
  });

  // A copy with its NUL: MLIR's lexer finds the end of its buffer by the
  // NUL, and reads past the end of a bare StringRef given to
  // parseSourceString (fuzz/crashes-upstream/parse-source-string-no-nul.mlir).
  // The tools parse files, which MemoryBuffer ends with a NUL.
  std::string source = text.str();
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(source, &context);
  if (!module) {
    if (errors == 0)
      abort(); // the parser or a verifier failed without a word
    return 0;
  }

  PassManager pm(&context);
  switch (classify(*module)) {
  case Holds::Nothing:
    return 0;
  case Holds::Programs:
    pm.addPass(piper::createPiperVerifyPrograms());
    break;
  case Holds::DAG:
    piper::buildProgramsPipeline(pm);
    break;
  case Holds::Model:
    piper::buildFrontHalfPipeline(pm, piper::PiperOptimizerOptions(), "");
    break;
  }
  if (failed(pm.run(*module)) && errors == 0)
    abort(); // a front-half check failed without a word
  return 0;
}
