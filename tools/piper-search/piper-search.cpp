//===- piper-search.cpp - Automatic strategy search -----------------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// piper-search --config=qwen3_1b --mesh=4x8 --device=a100
//     --intra-link=nvlink:300:3 --inter-link=efa:6.25:15
//     --memory-budget=80GiB --global-batch=64 -o best.json
//     --model-out=model.mlir
//
// Searches the strategies of a piper-gen model on a cluster (lib/Search,
// docs/Search.md), prints the ranked table and writes the best strategy as
// a JSON directive list that `piper-compile model.mlir --directives=`
// reads, with the model it belongs to.
//
//===----------------------------------------------------------------------===//

#include "piper/InitAllPiper.h"
#include "piper/Search/Search.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"

#include "piper/Schedule/Builders.h"
#include "piper/Simulator/DeviceSpecs.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/WithColor.h"

using namespace mlir;
using namespace mlir::piper;
using namespace mlir::piper::search;
namespace cl = llvm::cl;

namespace {

cl::OptionCategory category("piper-search options");
cl::opt<std::string> inputFilename(cl::Positional,
                                   cl::desc("[model.mlir] (instead of "
                                            "--config: its mesh and stages "
                                            "are kept)"),
                                   cl::init(""), cl::cat(category));
cl::opt<std::string> configName("config",
                                cl::desc("piper-gen config (--list-configs "
                                         "of piper-gen)"),
                                cl::value_desc("name"), cl::cat(category));
cl::opt<std::string> modelName("model",
                               cl::desc("mlp, gpt or moe (default: the "
                                        "config's family)"),
                               cl::cat(category));
cl::opt<std::string> meshSpec("mesh",
                              cl::desc("NODESxDEVICES_PER_NODE (default 1x1)"),
                              cl::init("1x1"), cl::cat(category));
cl::opt<std::string> device("device", cl::desc("a100, h100 or h200"),
                            cl::init("a100"), cl::cat(category));
cl::opt<std::string> intraLink("intra-link",
                               cl::desc("Link inside a node: CLASS or "
                                        "CLASS:GB/s:us (default nvlink)"),
                               cl::init("nvlink"), cl::cat(category));
cl::opt<std::string> interLink("inter-link",
                               cl::desc("Link across nodes (default "
                                        "infiniband)"),
                               cl::init("infiniband"), cl::cat(category));
cl::opt<std::string> budget("memory-budget",
                            cl::desc("Bytes per device, with an optional "
                                     "KiB/MiB/GiB/KB/MB/GB suffix (default: "
                                     "the device's memory)"),
                            cl::cat(category));
cl::opt<int64_t> globalBatch("global-batch",
                             cl::desc("Sequences per step over all replicas "
                                      "(default 16 x the config's batch)"),
                             cl::init(0), cl::cat(category));
cl::opt<std::string> dtype("dtype", cl::desc("f32, f64 or bf16 (default)"),
                           cl::init("bf16"), cl::cat(category));
cl::opt<int64_t> layers("layers", cl::desc("Override the config's layers"),
                        cl::init(0), cl::cat(category));
cl::list<std::string> schedules("schedules",
                                cl::desc("Schedules to try (default: gpipe, "
                                         "1f1b, interleaved-1f1b, zb-h1, zb-v, "
                                         "dualpipev)"),
                                cl::CommaSeparated, cl::cat(category));
cl::opt<int64_t> maxMicrobatches("max-microbatches",
                                 cl::desc("Most microbatches (default 64)"),
                                 cl::init(64), cl::cat(category));
cl::opt<int64_t> refine("refine",
                        cl::desc("Structures refined in phase 2 (default 4)"),
                        cl::init(4), cl::cat(category));
cl::opt<double> timeLimit("time-limit",
                          cl::desc("Seconds; candidates not reached are "
                                   "skipped (default 0: no limit)"),
                          cl::init(0), cl::cat(category));
cl::opt<bool> searchRecompute(
    "recompute",
    cl::desc("Also try every candidate with whole-chunk activation "
             "recomputation (transform.piper.recompute on every forward "
             "node, after the schedule)"),
    cl::init(false), cl::cat(category));
cl::opt<int64_t> rows("rows", cl::desc("Table rows (default 20)"), cl::init(20),
                      cl::cat(category));
cl::opt<std::string> outputFilename("o",
                                    cl::desc("The best strategy's JSON "
                                             "directives (default: none)"),
                                    cl::value_desc("file"), cl::cat(category));
cl::opt<std::string> modelOut("model-out",
                              cl::desc("The best strategy's model (.mlir)"),
                              cl::value_desc("file"), cl::cat(category));

int fail(const Twine &message) {
  llvm::WithColor::error(llvm::errs(), "piper-search") << message << "\n";
  return 1;
}

llvm::Error flagError(StringRef flag, StringRef value, const Twine &why) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "--" + flag + "=" + value + ": " + why);
}

