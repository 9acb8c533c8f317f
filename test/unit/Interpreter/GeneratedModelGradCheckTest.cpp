//===- GeneratedModelGradCheckTest.cpp - Generator models vs FD -----------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Whole-model gradient checks of the models piper-gen produces (tiny MLP,
// dense GPT and MoE GPT, split into two pipeline stages), so that what users
// train is what is verified: autodiff + interpreter against a fourth-order
// central finite difference of the forward loss, relative error <= 1e-6,
// for every entry of every parameter gradient.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

#include "piper/Interpreter/Trainer.h"
#include "piper/ModelGen/ModelGen.h"

#include <algorithm>
#include <cmath>
#include <iterator>

using namespace mlir;
using namespace mlir::piper;
using namespace mlir::piper::test;

namespace {

class GeneratedModelGradCheck : public InterpreterFixture {
protected:
  void check(StringRef configName, uint64_t seed = 11) {
    modelgen::GenOptions options;
    const modelgen::ModelConfig *config =
        modelgen::lookupNamedConfig(configName);
    ASSERT_TRUE(config) << configName.str();
    options.model = config->model;
    options.config = *config;
    options.pipelineStages = 2;
    options.dtype = modelgen::ElementKind::F64;
    auto module = modelgen::buildModel(&context, options);
    ASSERT_TRUE(bool(module)) << llvm::toString(module.takeError());

    TrainerOptions trainerOptions;
    trainerOptions.seed = seed;
    FailureOr<Trainer> trainer = Trainer::create(
        lookup(**module, modelgen::kStepFunctionName), trainerOptions);
    ASSERT_TRUE(succeeded(trainer)) << diagnostics;
    FailureOr<StepResult> analytic = trainer->evaluate(1);
    ASSERT_TRUE(succeeded(analytic)) << diagnostics;

    std::vector<ref::Tensor> params;
    for (const TrainedParameter &p : trainer->getParameters())
      params.push_back(p.value);
    // h = 1e-5 with the 4th-order difference: truncation is negligible and
    // rounding is ~1e-14 * |L| / h ~ 1e-9 in the worst case, hence entries
    // below the floor of 1e-3 are held to an absolute 1e-9.
    constexpr double h = 1e-5, tolerance = 1e-6, floor = 1e-3;
    auto lossAt = [&](size_t p, size_t i, double delta) {
      std::vector<ref::Tensor> shifted = params;
      shifted[p].data[i] += delta;
      FailureOr<double> loss = trainer->forwardLoss(shifted, 1);
      EXPECT_TRUE(succeeded(loss)) << diagnostics;
      return succeeded(loss) ? *loss : 0.0;
    };
    FailureOr<double> base = trainer->forwardLoss(params, 1);
    ASSERT_TRUE(succeeded(base)) << diagnostics;
    int64_t checked = 0, kinks = 0;
    double worst = 0;
    for (size_t p = 0; p < params.size(); ++p) {
      const ref::Tensor &grad = analytic->gradients[p];
      // Every entry of small tensors; a strided sample of large ones keeps
      // the test to a second or two.
      size_t n = params[p].data.size();
      size_t stride = n > 64 ? n / 64 : 1;
      for (size_t i = 0; i < n; i += stride) {
        double plus = lossAt(p, i, h), minus = lossAt(p, i, -h);
        double plus2 = lossAt(p, i, 2 * h), minus2 = lossAt(p, i, -2 * h);
        // A ReLU input or a router's top-k boundary within 2h of the point
        // makes the loss non-smooth on the stencil: the slopes of its four
        // intervals disagree and no finite difference is meaningful. Such
        // points are rare (counted and bounded below), not silently passed.
        double slopes[] = {(minus - minus2) / h, (*base - minus) / h,
                           (plus - *base) / h, (plus2 - plus) / h};
        auto [lo, hi] =
            std::minmax_element(std::begin(slopes), std::end(slopes));
        if (*hi - *lo >
            1e-2 * std::max({std::fabs(*lo), std::fabs(*hi), floor})) {
          ++kinks;
          continue;
        }
        double numeric = (8 * (plus - minus) - (plus2 - minus2)) / (12 * h);
        double a = grad.data[i];
        double err = std::fabs(a - numeric) /
                     std::max({std::fabs(a), std::fabs(numeric), floor});
        worst = std::max(worst, err);
        EXPECT_LE(err, tolerance)
            << trainer->getParameters()[p].name << "[" << i << "]: analytic "
            << a << ", numeric " << numeric;
        ++checked;
      }
    }
    EXPECT_LE(kinks * 100, checked) << "too many non-smooth points";
    EXPECT_GT(checked, 100);
    RecordProperty("worst_relative_error", std::to_string(worst));
  }
};

TEST_F(GeneratedModelGradCheck, TinyMlp) { check("tiny-mlp"); }
TEST_F(GeneratedModelGradCheck, TinyMlpSeed12) { check("tiny-mlp", 12); }
TEST_F(GeneratedModelGradCheck, TinyMlpSeed13) { check("tiny-mlp", 13); }
TEST_F(GeneratedModelGradCheck, TinyGpt) { check("tiny-gpt"); }
TEST_F(GeneratedModelGradCheck, TinyMoe) { check("tiny-moe"); }

} // namespace
