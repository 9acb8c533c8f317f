//===- CompileTest.cpp - The compile driver's library API -----------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// What piper-compile relies on from lib/Compile without going through the
// tool: the front-half pipeline carries the optimizer settings it is given,
// a JSON strategy is translated and kept where asked, and preparing
// programs for lowering numbers their communicators and stamps peer roles
// consistently with what it returns.
//
//===----------------------------------------------------------------------===//

#include "piper/Compile/Compile.h"
#include "piper/Compile/FrontHalf.h"
#include "piper/InitAllPiper.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include "gtest/gtest.h"

using namespace mlir;
using namespace mlir::piper;

namespace {

class CompileTest : public ::testing::Test {
protected:
  CompileTest() {
    DialectRegistry registry;
    registerPiper(registry);
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
    handler.emplace(&context, [this](Diagnostic &diag) {
      diagnostics += diag.str() + "\n";
      return success();
    });
  }

  OwningOpRef<ModuleOp> parse(StringRef source) {
    return parseSourceString<ModuleOp>(source, &context);
  }

  /// A fresh directory under the system's temporary directory.
  std::string tempDir() {
    SmallString<128> dir;
    EXPECT_FALSE(llvm::sys::fs::createUniqueDirectory("piper-compile", dir));
    return std::string(dir);
  }

