//===- Trainer.cpp - Serial reference training loop -----------------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "piper/Interpreter/Trainer.h"

#include "piper/Dialect/Piper/IR/PiperOps.h"
#include "piper/Dialect/Piper/Transforms/Autodiff.h"
#include "piper/Dialect/Piper/Transforms/MixedPrecision.h"

#include "mlir/IR/Verifier.h"

#include <cmath>

using namespace mlir;
using namespace mlir::piper;

std::optional<OptimizerKind> mlir::piper::parseOptimizerKind(StringRef text) {
  if (text == "sgd")
    return OptimizerKind::Sgd;
  if (text == "adamw")
    return OptimizerKind::AdamW;
  return std::nullopt;
}

namespace {

/// A private copy of the module holding `fn` (so that the meshes its
/// placements name come along), or of `fn` alone if it has no module
/// parent; `copy` is set to the copy of `fn`.
OwningOpRef<ModuleOp> copyModel(func::FuncOp fn, func::FuncOp &copy) {
  if (auto parent = dyn_cast_or_null<ModuleOp>(fn->getParentOp())) {
    OwningOpRef<ModuleOp> module(parent.clone());
    copy = module->lookupSymbol<func::FuncOp>(fn.getSymNameAttr());
    if (copy)
      return module;
  }
  OwningOpRef<ModuleOp> module(ModuleOp::create(fn.getLoc()));
  copy = cast<func::FuncOp>(fn->clone());
  module->push_back(copy);
  return module;
}

/// Whether `fn` is already the output of `differentiate`: results beyond the
/// loss carry `piper.grad`.
bool isDifferentiated(func::FuncOp fn) {
  for (unsigned i = 1; i < fn.getNumResults(); ++i)
    if (fn.getResultAttr(i, PiperDialect::getGradAttrName()))
      return true;
  return false;
}

/// The scalar loss in `value`.
FailureOr<double> lossOf(func::FuncOp fn, const RuntimeValue &value) {
  const ref::Tensor *loss = getIfTensor(value);
  if (!loss || loss->data.size() != 1)
    return fn.emitError() << "piper-interp: @" << fn.getSymName()
                          << " must return a scalar float loss first";
  return loss->data[0];
}

} // namespace

