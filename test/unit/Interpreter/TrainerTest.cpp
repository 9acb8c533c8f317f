//===- TrainerTest.cpp - Reference training loop --------------------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The serial training loop: reproducible for a seed, sensitive to it, close
// to but not equal to f64 in f32 mode, applying the optimizer with state
// kept per parameter, and actually learning.
//
//===----------------------------------------------------------------------===//

#include "Models.h"
#include "TestUtil.h"

#include "piper/Dialect/Piper/IR/PiperOps.h"
#include "piper/Dialect/Piper/Transforms/Autodiff.h"
#include "piper/Interpreter/Trainer.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"

#include "gmock/gmock.h"

#include <cmath>
#include <numeric>

using namespace mlir;
using namespace mlir::piper;
using namespace mlir::piper::test;
using ::testing::HasSubstr;

namespace {

class InterpreterTraining : public InterpreterFixture {
protected:
  /// The losses of `steps` training steps of @name in `source`.
  std::vector<double> train(StringRef source, StringRef name,
                            const TrainerOptions &options, int steps) {
    OwningOpRef<ModuleOp> module = parse(source);
    EXPECT_TRUE(module) << diagnostics;
    if (!module)
      return {};
    FailureOr<Trainer> trainer =
        Trainer::create(lookup(*module, name), options);
    EXPECT_TRUE(succeeded(trainer)) << diagnostics;
    if (failed(trainer))
      return {};
    std::vector<double> losses;
    for (int i = 0; i < steps; ++i) {
      FailureOr<StepResult> result = trainer->step();
      EXPECT_TRUE(succeeded(result)) << diagnostics;
      if (failed(result))
        break;
      EXPECT_EQ(result->step, static_cast<uint64_t>(i + 1));
      losses.push_back(result->loss);
    }
    return losses;
  }

  static TrainerOptions sgd(uint64_t seed = 0) {
    TrainerOptions options;
    options.seed = seed;
    options.optimizer = OptimizerKind::Sgd;
    options.sgd.lr = 0.1;
    options.sgd.momentum = 0.9;
    return options;
  }

