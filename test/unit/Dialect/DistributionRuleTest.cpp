//===- DistributionRuleTest.cpp - DistributionOpInterface on single ops ---===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The distribution rules asked directly, op by op, on IR parsed from text:
// a column- and a row-parallel linear (local types, partial sums, FLOPs at
// local types), attention on a share of its heads (and the diagnostic for
// heads that straddle devices), an elementwise op through the interface's
// defaults, and piper.vjp following the rule of the op it differentiates.
//
//===----------------------------------------------------------------------===//

#include "piper/Dialect/Piper/IR/PiperDistributionRule.h"
#include "piper/InitAllPiper.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include "gtest/gtest.h"

using namespace mlir;
using namespace mlir::piper;

namespace {

class DistributionRuleTest : public ::testing::Test {
protected:
  DistributionRuleTest() {
    DialectRegistry registry;
    registerPiper(registry);
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
  }

  /// Parses `body` as the body of a function and returns its first op
  /// named `name`.
  Operation *parseOp(StringRef body, StringRef name) {
    module = parseSourceString<ModuleOp>(body, &context);
    if (!module)
      return nullptr;
    Operation *found = nullptr;
    module->walk([&](Operation *op) {
      if (!found && op->getName().getStringRef() == name)
        found = op;
    });
    return found;
  }

  RankedTensorType tensor(ArrayRef<int64_t> shape) {
    return RankedTensorType::get(shape, Float32Type::get(&context));
  }

  /// Collects the diagnostics a rule completes.
  void captureDiagnostics() {
    handler.emplace(&context, [&](Diagnostic &diag) {
      diagnostics += diag.str();
      return success();
    });
  }

  // The context first: it outlives the module and the handler.
  MLIRContext context;
  OwningOpRef<ModuleOp> module;
  std::string diagnostics;
  std::optional<ScopedDiagnosticHandler> handler;
};

constexpr StringLiteral kLinear = R"mlir(
func.func @f(%x: tensor<4x16xf32>, %w: tensor<16x32xf32>) -> tensor<4x32xf32> {
  %y = piper.linear %x, %w : tensor<4x16xf32>, tensor<16x32xf32> -> tensor<4x32xf32>
  return %y : tensor<4x32xf32>
}
)mlir";

TEST_F(DistributionRuleTest, ColumnParallelLinearSplitsItsOutputChannels) {
  Operation *op = parseOp(kLinear, "piper.linear");
  ASSERT_TRUE(op);
  std::optional<DistributionRule> rule = DistributionRule::get(op);
  ASSERT_TRUE(rule);
  EXPECT_EQ(rule->getRuleName(), "piper.linear");
  EXPECT_EQ(rule->getWeightOperand(), 1u);

  // w [16, 32] split by column over 2: the output's channels follow.
  SmallVector<Type> locals = {tensor({4, 16}), tensor({16, 16})};
  LocalForm form;
  ASSERT_TRUE(succeeded(rule->inferLocalForm(locals, form)));
  ASSERT_EQ(form.resultTypes.size(), 1u);
  EXPECT_EQ(form.resultTypes[0], tensor({4, 16}));
  EXPECT_EQ(form.partialSums, SmallVector<bool>{false});
  EXPECT_TRUE(form.attrs.empty());

  // 2 * 4 * 16 * 32 at the global types; half at the local ones.
  EXPECT_EQ(rule->getGlobalCost().matrixFlops, 4096);
  OpCount local = rule->getCost(locals, form.resultTypes);
  EXPECT_EQ(local.matrixFlops, 2048);
  EXPECT_EQ(local.bytes, (4 * 16 + 16 * 16 + 4 * 16) * 4);
  // Sequence parallelism gathers x's tokens before a column split.
  EXPECT_EQ(rule->getTokenGatheredOperands(locals), SmallVector<unsigned>{0});
}

TEST_F(DistributionRuleTest, RowParallelLinearGivesAPartialSum) {
  Operation *op = parseOp(kLinear, "piper.linear");
  ASSERT_TRUE(op);
  std::optional<DistributionRule> rule = DistributionRule::get(op);
  ASSERT_TRUE(rule);
  // x [4, 8] and w [8, 32]: the whole [4, 32], a sum of half the terms.
  SmallVector<Type> locals = {tensor({4, 8}), tensor({8, 32})};
  LocalForm form;
  ASSERT_TRUE(succeeded(rule->inferLocalForm(locals, form)));
  EXPECT_EQ(form.resultTypes[0], tensor({4, 32}));
  EXPECT_EQ(form.partialSums, SmallVector<bool>{true});
  EXPECT_EQ(rule->getCost(locals, form.resultTypes).matrixFlops, 2048);
  // The directive asks with the weight split alone.
  EXPECT_EQ(rule->getPartialSums({tensor({4, 16}), tensor({8, 32})}),
            SmallVector<bool>{true});
}

