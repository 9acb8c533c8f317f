//===- Trainer.h - Serial reference training loop ---------------*- C++ -*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The serial training step every strategy must reproduce: parameters from
// (seed, name), fresh synthetic data per step (Inputs.h), loss and gradients
// by interpreting the autodiff of the model, then one SGD-momentum or AdamW
// update per parameter (piper/Reference/Optimizers.h) with optimizer state
// kept per parameter.
//
//   auto trainer = Trainer::create(fn, options);
//   if (failed(trainer)) return failure();       // diagnostics emitted
//   for (int i = 0; i < 10; ++i) {
//     FailureOr<StepResult> r = trainer->step(); // step i + 1
//     ...
//   }
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_INTERPRETER_TRAINER_H
#define PIPER_INTERPRETER_TRAINER_H

#include "piper-rt/train.h"
#include "piper/Interpreter/ByteCorpus.h"
#include "piper/Interpreter/Inputs.h"
#include "piper/Interpreter/Interpreter.h"
#include "piper/Interpreter/ParamsFile.h"
#include "piper/Reference/Optimizers.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mlir::piper {

enum class OptimizerKind { Sgd, AdamW };

/// "sgd" or "adamw" to an OptimizerKind; nullopt for anything else.
std::optional<OptimizerKind> parseOptimizerKind(StringRef text);

struct TrainerOptions {
  uint64_t seed = 0;
  /// Token data from a text (ByteCorpus.h) instead of synthetic numbers;
  /// not owned, must outlive the trainer.
  const ref::ByteCorpus *corpus = nullptr;
  /// Initial parameter values (--params-in) instead of the initialisers;
  /// not owned, must outlive the trainer.
  const ref::ParamsFile *initialValues = nullptr;
  Precision precision = Precision::F64;
  /// The defaults are every tool's (piper-rt/train.h).
  OptimizerKind optimizer = OptimizerKind::AdamW;
  ref::SgdConfig sgd{::piper::train::kDefaultLr,
                     ::piper::train::kDefaultMomentum,
                     ::piper::train::kDefaultSgdWeightDecay};
  ref::AdamWConfig adamw{
      ::piper::train::kDefaultLr, ::piper::train::kDefaultBeta1,
      ::piper::train::kDefaultBeta2, ::piper::train::kDefaultEps,
      ::piper::train::kDefaultAdamWWeightDecay};
  /// The learning rate of step n is lrAt(*schedule, n) when set (the
  /// optimizer config's lr otherwise).
  std::optional<::piper::train::LrSchedule> schedule;
  /// Clip the global gradient norm to this bound before the update (0: off).
  double clipGradNorm = 0.0;
  /// Which parameters decay (the rest get weight decay 0).
  ::piper::train::DecayRule decay;
};

/// One trainable parameter with its optimizer state.
struct TrainedParameter {
  std::string name;
  /// Position of the parameter among the model's arguments.
  unsigned argIndex;
  ref::Tensor value;
  /// SGD momentum buffer; AdamW first and second moments. Start at zero.
  ref::Tensor momentum, adamM, adamV;
};

/// The outcome of one forward and backward pass.
struct StepResult {
  /// 1-based step number whose data was used.
  uint64_t step;
  double loss;
  /// The global gradient norm before clipping (step() only; -1 otherwise)
  /// and the learning rate the update used.
  double gradNorm = -1.0, lr = 0.0;
  /// d loss / d parameter, one per parameter in argument order.
  std::vector<ref::Tensor> gradients;
};

class Trainer {
public:
  /// Prepares training of `model`: a function whose `piper.param` arguments
  /// are the parameters and whose single result is a scalar loss (it is
  /// differentiated on a private copy), or a function that `differentiate`
  /// already produced (results: loss, then one `piper.grad` per parameter).
  /// `model` is not modified and need not outlive the trainer. Emits
  /// located errors and fails if the model has no parameters, cannot be
  /// differentiated or uses an unsupported op.
  static FailureOr<Trainer> create(func::FuncOp model,
                                   const TrainerOptions &options);

  /// Runs the next step n (n = 1 first): synthetic data of step n, loss and
  /// gradients at the current parameters, then the optimizer update. The
  /// result holds the loss and gradients before the update.
  FailureOr<StepResult> step();

  /// Loss and gradients at the current parameters with the data of 1-based
  /// `step`; changes nothing.
  FailureOr<StepResult> evaluate(uint64_t step) const;

  /// The forward loss at `params` (one per parameter, in argument order)
  /// with the data of 1-based `step`, without differentiating: what finite
  /// difference checks perturb.
  FailureOr<double> forwardLoss(ArrayRef<ref::Tensor> params,
                                uint64_t step) const;

  ArrayRef<TrainedParameter> getParameters() const { return parameters; }
  ArrayRef<ArgumentInfo> getArguments() const { return arguments; }
  /// Number of updates applied so far.
  uint64_t getStepsDone() const { return stepsDone; }
  const TrainerOptions &getOptions() const { return options; }
  /// The function interpreted for loss and gradients.
  func::FuncOp getGradientFunction() const { return gradient.getFunction(); }

private:
  Trainer(TrainerOptions options, OwningOpRef<ModuleOp> forwardModule,
          OwningOpRef<ModuleOp> gradientModule, Interpreter forward,
          Interpreter gradient, SmallVector<ArgumentInfo> arguments,
          std::vector<TrainedParameter> parameters)
      : options(options), forwardModule(std::move(forwardModule)),
        gradientModule(std::move(gradientModule)), forward(forward),
        gradient(gradient), arguments(std::move(arguments)),
        parameters(std::move(parameters)) {}

  /// The argument list for `params` and the data of `step`.
  FailureOr<SmallVector<RuntimeValue>>
  makeArguments(ArrayRef<const ref::Tensor *> params, uint64_t step) const;

  TrainerOptions options;
  /// Private copies of the model's module: the forward function as given and
  /// its differentiated form. The interpreters refer into them.
  OwningOpRef<ModuleOp> forwardModule, gradientModule;
  Interpreter forward, gradient;
  SmallVector<ArgumentInfo> arguments;
  std::vector<TrainedParameter> parameters;
  uint64_t stepsDone = 0;
};

} // namespace mlir::piper

#endif // PIPER_INTERPRETER_TRAINER_H