FailureOr<Trainer> Trainer::create(func::FuncOp model,
                                   const TrainerOptions &options) {
  if (model.isExternal())
    return model.emitError() << "piper-interp: @" << model.getSymName()
                             << " has no body to interpret";
  // The output of --piper-optimizer threads optimizer state through its
  // signature; the trainer keeps that state itself.
  bool hasState = llvm::any_of(model.getArguments(), [&](BlockArgument arg) {
    return model.getArgAttr(arg.getArgNumber(),
                            PiperDialect::getStateAttrName());
  });
  if (hasState)
    return model.emitError()
           << "piper-interp: @" << model.getSymName()
           << " is a complete training step (it has piper.state arguments, "
              "as --piper-optimizer makes); give the model, or its "
              "--piper-autodiff form, and choose the optimizer with "
              "--optimizer";
  FailureOr<SmallVector<ArgumentInfo>> arguments = analyzeArguments(model);
  if (failed(arguments))
    return failure();
  size_t numParams = llvm::count_if(
      *arguments, [](const ArgumentInfo &a) { return a.isParameter(); });
  if (numParams == 0)
    return model.emitError()
           << "piper-interp: @" << model.getSymName()
           << " has no piper.param arguments, so there is nothing to train";
  auto lossType = model.getNumResults() == 0
                      ? RankedTensorType()
                      : dyn_cast<RankedTensorType>(model.getResultTypes()[0]);
  if (!lossType || !isa<FloatType>(lossType.getElementType()) ||
      lossType.getRank() != 0)
    return model.emitError() << "piper-interp: @" << model.getSymName()
                             << " must return a scalar loss such as "
                                "tensor<f32> (first)";

  // The forward function is interpreted as given; check it before the
  // autodiff so that an unsupported op is reported as written.
  func::FuncOp forwardFn, gradientFn;
  OwningOpRef<ModuleOp> forwardModule = copyModel(model, forwardFn);
  // bf16-mixed trains an f32 model as --piper-mixed-precision rewrites it;
  // a model that already has its casts (or was differentiated after them)
  // runs as written.
  auto applyPolicy = [&](func::FuncOp fn) -> LogicalResult {
    if (options.precision != Precision::BF16Mixed || isDifferentiated(fn) ||
        hasPrecisionCasts(fn))
      return success();
    PrecisionPolicy policy;
    policy.compute = FloatKind::BF16;
    return applyPrecisionPolicy(fn, policy);
  };
  if (failed(applyPolicy(forwardFn)))
    return failure();
  FailureOr<Interpreter> forward =
      Interpreter::create(forwardFn, options.precision);
  if (failed(forward))
    return failure();

  OwningOpRef<ModuleOp> gradientModule = copyModel(model, gradientFn);
  if (failed(applyPolicy(gradientFn)))
    return failure();
  if (!isDifferentiated(gradientFn)) {
    if (failed(differentiate(gradientFn)) || failed(verify(gradientFn)))
      return failure();
  }
  FailureOr<Interpreter> gradient =
      Interpreter::create(gradientFn, options.precision);
  if (failed(gradient))
    return failure();

  if (options.initialValues) {
    std::vector<std::string> names;
    for (const ArgumentInfo &arg : *arguments)
      if (arg.isParameter())
        names.push_back(arg.param.getName().str());
    if (ref::Status status = options.initialValues->checkAllKnown(names);
        !status.ok())
      return model.emitError() << "piper-interp: " << status.message();
  }
  std::vector<TrainedParameter> parameters;
  for (const ArgumentInfo &arg : *arguments) {
    if (!arg.isParameter())
      continue;
    FailureOr<ref::Tensor> value =
        options.initialValues
            ? initialParameterFrom(model, arg, *options.initialValues)
            : initialParameter(model, arg, options.seed);
    if (failed(value))
      return failure();
    roundToStorage(*value, model.getArgument(arg.index).getType(),
                   options.precision);
    TrainedParameter param;
    param.name = arg.param.getName().str();
    param.argIndex = arg.index;
    param.momentum = ref::Tensor::zeros(arg.shape);
    param.adamM = ref::Tensor::zeros(arg.shape);
    param.adamV = ref::Tensor::zeros(arg.shape);
    param.value = std::move(*value);
    parameters.push_back(std::move(param));
  }

  // Results: the loss, then one gradient per parameter in argument order.
  if (gradientFn.getNumResults() != 1 + parameters.size())
    return gradientFn.emitError()
           << "piper-interp: @" << gradientFn.getSymName() << " returns "
           << gradientFn.getNumResults() << " values; expected the loss and "
           << parameters.size() << " gradients";
  for (auto [i, param] : llvm::enumerate(parameters)) {
    auto name = gradientFn.getResultAttrOfType<StringAttr>(
        i + 1, PiperDialect::getGradAttrName());
    if (name && name.getValue() != param.name)
      return gradientFn.emitError()
             << "piper-interp: result #" << (i + 1) << " is the gradient of '"
             << name.getValue() << "'; expected that of '" << param.name << "'";
  }

  return Trainer(options, std::move(forwardModule), std::move(gradientModule),
                 *forward, *gradient, std::move(*arguments),
                 std::move(parameters));
}

FailureOr<SmallVector<RuntimeValue>>
Trainer::makeArguments(ArrayRef<const ref::Tensor *> params,
                       uint64_t step) const {
  func::FuncOp fn = forward.getFunction();
  SmallVector<RuntimeValue> args;
  size_t next = 0;
  // With a corpus: the two integer arguments are tokens and labels.
  SmallVector<const ArgumentInfo *> data;
  for (const ArgumentInfo &arg : arguments)
    if (!arg.isParameter())
      data.push_back(&arg);
  if (options.corpus &&
      (data.size() != 2 ||
       llvm::any_of(data,
                    [](const ArgumentInfo *a) {
                      return a->kind != ArgumentInfo::Kind::IndexData ||
                             a->shape.empty();
                    }) ||
       ref::numelOf(data[0]->shape) != ref::numelOf(data[1]->shape)))
    return emitError(fn.getLoc())
           << "piper-interp: --data needs a language model whose data are "
              "two integer arguments of one size (token ids, then labels); @"
           << fn.getSymName() << " has " << data.size()
           << " data arguments of other kinds or sizes";
  for (const ArgumentInfo &arg : arguments) {
    if (arg.isParameter()) {
      args.push_back(*params[next++]);
      continue;
    }
    if (options.corpus) {
      const ref::Shape &tokens = data[0]->shape;
      ref::IndexTensor t;
      ref::Status status = options.corpus->window(
          step, arg.shape, ref::numelOf(tokens) / tokens[0],
          &arg == data[0] ? 0 : 1, arg.bound, t);
      if (!status.ok())
        return emitError(fn.getArgument(arg.index).getLoc())
               << "piper-interp: argument #" << arg.index << ": "
               << status.message();
      args.push_back(std::move(t));
      continue;
    }
    FailureOr<RuntimeValue> data =
        syntheticArgument(fn, arg, options.seed, step);
    if (failed(data))
      return failure();
    args.push_back(std::move(*data));
  }
  return args;
}

