//===- Configs.cpp - Model configs, parameters and option checks ----------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Everything about a generated model that is not IR: the named configs, the
// parameter table (names, shapes, initialisers), the pipeline split, the
// `--mesh` syntax and the option checks. The IR builder reads the parameter
// table, so a parameter's name and shape are defined here only.
//
//===----------------------------------------------------------------------===//

#include "piper/ModelGen/ModelGen.h"

#include "piper/Limits.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <cmath>

using namespace mlir;
using namespace mlir::piper;
using namespace mlir::piper::modelgen;

//===----------------------------------------------------------------------===//
// Names
//===----------------------------------------------------------------------===//

StringRef modelgen::stringifyModelKind(ModelKind kind) {
  switch (kind) {
  case ModelKind::MLP:
    return "mlp";
  case ModelKind::GPT:
    return "gpt";
  case ModelKind::MoE:
    return "moe";
  }
  llvm_unreachable("unknown model kind");
}

std::optional<ModelKind> modelgen::symbolizeModelKind(StringRef name) {
  return llvm::StringSwitch<std::optional<ModelKind>>(name)
      .Case("mlp", ModelKind::MLP)
      .Case("gpt", ModelKind::GPT)
      .Case("moe", ModelKind::MoE)
      .Default(std::nullopt);
}

StringRef modelgen::stringifyElementKind(ElementKind kind) {
  switch (kind) {
  case ElementKind::F32:
    return "f32";
  case ElementKind::F64:
    return "f64";
  case ElementKind::BF16:
    return "bf16";
  }
  llvm_unreachable("unknown element kind");
}

std::optional<ElementKind> modelgen::symbolizeElementKind(StringRef name) {
  return llvm::StringSwitch<std::optional<ElementKind>>(name)
      .Case("f32", ElementKind::F32)
      .Case("f64", ElementKind::F64)
      .Case("bf16", ElementKind::BF16)
      .Default(std::nullopt);
}

//===----------------------------------------------------------------------===//
// Named configs
//===----------------------------------------------------------------------===//

ArrayRef<ModelConfig> modelgen::getNamedConfigs() {
  // The tiny configs are small enough for the f64 interpreter and
  // finite-difference checks; their MoE capacity drops no token, so any
  // strategy (microbatch split, EP sharding) computes the serial step.
  //
  // qwen3_1b and qwen3_9b are Piper's published evaluation models: layers,
  // hidden size, experts/top-k and expert FFN size as published; vocabulary
  // of Qwen3 (151936); head dim 128 as in Qwen3 (heads = hidden / 128); one
  // sequence per step, the microbatch the pipeline schedules move around
  // (grow it with --batch for data parallelism); capacity factor 1.0.
  // Qwen3's attention: grouped-query with 4 key/value heads (Qwen3-0.6B
  // has 2 query heads per key/value head, the MoE models 8: 4 keeps both
  // tensor-parallel to 4 ways), per-head q/k RMSNorm and rotary embeddings
  // with theta 1e6; the LM head is untied, as in Qwen3's MoE models
  // (--tie-embeddings ties it). Parameter totals: about 1.05e9 and 9.33e9.
  //
  // deepseek_v3 has DeepSeek-V3's sizes (61 layers, hidden 7168, 128 heads,
  // 256 routed experts of width 2048, top-8, vocabulary 129280, sequence
  // 4096) in this generator's MoE block: every layer MoE, standard
  // attention instead of MLA, no shared expert and no dense first layers,
  // so its parameter count differs from the published 671e9. It exists for
  // compile-scale benchmarks; the IR carries only shapes.
  using K = ModelKind;
  // clang-format off
  static const ModelConfig configs[] = {
      // name      model   L     H   nh     F  E  k       V     S  B  In  cf  tie  kv   qk  theta
      {"tiny-mlp", K::MLP,  2,   32,  0,    0, 0, 0,      8,    0, 4, 16, 0.0},
      {"tiny-gpt", K::GPT,  2,   16,  2,   32, 0, 0,     32,    8, 2,  0, 0.0},
      {"tiny-moe", K::MoE,  2,   16,  2,   16, 4, 2,     32,    8, 2,  0, 0.0},
      {"qwen3_1b", K::MoE, 16, 1024,  8, 3584, 4, 2, 151936,  512, 1,  0, 1.0, false, 4, true, 1e6},
      {"qwen3_9b", K::MoE, 24, 2048, 16, 7168, 8, 2, 151936, 2048, 1,  0, 1.0, false, 4, true, 1e6},
      {"deepseek_v3", K::MoE, 61, 7168, 128, 2048, 256, 8, 129280, 4096, 1, 0, 1.0},
  };
  // clang-format on
  return configs;
}

