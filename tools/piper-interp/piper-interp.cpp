//===- piper-interp.cpp - Train a Piper model with the reference ----------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Trains a model serially with the reference interpreter and prints one line
// per step, with the loss to 17 significant digits so that tests can pin it:
//
//   $ piper-interp test/Interpreter/train-mlp.mlir --steps=2 --lr=0.1
//   step 1 loss 1.7759864140289594
//   step 2 loss 1.5226512180626532
//
// --dump=FILE also writes step 1 as JSON (initial parameters, data, loss and
// gradients) for checks outside Piper, such as test/Torch/.
// --params-out=FILE writes the final parameters (`name v0 v1 ...` per line),
// what multi-rank runs compare against (piper-run --params-out).
//
// Every error (bad flag, unreadable file, invalid IR, unsupported op,
// failing kernel, unwritable dump) is reported on stderr and exits with
// status 1.
//
//===----------------------------------------------------------------------===//

#include "common/EvalFlags.h"
#include "common/LossCurve.h"
#include "piper/Config.h"
#include "piper/Dialect/Piper/IR/PiperDialect.h"
#include "piper/InitAllPiper.h"
#include "piper/Interpreter/Sampler.h"
#include "piper/Interpreter/Trainer.h"
#include "piper/ParserGuards.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

#include <unistd.h>

#include <cmath>

using namespace mlir;
using namespace mlir::piper;
namespace cl = llvm::cl;