  static double mean(const std::vector<double> &v, size_t begin, size_t end) {
    return std::accumulate(v.begin() + begin, v.begin() + end, 0.0) /
           static_cast<double>(end - begin);
  }
};

TEST_F(InterpreterTraining, SameSeedGivesIdenticalLosses) {
  for (const char *source : {kGptBlock, kMoeBlock}) {
    StringRef name = source == kGptBlock ? "gpt" : "moe";
    std::vector<double> a = train(source, name, sgd(11), 4);
    std::vector<double> b = train(source, name, sgd(11), 4);
    ASSERT_EQ(a.size(), 4u);
    EXPECT_EQ(a, b) << name.str();
  }
}

TEST_F(InterpreterTraining, DifferentSeedGivesDifferentLosses) {
  std::vector<double> a = train(kGptBlock, "gpt", sgd(11), 3);
  std::vector<double> b = train(kGptBlock, "gpt", sgd(12), 3);
  ASSERT_EQ(a.size(), 3u);
  ASSERT_EQ(b.size(), 3u);
  for (size_t i = 0; i < 3; ++i)
    EXPECT_NE(a[i], b[i]) << "step " << i + 1;
}

TEST_F(InterpreterTraining, F32DiffersFromF64SlightlyButNotZero) {
  for (const char *source : {kMlp, kGptBlock, kMoeBlock}) {
    StringRef name = source == kMlp        ? "mlp"
                     : source == kGptBlock ? "gpt"
                                           : "moe";
    TrainerOptions f32 = sgd(5);
    f32.precision = Precision::F32;
    std::vector<double> l64 = train(source, name, sgd(5), 3);
    std::vector<double> l32 = train(source, name, f32, 3);
    ASSERT_EQ(l64.size(), 3u);
    ASSERT_EQ(l32.size(), 3u);
    for (size_t i = 0; i < 3; ++i) {
      EXPECT_NE(l64[i], l32[i]) << name.str() << " step " << i + 1;
      EXPECT_LT(std::fabs(l64[i] - l32[i]), 1e-5 * std::fabs(l64[i]))
          << name.str() << " step " << i + 1;
      EXPECT_EQ(l32[i], static_cast<double>(static_cast<float>(l32[i])));
    }
  }
}

// The run that test/Interpreter/train-mlp.mlir pins: its loss must fall.
TEST_F(InterpreterTraining, SgdLossDecreases) {
  std::string source = readLitInput("train-mlp.mlir");
  ASSERT_FALSE(source.empty());
  std::vector<double> losses = train(source, "mlp", sgd(0), 50);
  ASSERT_EQ(losses.size(), 50u);
  // Per-step losses are noisy (fresh batch each step): compare averages.
  EXPECT_LT(mean(losses, 40, 50), 0.25 * mean(losses, 0, 5));
  EXPECT_LT(losses[49], losses[0]);
  EXPECT_GT(losses[0], 1.0); // starts near or above ln 4
}

TEST_F(InterpreterTraining, AdamWLossDecreases) {
  std::string source = readLitInput("train-mlp.mlir");
  TrainerOptions options;
  options.optimizer = OptimizerKind::AdamW;
  options.adamw.lr = 0.01;
  std::vector<double> losses = train(source, "mlp", options, 50);
  ASSERT_EQ(losses.size(), 50u);
  EXPECT_LT(mean(losses, 40, 50), 0.25 * mean(losses, 0, 5));
}

TEST_F(InterpreterTraining, SgdMomentumStateIsPerParameter) {
  OwningOpRef<ModuleOp> module = parse(kMlp);
  ASSERT_TRUE(module) << diagnostics;
  TrainerOptions options = sgd(3);
  FailureOr<Trainer> trainer = Trainer::create(lookup(*module, "mlp"), options);
  ASSERT_TRUE(succeeded(trainer)) << diagnostics;

  std::vector<ref::Tensor> p0;
  for (const TrainedParameter &p : trainer->getParameters())
    p0.push_back(p.value);
  FailureOr<StepResult> s1 = trainer->step();
  ASSERT_TRUE(succeeded(s1));
  FailureOr<StepResult> s2 = trainer->step();
  ASSERT_TRUE(succeeded(s2));
  ASSERT_EQ(trainer->getStepsDone(), 2u);

  // buf1 = g1, p1 = p0 - lr g1; buf2 = m buf1 + g2, p2 = p1 - lr buf2.
  for (size_t p = 0; p < p0.size(); ++p) {
    const ref::Tensor &g1 = s1->gradients[p], &g2 = s2->gradients[p];
    const ref::Tensor &p2 = trainer->getParameters()[p].value;
    for (size_t i = 0; i < p0[p].data.size(); ++i) {
      double buf = g1.data[i];
      double value = p0[p].data[i] - 0.1 * buf;
      buf = 0.9 * buf + g2.data[i];
      value -= 0.1 * buf;
      EXPECT_EQ(p2.data[i], value) << trainer->getParameters()[p].name;
    }
  }
}

TEST_F(InterpreterTraining, EvaluateChangesNothing) {
  OwningOpRef<ModuleOp> module = parse(kMoeBlock);
  ASSERT_TRUE(module) << diagnostics;
  FailureOr<Trainer> trainer = Trainer::create(lookup(*module, "moe"), sgd(1));
  ASSERT_TRUE(succeeded(trainer)) << diagnostics;
  FailureOr<StepResult> a = trainer->evaluate(1);
  FailureOr<StepResult> b = trainer->evaluate(1);
  FailureOr<StepResult> c = trainer->evaluate(2);
  ASSERT_TRUE(succeeded(a) && succeeded(b) && succeeded(c));
  EXPECT_EQ(a->loss, b->loss);
  EXPECT_NE(a->loss, c->loss); // fresh data per step
  EXPECT_EQ(trainer->getStepsDone(), 0u);
  FailureOr<StepResult> s = trainer->step();
  ASSERT_TRUE(succeeded(s));
  EXPECT_EQ(s->loss, a->loss);
}

TEST_F(InterpreterTraining, AcceptsAnAlreadyDifferentiatedModel) {
  std::vector<double> expected = train(kGptBlock, "gpt", sgd(4), 3);
  OwningOpRef<ModuleOp> module = parse(kGptBlock);
  ASSERT_TRUE(module);
  ASSERT_TRUE(succeeded(differentiate(lookup(*module, "gpt"))));
  FailureOr<Trainer> trainer = Trainer::create(lookup(*module, "gpt"), sgd(4));
  ASSERT_TRUE(succeeded(trainer)) << diagnostics;
  for (double loss : expected) {
    FailureOr<StepResult> result = trainer->step();
    ASSERT_TRUE(succeeded(result)) << diagnostics;
    EXPECT_EQ(result->loss, loss);
  }
}

// The whole training step as IR (piper-autodiff, then piper-optimizer:
// gradients turned into piper.sgd_update / piper.adamw_update in UPD chunks,
// optimizer state threaded through arguments and results), interpreted
// step by step, reproduces the reference trainer bit for bit.
TEST_F(InterpreterTraining, OptimizerPassOutputMatchesTheTrainer) {
  struct Case {
    const char *pipeline;
    TrainerOptions options;
  };
  TrainerOptions sgdOptions = sgd(2);
  TrainerOptions adamwOptions;
  adamwOptions.seed = 2;
  adamwOptions.optimizer = OptimizerKind::AdamW;
  adamwOptions.adamw.lr = 0.01;
  Case cases[] = {
      {"piper-autodiff,piper-optimizer{optimizer=sgd lr=0.1 momentum=0.9}",
       sgdOptions},
      {"piper-autodiff,piper-optimizer{optimizer=adamw lr=0.01}",
       adamwOptions}};
  for (const Case &c : cases) {
    SCOPED_TRACE(c.pipeline);
    OwningOpRef<ModuleOp> forward = parse(kGptBlock);
    ASSERT_TRUE(forward) << diagnostics;
    FailureOr<Trainer> trainer =
        Trainer::create(lookup(*forward, "gpt"), c.options);
    ASSERT_TRUE(succeeded(trainer)) << diagnostics;

    OwningOpRef<ModuleOp> stepModule = parse(kGptBlock);
    ASSERT_TRUE(stepModule);
    PassManager pm(&context, ModuleOp::getOperationName());
    ASSERT_TRUE(succeeded(parsePassPipeline(c.pipeline, pm)));
    ASSERT_TRUE(succeeded(pm.run(*stepModule))) << diagnostics;
    func::FuncOp stepFn = lookup(*stepModule, "gpt");
    FailureOr<Interpreter> interp = Interpreter::create(stepFn);
    ASSERT_TRUE(succeeded(interp)) << diagnostics;

    // Parameters by name, state by its #piper.state attribute.
    llvm::StringMap<ref::Tensor> params;
    for (const TrainedParameter &p : trainer->getParameters())
      params[p.name] = p.value;
    DenseMap<Attribute, RuntimeValue> state;
    for (BlockArgument arg : stepFn.getArguments()) {
      Attribute key = stepFn.getArgAttr(arg.getArgNumber(),
                                        PiperDialect::getStateAttrName());
      if (!key)
        continue;
      auto type = cast<RankedTensorType>(arg.getType());
      ref::Shape shape(type.getShape().begin(), type.getShape().end());
      if (isa<FloatType>(type.getElementType()))
        state[key] = ref::Tensor::zeros(shape);
      else
        state[key] = ref::IndexTensor::zeros(shape);
    }
    ASSERT_FALSE(state.empty());

    for (uint64_t s = 1; s <= 3; ++s) {
      SmallVector<RuntimeValue> args;
      for (BlockArgument arg : stepFn.getArguments()) {
        unsigned i = arg.getArgNumber();
        if (auto param = stepFn.getArgAttrOfType<ParamAttr>(
                i, PiperDialect::getParamAttrName())) {
          args.push_back(params[param.getName().getValue()]);
        } else if (Attribute key =
                       stepFn.getArgAttr(i, PiperDialect::getStateAttrName())) {
          args.push_back(state[key]);
        } else {
          FailureOr<RuntimeValue> data = syntheticArgument(
              stepFn, trainer->getArguments()[i], c.options.seed, s);
          ASSERT_TRUE(succeeded(data));
          args.push_back(*data);
        }
      }
      FailureOr<SmallVector<RuntimeValue>> results = interp->run(args);
      ASSERT_TRUE(succeeded(results)) << diagnostics;
      FailureOr<StepResult> expected = trainer->step();
      ASSERT_TRUE(succeeded(expected)) << diagnostics;
      EXPECT_EQ(asTensor((*results)[0]).data[0], expected->loss) << s;

      for (unsigned r = 1; r < stepFn.getNumResults(); ++r) {
        if (auto name = stepFn.getResultAttrOfType<StringAttr>(
                r, PiperDialect::getUpdatedAttrName()))
          params[name.getValue()] = asTensor((*results)[r]);
        else if (Attribute key =
                     stepFn.getResultAttr(r, PiperDialect::getStateAttrName()))
          state[key] = (*results)[r];
        else
          ADD_FAILURE() << "result #" << r << " is neither a parameter nor "
                        << "optimizer state";
      }
      for (const TrainedParameter &p : trainer->getParameters())
        EXPECT_EQ(params[p.name].data, p.value.data)
            << p.name << " after step " << s;
    }
  }
}

TEST_F(InterpreterTraining, ModelWithoutParametersIsRejected) {
  constexpr const char *source = R"mlir(
func.func @f(%x: tensor<2x3xf64>, %labels: tensor<2xi64>) -> tensor<f64> {
  %l = piper.cross_entropy %x, %labels : tensor<2x3xf64>, tensor<2xi64> -> tensor<f64>
  return %l : tensor<f64>
}
)mlir";
  OwningOpRef<ModuleOp> module = parse(source);
  ASSERT_TRUE(module);
  EXPECT_TRUE(failed(Trainer::create(lookup(*module, "f"), sgd())));
  EXPECT_THAT(diagnostics, HasSubstr("@f has no piper.param arguments"));
}