  MLIRContext context;
  std::optional<ScopedDiagnosticHandler> handler;
  std::string diagnostics;
};

/// `needles` occur in `haystack` in this order.
::testing::AssertionResult inOrder(StringRef haystack,
                                   ArrayRef<StringRef> needles) {
  size_t from = 0;
  for (StringRef needle : needles) {
    size_t at = haystack.find(needle, from);
    if (at == StringRef::npos)
      return ::testing::AssertionFailure()
             << "'" << needle.str() << "' not found after offset " << from
             << " in " << haystack.str();
    from = at + needle.size();
  }
  return ::testing::AssertionSuccess();
}

TEST_F(CompileTest, FrontHalfCarriesOptimizerAndStrategy) {
  PiperOptimizerOptions sgd;
  sgd.optimizer = "sgd";
  sgd.lr = 0.25;
  sgd.momentum = 0.5;
  PassManager pm(&context);
  buildFrontHalfPipeline(pm, sgd, "/plans/strategy.mlir");
  std::string text;
  llvm::raw_string_ostream os(text);
  pm.printAsTextualPipeline(os);
  EXPECT_TRUE(inOrder(text, {"piper-autodiff", "piper-optimizer{",
                             "lr=2.500000e-01", "momentum=5.000000e-01",
                             "optimizer=sgd", "piper-build-dag",
                             "transform-library-paths={/plans/strategy.mlir}",
                             "transform-interpreter", "piper-partition",
                             "piper-verify-programs"}));

  // Serial: no strategy, no transform passes.
  PassManager serial(&context);
  buildFrontHalfPipeline(serial, PiperOptimizerOptions(), "");
  std::string serialText;
  llvm::raw_string_ostream serialOs(serialText);
  serial.printAsTextualPipeline(serialOs);
  EXPECT_TRUE(inOrder(
      serialText, {"optimizer=adamw", "piper-build-dag", "piper-partition"}));
  EXPECT_EQ(serialText.find("transform-"), std::string::npos) << serialText;
}

TEST_F(CompileTest, ScriptStrategiesPassThrough) {
  EXPECT_EQ(*prepareStrategy("", std::nullopt), "");
  EXPECT_EQ(*prepareStrategy("dir/s.mlir", std::nullopt), "dir/s.mlir");
}

TEST_F(CompileTest, JSONStrategyIsTranslatedIntoKeepDir) {
  std::string dir = tempDir();
  SmallString<128> json(dir);
  llvm::sys::path::append(json, "s.json");
  {
    std::error_code ec;
    llvm::raw_fd_ostream out(json, ec);
    ASSERT_FALSE(ec);
    out << R"({"mesh": "mesh", "directives": [{"split": {"filter": {}, "n": 2}}]})";
  }
  SmallString<128> plan(dir);
  llvm::sys::path::append(plan, "plan");
  FailureOr<std::string> script =
      prepareStrategy(json, std::string(plan.str()));
  ASSERT_TRUE(succeeded(script));
  SmallString<128> expected(plan);
  llvm::sys::path::append(expected, "strategy.mlir");
  EXPECT_EQ(*script, std::string(expected));
  auto text = llvm::MemoryBuffer::getFile(*script);
  ASSERT_TRUE(bool(text));
  EXPECT_TRUE(inOrder((*text)->getBuffer(),
                      {"@__transform_main", "transform.piper.split"}));
  llvm::sys::fs::remove_directories(dir);
}

TEST_F(CompileTest, MissingJSONStrategyFails) {
  EXPECT_TRUE(
      failed(prepareStrategy("/nonexistent/strategy.json", std::nullopt)));
}

TEST_F(CompileTest, PrepareForLoweringNumbersAndStamps) {
  OwningOpRef<ModuleOp> module = parse(R"mlir(
    piper.mesh @mesh axes = [dp = 2, pp = 2]
    func.func @step(%x: tensor<4xf32>) {
      return
    }
    piper.program @step.pp0 role {pp = 0} of @mesh step @step streams ["pp", "g", "p"] {
      %x = piper.input 0 : tensor<4xf32>
      %p = piper.comm "ag" all_gather %x over ["dp"] on "p" : tensor<4xf32>
      %g = piper.comm "ar" all_reduce %p over ["dp"] on "g" : tensor<4xf32>
      piper.send "x" %g to @step.pp1 tag 0 on "pp" : tensor<4xf32>
    }
    piper.program @step.pp1 role {pp = 1} of @mesh step @step streams ["pp"] {
      %x = piper.recv "x" from @step.pp0 tag 0 on "pp" : tensor<4xf32>
    }
  )mlir");
  ASSERT_TRUE(module) << diagnostics;
  FailureOr<SmallVector<CommKey>> comms = prepareForLowering(*module);
  ASSERT_TRUE(succeeded(comms)) << diagnostics;
  ASSERT_EQ(comms->size(), 2u);
  EXPECT_EQ((*comms)[0], (CommKey{{"dp"}, "g"}));
  EXPECT_EQ((*comms)[1], (CommKey{{"dp"}, "p"}));
  auto listed = (*module)->getAttrOfType<ArrayAttr>(kCommunicatorsAttrName);
  ASSERT_TRUE(listed);
  EXPECT_EQ(listed.size(), comms->size());
  SmallVector<int64_t> indices;
  module->walk([&](CommOp comm) {
    indices.push_back(
        comm->getAttrOfType<IntegerAttr>(kCommIndexAttrName).getInt());
  });
  EXPECT_EQ(indices, (SmallVector<int64_t>{1, 0}));
  SmallVector<std::string> peers;
  module->walk([&](Operation *op) {
    if (auto role = op->getAttrOfType<DictionaryAttr>(kPeerRoleAttrName)) {
      std::string text;
      llvm::raw_string_ostream os(text);
      os << role;
      peers.push_back(text);
    }
  });
  EXPECT_EQ(peers,
            (SmallVector<std::string>{"{pp = 1 : i64}", "{pp = 0 : i64}"}));
}

TEST_F(CompileTest, PrepareForLoweringNeedsPrograms) {
  OwningOpRef<ModuleOp> module = parse(R"mlir(
    piper.mesh @mesh axes = [dp = 1]
  )mlir");
  ASSERT_TRUE(module) << diagnostics;
  EXPECT_TRUE(failed(prepareForLowering(*module)));
  EXPECT_EQ(diagnostics, "piper-compile: no device program\n");
}

} // namespace
