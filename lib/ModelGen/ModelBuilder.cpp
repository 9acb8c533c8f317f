//===- ModelBuilder.cpp - Build a model's training step as piper IR -------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Emits `func.func @step(params..., data...) -> loss` with the op builders,
// then runs the verifier, so a generated module is valid IR by
// construction. Activations flow as [T, H] rows (T = B * S tokens) between
// layers; attention reshapes q, k, v to [B, S, H] around piper.attention.
//
//===----------------------------------------------------------------------===//

#include "piper/ModelGen/ModelGen.h"

#include "piper/Dialect/Piper/IR/PiperDialect.h"
#include "piper/Dialect/Piper/IR/PiperOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::piper;
using namespace mlir::piper::modelgen;

namespace {

/// Builds one module. Parameters are looked up by name in the table from
/// getParameters, so names and shapes live in one place.
class ModelBuilder {
public:
  ModelBuilder(MLIRContext *ctx, const GenOptions &options)
      : ctx(ctx), options(options), config(options.config), b(ctx) {
    switch (options.dtype) {
    case ElementKind::F32:
      elementType = b.getF32Type();
      break;
    case ElementKind::F64:
      elementType = b.getF64Type();
      break;
    case ElementKind::BF16:
      elementType = b.getBF16Type();
      break;
    }
  }

  OwningOpRef<ModuleOp> build();

private:
  //===--------------------------------------------------------------------===//
  // Small helpers
  //===--------------------------------------------------------------------===//

  RankedTensorType floats(ArrayRef<int64_t> shape) {
    return RankedTensorType::get(shape, elementType);
  }
  RankedTensorType ints(ArrayRef<int64_t> shape) {
    return RankedTensorType::get(shape, b.getI64Type());
  }
  /// Ops and arguments carry the hierarchical name of what they compute
  /// ("layers.3.attn.q_proj"): piper-gen prints it as the SSA name, and
  /// diagnostics and --mlir-print-debuginfo show it.
  Location loc(const Twine &name) {
    return NameLoc::get(StringAttr::get(ctx, name));
  }
  Value param(const Twine &name) {
    Value value = params.lookup(name.str());
    assert(value && "parameter missing from getParameters");
    return value;
  }
  Value linear(Location l, Value x, Value w, Value bias = {}) {
    auto xType = cast<RankedTensorType>(x.getType());
    SmallVector<int64_t> shape(xType.getShape());
    shape.back() = cast<RankedTensorType>(w.getType()).getDimSize(1);
    return LinearOp::create(b, l, floats(shape), x, w, bias);
  }
  Value reshape(Location l, Value x, ArrayRef<int64_t> shape) {
    return ReshapeOp::create(b, l, floats(shape), x);
  }
  Value rmsnorm(Location l, Value x, Value w) {
    // Qwen3's epsilon is 1e-6, the op's default, so no attribute is printed.
    return RmsNormOp::create(b, l, x.getType(), x, w, FloatAttr());
  }

  /// Emits `piper.annotate {TAG = value} -> resultTypes { body() }` and
  /// returns its results; without a tag, emits body() inline.
  template <typename BodyFn>
  SmallVector<Value> chunk(std::optional<std::pair<StringRef, int64_t>> tag,
                           TypeRange resultTypes, Location l, BodyFn body) {
    if (!tag)
      return body();
    auto tags = b.getDictionaryAttr(
        b.getNamedAttr(tag->first, b.getI64IntegerAttr(tag->second)));
    auto op = AnnotateOp::create(b, l, resultTypes, tags, PassKindAttr());
    OpBuilder::InsertionGuard guard(b);
    b.createBlock(&op.getBody());
    SmallVector<Value> results = body();
    YieldOp::create(b, l, results);
    return SmallVector<Value>(op.getResults());
  }

  //===--------------------------------------------------------------------===//
  // Model pieces
  //===--------------------------------------------------------------------===//

  func::FuncOp buildSignature(ArrayRef<Type> dataTypes,
                              ArrayRef<StringRef> dataNames);
  PlacementAttr placementFor(const ParamSpec &spec);

  /// Runs `body(stage, begin, end, carried, last)` for each pipeline stage
  /// (layers [begin, end); `carried` is the previous stage's result), each
  /// in a `{PP = stage}` chunk unless --pp=0. Each stage returns one value:
  /// the [rows, H] activation it hands on, or (the last) the loss.
  template <typename StageFn>
  Value buildStages(Type activationType, StageFn body);

  void buildMLP();
  void buildDecoder();
  Value decoderLayer(int64_t l, Value x);
  Value attention(const Twine &prefix, Value x);
  Value denseFFN(const Twine &prefix, Value x);
  Value moeFFN(int64_t l, const Twine &prefix, Value x);

