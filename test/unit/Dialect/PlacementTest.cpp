//===- PlacementTest.cpp - Placement and mesh C++ API tests ---------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The C++ API that later passes rely on: per-device shard shapes, mesh
// queries and verification of placements against tensors, exercised on IR
// parsed from text so that parser, verifier and helpers agree.
//
//===----------------------------------------------------------------------===//

#include "piper/Dialect/Piper/IR/PiperOps.h"
#include "piper/InitAllPiper.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include "gtest/gtest.h"

using namespace mlir;
using namespace mlir::piper;

namespace {

class PlacementTest : public ::testing::Test {
protected:
  PlacementTest() {
    DialectRegistry registry;
    registerPiper(registry);
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
  }

  /// Parses `source`; collects diagnostics instead of printing them.
  OwningOpRef<ModuleOp> parse(StringRef source) {
    diagnostics.clear();
    ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
      diagnostics += diag.str() + "\n";
      return success();
    });
    return parseSourceString<ModuleOp>(source, &context);
  }

  MLIRContext context;
  std::string diagnostics;
};

constexpr StringLiteral kMesh =
    "piper.mesh @m axes = [dp = 4 : infiniband(bandwidth = 25, latency = 5), "
    "tp = 2 : nvlink, ep = 8]\n";

TEST_F(PlacementTest, MeshQueries) {
  OwningOpRef<ModuleOp> module = parse(kMesh);
  ASSERT_TRUE(module) << diagnostics;
  auto mesh = *module->getOps<MeshOp>().begin();
  EXPECT_EQ(mesh.getNumDevices(), 64);
  ASSERT_TRUE(mesh.getAxis("tp"));
  EXPECT_EQ(mesh.getAxis("tp").getSize(), 2);
  EXPECT_EQ(mesh.getAxis("tp").getLink(), LinkClass::NVLink);
  EXPECT_FALSE(mesh.getAxis("ep").getLink().has_value());
  EXPECT_DOUBLE_EQ(mesh.getAxis("dp").getBandwidth().getValueAsDouble(), 25.0);
  EXPECT_DOUBLE_EQ(mesh.getAxis("dp").getLatency().getValueAsDouble(), 5.0);
  EXPECT_FALSE(mesh.getAxis("pp"));
  EXPECT_EQ(mesh.getAxisNamesForDiagnostic(), "dp, tp, ep");
}

TEST_F(PlacementTest, LocalShapeDividesEachDimByItsAxes) {
  OwningOpRef<ModuleOp> module =
      parse(std::string(kMesh) +
            "func.func private @f(tensor<16x24x6xf32> {piper.param = "
            "#piper.param<\"w\", zeros, placement = #piper.placement<@m, "
            "[{ep, tp}, {}, {}], replicated = {dp}, zero = 3>>})\n");
  ASSERT_TRUE(module) << diagnostics;
  auto mesh = *module->getOps<MeshOp>().begin();
  auto fn = *module->getOps<func::FuncOp>().begin();
  auto param =
      fn.getArgAttrOfType<ParamAttr>(0, PiperDialect::getParamAttrName());
  ASSERT_TRUE(param);
  PlacementAttr placement = param.getPlacement();
  ASSERT_TRUE(placement);
  EXPECT_EQ(placement.getZero(), 3u);
  EXPECT_EQ(placement.getLocalShape({16, 24, 6}, mesh),
            (SmallVector<int64_t>{1, 24, 6}));
  SmallVector<StringAttr> split = placement.getSplitAxes();
  ASSERT_EQ(split.size(), 2u);
  EXPECT_EQ(split[0].getValue(), "ep");
  EXPECT_EQ(split[1].getValue(), "tp");
}

TEST_F(PlacementTest, VerifyForRejectsIndivisibleDim) {
  OwningOpRef<ModuleOp> module = parse(kMesh);
  ASSERT_TRUE(module) << diagnostics;
  auto ctx = &context;
  auto placement =
      PlacementAttr::get(ctx, FlatSymbolRefAttr::get(ctx, "m"),
                         {ArrayAttr::get(ctx, {StringAttr::get(ctx, "tp")})},
                         ArrayAttr::get(ctx, {}), 0);
  auto type = RankedTensorType::get({6}, Float32Type::get(ctx));
  auto badType = RankedTensorType::get({7}, Float32Type::get(ctx));

  std::string message;
  ScopedDiagnosticHandler handler(ctx, [&](Diagnostic &diag) {
    message = diag.str();
    return success();
  });
  auto emitError = [&] { return mlir::emitError(UnknownLoc::get(ctx)); };
  EXPECT_TRUE(succeeded(placement.verifyFor(type, module.get(), emitError)));
  EXPECT_TRUE(failed(placement.verifyFor(badType, module.get(), emitError)));
  EXPECT_EQ(message, "axis 'tp' of @m has size 2; dim 0 (size 7) is not "
                     "divisible by it");
  EXPECT_TRUE(failed(
      placement.verifyFor(Float32Type::get(ctx), module.get(), emitError)));
  EXPECT_EQ(message, "a placement needs a ranked tensor, got 'f32'");
}

TEST_F(PlacementTest, RoundTripPreservesLinkNumbersExactly) {
  // Bandwidths are measurements: printing must not round them.
  OwningOpRef<ModuleOp> module =
      parse("piper.mesh @m axes = [dp = 2 : efa(bandwidth = 12.345678901, "
            "latency = 1.0e-3), pp = 3 : pcie(bandwidth = 3.0e12)]");
  ASSERT_TRUE(module) << diagnostics;
  std::string printed;
  llvm::raw_string_ostream os(printed);
  module->print(os);
  OwningOpRef<ModuleOp> again = parse(printed);
  ASSERT_TRUE(again) << diagnostics << printed;
  auto first = *module->getOps<MeshOp>().begin();
  auto second = *again->getOps<MeshOp>().begin();
  EXPECT_EQ(first.getAxes(), second.getAxes()) << printed;
}

} // namespace
