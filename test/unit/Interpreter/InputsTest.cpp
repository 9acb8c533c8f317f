//===- InputsTest.cpp - Parameter init, synthetic data, value bounds ------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The inputs must be exactly the documented formulas (the distributed runtime
// reproduces them independently), shardable (a slice equals the same slice
// of the whole), and integer inputs must stay within the range their uses
// allow.
//
//===----------------------------------------------------------------------===//

#include "Models.h"
#include "TestUtil.h"

#include "piper/Interpreter/Inputs.h"
#include "piper/Interpreter/SyntheticData.h"
#include "piper/Reference/Init.h"

#include "gmock/gmock.h"

#include <cmath>
#include <set>

using namespace mlir;
using namespace mlir::piper;
using namespace mlir::piper::test;
using ::testing::HasSubstr;

namespace {

//===----------------------------------------------------------------------===//
// The data formula
//===----------------------------------------------------------------------===//

/// The documented formula, restated from docs/Interpreter.md without the
/// library's helpers (other than Init.h's primitives, checked by the
/// reference tests).
uint64_t documentedKey(uint64_t seed, unsigned argIndex, uint64_t step) {
  std::string name = "data." + std::to_string(argIndex);
  uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : name)
    h = (h ^ c) * 0x100000001b3ULL;
  return ref::splitmix64(ref::splitmix64(seed ^ h) + step);
}

TEST(SyntheticData, FloatsFollowTheDocumentedFormula) {
  ref::Tensor t;
  ASSERT_TRUE(ref::syntheticFloat(42, 3, 5, {4, 5}, t).ok());
  uint64_t key = documentedKey(42, 3, 5);
  ASSERT_EQ(t.data.size(), 20u);
  for (uint64_t e = 0; e < 20; ++e)
    EXPECT_EQ(t.data[e], ref::standardNormalAt(key, e)) << e;
}

TEST(SyntheticData, IntegersFollowTheDocumentedFormula) {
  ref::IndexTensor t;
  ASSERT_TRUE(ref::syntheticIndex(42, 7, 2, {3, 7}, 1000, t).ok());
  uint64_t key = documentedKey(42, 7, 2);
  for (uint64_t e = 0; e < 21; ++e) {
    uint64_t r = ref::splitmix64(key + e);
    // floor(r * B / 2^64), computed without 128-bit arithmetic: split r.
    uint64_t hi = r >> 32, lo = r & 0xffffffffULL;
    uint64_t expected = (hi * 1000 + ((lo * 1000) >> 32)) >> 32;
    EXPECT_EQ(t.data[e], static_cast<int64_t>(expected)) << e;
  }
}

// Pinned values: a change of the formula breaks reproducibility across
// versions and with the distributed runtime, so it must be deliberate.
TEST(SyntheticData, PinnedValues) {
  ref::IndexTensor ids;
  ASSERT_TRUE(ref::syntheticIndex(0, 1, 1, {4}, 10, ids).ok());
  ref::Tensor x;
  ASSERT_TRUE(ref::syntheticFloat(0, 0, 1, {2}, x).ok());
  EXPECT_EQ(ref::dataKey(0, 0, 1), documentedKey(0, 0, 1));
  EXPECT_EQ(ids.data, (std::vector<int64_t>{5, 5, 1, 8}));
  // -0.63141328429362553 and 0.62828750027325686.
  EXPECT_EQ(x.data,
            (std::vector<double>{-0x1.43489a1c9a262p-1, 0x1.41aee63451868p-1}));
}

TEST(SyntheticData, SlicesEqualTheWhole) {
  ref::Tensor whole;
  ASSERT_TRUE(ref::syntheticFloat(3, 2, 9, {6, 5}, whole).ok());
  std::vector<double> slice(7);
  ASSERT_TRUE(ref::syntheticFloatRange(3, 2, 9, 11, 18, slice.data()).ok());
  for (int i = 0; i < 7; ++i)
    EXPECT_EQ(slice[i], whole.data[11 + i]);

  ref::IndexTensor ints;
  ASSERT_TRUE(ref::syntheticIndex(3, 2, 9, {30}, 17, ints).ok());
  std::vector<int64_t> intSlice(10);
  ASSERT_TRUE(
      ref::syntheticIndexRange(3, 2, 9, 17, 20, 30, intSlice.data()).ok());
  for (int i = 0; i < 10; ++i)
    EXPECT_EQ(intSlice[i], ints.data[20 + i]);
}