TEST_F(DistributionRuleTest, LinearRejectsMismatchedShares) {
  Operation *op = parseOp(kLinear, "piper.linear");
  ASSERT_TRUE(op);
  std::optional<DistributionRule> rule = DistributionRule::get(op);
  ASSERT_TRUE(rule);
  captureDiagnostics();
  LocalForm form;
  EXPECT_TRUE(failed(
      rule->inferLocalForm({tensor({4, 8}), tensor({16, 32})}, form,
                           [&]() { return op->emitError() << "prefix: "; })));
  EXPECT_EQ(diagnostics, "prefix: multiplies 'tensor<4x8xf32>' by "
                         "'tensor<16x32xf32>'");
  // Without an error function the rule fails quietly (analyses).
  diagnostics.clear();
  EXPECT_TRUE(
      failed(rule->inferLocalForm({tensor({4, 8}), tensor({16, 32})}, form)));
  EXPECT_EQ(diagnostics, "");
}

constexpr StringLiteral kAttention = R"mlir(
func.func @f(%q: tensor<1x2x8xf32>) -> tensor<1x2x8xf32> {
  %o = piper.attention %q, %q, %q {num_heads = 4 : i64} : tensor<1x2x8xf32>, tensor<1x2x8xf32>, tensor<1x2x8xf32> -> tensor<1x2x8xf32>
  return %o : tensor<1x2x8xf32>
}
)mlir";

TEST_F(DistributionRuleTest, AttentionRunsOnItsShareOfTheHeads) {
  Operation *op = parseOp(kAttention, "piper.attention");
  ASSERT_TRUE(op);
  std::optional<DistributionRule> rule = DistributionRule::get(op);
  ASSERT_TRUE(rule);
  EXPECT_EQ(rule->getChannelGroups(), 4);
  EXPECT_EQ(rule->getWeightOperand(), std::nullopt);

  Type half = tensor({1, 2, 4});
  SmallVector<Type> locals = {half, half, half};
  LocalForm form;
  ASSERT_TRUE(succeeded(rule->inferLocalForm(locals, form)));
  EXPECT_EQ(form.resultTypes[0], half);
  ASSERT_EQ(form.attrs.size(), 1u);
  EXPECT_EQ(form.attrs[0].getName(), "num_heads");
  EXPECT_EQ(cast<IntegerAttr>(form.attrs[0].getValue()).getInt(), 2);
  rule->applyLocalForm(form);
  EXPECT_EQ(cast<AttentionOp>(op).getNumHeads(), 2);
  EXPECT_EQ(op->getResult(0).getType(), half);

  // Every figure halves: 2BS^2D matrix and 2.5BS^2 vector FLOPs.
  OpCount local = rule->getCost(locals, {half});
  EXPECT_EQ(local.matrixFlops, 2 * 1 * 2 * 2 * 4);
  EXPECT_EQ(local.vectorFlops, 2.5 * 1 * 2 * 2 / 2);
}

TEST_F(DistributionRuleTest, AttentionHeadsMustNotStraddleDevices) {
  Operation *op = parseOp(kAttention, "piper.attention");
  ASSERT_TRUE(op);
  std::optional<DistributionRule> rule = DistributionRule::get(op);
  ASSERT_TRUE(rule);
  // 8 channels over 8 devices: 4 heads cannot split 8 ways.
  Type one = tensor({1, 2, 1});
  captureDiagnostics();
  LocalForm form;
  EXPECT_TRUE(failed(rule->inferLocalForm({one, one, one}, form,
                                          [&]() { return op->emitError(); })));
  EXPECT_EQ(diagnostics, "has 4 heads, which do not split over its operands "
                         "'tensor<1x2x1xf32>'");
}

constexpr StringLiteral kElementwise = R"mlir(
func.func @f(%a: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %g = piper.gelu %a : tensor<4x8xf32>
  %s = piper.add %g, %a : tensor<4x8xf32>
  return %s : tensor<4x8xf32>
}
)mlir";

TEST_F(DistributionRuleTest, ElementwiseOpsFollowTheirOperands) {
  Operation *gelu = parseOp(kElementwise, "piper.gelu");
  ASSERT_TRUE(gelu);
  std::optional<DistributionRule> rule = DistributionRule::get(gelu);
  ASSERT_TRUE(rule);
  LocalForm form;
  ASSERT_TRUE(succeeded(rule->inferLocalForm({tensor({4, 4})}, form)));
  EXPECT_EQ(form.resultTypes[0], tensor({4, 4}));
  // 8 FLOPs an element (tanh GELU) on the 16 elements a device holds.
  EXPECT_EQ(rule->getCost({tensor({4, 4})}, {tensor({4, 4})}).vectorFlops,
            8 * 16);
  EXPECT_FALSE(rule->propagatesPartialSums());

  Operation *add = nullptr;
  module->walk([&](AddOp op) { add = op; });
  std::optional<DistributionRule> addRule = DistributionRule::get(add);
  ASSERT_TRUE(addRule);
  EXPECT_TRUE(addRule->propagatesPartialSums());
  captureDiagnostics();
  EXPECT_TRUE(
      failed(addRule->inferLocalForm({tensor({4, 4}), tensor({4, 8})}, form,
                                     [&]() { return add->emitError(); })));
  EXPECT_EQ(diagnostics, "would mix 'tensor<4x4xf32>' and 'tensor<4x8xf32>'");
}