const ModelConfig *modelgen::lookupNamedConfig(StringRef name) {
  for (const ModelConfig &config : getNamedConfigs())
    if (config.name == name)
      return &config;
  return nullptr;
}

//===----------------------------------------------------------------------===//
// Derived sizes
//===----------------------------------------------------------------------===//

int64_t modelgen::getNumTokens(const ModelConfig &config) {
  return config.batch * config.seq;
}

int64_t modelgen::getExpertCapacity(const ModelConfig &config) {
  int64_t tokens = getNumTokens(config);
  if (config.capacityFactor <= 0.0)
    return tokens;
  double expected = static_cast<double>(tokens) *
                    static_cast<double>(config.topK) /
                    static_cast<double>(config.experts);
  // The epsilon keeps an exact product (1.25 * 256 = 320) from rounding up
  // to the next slot when the factor is not exactly representable.
  double scaled = std::ceil(config.capacityFactor * expected - 1e-9);
  return std::clamp<int64_t>(static_cast<int64_t>(scaled), 1, tokens);
}

SmallVector<std::pair<int64_t, int64_t>>
modelgen::getStageLayers(int64_t layers, int64_t stages) {
  SmallVector<std::pair<int64_t, int64_t>> ranges;
  int64_t base = layers / stages, extra = layers % stages, begin = 0;
  for (int64_t s = 0; s < stages; ++s) {
    int64_t end = begin + base + (s < extra ? 1 : 0);
    ranges.push_back({begin, end});
    begin = end;
  }
  return ranges;
}

//===----------------------------------------------------------------------===//
// Parameters
//===----------------------------------------------------------------------===//

SmallVector<ParamSpec> modelgen::getParameters(ModelKind kind,
                                               const ModelConfig &c) {
  SmallVector<ParamSpec> params;
  auto add = [&](const Twine &name, ArrayRef<int64_t> shape, InitKind init,
                 bool isExpert = false) {
    ParamSpec &p = params.emplace_back();
    p.name = name.str();
    p.shape.assign(shape.begin(), shape.end());
    p.init = init;
    p.std = init == InitKind::Normal ? kInitStd : 0.0;
    p.isExpertWeight = isExpert;
  };

  if (kind == ModelKind::MLP) {
    int64_t in = c.inFeatures;
    for (int64_t l = 0; l < c.layers; ++l) {
      std::string prefix = llvm::formatv("layers.{0}", l).str();
      add(prefix + ".weight", {in, c.hidden}, InitKind::Normal);
      add(prefix + ".bias", {c.hidden}, InitKind::Zeros);
      in = c.hidden;
    }
    add("head.weight", {c.hidden, c.vocab}, InitKind::Normal);
    add("head.bias", {c.vocab}, InitKind::Zeros);
    return params;
  }

  int64_t h = c.hidden, f = c.ffn, e = c.experts;
  add("embed.weight", {c.vocab, h}, InitKind::Normal);
  for (int64_t l = 0; l < c.layers; ++l) {
    std::string prefix = llvm::formatv("layers.{0}", l).str();
    add(prefix + ".attn_norm.weight", {h}, InitKind::Ones);
    int64_t headDim = c.heads ? h / c.heads : h;
    int64_t kv = getKVHeads(c) * headDim;
    add(prefix + ".attn.wq", {h, h}, InitKind::Normal);
    add(prefix + ".attn.wk", {h, kv}, InitKind::Normal);
    add(prefix + ".attn.wv", {h, kv}, InitKind::Normal);
    add(prefix + ".attn.wo", {h, h}, InitKind::Normal);
    if (c.qkNorm) {
      add(prefix + ".attn.q_norm.weight", {headDim}, InitKind::Ones);
      add(prefix + ".attn.k_norm.weight", {headDim}, InitKind::Ones);
    }
    add(prefix + ".mlp_norm.weight", {h}, InitKind::Ones);
    if (kind == ModelKind::GPT) {
      add(prefix + ".mlp.w_gate", {h, f}, InitKind::Normal);
      add(prefix + ".mlp.w_up", {h, f}, InitKind::Normal);
      add(prefix + ".mlp.w_down", {f, h}, InitKind::Normal);
    } else {
      add(prefix + ".mlp.router.weight", {h, e}, InitKind::Normal);
      add(prefix + ".mlp.experts.w_gate", {e, h, f}, InitKind::Normal,
          /*isExpert=*/true);
      add(prefix + ".mlp.experts.w_up", {e, h, f}, InitKind::Normal,
          /*isExpert=*/true);
      add(prefix + ".mlp.experts.w_down", {e, f, h}, InitKind::Normal,
          /*isExpert=*/true);
    }
  }
  add("final_norm.weight", {h}, InitKind::Ones);
  if (!c.tieEmbeddings)
    add("lm_head.weight", {h, c.vocab}, InitKind::Normal);
  return params;
}