TEST(SyntheticData, Distributions) {
  ref::Tensor x;
  ASSERT_TRUE(ref::syntheticFloat(1, 0, 1, {20000}, x).ok());
  double mean = 0, sq = 0;
  for (double v : x.data) {
    mean += v;
    sq += v * v;
  }
  mean /= 20000;
  double var = sq / 20000 - mean * mean;
  EXPECT_NEAR(mean, 0.0, 0.03);
  EXPECT_NEAR(var, 1.0, 0.05);

  ref::IndexTensor ids;
  ASSERT_TRUE(ref::syntheticIndex(1, 0, 1, {20000}, 7, ids).ok());
  std::vector<int> counts(7, 0);
  for (int64_t v : ids.data) {
    ASSERT_GE(v, 0);
    ASSERT_LT(v, 7);
    ++counts[v];
  }
  for (int c : counts)
    EXPECT_NEAR(c, 20000 / 7.0, 200);
}

TEST(SyntheticData, StepsArgumentsAndSeedsDiffer) {
  ref::Tensor a, b, c, d;
  ASSERT_TRUE(ref::syntheticFloat(1, 4, 1, {8}, a).ok());
  ASSERT_TRUE(ref::syntheticFloat(1, 4, 2, {8}, b).ok());
  ASSERT_TRUE(ref::syntheticFloat(1, 5, 1, {8}, c).ok());
  ASSERT_TRUE(ref::syntheticFloat(2, 4, 1, {8}, d).ok());
  EXPECT_NE(a.data, b.data);
  EXPECT_NE(a.data, c.data);
  EXPECT_NE(a.data, d.data);
  // Data never coincides with a parameter's init stream of the same name.
  ref::Tensor p;
  ASSERT_TRUE(ref::initNormal(1, "data.4", {8}, 1.0, p).ok());
  EXPECT_NE(a.data, p.data);
}

TEST(SyntheticData, BadArgumentsAreErrors) {
  ref::IndexTensor ids;
  EXPECT_FALSE(ref::syntheticIndex(0, 0, 1, {3}, 0, ids).ok());
  std::vector<double> out(2);
  EXPECT_FALSE(ref::syntheticFloatRange(0, 0, 1, 3, 1, out.data()).ok());
}

//===----------------------------------------------------------------------===//
// Arguments of a model
//===----------------------------------------------------------------------===//

class ModelInputs : public InterpreterFixture {};

TEST_F(ModelInputs, ClassifiesArgumentsAndInfersBounds) {
  OwningOpRef<ModuleOp> module = parse(kGptBlock);
  ASSERT_TRUE(module) << diagnostics;
  func::FuncOp fn = lookup(*module, "gpt");
  FailureOr<SmallVector<ArgumentInfo>> args = analyzeArguments(fn);
  ASSERT_TRUE(succeeded(args)) << diagnostics;
  ASSERT_EQ(args->size(), 14u);
  for (unsigned i = 0; i < 12; ++i)
    EXPECT_TRUE((*args)[i].isParameter()) << i;
  // Token ids index the 16-row embedding table; labels the 16 logits.
  EXPECT_EQ((*args)[12].kind, ArgumentInfo::Kind::IndexData);
  EXPECT_EQ((*args)[12].bound, 16);
  EXPECT_EQ((*args)[12].shape, (ref::Shape{2, 4}));
  EXPECT_EQ((*args)[13].bound, 16);
  EXPECT_EQ((*args)[0].param.getName().getValue(), "tok_emb");

  module = parse(kMoeBlock);
  ASSERT_TRUE(module) << diagnostics;
  args = analyzeArguments(lookup(*module, "moe"));
  ASSERT_TRUE(succeeded(args)) << diagnostics;
  EXPECT_EQ((*args)[6].kind, ArgumentInfo::Kind::FloatData);
  EXPECT_EQ((*args)[7].bound, 5);
}

