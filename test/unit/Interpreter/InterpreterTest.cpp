//===- InterpreterTest.cpp - Op semantics, VJP dispatch and errors --------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The interpreter executes the IR literally: its results must be bitwise
// those of calling the reference kernels by hand in program order, each
// piper.vjp must reach the backward kernel (and output) its `wrt` names,
// and every failure must be a located diagnostic rather than a crash.
//
//===----------------------------------------------------------------------===//

#include "Models.h"
#include "TestUtil.h"

#include "piper/Interpreter/Interpreter.h"
#include "piper/Interpreter/SyntheticData.h"
#include "piper/Reference/Kernels.h"

#include "gmock/gmock.h"

#include <cmath>

using namespace mlir;
using namespace mlir::piper;
using namespace mlir::piper::test;
using ::testing::HasSubstr;

namespace {

class InterpreterOps : public InterpreterFixture {
protected:
  /// Standard normal values for a tensor of `shape` (distinct per `tag`).
  static ref::Tensor normal(ref::Shape shape, uint64_t tag) {
    ref::Tensor t;
    EXPECT_TRUE(ref::syntheticFloat(99, tag, 1, shape, t).ok());
    return t;
  }

  /// Runs @name of `source` on `args`; fails the test on errors.
  SmallVector<RuntimeValue> runOk(StringRef source, StringRef name,
                                  ArrayRef<RuntimeValue> args,
                                  Precision precision = Precision::F64) {
    module = parse(source);
    EXPECT_TRUE(module) << diagnostics;
    if (!module)
      return {};
    FailureOr<Interpreter> interp =
        Interpreter::create(lookup(*module, name), precision);
    EXPECT_TRUE(succeeded(interp)) << diagnostics;
    if (failed(interp))
      return {};
    FailureOr<SmallVector<RuntimeValue>> results = interp->run(args);
    EXPECT_TRUE(succeeded(results)) << diagnostics;
    return succeeded(results) ? *results : SmallVector<RuntimeValue>();
  }

  /// Runs @name and returns the diagnostics of the failure (create or run).
  std::string runError(StringRef source, StringRef name,
                       ArrayRef<RuntimeValue> args) {
    diagnostics.clear();
    module = parse(source);
    EXPECT_TRUE(module) << diagnostics;
    if (!module)
      return "";
    FailureOr<Interpreter> interp = Interpreter::create(lookup(*module, name));
    if (failed(interp))
      return diagnostics;
    EXPECT_TRUE(failed(interp->run(args))) << "expected a failure";
    return diagnostics;
  }

  OwningOpRef<ModuleOp> module;
};

TEST_F(InterpreterOps, ForwardMatchesKernelsInProgramOrder) {
  ref::Tensor w1 = normal({6, 8}, 0), b1 = normal({8}, 1),
              w2 = normal({8, 3}, 2), b2 = normal({3}, 3),
              x = normal({4, 6}, 4);
  ref::IndexTensor labels = ref::IndexTensor::of({4}, {0, 2, 1, 2});
  SmallVector<RuntimeValue> results =
      runOk(kMlp, "mlp", {w1, b1, w2, b2, x, labels});
  ASSERT_EQ(results.size(), 1u);

  ref::Tensor a, h, o, loss;
  ASSERT_TRUE(ref::linear(x, w1, &b1, a).ok());
  ASSERT_TRUE(ref::relu(a, h).ok());
  ASSERT_TRUE(ref::linear(h, w2, &b2, o).ok());
  ASSERT_TRUE(ref::crossEntropy(o, labels, loss).ok());
  EXPECT_EQ(asTensor(results[0]).shape, ref::Shape{});
  EXPECT_EQ(asTensor(results[0]).data, loss.data);
}

TEST_F(InterpreterOps, AnnotateYieldsAndConstants) {
  constexpr const char *source = R"mlir(
func.func @f(%x: tensor<2xf32>) -> (tensor<2xf32>, tensor<2x2xf64>, tensor<3xi64>, tensor<2xf32>) {
  %a:2 = piper.annotate {PP = 0} -> tensor<2xf32>, tensor<2x2xf64> {
    %inner = piper.annotate {EP = 1} -> tensor<2xf32> {
      %s = arith.constant dense<1.5> : tensor<2xf32>
      %y = piper.add %x, %s : tensor<2xf32>
      piper.yield %y : tensor<2xf32>
    }
    %d = arith.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf64>
    piper.yield %inner, %d : tensor<2xf32>, tensor<2x2xf64>
  }
  %i = arith.constant dense<[3, -1, 7]> : tensor<3xi64>
  %z = arith.constant dense<0.1> : tensor<2xf32>
  return %a#0, %a#1, %i, %z : tensor<2xf32>, tensor<2x2xf64>, tensor<3xi64>, tensor<2xf32>
}
)mlir";
  SmallVector<RuntimeValue> results =
      runOk(source, "f", {ref::Tensor::of({2}, {1.0, -2.0})});
  ASSERT_EQ(results.size(), 4u);
  EXPECT_EQ(asTensor(results[0]).data, (std::vector<double>{2.5, -0.5}));
  EXPECT_EQ(asTensor(results[1]).shape, (ref::Shape{2, 2}));
  EXPECT_EQ(asTensor(results[1]).data,
            (std::vector<double>{1.0, 2.0, 3.0, 4.0}));
  const ref::IndexTensor *ints = getIfIndexTensor(results[2]);
  ASSERT_NE(ints, nullptr);
  EXPECT_EQ(ints->data, (std::vector<int64_t>{3, -1, 7}));
  // An f32 constant holds the f32 value, even in f64 mode.
  EXPECT_EQ(asTensor(results[3]).data,
            (std::vector<double>(2, static_cast<double>(0.1f))));
}