/// `CLASS` or `CLASS:GB/s:us`.
llvm::Expected<LinkChoice> parseLink(StringRef flag, StringRef text) {
  SmallVector<StringRef> parts;
  text.split(parts, ':');
  LinkChoice link;
  link.linkClass = parts[0].str();
  if (!symbolizeLinkClass(link.linkClass))
    return flagError(flag, text,
                     "unknown link class '" + parts[0] +
                         "'; expected nvlink, pcie, infiniband, roce, efa or "
                         "ethernet");
  if (parts.size() == 1)
    return link;
  if (parts.size() != 3 || parts[1].getAsDouble(link.bandwidthGBs) ||
      parts[2].getAsDouble(link.latencyUs) || link.bandwidthGBs <= 0 ||
      link.latencyUs <= 0)
    return flagError(flag, text,
                     "expected CLASS or CLASS:GB/s:us with positive numbers");
  return link;
}

llvm::Expected<int64_t> parseBytes(StringRef text) {
  StringRef number = text.take_while(
      [](char c) { return llvm::isDigit(c) || c == '.' || c == '-'; });
  StringRef suffix = text.drop_front(number.size()).trim();
  double value;
  if (number.getAsDouble(value))
    return flagError("memory-budget", text, "expected a number of bytes");
  double scale = llvm::StringSwitch<double>(suffix.lower())
                     .Cases({"", "b"}, 1)
                     .Case("kib", 1024.0)
                     .Case("mib", 1024.0 * 1024)
                     .Case("gib", 1024.0 * 1024 * 1024)
                     .Case("kb", 1e3)
                     .Case("mb", 1e6)
                     .Case("gb", 1e9)
                     .Default(-1);
  if (scale < 0)
    return flagError("memory-budget", text,
                     "unknown unit '" + suffix +
                         "'; expected B, KiB, MiB, GiB, KB, MB or GB");
  if (value <= 0)
    return flagError("memory-budget", text,
                     "the memory budget must be positive");
  return int64_t(value * scale);
}