TEST_F(ModelInputs, BoundIsTheTightestUse) {
  constexpr const char *source = R"mlir(
func.func @f(%t: tensor<10x4xf64>, %ids: tensor<4xi64>, %idx: tensor<4x2xi64>,
             %x: tensor<4x4xf64>, %y: tensor<3x2x4xf64>, %w: tensor<4x2xf64>) -> tensor<f64> {
  %e = piper.embedding %t, %ids : tensor<10x4xf64>, tensor<4xi64> -> tensor<4x4xf64>
  %l = piper.cross_entropy %e, %ids : tensor<4x4xf64>, tensor<4xi64> -> tensor<f64>
  %b = piper.dispatch %x, %idx {capacity = 2 : i64} : tensor<4x4xf64>, tensor<4x2xi64> -> tensor<5x2x4xf64>
  %c = piper.combine %y, %w, %idx : tensor<3x2x4xf64>, tensor<4x2xf64>, tensor<4x2xi64> -> tensor<4x4xf64>
  return %l : tensor<f64>
}
)mlir";
  OwningOpRef<ModuleOp> module = parse(source);
  ASSERT_TRUE(module) << diagnostics;
  FailureOr<SmallVector<ArgumentInfo>> args =
      analyzeArguments(lookup(*module, "f"));
  ASSERT_TRUE(succeeded(args)) << diagnostics;
  EXPECT_EQ((*args)[1].bound, 4); // min(10 rows, 4 classes)
  EXPECT_EQ((*args)[2].bound, 3); // min(5 experts in dispatch, 3 in combine)
}

TEST_F(ModelInputs, UnboundIntegerArgumentIsNamed) {
  constexpr const char *source = R"mlir(
func.func @f(%w: tensor<4xf64> {piper.param = #piper.param<"w", zeros>},
             %n: tensor<3xi64>) -> tensor<4xf64> {
  return %w : tensor<4xf64>
}
)mlir";
  OwningOpRef<ModuleOp> module = parse(source);
  ASSERT_TRUE(module) << diagnostics;
  EXPECT_TRUE(failed(analyzeArguments(lookup(*module, "f"))));
  EXPECT_THAT(diagnostics,
              HasSubstr("model.mlir:3:14: piper-interp: argument #1 of @f "
                        "('tensor<3xi64>') is an integer input whose value "
                        "range cannot be inferred"));
}

TEST_F(ModelInputs, DynamicShapesAreRejected) {
  constexpr const char *source = R"mlir(
func.func @f(%x: tensor<?x4xf64>) -> tensor<?x4xf64> {
  return %x : tensor<?x4xf64>
}
)mlir";
  OwningOpRef<ModuleOp> module = parse(source);
  ASSERT_TRUE(module) << diagnostics;
  EXPECT_TRUE(failed(analyzeArguments(lookup(*module, "f"))));
  EXPECT_THAT(diagnostics, HasSubstr("argument #0 of @f ('tensor<?x4xf64>') "
                                     "has a dynamic shape"));
}

TEST_F(ModelInputs, ParametersFollowTheirInitialisers) {
  OwningOpRef<ModuleOp> module = parse(kMlp);
  ASSERT_TRUE(module) << diagnostics;
  func::FuncOp fn = lookup(*module, "mlp");
  FailureOr<SmallVector<ArgumentInfo>> args = analyzeArguments(fn);
  ASSERT_TRUE(succeeded(args)) << diagnostics;

  FailureOr<ref::Tensor> w1 = initialParameter(fn, (*args)[0], 5);
  ASSERT_TRUE(succeeded(w1));
  ref::Tensor expected;
  ASSERT_TRUE(ref::initNormal(5, "mlp.w1", {6, 8}, 0.5, expected).ok());
  EXPECT_EQ(w1->data, expected.data);

  FailureOr<ref::Tensor> b1 = initialParameter(fn, (*args)[1], 5);
  ASSERT_TRUE(succeeded(b1));
  EXPECT_EQ(b1->data, std::vector<double>(8, 0.0));

  FailureOr<RuntimeValue> x = syntheticArgument(fn, (*args)[4], 5, 3);
  ASSERT_TRUE(succeeded(x));
  ref::Tensor expectedX;
  ASSERT_TRUE(ref::syntheticFloat(5, 4, 3, {4, 6}, expectedX).ok());
  EXPECT_EQ(asTensor(*x).data, expectedX.data);

  FailureOr<RuntimeValue> labels = syntheticArgument(fn, (*args)[5], 5, 3);
  ASSERT_TRUE(succeeded(labels));
  ref::IndexTensor expectedLabels;
  ASSERT_TRUE(ref::syntheticIndex(5, 5, 3, {4}, 3, expectedLabels).ok());
  EXPECT_EQ(getIfIndexTensor(*labels)->data, expectedLabels.data);
}

} // namespace