  MLIRContext *ctx;
  const GenOptions &options;
  const ModelConfig &config;
  OpBuilder b;
  Type elementType;
  llvm::StringMap<Value> params;
  SmallVector<ParamSpec> paramSpecs;
  func::FuncOp func;
};

} // namespace

//===----------------------------------------------------------------------===//
// Signature, mesh and placements
//===----------------------------------------------------------------------===//

PlacementAttr ModelBuilder::placementFor(const ParamSpec &spec) {
  auto hasAxis = [&](StringRef name) {
    return llvm::any_of(options.mesh,
                        [&](const MeshAxisSpec &a) { return a.name == name; });
  };
  auto axisSet = [&](ArrayRef<StringRef> names) {
    SmallVector<Attribute> attrs;
    for (StringRef name : names)
      attrs.push_back(b.getStringAttr(name));
    return b.getArrayAttr(attrs);
  };
  SmallVector<ArrayAttr> dims(spec.shape.size(), axisSet({}));
  // Experts are split over `ep` (one block of E / ep experts per rank, the
  // layout the EP all-to-all expects); every other parameter is whole on
  // every device.
  if (spec.isExpertWeight && hasAxis("ep"))
    dims[0] = axisSet({"ep"});
  ArrayAttr replicated = hasAxis("dp") ? axisSet({"dp"}) : axisSet({});
  return PlacementAttr::get(ctx, FlatSymbolRefAttr::get(ctx, kMeshName), dims,
                            replicated, static_cast<unsigned>(options.zero));
}

func::FuncOp ModelBuilder::buildSignature(ArrayRef<Type> dataTypes,
                                          ArrayRef<StringRef> dataNames) {
  paramSpecs = getParameters(options.model, config);
  SmallVector<Type> argTypes;
  for (const ParamSpec &spec : paramSpecs)
    argTypes.push_back(floats(spec.shape));
  llvm::append_range(argTypes, dataTypes);
  auto type = b.getFunctionType(argTypes, {floats({})});
  func = func::FuncOp::create(b, b.getUnknownLoc(), kStepFunctionName, type);

  Block *entry = func.addEntryBlock();
  for (auto [i, spec] : llvm::enumerate(paramSpecs)) {
    FloatAttr stddev =
        spec.init == InitKind::Normal ? b.getF64FloatAttr(spec.std) : nullptr;
    PlacementAttr placement =
        options.mesh.empty() ? PlacementAttr() : placementFor(spec);
    func.setArgAttr(i, "piper.param",
                    ParamAttr::get(ctx, b.getStringAttr(spec.name), spec.init,
                                   stddev, placement));
    BlockArgument arg = entry->getArgument(i);
    arg.setLoc(loc(spec.name));
    params[spec.name] = arg;
  }
  for (auto [i, name] : llvm::enumerate(dataNames))
    entry->getArgument(paramSpecs.size() + i).setLoc(loc(name));
  b.setInsertionPointToStart(entry);
  return func;
}

template <typename StageFn>
Value ModelBuilder::buildStages(Type activationType, StageFn body) {
  int64_t stages = std::max<int64_t>(options.pipelineStages, 1);
  Value carried;
  SmallVector<std::pair<int64_t, int64_t>> ranges =
      getStageLayers(config.layers, stages);
  for (int64_t s = 0; s < stages; ++s) {
    int64_t begin = ranges[s].first, end = ranges[s].second;
    bool last = s == stages - 1;
    std::optional<std::pair<StringRef, int64_t>> tag;
    if (options.pipelineStages > 0)
      tag = {StringRef("PP"), s};
    Type resultType = last ? Type(floats({})) : activationType;
    carried = chunk(tag, resultType, loc(llvm::formatv("stage.{0}", s)),
                    [&]() -> SmallVector<Value> {
                      return {body(s, begin, end, carried, last)};
                    })
                  .front();
  }
  return carried;
}

//===----------------------------------------------------------------------===//
// MLP
//===----------------------------------------------------------------------===//

void ModelBuilder::buildMLP() {
  int64_t batch = config.batch;
  buildSignature({floats({batch, config.inFeatures}), ints({batch})},
                 {"inputs", "labels"});
  size_t numParams = paramSpecs.size();
  Value inputs = func.getArgument(numParams);
  Value labels = func.getArgument(numParams + 1);

  Value loss =
      buildStages(floats({batch, config.hidden}),
                  [&](int64_t stage, int64_t begin, int64_t end, Value carried,
                      bool last) -> Value {
                    Value x = stage == 0 ? inputs : carried;
                    for (int64_t l = begin; l < end; ++l) {
                      std::string prefix = llvm::formatv("layers.{0}", l).str();
                      x = linear(loc(prefix), x, param(prefix + ".weight"),
                                 param(prefix + ".bias"));
                      x = ReluOp::create(b, loc(prefix + ".relu"), x);
                    }
                    if (!last)
                      return x;
                    Value logits = linear(loc("head"), x, param("head.weight"),
                                          param("head.bias"));
                    return CrossEntropyOp::create(b, loc("loss"), floats({}),
                                                  logits, labels);
                  });
  func::ReturnOp::create(b, loc("loss"), loss);
}

