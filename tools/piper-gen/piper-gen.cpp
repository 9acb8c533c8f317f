//===- piper-gen.cpp - Generate reference models as piper IR --------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Command line around the PiperModelGen library: picks a model and a named
// config, applies size overrides, and prints the verified module.
//
//   piper-gen --config=tiny-moe --pp=2 --mesh=dp=2,ep=2 --zero=1
//
// Every error is one line `piper-gen: error: ...` on stderr and exit code 1.
// See docs/ModelGenerator.md.
//
//===----------------------------------------------------------------------===//

#include "GlobalBatch.h"
#include "piper/Config.h"
#include "piper/InitAllPiper.h"
#include "piper/ModelGen/ModelGen.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::piper;
using namespace mlir::piper::modelgen;
namespace cl = llvm::cl;

namespace {

cl::OptionCategory genCategory("piper-gen options");
cl::OptionCategory
    sizeCategory("Size overrides (each replaces the config's value)");

cl::opt<std::string> modelName(
    "model",
    cl::desc("Model family: mlp, gpt or moe (default: the config's family)"),
    cl::value_desc("mlp|gpt|moe"), cl::cat(genCategory));
cl::opt<std::string> configName(
    "config",
    cl::desc("Named config (default: tiny-<model>); see --list-configs"),
    cl::value_desc("name"), cl::cat(genCategory));
cl::opt<bool> listConfigs("list-configs",
                          cl::desc("Print the named configs and exit"),
                          cl::cat(genCategory));
cl::opt<int64_t> pipelineStages(
    "pp",
    cl::desc("Pipeline stages: contiguous {PP = s} chunks of layers; 0 emits "
             "no PP chunks"),
    cl::init(1), cl::value_desc("N"), cl::cat(genCategory));
cl::opt<std::string> meshSpec(
    "mesh",
    cl::desc("Emit piper.mesh @mesh with these axes and place every "
             "parameter on it: experts split over 'ep', replicated over 'dp'"),
    cl::value_desc("name=size,..."), cl::cat(genCategory));
cl::opt<int64_t>
    zeroStage("zero", cl::desc("ZeRO stage (0-3) of every parameter placement"),
              cl::init(0), cl::value_desc("Z"), cl::cat(genCategory));
cl::opt<std::string>
    dtypeName("dtype",
              cl::desc("Element type of every float tensor, the loss "
                       "included: f32, f64 or bf16"),
              cl::init("f32"), cl::value_desc("type"), cl::cat(genCategory));
cl::opt<bool> tieEmbeddings(
    "tie-embeddings",
    cl::desc("GPT/MoE: the LM head reads the transposed embedding table "
             "(no lm_head.weight); under --pp the first and last stages share "
             "embed.weight"),
    cl::init(false), cl::cat(genCategory));
cl::opt<bool> nameValues(
    "name-values",
    cl::desc("Name SSA values after the parameter or module they belong to "
             "(%layers.0.attn.wq, %layers.0.attn.q_proj); =false prints "
             "%argN and %N"),
    cl::init(true), cl::cat(genCategory));
cl::opt<std::string> outputFilename("o", cl::desc("Output file (default: -)"),
                                    cl::value_desc("filename"), cl::init("-"),
                                    cl::cat(genCategory));

cl::opt<int64_t> layers("layers",
                        cl::desc("Decoder layers (MLP: hidden layers)"),
                        cl::value_desc("N"), cl::cat(sizeCategory));
cl::opt<int64_t> hidden("hidden",
                        cl::desc("Model width H (MLP: hidden-layer width)"),
                        cl::value_desc("N"), cl::cat(sizeCategory));
cl::opt<int64_t> heads("heads", cl::desc("Attention heads (divide H)"),
                       cl::value_desc("N"), cl::cat(sizeCategory));
cl::opt<int64_t> ffn("ffn", cl::desc("FFN width (MoE: per expert)"),
                     cl::value_desc("N"), cl::cat(sizeCategory));
cl::opt<int64_t> experts("experts", cl::desc("Experts per MoE layer"),
                         cl::value_desc("N"), cl::cat(sizeCategory));
cl::opt<int64_t> topK("top-k", cl::desc("Experts chosen per token"),
                      cl::value_desc("N"), cl::cat(sizeCategory));
cl::opt<int64_t> vocab("vocab",
                       cl::desc("Vocabulary size (MLP: output classes)"),
                       cl::value_desc("N"), cl::cat(sizeCategory));
cl::opt<int64_t> seq("seq", cl::desc("Sequence length"), cl::value_desc("N"),
                     cl::cat(sizeCategory));
cl::opt<int64_t> batch("batch", cl::desc("Sequences (MLP: samples) per step"),
                       cl::value_desc("N"), cl::cat(sizeCategory));
cl::opt<int64_t> globalBatch(
    "global-batch",
    cl::desc("Sequences (MLP: samples) per step over the whole job, under "
             "--strategy on --mesh: sets --batch to one microbatch of one "
             "replica, checking that the batch divides"),
    cl::value_desc("N"), cl::cat(sizeCategory));
cl::opt<std::string> strategyFile(
    "strategy",
    cl::desc("The JSON strategy --global-batch divides over (its split and "
             "replicate directives)"),
    cl::value_desc("file.json"), cl::cat(sizeCategory));
cl::opt<int64_t> inFeatures("in-features", cl::desc("MLP input features"),
                            cl::value_desc("N"), cl::cat(sizeCategory));
cl::opt<double> capacityFactor(
    "capacity-factor",
    cl::desc("MoE expert capacity factor: C = ceil(f * T * k / E), at most "
             "T; 0 means C = T (no token dropped)"),
    cl::value_desc("F"), cl::cat(sizeCategory));

int fail(const llvm::Twine &message) {
  llvm::WithColor::error(llvm::errs(), "piper-gen") << message << "\n";
  return 1;
}

/// Prints the named configs as a table.
void printConfigs(llvm::raw_ostream &os) {
  auto cell = [](int64_t v) {
    return v ? std::to_string(v) : std::string("-");
  };
  os << llvm::formatv("{0,-9} {1,-5} {2,6} {3,6} {4,5} {5,5} {6,7} {7,5} "
                      "{8,7} {9,5} {10,5} {11,4} {12,-12} {13,10}\n",
                      "config", "model", "layers", "hidden", "heads", "ffn",
                      "experts", "top-k", "vocab", "seq", "batch", "in",
                      "capacity", "params");
  for (const ModelConfig &c : getNamedConfigs()) {
    // The capacity C, with its factor or "T" where no token is dropped.
    std::string capacity = "-";
    if (c.model == ModelKind::MoE) {
      llvm::raw_string_ostream cos(capacity = "");
      cos << getExpertCapacity(c) << " (";
      if (c.capacityFactor > 0)
        cos << "f=" << llvm::format("%g", c.capacityFactor) << ")";
      else
        cos << "T)";
    }
    os << llvm::formatv("{0,-9} {1,-5} {2,6} {3,6} {4,5} {5,5} {6,7} {7,5} "
                        "{8,7} {9,5} {10,5} {11,4} {12,-12} {13,10}\n",
                        c.name, stringifyModelKind(c.model), cell(c.layers),
                        cell(c.hidden), cell(c.heads), cell(c.ffn),
                        cell(c.experts), cell(c.topK), cell(c.vocab),
                        cell(c.seq), cell(c.batch), cell(c.inFeatures),
                        capacity, getParameterCount(c.model, c));
  }
}

/// Turns the command line into GenOptions, or returns an error message.
llvm::Expected<GenOptions> getOptions() {
  auto error = [](const llvm::Twine &message) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
  };
  GenOptions options;