FailureOr<StepResult> Trainer::evaluate(uint64_t step) const {
  SmallVector<const ref::Tensor *> params;
  for (const TrainedParameter &param : parameters)
    params.push_back(&param.value);
  FailureOr<SmallVector<RuntimeValue>> args = makeArguments(params, step);
  if (failed(args))
    return failure();
  FailureOr<SmallVector<RuntimeValue>> results = gradient.run(*args);
  if (failed(results))
    return failure();
  FailureOr<double> loss = lossOf(gradient.getFunction(), results->front());
  if (failed(loss))
    return failure();
  StepResult result{step, *loss, {}};
  for (RuntimeValue &value : llvm::drop_begin(*results))
    result.gradients.push_back(std::move(*std::get_if<ref::Tensor>(&value)));
  return result;
}

/// Multiplies every gradient by the clip factor of their global norm
/// (piper-rt/train.h) when clipping is on; returns the norm.
static double clipGradients(std::vector<ref::Tensor> &grads, double maxNorm) {
  double sumOfSquares = 0.0;
  for (const ref::Tensor &grad : grads)
    for (double g : grad.data)
      sumOfSquares += g * g;
  double coef = ::piper::train::clipCoefficient(sumOfSquares, maxNorm);
  if (coef != 1.0)
    for (ref::Tensor &grad : grads)
      for (double &g : grad.data)
        g *= coef;
  return std::sqrt(sumOfSquares);
}

FailureOr<StepResult> Trainer::step() {
  uint64_t number = stepsDone + 1;
  FailureOr<StepResult> result = evaluate(number);
  if (failed(result))
    return failure();
  // The step's hyperparameters: the scheduled learning rate, the clipped
  // gradients (the result keeps the unclipped ones) and, per parameter,
  // weight decay only where the decay rule says so.
  ref::SgdConfig sgd = options.sgd;
  ref::AdamWConfig adamw = options.adamw;
  if (options.schedule)
    sgd.lr = adamw.lr =
        ::piper::train::lrAt(*options.schedule, static_cast<int64_t>(number));
  result->lr = options.optimizer == OptimizerKind::Sgd ? sgd.lr : adamw.lr;
  std::vector<ref::Tensor> grads = result->gradients;
  result->gradNorm = clipGradients(grads, options.clipGradNorm);
  for (auto [param, grad] : llvm::zip(parameters, grads)) {
    bool decays =
        ::piper::train::decays(options.decay, param.name,
                               static_cast<int64_t>(param.value.shape.size()));
    ref::SgdConfig paramSgd = sgd;
    ref::AdamWConfig paramAdamW = adamw;
    if (!decays)
      paramSgd.weightDecay = paramAdamW.weightDecay = 0.0;
    ref::Status status =
        options.optimizer == OptimizerKind::Sgd
            ? ref::sgdStep(paramSgd, param.value, grad, param.momentum)
            : ref::adamwStep(paramAdamW, static_cast<int64_t>(number),
                             param.value, grad, param.adamM, param.adamV);
    if (!status.ok())
      return emitError(
                 forward.getFunction().getArgument(param.argIndex).getLoc())
             << "piper-interp: updating '" << param.name
             << "': " << status.message();
    // Parameters of an f32 model are stored in f32. Under bf16-mixed they
    // are the f32 master weights, and so is the optimizer state.
    Type type = forward.getFunction().getArgument(param.argIndex).getType();
    roundToStorage(param.value, type, options.precision);
    if (options.precision == Precision::BF16Mixed)
      for (ref::Tensor *state : {&param.momentum, &param.adamM, &param.adamV})
        roundToStorage(*state, type, options.precision);
  }
  stepsDone = number;
  return result;
}

FailureOr<double> Trainer::forwardLoss(ArrayRef<ref::Tensor> params,
                                       uint64_t step) const {
  func::FuncOp fn = forward.getFunction();
  if (params.size() != parameters.size())
    return fn.emitError() << "piper-interp: forwardLoss got " << params.size()
                          << " parameters; @" << fn.getSymName() << " has "
                          << parameters.size();
  SmallVector<const ref::Tensor *> pointers;
  for (const ref::Tensor &param : params)
    pointers.push_back(&param);
  FailureOr<SmallVector<RuntimeValue>> args = makeArguments(pointers, step);
  if (failed(args))
    return failure();
  FailureOr<SmallVector<RuntimeValue>> results = forward.run(*args);
  if (failed(results))
    return failure();
  return lossOf(fn, results->front());
}