namespace {

cl::OptionCategory category("piper-interp options");

cl::opt<std::string> inputFilename(cl::Positional, cl::desc("<model.mlir>"),
                                   cl::init("-"), cl::cat(category));
cl::opt<std::string>
    functionName("function",
                 cl::desc("The function to train (default: the only one, or "
                          "the only one with piper.param arguments)"),
                 cl::value_desc("name"), cl::cat(category));
cl::opt<uint64_t> seed("seed",
                       cl::desc("Seed of parameters and data (default 0)"),
                       cl::init(0), cl::cat(category));
cl::opt<int64_t> steps("steps", cl::desc("Training steps (default 1)"),
                       cl::init(1), cl::cat(category));
// The optimizer flags and their defaults are piper-compile's and piper-run's
// (piper-rt/train.h), so the same model trains alike in every tool.
cl::opt<std::string> optimizer("optimizer", cl::desc("adamw (default) or sgd"),
                               cl::init(::piper::train::kDefaultOptimizer),
                               cl::cat(category));
cl::opt<double> lr("lr", cl::desc("Peak learning rate (default 1e-3)"),
                   cl::init(::piper::train::kDefaultLr), cl::cat(category));
cl::opt<int64_t> warmupSteps("warmup-steps",
                             cl::desc("Steps of linear warmup from 0 to --lr "
                                      "(default 0)"),
                             cl::init(0), cl::cat(category));
cl::opt<std::string>
    lrSchedule("lr-schedule",
               cl::desc("After warmup: constant (default), cosine or linear "
                        "decay to --min-lr at --decay-steps"),
               cl::init("constant"), cl::cat(category));
cl::opt<double> minLr("min-lr",
                      cl::desc("Learning rate at the end of decay (default 0)"),
                      cl::init(0.0), cl::cat(category));
cl::opt<int64_t> decaySteps("decay-steps",
                            cl::desc("Step at which decay ends (default: "
                                     "--steps)"),
                            cl::init(0), cl::cat(category));
cl::opt<double> clipGradNorm("clip-grad-norm",
                             cl::desc("Clip the global gradient norm to this "
                                      "bound before each update (default 0: "
                                      "off)"),
                             cl::init(0.0), cl::cat(category));
cl::opt<std::string>
    noDecay("no-decay",
            cl::desc("Parameters without weight decay: rank<2 (default: "
                     "biases and norm gains), none, all, or name globs "
                     "(e.g. '*.bias,*norm*')"),
            cl::init(::piper::train::kDefaultNoDecay), cl::cat(category));
cl::opt<double> momentum("momentum", cl::desc("SGD momentum (default 0)"),
                         cl::init(::piper::train::kDefaultMomentum),
                         cl::cat(category));
cl::opt<double> weightDecay("weight-decay",
                            cl::desc("Weight decay (default: 0.01 for adamw, "
                                     "0 for sgd)"),
                            cl::cat(category));
cl::opt<double> beta1("beta1", cl::desc("AdamW beta1 (default 0.9)"),
                      cl::init(::piper::train::kDefaultBeta1),
                      cl::cat(category));
cl::opt<double> beta2("beta2", cl::desc("AdamW beta2 (default 0.999)"),
                      cl::init(::piper::train::kDefaultBeta2),
                      cl::cat(category));
cl::opt<double> eps("eps", cl::desc("AdamW epsilon (default 1e-8)"),
                    cl::init(::piper::train::kDefaultEps), cl::cat(category));
cl::opt<std::string> precision("precision",
                               cl::desc("f64 (default); f32: round every "
                                        "float result to f32; bf16-mixed: "
                                        "train the model as "
                                        "--piper-mixed-precision rewrites "
                                        "it, rounding every value to its "
                                        "type"),
                               cl::init("f64"), cl::cat(category));
cl::opt<bool> printGrads("print-grads",
                         cl::desc("After each step's loss, print every "
                                  "gradient's name, shape and L2 norm"),
                         cl::init(false), cl::cat(category));
cl::opt<std::string>
    dumpFilename("dump",
                 cl::desc("Write step 1 as JSON to FILE: initial parameters, "
                          "data, loss and gradients (before the update)"),
                 cl::value_desc("file"), cl::cat(category));
cl::opt<std::string> dataFile(
    "data",
    cl::desc("Train on the bytes of a text file (e.g. Piper's "
             "data/corpus/sonnets.txt) as tokens, in a fixed order, instead "
             "of synthetic data; needs a language model with vocabulary 256"),
    cl::value_desc("file"), cl::cat(category));
cl::opt<std::string>
    paramsIn("params-in",
             cl::desc("Start from the parameter values in FILE (the format of "
                      "--params-out) instead of the seeded initialisers"),
             cl::value_desc("file"), cl::cat(category));
cl::opt<std::string> paramsOut(
    "params-out",
    cl::desc("After the last step, write every parameter to FILE, one line "
             "each: its name, then its values (%.17g) in row-major order; "
             "piper-run --params-out writes the same format"),
    cl::value_desc("file"), cl::cat(category));
cl::opt<int64_t> sampleBytes(
    "sample",
    cl::desc("After training, continue --prompt by N bytes with the trained "
             "parameters and print the text (a byte-level language model)"),
    cl::init(0), cl::value_desc("N"), cl::cat(category));
cl::opt<std::string> prompt("prompt",
                            cl::desc("Text the sample continues (default: a "
                                     "newline)"),
                            cl::init(""), cl::cat(category));
cl::opt<double> temperature(
    "temperature",
    cl::desc("Sampling temperature: 0 takes the most likely byte (default "
             "0.8; the draws are seeded by --seed)"),
    cl::init(0.8), cl::cat(category));

/// `text` with bytes other than printable ASCII, newline and tab written
/// as \\xNN, so a sample never garbles the terminal.
std::string printableText(const std::string &text) {
  std::string out;
  for (unsigned char c : text) {
    if ((c >= 32 && c < 127) || c == '\n' || c == '\t')
      out += static_cast<char>(c);
    else
      out += llvm::formatv("\\x{0:x-2}", unsigned(c)).str();
  }
  return out;
}

int fail(const Twine &message) {
  llvm::errs() << "piper-interp: " << message << "\n";
  return 1;
}

/// The interpreter holds every value of a step as f64 (8 bytes an element)
/// and keeps the forward values for the backward pass. A model whose
/// tensors together need more than the machine's memory (piper-gen
/// --batch=16000000 --hidden=16000) used to end mid-step in "LLVM ERROR: out
/// of memory"; it is refused here, before anything is allocated, at the op
/// with the largest tensor.
LogicalResult checkMemory(func::FuncOp fn) {
  long pages = sysconf(_SC_PHYS_PAGES), pageSize = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || pageSize <= 0)
    return success();
  int64_t memory = int64_t(pages) * int64_t(pageSize);
  int64_t total = 0, largest = 0;
  Location where = fn.getLoc();
  bool overflow = false;
  auto add = [&](Type type, Location loc) {
    auto tensor = dyn_cast<RankedTensorType>(type);
    if (!tensor || !tensor.hasStaticShape())
      return;
    int64_t bytes = 8;
    for (int64_t d : tensor.getShape())
      overflow |= llvm::MulOverflow(bytes, d, bytes);
    overflow |= llvm::AddOverflow(total, bytes, total);
    if (bytes > largest) {
      largest = bytes;
      where = loc;
    }
  };
  for (BlockArgument arg : fn.getArguments())
    add(arg.getType(), fn.getLoc());
  fn.walk([&](Operation *op) {
    for (Type type : op->getResultTypes())
      add(type, op->getLoc());
  });
  if (!overflow && total <= memory)
    return success();
  return emitError(where) << "piper-interp: the step's tensors need "
                          << (overflow ? std::string("more than 2^63")
                                       : std::to_string(total))
                          << " bytes as f64 (the largest, here, " << largest
                          << "), more than this machine's " << memory
                          << " bytes of memory";
}