TEST_F(InterpreterOps, VjpDispatchesOnOpAndWrt) {
  constexpr const char *source = R"mlir(
func.func @vjps(%x: tensor<2x3xf64>, %w: tensor<3x4xf64>, %b: tensor<4xf64>, %dy: tensor<2x4xf64>,
                %q: tensor<1x3x4xf64>, %k: tensor<1x3x4xf64>, %v: tensor<1x3x4xf64>, %da: tensor<1x3x4xf64>,
                %t: tensor<4x3xf64>, %wr: tensor<3x4xf64>, %dwts: tensor<4x2xf64>,
                %lw: tensor<3xf64>, %lb: tensor<3xf64>, %dl: tensor<2x3xf64>)
    -> (tensor<2x3xf64>, tensor<3x4xf64>, tensor<4xf64>,
        tensor<1x3x4xf64>, tensor<1x3x4xf64>, tensor<1x3x4xf64>,
        tensor<4x3xf64>, tensor<3x4xf64>, tensor<3xf64>, tensor<3xf64>) {
  %g:3 = piper.vjp "piper.linear" wrt [0, 1, 2] (%x, %w, %b) cotangents (%dy)
      : (tensor<2x3xf64>, tensor<3x4xf64>, tensor<4xf64>), (tensor<2x4xf64>)
      -> tensor<2x3xf64>, tensor<3x4xf64>, tensor<4xf64>
  %a:3 = piper.vjp "piper.attention" wrt [0, 1, 2] (%q, %k, %v) cotangents (%da)
      forward_attrs {num_heads = 2 : i64}
      : (tensor<1x3x4xf64>, tensor<1x3x4xf64>, tensor<1x3x4xf64>), (tensor<1x3x4xf64>)
      -> tensor<1x3x4xf64>, tensor<1x3x4xf64>, tensor<1x3x4xf64>
  %r:2 = piper.vjp "piper.router" wrt [0, 1] (%t, %wr) cotangents (%dwts)
      forward_attrs {top_k = 2 : i64}
      : (tensor<4x3xf64>, tensor<3x4xf64>), (tensor<4x2xf64>) -> tensor<4x3xf64>, tensor<3x4xf64>
  %n:2 = piper.vjp "piper.layernorm" wrt [1, 2] (%x, %lw, %lb) cotangents (%dl)
      forward_attrs {epsilon = 0.5 : f64}
      : (tensor<2x3xf64>, tensor<3xf64>, tensor<3xf64>), (tensor<2x3xf64>) -> tensor<3xf64>, tensor<3xf64>
  return %g#0, %g#1, %g#2, %a#0, %a#1, %a#2, %r#0, %r#1, %n#0, %n#1
      : tensor<2x3xf64>, tensor<3x4xf64>, tensor<4xf64>,
        tensor<1x3x4xf64>, tensor<1x3x4xf64>, tensor<1x3x4xf64>,
        tensor<4x3xf64>, tensor<3x4xf64>, tensor<3xf64>, tensor<3xf64>
}
)mlir";
  ref::Tensor x = normal({2, 3}, 0), w = normal({3, 4}, 1), b = normal({4}, 2),
              dy = normal({2, 4}, 3), q = normal({1, 3, 4}, 4),
              k = normal({1, 3, 4}, 5), v = normal({1, 3, 4}, 6),
              da = normal({1, 3, 4}, 7), t = normal({4, 3}, 8),
              wr = normal({3, 4}, 9), dwts = normal({4, 2}, 10),
              lw = normal({3}, 11), lb = normal({3}, 12),
              dl = normal({2, 3}, 13);
  SmallVector<RuntimeValue> results = runOk(
      source, "vjps", {x, w, b, dy, q, k, v, da, t, wr, dwts, lw, lb, dl});
  ASSERT_EQ(results.size(), 10u);

  ref::Tensor dx, dw, db, dq, dk, dv, dt, dwr, dlw, dlb;
  ASSERT_TRUE(ref::linearBackwardInput(x, w, dy, dx).ok());
  ASSERT_TRUE(ref::linearBackwardWeight(x, w, dy, dw, &db).ok());
  ASSERT_TRUE(ref::attentionBackward(q, k, v, 2, da, dq, dk, dv).ok());
  ASSERT_TRUE(ref::routerBackwardInput(t, wr, 2, dwts, dt).ok());
  ASSERT_TRUE(ref::routerBackwardWeight(t, wr, 2, dwts, dwr).ok());
  ASSERT_TRUE(ref::layernormBackwardWeight(x, lw, lb, 0.5, dl, dlw, dlb).ok());
  const ref::Tensor *expected[] = {&dx, &dw, &db,  &dq,  &dk,
                                   &dv, &dt, &dwr, &dlw, &dlb};
  for (size_t i = 0; i < 10; ++i) {
    EXPECT_EQ(asTensor(results[i]).shape, expected[i]->shape) << "result " << i;
    EXPECT_EQ(asTensor(results[i]).data, expected[i]->data) << "result " << i;
  }
}