TEST_F(InterpreterTraining, UnsupportedOpOffTheGradientPathIsRejected) {
  // Autodiff needs no rule for math.exp (it does not depend on a
  // parameter); the interpreter still cannot run it.
  constexpr const char *source = R"mlir(
func.func @f(%w: tensor<3x3xf64> {piper.param = #piper.param<"w", normal(0.1)>},
             %x: tensor<2x3xf64>, %labels: tensor<2xi64>) -> tensor<f64> {
  %e = math.exp %x : tensor<2x3xf64>
  %o = piper.linear %e, %w : tensor<2x3xf64>, tensor<3x3xf64> -> tensor<2x3xf64>
  %l = piper.cross_entropy %o, %labels : tensor<2x3xf64>, tensor<2xi64> -> tensor<f64>
  return %l : tensor<f64>
}
)mlir";
  OwningOpRef<ModuleOp> module = parse(source);
  ASSERT_TRUE(module);
  EXPECT_TRUE(failed(Trainer::create(lookup(*module, "f"), sgd())));
  EXPECT_THAT(diagnostics, HasSubstr("model.mlir:4:8: unsupported operation "
                                     "'math.exp'"));
}

TEST_F(InterpreterTraining, OptimizerNames) {
  EXPECT_EQ(parseOptimizerKind("sgd"), OptimizerKind::Sgd);
  EXPECT_EQ(parseOptimizerKind("adamw"), OptimizerKind::AdamW);
  EXPECT_EQ(parseOptimizerKind("adam"), std::nullopt);
}

} // namespace