/// The function to train: --function, or the only function with a body, or
/// the only one with piper.param arguments.
FailureOr<func::FuncOp> chooseFunction(ModuleOp module) {
  if (!functionName.empty()) {
    auto fn = module.lookupSymbol<func::FuncOp>(functionName);
    if (!fn) {
      fail("no function @" + functionName + " in '" + inputFilename + "'");
      return failure();
    }
    return fn;
  }
  SmallVector<func::FuncOp> withBody, withParams;
  for (auto fn : module.getOps<func::FuncOp>()) {
    if (fn.isExternal())
      continue;
    withBody.push_back(fn);
    if (llvm::any_of(fn.getArguments(), [&](BlockArgument arg) {
          return fn.getArgAttr(arg.getArgNumber(),
                               PiperDialect::getParamAttrName());
        }))
      withParams.push_back(fn);
  }
  if (withBody.size() == 1)
    return withBody.front();
  if (withParams.size() == 1)
    return withParams.front();
  if (withBody.empty()) {
    fail("'" + inputFilename + "' has no function to train");
    return failure();
  }
  std::string names;
  for (func::FuncOp fn : withBody)
    names += (names.empty() ? "@" : ", @") + fn.getSymName().str();
  fail("'" + inputFilename + "' has several functions (" + names +
       "); choose one with --function");
  return failure();
}

double l2Norm(const ref::Tensor &t) {
  double sum = 0;
  for (double v : t.data)
    sum += v * v;
  return std::sqrt(sum);
}

/// `values` as a JSON array; doubles print with 17 significant digits, so
/// they read back exactly.
template <typename T>
void writeValues(llvm::json::OStream &json, ArrayRef<T> values) {
  json.array([&] {
    for (T v : values)
      json.value(v);
  });
}

void writeTensor(llvm::json::OStream &json, const ref::Tensor &t) {
  json.object([&] {
    json.attributeArray("shape", [&] {
      for (int64_t d : t.shape)
        json.value(d);
    });
    json.attributeBegin("values");
    writeValues<double>(json, t.data);
    json.attributeEnd();
  });
}