TEST_F(InterpreterOps, MoeVjpsDispatchOnOpAndWrt) {
  constexpr const char *source = R"mlir(
func.func @moe(%y: tensor<2x2x3xf64>, %wts: tensor<3x2xf64>, %idx: tensor<3x2xi64>,
               %dout: tensor<3x3xf64>, %xt: tensor<3x3xf64>, %dbuf: tensor<2x2x3xf64>,
               %wg: tensor<2x3x4xf64>, %wu: tensor<2x3x4xf64>, %wd: tensor<2x4x3xf64>)
    -> (tensor<2x2x3xf64>, tensor<3x2xf64>, tensor<3x3xf64>, tensor<2x2x3xf64>, tensor<2x4x3xf64>) {
  %c:2 = piper.vjp "piper.combine" wrt [0, 1] (%y, %wts, %idx) cotangents (%dout)
      : (tensor<2x2x3xf64>, tensor<3x2xf64>, tensor<3x2xi64>), (tensor<3x3xf64>)
      -> tensor<2x2x3xf64>, tensor<3x2xf64>
  %d = piper.vjp "piper.dispatch" wrt [0] (%xt, %idx) cotangents (%dbuf)
      forward_attrs {capacity = 2 : i64}
      : (tensor<3x3xf64>, tensor<3x2xi64>), (tensor<2x2x3xf64>) -> tensor<3x3xf64>
  %e:2 = piper.vjp "piper.expert_ffn" wrt [0, 3] (%y, %wg, %wu, %wd) cotangents (%dbuf)
      : (tensor<2x2x3xf64>, tensor<2x3x4xf64>, tensor<2x3x4xf64>, tensor<2x4x3xf64>), (tensor<2x2x3xf64>)
      -> tensor<2x2x3xf64>, tensor<2x4x3xf64>
  return %c#0, %c#1, %d, %e#0, %e#1
      : tensor<2x2x3xf64>, tensor<3x2xf64>, tensor<3x3xf64>, tensor<2x2x3xf64>, tensor<2x4x3xf64>
}
)mlir";
  ref::Tensor y = normal({2, 2, 3}, 0), wts = normal({3, 2}, 1),
              dout = normal({3, 3}, 2), xt = normal({3, 3}, 3),
              dbuf = normal({2, 2, 3}, 4), wg = normal({2, 3, 4}, 5),
              wu = normal({2, 3, 4}, 6), wd = normal({2, 4, 3}, 7);
  // Expert 0 receives three pairs for two slots: the last is dropped.
  ref::IndexTensor idx = ref::IndexTensor::of({3, 2}, {0, 1, 0, 1, 1, 0});
  SmallVector<RuntimeValue> results =
      runOk(source, "moe", {y, wts, idx, dout, xt, dbuf, wg, wu, wd});
  ASSERT_EQ(results.size(), 5u);

  ref::Tensor dy, dwts, dxt, dbufIn, dwg, dwu, dwd;
  ASSERT_TRUE(ref::combineBackward(y, wts, idx, 2, dout, dy, dwts).ok());
  ASSERT_TRUE(ref::dispatchBackward(xt, idx, 2, 2, dbuf, dxt).ok());
  ASSERT_TRUE(ref::expertFfnBackwardInput(y, wg, wu, wd, dbuf, dbufIn).ok());
  ASSERT_TRUE(
      ref::expertFfnBackwardWeight(y, wg, wu, wd, dbuf, dwg, dwu, dwd).ok());
  const ref::Tensor *expected[] = {&dy, &dwts, &dxt, &dbufIn, &dwd};
  for (size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(asTensor(results[i]).shape, expected[i]->shape) << "result " << i;
    EXPECT_EQ(asTensor(results[i]).data, expected[i]->data) << "result " << i;
  }
}