llvm::Expected<SearchOptions> getOptions() {
  SearchOptions options;
  if (!inputFilename.empty()) {
    if (!configName.empty())
      return flagError("config", configName,
                       "give a config or a model file, not both");
    // The file's family only matters for tensor-parallel weight names.
    configName = "tiny-gpt";
  }
  if (configName.empty())
    return flagError("config", "",
                     "give a piper-gen config (e.g. tiny-gpt, qwen3_1b) or a "
                     "model file");
  const modelgen::ModelConfig *config = modelgen::lookupNamedConfig(configName);
  if (!config) {
    std::string known;
    for (const modelgen::ModelConfig &c : modelgen::getNamedConfigs())
      known += (known.empty() ? "" : ", ") + c.name;
    return flagError("config", configName,
                     "unknown config; known configs: " + known);
  }
  options.config = *config;
  options.model = config->model;
  if (!modelName.empty()) {
    auto kind = modelgen::symbolizeModelKind(modelName);
    if (!kind)
      return flagError("model", modelName, "expected mlp, gpt or moe");
    options.model = *kind;
  }
  if (layers > 0)
    options.config.layers = layers;
  auto element = modelgen::symbolizeElementKind(dtype);
  if (!element)
    return flagError("dtype", dtype, "expected f32, f64 or bf16");
  options.dtype = *element;

  auto [nodes, perNode] = StringRef(meshSpec).split('x');
  if (nodes.getAsInteger(10, options.cluster.nodes) ||
      perNode.getAsInteger(10, options.cluster.devicesPerNode) ||
      options.cluster.nodes < 1 || options.cluster.devicesPerNode < 1)
    return flagError("mesh", meshSpec,
                     "expected NODESxDEVICES_PER_NODE with both >= 1, e.g. "
                     "4x8");
  options.cluster.device = device;
  auto intra = parseLink("intra-link", intraLink);
  if (!intra)
    return intra.takeError();
  auto inter = parseLink("inter-link", interLink);
  if (!inter)
    return inter.takeError();
  options.cluster.intra = *intra;
  options.cluster.inter = *inter;
  const ::piper::sim::DeviceSpec *spec = ::piper::sim::lookupDeviceSpec(device);
  if (!spec)
    return flagError("device", device,
                     "unknown device; expected one of " +
                         ::piper::sim::listDeviceSpecNames());
  options.memoryBudget = int64_t(spec->memoryBytes);
  if (!budget.empty()) {
    auto bytes = parseBytes(budget);
    if (!bytes)
      return bytes.takeError();
    options.memoryBudget = *bytes;
  }
  options.globalBatch =
      globalBatch ? int64_t(globalBatch) : 16 * options.config.batch;
  if (options.globalBatch < 1)
    return flagError("global-batch", std::to_string(globalBatch),
                     "the global batch must be positive");
  if (!schedules.empty()) {
    options.schedules.assign(schedules.begin(), schedules.end());
    for (const std::string &s : options.schedules)
      if (!llvm::is_contained(::piper::sched::builtinScheduleNames(), s) ||
          s == "dualpipe")
        return flagError("schedules", s,
                         "expected gpipe, 1f1b, interleaved-1f1b, zb-h1, zb-v "
                         "or dualpipev");
  }
  options.maxMicrobatches = maxMicrobatches;
  options.refine = refine;
  options.timeLimit = timeLimit;
  if (searchRecompute) {
    // The recompute directive's own filter defaults to every forward node.
    DirectiveHook hook;
    hook.dimension = "recompute";
    hook.point = DirectiveHook::Point::AfterSchedule;
    hook.choices = [](const Candidate &) {
      return std::vector<std::string>{"none", "full"};
    };
    hook.emit = [](const Candidate &, StringRef choice,
                   llvm::json::Array &directives) {
      if (choice == "full")
        directives.push_back(
            llvm::json::Object{{"recompute", llvm::json::Object{}}});
    };
    hook.recomputes = [](StringRef choice) { return choice == "full"; };
    options.hooks.push_back(std::move(hook));
  }
  return options;
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(argc, argv, "Piper automatic strategy search\n");
  llvm::Expected<SearchOptions> options = getOptions();
  if (!options)
    return fail(llvm::toString(options.takeError()));

  DialectRegistry registry;
  registerPiper(registry);
  // One thread: the search is sequential and the machine shared.
  MLIRContext context(registry, MLIRContext::Threading::DISABLED);
  context.loadAllAvailableDialects();
  OwningOpRef<ModuleOp> model;
  if (!inputFilename.empty()) {
    // Parse errors are printed, located, by MLIR's handler.
    model = parseSourceFile<ModuleOp>(inputFilename, &context);
    if (!model)
      return 1;
    options->fixedModel = *model;
    options->fixedModelName = inputFilename;
    if (!globalBatch)
      return fail("--global-batch: give the global batch of a model file");
  }
  llvm::Expected<SearchResult> result = runSearch(context, *options);
  if (!result)
    return fail(llvm::toString(result.takeError()));
  llvm::outs() << renderTable(*result, *options, rows);
  llvm::outs().flush();
  if (result->kept.empty())
    return fail("no strategy fits: see the rejections above");

  std::string error;
  if (!outputFilename.empty()) {
    auto file = openOutputFile(outputFilename, &error);
    if (!file)
      return fail(error);
    file->os() << renderDirectives(result->bestDirectives);
    file->keep();
  }
  if (!modelOut.empty()) {
    auto file = openOutputFile(modelOut, &error);
    if (!file)
      return fail(error);
    result->bestModel->print(file->os());
    file->keep();
  }
  return 0;
}