//===----------------------------------------------------------------------===//
// GPT and MoE decoders
//===----------------------------------------------------------------------===//

Value ModelBuilder::attention(const Twine &prefix, Value x) {
  int64_t batch = config.batch, seq = config.seq, h = config.hidden;
  std::string p = (prefix + ".attn.").str();
  Value a = rmsnorm(loc(prefix + ".attn_norm"), x,
                    param(prefix + ".attn_norm.weight"));
  // q, k, v as [T, H] projections, viewed as [B, S, H] for the op, whose
  // heads are contiguous channel blocks of H.
  // Grouped-query attention projects k and v to fewer heads; Qwen3 then
  // normalises each head of q and k and rotates both by position.
  int64_t headDim = h / config.heads, kvHeads = getKVHeads(config);
  auto project = [&](StringRef name, StringRef w, int64_t width) {
    Value rows = linear(loc(p + name + "_proj"), a, param(p + w));
    return reshape(loc(p + name), rows, {batch, seq, width});
  };
  Value q = project("q", "wq", h);
  Value k = project("k", "wk", kvHeads * headDim);
  Value v = project("v", "wv", kvHeads * headDim);
  if (config.qkNorm) {
    q = rmsnorm(loc(p + "q_norm"), q, param(p + "q_norm.weight"));
    k = rmsnorm(loc(p + "k_norm"), k, param(p + "k_norm.weight"));
  }
  if (config.ropeTheta > 0) {
    auto rope = [&](StringRef name, Value x) -> Value {
      return RopeOp::create(b, loc(p + name), x.getType(), x,
                            b.getI64IntegerAttr(headDim),
                            b.getF64FloatAttr(config.ropeTheta), UnitAttr(),
                            /*offset=*/b.getI64IntegerAttr(0),
                            /*rotary_dim=*/IntegerAttr());
    };
    q = rope("q_rope", q);
    k = rope("k_rope", k);
  }
  Value o = AttentionOp::create(
      b, loc(p + "core"), q.getType(), q, k, v,
      static_cast<uint64_t>(config.heads),
      kvHeads == config.heads ? IntegerAttr() : b.getI64IntegerAttr(kvHeads));
  o = reshape(loc(p + "merged"), o, {batch * seq, h});
  o = linear(loc(p + "o_proj"), o, param(p + "wo"));
  return AddOp::create(b, loc(p + "residual"), x, o);
}

Value ModelBuilder::denseFFN(const Twine &prefix, Value x) {
  std::string p = (prefix + ".mlp.").str();
  Value m =
      rmsnorm(loc(prefix + ".mlp_norm"), x, param(prefix + ".mlp_norm.weight"));
  Value gate = linear(loc(p + "gate_proj"), m, param(p + "w_gate"));
  Value up = linear(loc(p + "up_proj"), m, param(p + "w_up"));
  Value act = SwigluOp::create(b, loc(p + "act"), gate, up);
  Value down = linear(loc(p + "down_proj"), act, param(p + "w_down"));
  return AddOp::create(b, loc(p + "residual"), x, down);
}

Value ModelBuilder::moeFFN(int64_t layer, const Twine &prefix, Value x) {
  int64_t tokens = getNumTokens(config), h = config.hidden;
  int64_t k = config.topK, e = config.experts;
  int64_t capacity = getExpertCapacity(config);
  std::string p = (prefix + ".mlp.").str();
  Value m =
      rmsnorm(loc(prefix + ".mlp_norm"), x, param(prefix + ".mlp_norm.weight"));
  // The router runs where the tokens are, outside the expert chunk; the
  // chunk is exactly what expert parallelism distributes: dispatch (the
  // first all-to-all), the experts, and combine (the second all-to-all).
  auto router = RouterOp::create(
      b, loc(p + "router"), floats({tokens, k}), ints({tokens, k}), m,
      param(p + "router.weight"), b.getI64IntegerAttr(k));
  Value weights = router.getWeights(), indices = router.getIndices();
  Value out =
      chunk(std::make_pair(StringRef("EP"), layer), floats({tokens, h}),
            loc(p + "experts"),
            [&]() -> SmallVector<Value> {
              Value buf = DispatchOp::create(
                  b, loc(p + "dispatch"), floats({e, capacity, h}), m, indices,
                  static_cast<uint64_t>(capacity));
              Value y = ExpertFfnOp::create(
                  b, loc(p + "expert_ffn"), buf.getType(), buf,
                  param(p + "experts.w_gate"), param(p + "experts.w_up"),
                  param(p + "experts.w_down"));
              return {CombineOp::create(b, loc(p + "combine"),
                                        floats({tokens, h}), y, weights,
                                        indices)};
            })
          .front();
  return AddOp::create(b, loc(p + "residual"), x, out);
}