int64_t modelgen::getParameterCount(ModelKind kind, const ModelConfig &config) {
  int64_t total = 0;
  for (const ParamSpec &p : getParameters(kind, config)) {
    int64_t n = 1;
    for (int64_t d : p.shape)
      n *= d;
    total += n;
  }
  return total;
}

//===----------------------------------------------------------------------===//
// --mesh
//===----------------------------------------------------------------------===//

static bool isAxisName(StringRef name) {
  if (name.empty() || !(llvm::isAlpha(name.front()) || name.front() == '_'))
    return false;
  return llvm::all_of(name,
                      [](char c) { return llvm::isAlnum(c) || c == '_'; });
}

static llvm::Error makeError(const Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

llvm::Expected<SmallVector<MeshAxisSpec>>
modelgen::parseMeshSpec(StringRef spec) {
  static constexpr StringLiteral expected =
      "expected NAME=SIZE[,NAME=SIZE...], e.g. --mesh=dp=4,pp=2,ep=2";
  if (spec.trim().empty())
    return makeError(Twine("--mesh is empty; ") + expected);
  SmallVector<MeshAxisSpec> axes;
  llvm::StringSet<> seen;
  SmallVector<StringRef> items;
  spec.split(items, ',');
  for (StringRef item : items) {
    item = item.trim();
    auto [name, size] = item.split('=');
    name = name.trim();
    size = size.trim();
    if (!item.contains('='))
      return makeError("bad mesh axis '" + item + "' in --mesh=" + spec + "; " +
                       expected);
    if (!isAxisName(name))
      return makeError("bad mesh axis name '" + name + "' in --mesh=" + spec +
                       "; names are letters, digits and '_', not starting "
                       "with a digit");
    int64_t value;
    if (size.getAsInteger(10, value) || value < 1 || value > kMaxMeshDevices)
      return makeError(
          "mesh axis '" + name + "' has size '" + size + "' in --mesh=" + spec +
          "; sizes are integers from 1 to " + Twine(kMaxMeshDevices));
    if (!seen.insert(name).second)
      return makeError("mesh axis '" + name +
                       "' appears twice in --mesh=" + spec);
    axes.push_back({name.str(), value});
  }
  // Each size is at most kMaxMeshDevices: the product cannot overflow first.
  int64_t devices = 1;
  for (const MeshAxisSpec &axis : axes)
    if ((devices *= axis.size) > kMaxMeshDevices)
      return makeError("--mesh=" + spec + " has more than " +
                       Twine(kMaxMeshDevices) + " devices");
  return axes;
}

//===----------------------------------------------------------------------===//
// Option checks
//===----------------------------------------------------------------------===//

llvm::Error modelgen::validateOptions(const GenOptions &options) {
  const ModelConfig &c = options.config;
  ModelKind kind = options.model;

  // Sizes the model family reads, with the flag that overrides each.
  SmallVector<std::pair<StringRef, int64_t>> sizes;
  if (kind == ModelKind::MLP) {
    sizes = {{"layers", c.layers},
             {"hidden", c.hidden},
             {"in-features", c.inFeatures},
             {"vocab", c.vocab},
             {"batch", c.batch}};
  } else {
    sizes = {{"layers", c.layers}, {"hidden", c.hidden}, {"heads", c.heads},
             {"ffn", c.ffn},       {"vocab", c.vocab},   {"seq", c.seq},
             {"batch", c.batch}};
    if (kind == ModelKind::MoE)
      sizes.append({{"experts", c.experts}, {"top-k", c.topK}});
  }
  if (kind == ModelKind::MLP && c.tieEmbeddings)
    return makeError("--tie-embeddings needs --model=gpt or moe: the mlp has "
                     "no embedding table to share with its head");
  for (auto [flag, value] : sizes) {
    if (value < 1)
      return makeError(llvm::formatv("--{0} must be >= 1 for --model={1}, "
                                     "got {2}",
                                     flag, stringifyModelKind(kind), value));
    // Building is quadratic in the layers; every other size is a width.
    int64_t limit = flag == "layers" ? kMaxGenLayers : kMaxDimension;
    if (value > limit)
      return makeError(llvm::formatv("--{0} must be <= {1} (docs/Limits.md), "
                                     "got {2}",
                                     flag, limit, value));
  }

  if (kind != ModelKind::MLP && c.hidden % c.heads != 0)
    return makeError(llvm::formatv("--hidden={0} is not divisible by "
                                   "--heads={1}",
                                   c.hidden, c.heads));
  if (kind == ModelKind::MLP && (c.kvHeads || c.qkNorm || c.ropeTheta))
    return makeError("--kv-heads, --qk-norm and --rope-theta need "
                     "--model=gpt or moe: the mlp has no attention");
  if (kind != ModelKind::MLP &&
      (c.kvHeads < 0 || (c.kvHeads > 0 && c.heads % c.kvHeads != 0)))
    return makeError(llvm::formatv("--kv-heads={0} must be >= 1 and divide "
                                   "--heads={1}",
                                   c.kvHeads, c.heads));
  if (!(c.ropeTheta >= 0.0) || !std::isfinite(c.ropeTheta))
    return makeError(llvm::formatv("--rope-theta must be >= 0 (0: no rotary "
                                   "embedding), got {0}",
                                   c.ropeTheta));
  if (kind != ModelKind::MLP && c.ropeTheta > 0 &&
      (c.hidden / c.heads) % 2 != 0)
    return makeError(llvm::formatv("--rope-theta needs an even head dim, "
                                   "got {0} (--hidden / --heads)",
                                   c.hidden / c.heads));
  if (kind == ModelKind::MoE) {
    if (c.topK > c.experts)
      return makeError(llvm::formatv("--top-k={0} is larger than "
                                     "--experts={1}",
                                     c.topK, c.experts));
    if (!(c.capacityFactor >= 0.0) || !std::isfinite(c.capacityFactor))
      return makeError(llvm::formatv("--capacity-factor must be >= 0 (0: no "
                                     "token is dropped), got {0}",
                                     c.capacityFactor));
  }

  if (options.pipelineStages < 0)
    return makeError(
        llvm::formatv("--pp must be >= 0, got {0}", options.pipelineStages));
  if (options.pipelineStages > c.layers)
    return makeError(llvm::formatv("--pp={0} is larger than the number of "
                                   "layers ({1}); every pipeline stage needs "
                                   "at least one layer",
                                   options.pipelineStages, c.layers));

  if (options.zero < 0 || options.zero > 3)
    return makeError(
        llvm::formatv("--zero must be 0, 1, 2 or 3, got {0}", options.zero));
  if (options.zero > 0) {
    if (options.mesh.empty())
      return makeError(llvm::formatv("--zero={0} needs --mesh: ZeRO shards "
                                     "over the mesh's 'dp' axis",
                                     options.zero));
    if (llvm::none_of(options.mesh,
                      [](const MeshAxisSpec &a) { return a.name == "dp"; }))
      return makeError(llvm::formatv("--zero={0} needs a 'dp' axis in --mesh "
                                     "to shard over",
                                     options.zero));
  }
  // The element count of every tensor, and the parameter total, must fit in
  // int64_t (a typo such as --seq=10000000000 would otherwise overflow).
  SmallVector<SmallVector<int64_t>> shapes;
  for (ParamSpec &p : getParameters(kind, c))
    shapes.push_back(std::move(p.shape));
  if (kind == ModelKind::MLP) {
    shapes.push_back({c.batch, std::max({c.inFeatures, c.hidden, c.vocab})});
  } else {
    int64_t tokens;
    if (llvm::MulOverflow(c.batch, c.seq, tokens))
      return makeError("--batch * --seq overflows 64 bits");
    shapes.push_back({tokens, std::max({c.hidden, c.ffn, c.vocab})});
    if (kind == ModelKind::MoE)
      shapes.push_back({c.experts, tokens, c.hidden});
  }
  int64_t total = 0;
  for (ArrayRef<int64_t> shape : shapes) {
    int64_t n = 1;
    for (int64_t d : shape)
      if (llvm::MulOverflow(n, d, n))
        return makeError("the model's sizes overflow 64-bit element counts");
    if (llvm::AddOverflow(total, n, total))
      return makeError("the model's sizes overflow 64-bit element counts");
  }
  return llvm::Error::success();
}