TEST_F(InterpreterOps, F32RoundsEveryFloatResult) {
  ref::Tensor w1 = normal({6, 8}, 0), b1 = normal({8}, 1),
              w2 = normal({8, 3}, 2), b2 = normal({3}, 3),
              x = normal({4, 6}, 4);
  ref::IndexTensor labels = ref::IndexTensor::of({4}, {0, 2, 1, 2});
  SmallVector<RuntimeValue> f64 =
      runOk(kMlp, "mlp", {w1, b1, w2, b2, x, labels}, Precision::F64);
  SmallVector<RuntimeValue> f32 =
      runOk(kMlp, "mlp", {w1, b1, w2, b2, x, labels}, Precision::F32);
  ASSERT_EQ(f64.size(), 1u);
  ASSERT_EQ(f32.size(), 1u);
  double l64 = asTensor(f64[0]).data[0], l32 = asTensor(f32[0]).data[0];
  EXPECT_NE(l64, l32);
  EXPECT_LT(std::fabs(l64 - l32), 1e-5 * std::fabs(l64));
  EXPECT_EQ(l32, static_cast<double>(static_cast<float>(l32)));
}

TEST_F(InterpreterOps, PrecisionNames) {
  EXPECT_EQ(parsePrecision("f64"), Precision::F64);
  EXPECT_EQ(parsePrecision("f32"), Precision::F32);
  EXPECT_EQ(parsePrecision("f16"), std::nullopt);
  EXPECT_EQ(stringifyPrecision(Precision::F32), "f32");
}

//===----------------------------------------------------------------------===//
// Errors
//===----------------------------------------------------------------------===//

TEST_F(InterpreterOps, UnsupportedOpIsRejectedWithItsLocation) {
  constexpr const char *source = R"mlir(
func.func @f(%x: tensor<4xf64>) -> tensor<4xf64> {
  %e = math.exp %x : tensor<4xf64>
  return %e : tensor<4xf64>
}
)mlir";
  std::string error = runError(source, "f", {});
  EXPECT_THAT(error, HasSubstr("model.mlir:3:8: unsupported operation "
                               "'math.exp'"));
}

TEST_F(InterpreterOps, FailingKernelGivesLocatedError) {
  constexpr const char *source = R"mlir(
func.func @f(%t: tensor<10x4xf64>) -> tensor<2x4xf64> {
  %ids = arith.constant dense<[0, 12]> : tensor<2xi64>
  %e = piper.embedding %t, %ids : tensor<10x4xf64>, tensor<2xi64> -> tensor<2x4xf64>
  return %e : tensor<2x4xf64>
}
)mlir";
  std::string error = runError(source, "f", {ref::Tensor::zeros({10, 4})});
  EXPECT_THAT(error,
              HasSubstr("model.mlir:4:8: piper.embedding: id 12 at position "
                        "1 is out of range for a table of 10 rows"));
}