Value ModelBuilder::decoderLayer(int64_t l, Value x) {
  std::string prefix = llvm::formatv("layers.{0}", l).str();
  x = attention(prefix, x);
  if (options.model == ModelKind::MoE)
    return moeFFN(l, prefix, x);
  return denseFFN(prefix, x);
}

void ModelBuilder::buildDecoder() {
  int64_t batch = config.batch, seq = config.seq, h = config.hidden;
  int64_t tokens = getNumTokens(config);
  buildSignature({ints({batch, seq}), ints({tokens})}, {"ids", "labels"});
  size_t numParams = paramSpecs.size();
  Value ids = func.getArgument(numParams);
  Value labels = func.getArgument(numParams + 1);

  Value loss = buildStages(
      floats({tokens, h}),
      [&](int64_t stage, int64_t begin, int64_t end, Value carried,
          bool last) -> Value {
        Value x = carried;
        if (stage == 0) {
          Value e =
              EmbeddingOp::create(b, loc("embed"), floats({batch, seq, h}),
                                  param("embed.weight"), ids);
          x = reshape(loc("embed.rows"), e, {tokens, h});
        }
        for (int64_t layer = begin; layer < end; ++layer)
          x = decoderLayer(layer, x);
        if (!last)
          return x;
        Value n = rmsnorm(loc("final_norm"), x, param("final_norm.weight"));
        // Tied: the head is the embedding table read as [H, V].
        Value head = config.tieEmbeddings
                         ? TransposeOp::create(b, loc("lm_head.tied"),
                                               floats({h, config.vocab}),
                                               param("embed.weight"),
                                               b.getDenseI64ArrayAttr({1, 0}))
                               .getResult()
                         : param("lm_head.weight");
        Value logits = linear(loc("lm_head"), n, head);
        return CrossEntropyOp::create(b, loc("loss"), floats({}), logits,
                                      labels);
      });
  func::ReturnOp::create(b, loc("loss"), loss);
}

//===----------------------------------------------------------------------===//
// Module
//===----------------------------------------------------------------------===//

OwningOpRef<ModuleOp> ModelBuilder::build() {
  OwningOpRef<ModuleOp> module = ModuleOp::create(b.getUnknownLoc());
  b.setInsertionPointToEnd(module->getBody());
  if (!options.mesh.empty()) {
    SmallVector<Attribute> axes;
    for (const MeshAxisSpec &axis : options.mesh)
      axes.push_back(MeshAxisAttr::get(ctx, b.getStringAttr(axis.name),
                                       axis.size, std::nullopt, FloatAttr(),
                                       FloatAttr()));
    MeshOp::create(b, loc("mesh"), kMeshName, b.getArrayAttr(axes));
  }
  if (options.model == ModelKind::MLP)
    buildMLP();
  else
    buildDecoder();
  return module;
}

//===----------------------------------------------------------------------===//
// Entry point
//===----------------------------------------------------------------------===//

llvm::Expected<OwningOpRef<ModuleOp>>
modelgen::buildModel(MLIRContext *context, const GenOptions &options) {
  if (llvm::Error error = validateOptions(options))
    return std::move(error);
  context->getOrLoadDialect<PiperDialect>();
  context->getOrLoadDialect<func::FuncDialect>();

  OwningOpRef<ModuleOp> module = ModelBuilder(context, options).build();

  // Fold the verifier's diagnostics (e.g. an expert dim not divisible by
  // `ep`) into the returned error, prefixed with the op's module path.
  std::string messages;
  llvm::raw_string_ostream os(messages);
  LogicalResult verified = success();
  {
    // The failing op is named by its location; a dump of the whole function
    // (for an argument's placement) would bury the message.
    bool printOp = context->shouldPrintOpOnDiagnostic();
    context->printOpOnDiagnostic(false);
    llvm::scope_exit restore([&] { context->printOpOnDiagnostic(printOp); });
    ScopedDiagnosticHandler handler(context, [&](Diagnostic &diag) {
      if (!messages.empty())
        os << "\n";
      if (diag.getSeverity() == DiagnosticSeverity::Note)
        os << "note: ";
      if (auto name = dyn_cast<NameLoc>(diag.getLocation()))
        os << name.getName().getValue() << ": ";
      os << diag.str();
      for (Diagnostic &note : diag.getNotes())
        os << "\nnote: " << note.str();
      return success();
    });
    verified = verify(*module);
  }
  if (failed(verified))
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        messages.empty() ? "the generated module does not verify" : messages);
  return module;
}