constexpr StringLiteral kVJP = R"mlir(
func.func @f(%x: tensor<4x16xf32>, %w: tensor<16x32xf32>, %dy: tensor<4x32xf32>) -> (tensor<4x16xf32>, tensor<16x32xf32>) {
  %dx = piper.vjp "piper.linear" wrt [0] (%x, %w) cotangents (%dy) : (tensor<4x16xf32>, tensor<16x32xf32>), (tensor<4x32xf32>) -> tensor<4x16xf32>
  %dw = piper.vjp "piper.linear" wrt [1] (%x, %w) cotangents (%dy) : (tensor<4x16xf32>, tensor<16x32xf32>), (tensor<4x32xf32>) -> tensor<16x32xf32>
  return %dx, %dw : tensor<4x16xf32>, tensor<16x32xf32>
}
)mlir";

TEST_F(DistributionRuleTest, VJPFollowsTheRuleOfItsPrimal) {
  Operation *vjp = parseOp(kVJP, "piper.vjp");
  ASSERT_TRUE(vjp);
  std::optional<DistributionRule> rule = DistributionRule::get(vjp);
  ASSERT_TRUE(rule);
  EXPECT_EQ(rule->getRuleName(), "piper.linear");
  EXPECT_TRUE(rule->isGradient());
  EXPECT_EQ(rule->getWeightOperand(), 1u);

  // Column split: dy [4, 16] and w [16, 16] give dx whole but partial.
  SmallVector<Type> locals = {tensor({4, 16}), tensor({16, 16}),
                              tensor({4, 16})};
  LocalForm form;
  ASSERT_TRUE(succeeded(rule->inferLocalForm(locals, form)));
  EXPECT_EQ(form.resultTypes[0], tensor({4, 16}));
  EXPECT_EQ(form.partialSums, SmallVector<bool>{true});
  // The linear's input-gradient share: 2 * |dy| * K, halved locally.
  EXPECT_EQ(rule->getGlobalCost().matrixFlops, 2 * 4 * 32 * 16);
  EXPECT_EQ(rule->getCost(locals, form.resultTypes).matrixFlops,
            2 * 4 * 16 * 16);

  // The weight gradient of the same split is not a partial sum.
  Operation *dw = vjp->getNextNode();
  std::optional<DistributionRule> dwRule = DistributionRule::get(dw);
  ASSERT_TRUE(dwRule);
  ASSERT_TRUE(succeeded(dwRule->inferLocalForm(locals, form)));
  EXPECT_EQ(form.resultTypes[0], tensor({16, 16}));
  EXPECT_EQ(form.partialSums, SmallVector<bool>{false});
  EXPECT_EQ(dwRule->getTokenGatheredOperands(locals), SmallVector<unsigned>{0});
}

constexpr StringLiteral kAttentionVJP = R"mlir(
func.func @f(%q: tensor<1x2x8xf32>, %do: tensor<1x2x8xf32>) -> tensor<1x2x8xf32> {
  %dq = piper.vjp "piper.attention" wrt [0] (%q, %q, %q) cotangents (%do) forward_attrs {num_heads = 4 : i64} : (tensor<1x2x8xf32>, tensor<1x2x8xf32>, tensor<1x2x8xf32>), (tensor<1x2x8xf32>) -> tensor<1x2x8xf32>
  return %dq : tensor<1x2x8xf32>
}
)mlir";

TEST_F(DistributionRuleTest, AttentionVJPRunsOnTheForwardsHeads) {
  Operation *vjp = parseOp(kAttentionVJP, "piper.vjp");
  ASSERT_TRUE(vjp);
  std::optional<DistributionRule> rule = DistributionRule::get(vjp);
  ASSERT_TRUE(rule);
  EXPECT_EQ(rule->getChannelGroups(), 4);
  Type half = tensor({1, 2, 4});
  LocalForm form;
  ASSERT_TRUE(succeeded(rule->inferLocalForm({half, half, half, half}, form)));
  EXPECT_EQ(form.resultTypes[0], half);
  rule->applyLocalForm(form);
  auto heads =
      cast<VJPOp>(vjp).getForwardAttrs().getAs<IntegerAttr>("num_heads");
  ASSERT_TRUE(heads);
  EXPECT_EQ(heads.getInt(), 2);
}

} // namespace