TEST_F(InterpreterOps, FailingVjpKernelNamesTheForwardOp) {
  constexpr const char *source = R"mlir(
func.func @f(%logits: tensor<2x3xf64>, %dl: tensor<f64>) -> tensor<2x3xf64> {
  %labels = arith.constant dense<[1, 5]> : tensor<2xi64>
  %g = piper.vjp "piper.cross_entropy" wrt [0] (%logits, %labels) cotangents (%dl)
      : (tensor<2x3xf64>, tensor<2xi64>), (tensor<f64>) -> tensor<2x3xf64>
  return %g : tensor<2x3xf64>
}
)mlir";
  std::string error = runError(
      source, "f", {ref::Tensor::zeros({2, 3}), ref::Tensor::of({}, {1.0})});
  EXPECT_THAT(error, HasSubstr("model.mlir:4:8: piper.vjp: "
                               "piper.cross_entropy"));
  EXPECT_THAT(error, HasSubstr("5"));
}

TEST_F(InterpreterOps, VjpOfIntegerOperandIsAnError) {
  constexpr const char *source = R"mlir(
func.func @f(%t: tensor<4x2xf64>, %ids: tensor<3xi64>, %dy: tensor<3x2xf64>) -> tensor<3xi64> {
  %g = piper.vjp "piper.embedding" wrt [1] (%t, %ids) cotangents (%dy)
      : (tensor<4x2xf64>, tensor<3xi64>), (tensor<3x2xf64>) -> tensor<3xi64>
  return %g : tensor<3xi64>
}
)mlir";
  std::string error =
      runError(source, "f",
               {ref::Tensor::zeros({4, 2}), ref::IndexTensor::zeros({3}),
                ref::Tensor::zeros({3, 2})});
  EXPECT_THAT(error, HasSubstr("piper.vjp of piper.embedding: there is no "
                               "gradient with respect to operand #1"));
}

TEST_F(InterpreterOps, ArgumentsMustFitTheSignature) {
  ref::Tensor w1 = normal({6, 8}, 0), b1 = normal({8}, 1),
              w2 = normal({8, 3}, 2), b2 = normal({3}, 3),
              x = normal({4, 6}, 4);
  ref::IndexTensor labels = ref::IndexTensor::of({4}, {0, 2, 1, 2});
  EXPECT_THAT(runError(kMlp, "mlp", {w1, b1}),
              HasSubstr("@mlp takes 6 arguments, got 2"));
  EXPECT_THAT(
      runError(kMlp, "mlp", {w1, b1, w2, b2, normal({4, 5}, 4), labels}),
      HasSubstr("argument #4 has shape [4, 5] but the IR declares "
                "'tensor<4x6xf64>'"));
  EXPECT_THAT(runError(kMlp, "mlp", {w1, b1, w2, b2, x, x}),
              HasSubstr("argument #5 is a float tensor but the IR declares "
                        "'tensor<4xi64>'"));
  ref::Tensor malformed = x;
  malformed.data.pop_back();
  EXPECT_THAT(runError(kMlp, "mlp", {w1, b1, w2, b2, malformed, labels}),
              HasSubstr("argument #4 is malformed"));
}

TEST_F(InterpreterOps, ExternalFunctionIsRejected) {
  std::string error = runError(
      "func.func private @f(tensor<2xf64>) -> tensor<2xf64>\n", "f", {});
  EXPECT_THAT(error, HasSubstr("@f has no body to interpret"));
}

TEST_F(InterpreterOps, NonTensorArgumentIsRejected) {
  constexpr const char *source = R"mlir(
func.func @f(%s: f64, %x: tensor<2xf64>) -> tensor<2xf64> {
  return %x : tensor<2xf64>
}
)mlir";
  EXPECT_THAT(runError(source, "f", {}),
              HasSubstr("argument #0 of @f has type 'f64'; expected a ranked "
                        "tensor of floats or integers"));
}

} // namespace
