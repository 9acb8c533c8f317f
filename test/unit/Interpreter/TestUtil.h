//===- TestUtil.h - Helpers for the interpreter unit tests ------*- C++ -*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// A fixture that parses models from strings with every Piper dialect loaded
// and collects diagnostics (with their locations) instead of printing them.
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_TEST_UNIT_INTERPRETER_TESTUTIL_H
#define PIPER_TEST_UNIT_INTERPRETER_TESTUTIL_H

#include "piper/InitAllPiper.h"
#include "piper/Interpreter/Interpreter.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/raw_ostream.h"

#include "gtest/gtest.h"

#include <fstream>
#include <sstream>
#include <string>

namespace mlir::piper::test {

class InterpreterFixture : public ::testing::Test {
protected:
  InterpreterFixture() {
    DialectRegistry registry;
    registerPiper(registry);
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
    handler.emplace(&context, [this](Diagnostic &diag) {
      std::string text;
      llvm::raw_string_ostream os(text);
      // "file:line:col: message", as a SourceMgr handler prints it.
      if (auto loc = dyn_cast<FileLineColLoc>(diag.getLocation()))
        os << loc.getFilename().getValue() << ":" << loc.getLine() << ":"
           << loc.getColumn();
      else
        os << diag.getLocation();
      os << ": " << diag.str();
      diagnostics += text + "\n";
      return success();
    });
  }

  /// Parses `source` (diagnostics are collected in `diagnostics`).
  OwningOpRef<ModuleOp> parse(StringRef source) {
    return parseSourceString<ModuleOp>(source, &context, "model.mlir");
  }

  /// The function called `name` in `module`.
  static func::FuncOp lookup(ModuleOp module, StringRef name) {
    return module.lookupSymbol<func::FuncOp>(name);
  }

  MLIRContext context;
  std::string diagnostics;
  std::optional<ScopedDiagnosticHandler> handler;
};

/// The contents of a model under test/Interpreter (the lit tests' inputs),
/// so unit tests check exactly the models whose outputs the lit tests pin.
inline std::string readLitInput(const std::string &name) {
  std::ifstream file(std::string(PIPER_INTERPRETER_LIT_DIR) + "/" + name);
  std::stringstream contents;
  contents << file.rdbuf();
  return contents.str();
}

/// The float tensor held by `value`, or an empty tensor.
inline ref::Tensor asTensor(const RuntimeValue &value) {
  if (const ref::Tensor *t = getIfTensor(value))
    return *t;
  return ref::Tensor();
}

} // namespace mlir::piper::test

#endif // PIPER_TEST_UNIT_INTERPRETER_TESTUTIL_H
