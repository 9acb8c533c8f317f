//===- ModelGen.h - Generated training-step models --------------*- C++ -*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Builds the forward training step of a reference model (an MLP, a dense
// Llama-style GPT, a Qwen3-style MoE GPT) as verified `piper` IR: every
// parameter a `#piper.param` function argument, the layers grouped into
// `piper.annotate {PP = s}` pipeline chunks, each MoE expert block nested in
// `piper.annotate {EP = l}`, and optionally a `piper.mesh` with placements.
// `piper-gen` is a thin command line around this library; the conventions
// are documented in docs/ModelGenerator.md.
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_MODELGEN_MODELGEN_H
#define PIPER_MODELGEN_MODELGEN_H

#include "piper/Dialect/Piper/IR/PiperAttrs.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <optional>
#include <string>
#include <utility>

namespace mlir::piper::modelgen {

//===----------------------------------------------------------------------===//
// Models and configurations
//===----------------------------------------------------------------------===//

/// The model families the generator knows.
enum class ModelKind {
  /// Float inputs [B, In] -> (linear + relu) x layers -> linear -> loss.
  MLP,
  /// Dense Llama-style decoder: RMSNorm, causal MHA, SwiGLU FFN.
  GPT,
  /// Qwen3-style decoder whose FFN is a top-k mixture of experts.
  MoE,
};

/// "mlp", "gpt" or "moe".
llvm::StringRef stringifyModelKind(ModelKind kind);
/// The inverse of stringifyModelKind; nullopt for an unknown name.
std::optional<ModelKind> symbolizeModelKind(llvm::StringRef name);

/// The sizes of a model. A field a model family does not use is 0 in the
/// named configs and ignored by the builder. The named configs are
/// aggregate-initialised in field order (Configs.cpp).
struct ModelConfig {
  /// The config's name (`--config`), empty for an ad-hoc config.
  std::string name;
  /// The family this config is meant for (the default `--model`).
  ModelKind model = ModelKind::GPT;
  /// Decoder layers (GPT, MoE) or hidden layers (MLP).
  int64_t layers = 0;
  /// Model width H (GPT, MoE) or hidden-layer width (MLP).
  int64_t hidden = 0;
  /// Attention heads; divides `hidden`.
  int64_t heads = 0;
  /// FFN width F: of the dense FFN (GPT) or of each expert (MoE).
  int64_t ffn = 0;
  /// Experts E per MoE layer.
  int64_t experts = 0;
  /// Experts chosen per token.
  int64_t topK = 0;
  /// Vocabulary size V (GPT, MoE) or number of output classes (MLP).
  int64_t vocab = 0;
  /// Sequence length S.
  int64_t seq = 0;
  /// Sequences (GPT, MoE) or samples (MLP) in the step's batch B.
  int64_t batch = 0;
  /// Input features of the MLP.
  int64_t inFeatures = 0;
  /// MoE expert capacity factor; 0 means no token is ever dropped (see
  /// getExpertCapacity).
  double capacityFactor = 0.0;
  /// GPT/MoE: the LM head reads the transposed embedding table
  /// (`embed.weight`) instead of its own `lm_head.weight`, so one parameter
  /// is used by the first and the last pipeline stage (`--tie-embeddings`).
  bool tieEmbeddings = false;
  /// GPT/MoE: key/value heads of grouped-query attention (k and v project
  /// to kvHeads * head dim); 0 means `heads` (multi-head attention).
  int64_t kvHeads = 0;
  /// GPT/MoE: Qwen3's per-head RMSNorm of q and k (`attn.q_norm.weight`,
  /// `attn.k_norm.weight`, one head dim each) before the rotary embedding.
  bool qkNorm = false;
  /// GPT/MoE: the rotary embedding's base theta of q and k; 0 means no
  /// rotary embedding.
  double ropeTheta = 0.0;
};

/// The key/value heads of `config`'s attention (kvHeads, or heads).
inline int64_t getKVHeads(const ModelConfig &config) {
  return config.kvHeads > 0 ? config.kvHeads : config.heads;
}

/// The named configs, in the order `--list-configs` prints them.
llvm::ArrayRef<ModelConfig> getNamedConfigs();
/// The named config called `name`, or null.
const ModelConfig *lookupNamedConfig(llvm::StringRef name);

/// Tokens per step, T = B * S (GPT, MoE).
int64_t getNumTokens(const ModelConfig &config);

/// Capacity C of each expert's buffer: with T tokens, E experts and k
/// experts per token, `ceil(capacityFactor * T * k / E)`, clamped to
/// [1, T]; a factor of 0 gives T. An expert receives at most one pair per
/// token (top-k picks distinct experts), so C = T never drops a token.
int64_t getExpertCapacity(const ModelConfig &config);

//===----------------------------------------------------------------------===//
// Parameters
//===----------------------------------------------------------------------===//

/// One trainable parameter, in function-argument order.
struct ParamSpec {
  /// Hierarchical name, e.g. "layers.3.attn.wq".
  std::string name;
  llvm::SmallVector<int64_t> shape;
  InitKind init = InitKind::Normal;
  /// Standard deviation of a `normal` initialiser.
  double std = 0.0;
  /// Expert weights [E, ...]: dim 0 is split over the `ep` mesh axis.
  bool isExpertWeight = false;
};

/// Standard deviation of every `normal` initialiser (GPT-2 / Llama style).
inline constexpr double kInitStd = 0.02;

/// The parameters of `kind` with `config`'s sizes, in argument order. The
/// configuration must be valid for `kind` (validateOptions).
llvm::SmallVector<ParamSpec> getParameters(ModelKind kind,
                                           const ModelConfig &config);

/// Total number of parameter elements of `kind` with `config`'s sizes.
int64_t getParameterCount(ModelKind kind, const ModelConfig &config);

/// The layers of each of `stages` contiguous pipeline stages, as
/// [begin, end) ranges: the first `layers % stages` stages take one layer
/// more than the others (the last stage also holds the head and the loss).
llvm::SmallVector<std::pair<int64_t, int64_t>> getStageLayers(int64_t layers,
                                                              int64_t stages);

//===----------------------------------------------------------------------===//
// Generation
//===----------------------------------------------------------------------===//

/// One axis of `--mesh`.
struct MeshAxisSpec {
  std::string name;
  int64_t size = 0;
};

/// Parses `NAME=SIZE[,NAME=SIZE...]`, e.g. "dp=4,pp=2,ep=2".
llvm::Expected<llvm::SmallVector<MeshAxisSpec>>
parseMeshSpec(llvm::StringRef spec);

/// The element type of every float tensor, the loss included.
enum class ElementKind { F32, F64, BF16 };

/// "f32", "f64" or "bf16".
llvm::StringRef stringifyElementKind(ElementKind kind);
/// The inverse of stringifyElementKind; nullopt for an unknown name.
std::optional<ElementKind> symbolizeElementKind(llvm::StringRef name);

/// Name of the generated mesh symbol.
inline constexpr llvm::StringLiteral kMeshName = "mesh";
/// Name of the generated function.
inline constexpr llvm::StringLiteral kStepFunctionName = "step";

/// Everything that determines a generated module.
struct GenOptions {
  ModelKind model = ModelKind::GPT;
  ModelConfig config;
  /// Number of `{PP = s}` chunks; 0 emits no pipeline chunks at all.
  int64_t pipelineStages = 1;
  /// Axes of `piper.mesh @mesh`; empty: no mesh and no placements.
  llvm::SmallVector<MeshAxisSpec> mesh;
  /// ZeRO stage of every parameter placement (needs a `dp` axis when > 0).
  int64_t zero = 0;
  ElementKind dtype = ElementKind::F32;
};

/// Checks the options for errors the generator can name better than the IR
/// verifier (sizes < 1, heads not dividing hidden, more stages than layers,
/// ...). Divisibility of parameter dims by mesh axes is left to the
/// verifier, which names the parameter.
llvm::Error validateOptions(const GenOptions &options);

/// Validates `options`, builds the module and verifies it. Loads the piper
/// and func dialects into `context`. An invalid option comes back as an
/// error before any IR is built; a verifier failure comes back as an error
/// carrying the verifier's messages (one per line, each prefixed with the
/// module path of the op it concerns, if any).
llvm::Expected<OwningOpRef<ModuleOp>> buildModel(MLIRContext *context,
                                                 const GenOptions &options);

} // namespace mlir::piper::modelgen

#endif // PIPER_MODELGEN_MODELGEN_H
