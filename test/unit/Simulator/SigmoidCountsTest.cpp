//===- SigmoidCountsTest.cpp - A new op's figures from its rule alone -----===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// piper.sigmoid was added with its ODS definition and its interface methods
// only (ElementwiseOpInterface; DistributionOpInterface's elementwise
// default with 4 FLOPs an element). The local-size analysis (memory plan,
// simulator) and the op counter know it through the interface: its result
// follows a split operand, and one device's FLOPs and bytes are the rule's
// at the local types. Figures by hand: 4 x 32 elements globally, 4 x 16 on
// one of tp = 2 devices; forward 4 FLOPs an element, a VJP twice that.
//
//===----------------------------------------------------------------------===//

#include "piper/Analysis/LocalSizes.h"
#include "piper/InitAllPiper.h"
#include "piper/Simulator/OpCounts.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

using namespace mlir;
using namespace mlir::piper;

namespace {

constexpr const char *kBody = R"mlir(
func.func @body(%h: tensor<4x32xf64>, %dy: tensor<4x32xf64>)
    -> (tensor<4x32xf64>, tensor<4x32xf64>) {
  %s = piper.sigmoid %h : tensor<4x32xf64>
  %dh = piper.vjp "piper.sigmoid" wrt [0] (%h) cotangents (%dy) : (tensor<4x32xf64>), (tensor<4x32xf64>) -> tensor<4x32xf64>
  return %s, %dh : tensor<4x32xf64>, tensor<4x32xf64>
}
)mlir";

class SigmoidCounts : public ::testing::Test {
protected:
  SigmoidCounts() {
    DialectRegistry registry;
    registerPiper(registry);
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
    module = parseSourceString<ModuleOp>(kBody, &context);
  }

  func::FuncOp body() { return *module->getOps<func::FuncOp>().begin(); }
  Operation *opNamed(StringRef name) {
    Operation *found = nullptr;
    body().walk([&](Operation *op) {
      if (op->getName().getStringRef() == name)
        found = op;
    });
    return found;
  }

  MLIRContext context;
  OwningOpRef<ModuleOp> module;
};

TEST_F(SigmoidCounts, GlobalFiguresComeFromItsRule) {
  ASSERT_TRUE(module);
  OpCount forward = countOp(opNamed("piper.sigmoid"));
  EXPECT_EQ(forward.matrixFlops, 0);
  EXPECT_EQ(forward.vectorFlops, 4 * 128);
  // Reads x, writes the result: 2 x 128 f64.
  EXPECT_EQ(forward.bytes, 2 * 128 * 8);
  OpCount vjp = countOp(opNamed("piper.vjp"));
  EXPECT_EQ(vjp.vectorFlops, 2 * 4 * 128);
}

TEST_F(SigmoidCounts, OneDeviceHoldsAndComputesItsShareUnderTensorParallelism) {
  ASSERT_TRUE(module);
  auto half = RankedTensorType::get({4, 16}, Float64Type::get(&context));
  // The input arrives column-split (the output of a column-parallel linear),
  // and so does its cotangent.
  LocalSizes sizes(body(), {half, half});
  ASSERT_TRUE(sizes.isSplit());
  Operation *sigmoid = opNamed("piper.sigmoid");
  Operation *vjp = opNamed("piper.vjp");
  EXPECT_EQ(sizes.getLocalType(sigmoid->getResult(0)), half);
  EXPECT_EQ(sizes.getLocalType(vjp->getResult(0)), half);
  EXPECT_EQ(sizes.getDivisor(sigmoid->getResult(0)), 2);
  EXPECT_EQ(sizes.getFlopDivisor(sigmoid), 2);
  EXPECT_EQ(sizes.getFlopDivisor(vjp), 2);
  EXPECT_EQ(countOp(sigmoid, &sizes).vectorFlops, 4 * 64);
  EXPECT_EQ(countOp(sigmoid, &sizes).bytes, 2 * 64 * 8);
  EXPECT_EQ(countOp(vjp, &sizes).vectorFlops, 2 * 4 * 64);
  SmallVector<Type> results = sizes.getResultTypes();
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[0], half);
  EXPECT_EQ(results[1], half);
}

} // namespace