  std::optional<ModelKind> model;
  if (!modelName.empty()) {
    model = symbolizeModelKind(modelName);
    if (!model)
      return error("unknown model '" + modelName +
                   "'; expected mlp, gpt or moe");
  }
  if (!model && configName.empty())
    return error("give --model=mlp|gpt|moe or --config=NAME (see "
                 "--list-configs)");
  std::string name = configName.empty()
                         ? ("tiny-" + stringifyModelKind(*model)).str()
                         : configName.getValue();
  const ModelConfig *config = lookupNamedConfig(name);
  if (!config) {
    std::string known;
    for (const ModelConfig &c : getNamedConfigs())
      known += (known.empty() ? "" : ", ") + c.name;
    return error("unknown config '" + name + "'; known configs: " + known);
  }
  options.config = *config;
  options.model = model.value_or(config->model);

  ModelConfig &c = options.config;
  auto override = [](cl::opt<int64_t> &flag, int64_t &field) {
    if (flag.getNumOccurrences())
      field = flag;
  };
  override(layers, c.layers);
  override(hidden, c.hidden);
  override(heads, c.heads);
  override(ffn, c.ffn);
  override(experts, c.experts);
  override(topK, c.topK);
  override(vocab, c.vocab);
  override(seq, c.seq);
  override(batch, c.batch);
  override(inFeatures, c.inFeatures);
  if (capacityFactor.getNumOccurrences())
    c.capacityFactor = capacityFactor;
  c.tieEmbeddings = tieEmbeddings;