/// Writes the dump of --dump: step 1 of `trainer` (its data, `result`) from
/// `initial`, the parameters before the update.
LogicalResult writeDump(llvm::raw_ostream &os, func::FuncOp fn,
                        const Trainer &trainer, ArrayRef<ref::Tensor> initial,
                        const StepResult &result) {
  const TrainerOptions &options = trainer.getOptions();
  // The data the trainer fed to step 1 (the same pure function of the seed).
  SmallVector<std::pair<const ArgumentInfo *, RuntimeValue>> data;
  for (const ArgumentInfo &arg : trainer.getArguments()) {
    if (arg.isParameter())
      continue;
    FailureOr<RuntimeValue> value =
        syntheticArgument(fn, arg, options.seed, result.step);
    if (failed(value))
      return failure();
    // The interpreter rounds float arguments on entry (f32, bf16-mixed).
    if (auto *t = std::get_if<ref::Tensor>(&*value))
      roundToStorage(*t, fn.getArgument(arg.index).getType(),
                     options.precision);
    data.emplace_back(&arg, std::move(*value));
  }

  llvm::json::OStream json(os);
  json.object([&] {
    json.attribute("function", fn.getSymName());
    json.attribute("seed", options.seed);
    json.attribute("precision", stringifyPrecision(options.precision));
    json.attributeObject("params", [&] {
      for (auto [param, value] : llvm::zip(trainer.getParameters(), initial)) {
        json.attributeBegin(param.name);
        writeTensor(json, value);
        json.attributeEnd();
      }
    });
    json.attributeArray("data", [&] {
      for (const auto &entry : data) {
        const ArgumentInfo &arg = *entry.first;
        const ref::Tensor *floats = getIfTensor(entry.second);
        json.object([&] {
          json.attribute("index", static_cast<int64_t>(arg.index));
          json.attributeArray("shape", [&] {
            for (int64_t d : arg.shape)
              json.value(d);
          });
          json.attribute("dtype", floats ? "f64" : "i64");
          json.attributeBegin("values");
          if (floats)
            writeValues<double>(json, floats->data);
          else
            writeValues<int64_t>(json, getIfIndexTensor(entry.second)->data);
          json.attributeEnd();
        });
      }
    });
    json.attribute("loss", result.loss);
    json.attributeObject("grads", [&] {
      for (auto [param, grad] :
           llvm::zip(trainer.getParameters(), result.gradients)) {
        json.attributeBegin(param.name);
        writeTensor(json, grad);
        json.attributeEnd();
      }
    });
  });
  os << "\n";
  return success();
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::AddExtraVersionPrinter([](llvm::raw_ostream &os) {
    os << "Piper version " << PIPER_VERSION << " (built with LLVM "
       << PIPER_LLVM_VERSION << ")\n";
  });
  cl::HideUnrelatedOptions({&category, &::piper::evalCategory()});
  cl::ParseCommandLineOptions(
      argc, argv,
      "Piper reference interpreter: trains a model serially in f64 (or "
      "emulated f32)\nwith deterministic parameters and synthetic data, "
      "printing the loss per step.\n");

  // Flags first, so that a typo fails before any work.
  TrainerOptions options;
  options.seed = seed;
  std::optional<Precision> parsedPrecision = parsePrecision(precision);
  if (!parsedPrecision)
    return fail("unknown --precision '" + precision +
                "'; expected f64, f32 or bf16-mixed");
  options.precision = *parsedPrecision;
  std::optional<OptimizerKind> parsedOptimizer = parseOptimizerKind(optimizer);
  if (!parsedOptimizer)
    return fail("unknown --optimizer '" + optimizer +
                "'; expected sgd or adamw");
  options.optimizer = *parsedOptimizer;
  if (steps < 1)
    return fail("--steps must be at least 1, got " +
                Twine(static_cast<int64_t>(steps)));
  ref::ByteCorpus corpus;
  if (!dataFile.empty()) {
    ref::Status status = ref::ByteCorpus::load(dataFile, corpus);
    if (!status.ok())
      return fail(status.message());
    options.corpus = &corpus;
  }
  ref::ParamsFile initialValues;
  if (!paramsIn.empty()) {
    ref::Status status = ref::ParamsFile::load(paramsIn, initialValues);
    if (!status.ok())
      return fail(status.message());
    options.initialValues = &initialValues;
  }
  if (!(lr >= 0.0 && std::isfinite(lr)))
    return fail("--lr must be finite and non-negative");
  ::piper::train::LrSchedule schedule;
  schedule.lr = lr;
  schedule.warmupSteps = warmupSteps;
  schedule.minLr = minLr;
  schedule.decaySteps =
      decaySteps.getNumOccurrences() ? int64_t(decaySteps) : int64_t(steps);
  if (!::piper::train::parseScheduleKind(lrSchedule, schedule.kind))
    return fail("--lr-schedule must be constant, cosine or linear, got '" +
                lrSchedule + "'");
  if (std::string bad = ::piper::train::checkSchedule(schedule); !bad.empty())
    return fail("invalid learning-rate schedule: " + bad);
  options.schedule = schedule;
  if (!(clipGradNorm >= 0.0 && std::isfinite(clipGradNorm)))
    return fail("--clip-grad-norm must be finite and non-negative");
  options.clipGradNorm = clipGradNorm;
  std::string ruleError;
  if (!::piper::train::parseDecayRule(noDecay, options.decay, ruleError))
    return fail(ruleError);
  if (options.optimizer == OptimizerKind::Sgd) {
    options.sgd.lr = lr;
    options.sgd.momentum = momentum;
    if (weightDecay.getNumOccurrences())
      options.sgd.weightDecay = weightDecay;
  } else {
    options.adamw.lr = lr;
    options.adamw.beta1 = beta1;
    options.adamw.beta2 = beta2;
    options.adamw.eps = eps;
    if (weightDecay.getNumOccurrences())
      options.adamw.weightDecay = weightDecay;
  }

  DialectRegistry registry;
  registerPiper(registry);
  MLIRContext context(registry);
  // One located line per error: never the whole function the error is on.
  context.printOpOnDiagnostic(false);
  context.loadAllAvailableDialects();
  // The located message and its source line say it all; a generic dump of
  // the op would bury them.
  context.printOpOnDiagnostic(false);

  std::string errorMessage;
  std::unique_ptr<llvm::MemoryBuffer> file =
      openInputFile(inputFilename, &errorMessage);
  if (!file)
    return fail(errorMessage);
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(file), SMLoc());
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);
  if (failed(checkUpstreamParserCrashes(sourceMgr, &context)))
    return 1;

  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!module)
    return 1;
  FailureOr<func::FuncOp> fn = chooseFunction(*module);
  if (failed(fn))
    return 1;

  if (failed(checkMemory(*fn)))
    return 1;
  FailureOr<Trainer> trainer = Trainer::create(*fn, options);
  if (failed(trainer))
    return 1;
  // Held-out evaluation: the forward loss of the eval corpus's batches at
  // the trained parameters (a second trainer only for its data).
  ref::ByteCorpus heldOut;
  std::optional<Trainer> evaluator;
  std::string flagError;
  if (!::piper::checkEvalFlags(flagError))
    return fail(flagError);
  std::optional<Sampler> sampler;
  if (sampleBytes < 0 || sampleBytes > 1000000 || !(temperature >= 0) ||
      !std::isfinite(temperature))
    return fail("--sample must be in [0, 1000000] and --temperature finite "
                "and >= 0");
  if (sampleBytes > 0) {
    FailureOr<Sampler> created = Sampler::create(*fn, options.precision);
    if (failed(created))
      return 1;
    sampler.emplace(std::move(*created));
  }
  if (!::piper::evalData.empty()) {
    ref::Status status = ref::ByteCorpus::load(::piper::evalData, heldOut);
    if (!status.ok())
      return fail(status.message());
    TrainerOptions evalOptions = options;
    evalOptions.corpus = &heldOut;
    FailureOr<Trainer> created = Trainer::create(*fn, evalOptions);
    if (failed(created))
      return 1;
    evaluator.emplace(std::move(*created));
  }

  // The dump file is opened before training, so that an unwritable path
  // fails before any work; it is removed again if the run fails.
  std::unique_ptr<llvm::ToolOutputFile> dumpFile;
  std::vector<ref::Tensor> initialParams;
  if (!dumpFilename.empty()) {
    dumpFile = openOutputFile(dumpFilename, &errorMessage);
    if (!dumpFile)
      return fail(errorMessage);
    for (const TrainedParameter &param : trainer->getParameters())
      initialParams.push_back(param.value);
  }

  llvm::raw_ostream &os = llvm::outs();
  ::piper::CurveSeries lossCurve{"training loss", "#1f77b4", {}};
  ::piper::CurveSeries evalCurve{"held-out loss", "#ff7f0e", {}};
  for (int64_t i = 0; i < steps; ++i) {
    FailureOr<StepResult> result = trainer->step();
    if (failed(result))
      return 1;
    if (dumpFile && i == 0) {
      if (failed(
              writeDump(dumpFile->os(), *fn, *trainer, initialParams, *result)))
        return 1;
      dumpFile->os().close();
      if (std::error_code error = dumpFile->os().error()) {
        // A stream with an error left in it aborts when destroyed.
        dumpFile->os().clear_error();
        return fail("cannot write '" + dumpFilename + "': " + error.message());
      }
      dumpFile->keep();
    }
    os << "step " << result->step << " loss "
       << llvm::format("%.17g", result->loss) << "\n";
    lossCurve.points.emplace_back(static_cast<double>(result->step),
                                  result->loss);
    if (printGrads) {
      for (auto [param, grad] :
           llvm::zip(trainer->getParameters(), result->gradients))
        os << "  grad " << param.name << " shape "
           << ref::shapeToString(grad.shape) << " norm "
           << llvm::format("%.17g", l2Norm(grad)) << "\n";
    }
    bool evalNow = evaluator && ::piper::evaluateAfter(i + 1, steps);
    if (evalNow) {
      std::vector<ref::Tensor> params;
      for (const TrainedParameter &param : trainer->getParameters())
        params.push_back(param.value);
      double sum = 0;
      for (int64_t b = 1; b <= ::piper::evalBatches; ++b) {
        FailureOr<double> loss = evaluator->forwardLoss(params, b);
        if (failed(loss))
          return 1;
        sum += *loss;
      }
      double mean = sum / static_cast<double>(::piper::evalBatches);
      os << "eval step " << result->step << " loss "
         << llvm::format("%.17g", mean) << " ppl "
         << llvm::format("%.6g", std::exp(mean)) << "\n";
      evalCurve.points.emplace_back(static_cast<double>(result->step), mean);
    }
    os.flush();
  }
  if (sampleBytes > 0) {
    std::vector<ref::Tensor> params;
    for (const TrainedParameter &param : trainer->getParameters())
      params.push_back(param.value);
    FailureOr<std::string> text = sampler->generate(params, prompt, sampleBytes,
                                                    temperature, options.seed);
    if (failed(text))
      return 1;
    os << "sample (" << sampleBytes << " bytes, "
       << (temperature > 0 ? "temperature " +
                                 llvm::formatv("{0}", double(temperature)).str()
                           : std::string("greedy"))
       << "):\n"
       << printableText(*text) << "\n";
  }
  std::string plotError;
  if (!::piper::plotFile.empty() &&
      !::piper::writeLossCurveSVG(::piper::plotFile,
                                  "piper-interp " + inputFilename,
                                  evaluator ? std::vector{lossCurve, evalCurve}
                                            : std::vector{lossCurve},
                                  plotError))
    return fail(plotError);
  if (!paramsOut.empty()) {
    std::unique_ptr<llvm::ToolOutputFile> file =
        openOutputFile(paramsOut, &errorMessage);
    if (!file)
      return fail(errorMessage);
    for (const TrainedParameter &param : trainer->getParameters()) {
      file->os() << param.name;
      for (double v : param.value.data)
        file->os() << " " << llvm::format("%.17g", v);
      file->os() << "\n";
    }
    file->keep();
  }
  return 0;
}