  options.pipelineStages = pipelineStages;
  options.zero = zeroStage;
  if (meshSpec.getNumOccurrences()) {
    auto mesh = parseMeshSpec(meshSpec);
    if (!mesh)
      return mesh.takeError();
    options.mesh = std::move(*mesh);
  }
  if (globalBatch.getNumOccurrences() || strategyFile.getNumOccurrences()) {
    if (batch.getNumOccurrences())
      return error("give --batch (one microbatch of one replica) or "
                   "--global-batch, "
                   "not both");
    if (strategyFile.empty() || !meshSpec.getNumOccurrences() ||
        !globalBatch.getNumOccurrences())
      return error("--global-batch needs --strategy=FILE.json and --mesh "
                   "(the replicas it divides over)");
    llvm::Expected<::piper::gen::BatchSplit> split =
        ::piper::gen::splitGlobalBatch(globalBatch, strategyFile, options.mesh);
    if (!split)
      return split.takeError();
    c.batch = split->microbatch;
    llvm::errs() << "piper-gen: " << split->describe() << "\n";
  }
  std::optional<ElementKind> dtype = symbolizeElementKind(dtypeName);
  if (!dtype)
    return error("unknown dtype '" + dtypeName +
                 "'; expected f32, f64 or bf16");
  options.dtype = *dtype;
  return options;
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  registerAsmPrinterCLOptions();
  registerMLIRContextCLOptions();
  cl::AddExtraVersionPrinter([](llvm::raw_ostream &os) {
    os << "Piper version " << PIPER_VERSION << " (built with LLVM "
       << PIPER_LLVM_VERSION << ")\n";
  });
  // LLVM's and MLIR's own options (--mlir-print-debuginfo, ...) still work;
  // --help lists only the generator's.
  cl::HideUnrelatedOptions({&genCategory, &sizeCategory});
  cl::ParseCommandLineOptions(
      argc, argv,
      "piper-gen: emits the forward training step of an MLP, a dense GPT or "
      "a Qwen3-style MoE GPT as verified piper IR\n");

  if (listConfigs) {
    printConfigs(llvm::outs());
    return 0;
  }

  llvm::Expected<GenOptions> options = getOptions();
  if (!options)
    return fail(llvm::toString(options.takeError()));

  DialectRegistry registry;
  registerPiper(registry);
  MLIRContext context(registry);
  // One located line per error: never the whole function the error is on.
  context.printOpOnDiagnostic(false);
  auto module = buildModel(&context, *options);
  if (!module)
    return fail(llvm::toString(module.takeError()));

  std::string errorMessage;
  std::unique_ptr<llvm::ToolOutputFile> output =
      openOutputFile(outputFilename, &errorMessage);
  if (!output)
    return fail(errorMessage);
  // The flags start from the --mlir-print-* options.
  OpPrintingFlags flags;
  if (nameValues)
    flags.printNameLocAsPrefix();
  (*module)->print(output->os(), flags);
  output->os() << "\n";
  output->keep();
  return 0;
}
