//===- Space.cpp - The strategies of a model on a cluster -----------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The checks that need no IR: degrees that divide the devices, heads,
// experts, layers and global batch; schedules the library can build for
// (p, m, v); and a lower bound of the per-device memory (parameters and
// optimizer state, which live through the whole step) that rejects a
// candidate before its model is built.
//
//===----------------------------------------------------------------------===//

#include "Space.h"

#include "piper/Dialect/Piper/IR/PiperOps.h"
#include "piper/Schedule/Builders.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/StringSwitch.h"

#include "llvm/Support/GlobPattern.h"

#include <map>
#include <set>

using namespace mlir;
using namespace mlir::piper;
using namespace mlir::piper::search;

static SmallVector<int64_t> divisorsOf(int64_t n) {
  SmallVector<int64_t> out;
  for (int64_t d = 1; d <= n; ++d)
    if (n % d == 0)
      out.push_back(d);
  return out;
}

std::optional<std::string>
search::checkStructure(const Candidate &c, const SearchOptions &options) {
  const modelgen::ModelConfig &config = options.config;
  auto fail = [](const Twine &why) { return std::optional(why.str()); };
  if (options.fixedModel)
    return std::nullopt;
  if (c.tp > 1) {
    if (options.model == modelgen::ModelKind::MLP)
      return fail("tp " + Twine(c.tp) +
                  ": the MLP has no tensor-parallel "
                  "layers");
    if (config.heads % c.tp)
      return fail("tp " + Twine(c.tp) + " does not divide the " +
                  Twine(config.heads) + " heads");
    // Grouped-query attention shards its key/value heads too.
    int64_t kvHeads = modelgen::getKVHeads(config);
    if (kvHeads % c.tp)
      return fail("tp " + Twine(c.tp) + " does not divide the " +
                  Twine(kvHeads) + " key/value heads");
    if (options.model == modelgen::ModelKind::GPT && config.ffn % c.tp)
      return fail("tp " + Twine(c.tp) + " does not divide the FFN width " +
                  Twine(config.ffn));
  }
  if (c.ep > 1 &&
      (options.model != modelgen::ModelKind::MoE || config.experts % c.ep))
    return fail("ep " + Twine(c.ep) + " does not divide the " +
                Twine(config.experts) + " experts");
  // Tensor parallelism communicates inside every layer: across nodes it
  // would be bound by the slow link (Megatron keeps it inside a node).
  if (c.tp > options.cluster.devicesPerNode)
    return fail("tp " + Twine(c.tp) + " would span nodes of " +
                Twine(options.cluster.devicesPerNode) + " devices");
  if (c.pp > config.layers)
    return fail("pp " + Twine(c.pp) + " exceeds the " + Twine(config.layers) +
                " layers");
  int64_t replicas = c.dataReplicas();
  if (options.globalBatch % replicas)
    return fail("dp x ep = " + Twine(replicas) +
                " does not divide the global batch " +
                Twine(options.globalBatch));
  return std::nullopt;
}

std::optional<std::string> search::checkSchedule(const Candidate &c,
                                                 const SearchOptions &options) {
  if (!options.fixedModel && c.stages > options.config.layers)
    return "schedule " + c.schedule + " needs " + std::to_string(c.stages) +
           " stages, more than the " + std::to_string(options.config.layers) +
           " layers";
  if (c.pp == 1)
    return std::nullopt;
  ::piper::sched::Result<::piper::sched::Schedule> schedule =
      ::piper::sched::buildSchedule(c.schedule, int(c.pp), int(c.microbatches),
                                    int(c.chunks));
  if (!schedule)
    return schedule.error();
  return std::nullopt;
}

/// Bytes of one element of the model's float tensors.
static int64_t elementBytes(modelgen::ElementKind kind) {
  switch (kind) {
  case modelgen::ElementKind::F64:
    return 8;
  case modelgen::ElementKind::F32:
    return 4;
  case modelgen::ElementKind::BF16:
    return 2;
  }
  return 4;
}

/// What one device holds of the parameters, at the model's element width.
struct ParameterShare {
  /// Parameters (a ZeRO-3 shard, or the whole share when `gathered`), and
  /// AdamW's two moments.
  double params = 0, state = 0;
  /// The gradients its updates read: the whole share at ZeRO-0, the
  /// reduce-scattered shard at ZeRO-1 to 3.
  double grads = 0;
};

/// The busiest device's parameter, AdamW and gradient bytes (averages over
/// the pipeline ranks, so never above the busiest one's); `gathered`: a
/// ZeRO-3 stage's parameters counted whole (a forward task gathers them
/// all).
static ParameterShare parameterShare(const Candidate &c,
                                     const SearchOptions &options,
                                     bool gathered) {
  ParameterShare share;
  // A file's parameters are not a config's: the memory plan alone decides.
  if (options.fixedModel)
    return share;
  // Which weights `shard tensor` splits (Directives.cpp's patterns).
  SmallVector<llvm::GlobPattern> tensorParallel;
  for (StringRef glob : {"layers.*.attn.w[qkv]", "layers.*.attn.wo",
                         "layers.*.mlp.w_{gate,up}", "layers.*.mlp.w_down"})
    if (auto pattern = llvm::GlobPattern::create(glob))
      tensorParallel.push_back(std::move(*pattern));
  bool gpt = options.model == modelgen::ModelKind::GPT;
  for (const modelgen::ParamSpec &p :
       modelgen::getParameters(options.model, options.config)) {
    double bytes = double(elementBytes(options.dtype));
    for (int64_t d : p.shape)
      bytes *= double(d);
    bytes /= double(c.pp);
    double replicas = double(c.dp);
    if (p.isExpertWeight) {
      bytes /= double(c.ep);
    } else {
      replicas *= double(c.ep);
      for (const llvm::GlobPattern &pattern : tensorParallel)
        if (pattern.match(p.name) &&
            (gpt || StringRef(p.name).contains(".attn."))) {
          bytes /= double(c.tp);
          break;
        }
    }
    // ZeRO-3 keeps a shard, but a forward task gathers every parameter of
    // its stage while it runs, so the stage's whole share is live then.
    share.params += c.zero >= 3 && !gathered ? bytes / replicas : bytes;
    // AdamW's two moments, at least as wide as the parameter.
    share.state += c.zero >= 1 ? 2 * bytes / replicas : 2 * bytes;
    share.grads += c.zero >= 1 ? bytes / replicas : bytes;
  }
  return share;
}

int64_t search::staticMemoryBound(const Candidate &c,
                                  const SearchOptions &options) {
  ParameterShare share = parameterShare(c, options, /*gathered=*/true);
  return int64_t(share.params + share.state);
}

int64_t search::persistentMemoryBound(const Candidate &c,
                                      const SearchOptions &options) {
  ParameterShare share = parameterShare(c, options, /*gathered=*/false);
  return int64_t(share.params + share.state);
}

int64_t search::updateMemoryBound(const Candidate &c,
                                  const SearchOptions &options) {
  ParameterShare share = parameterShare(c, options, /*gathered=*/false);
  // A rank of several stages (interleaved, ZB-V, DualPipeV) may update one
  // stage before the others' gradients exist: count one stage's gradients.
  double stagesPerRank = double(std::max<int64_t>(1, c.stages / c.pp));
  return int64_t(share.params + share.state + share.grads / stagesPerRank);
}

bool search::recomputes(const Candidate &c, const SearchOptions &options) {
  for (const DirectiveHook &hook : options.hooks) {
    auto it = c.hookChoices.find(hook.dimension);
    if (hook.recomputes && it != c.hookChoices.end() &&
        hook.recomputes(it->second))
      return true;
  }
  return false;
}

int64_t search::activationFloor(const Candidate &c,
                                const SearchOptions &options,
                                int64_t perLayer) {
  if (options.fixedModel || perLayer <= 0)
    return 0;
  int64_t layers = options.config.layers;
  int64_t smallest = layers / c.stages;
  // getStageLayers gives the first `layers % stages` stages one more.
  int64_t first = smallest + (layers % c.stages ? 1 : 0);
  int64_t inFlight = 1, stageLayers = smallest;
  if (recomputes(c, options)) {
    inFlight = 1;
  } else if (c.pp == 1) {
    stageLayers = layers;
  } else if (c.schedule == "1f1b" || c.schedule == "zb-h1") {
    inFlight = std::min(c.pp, c.microbatches);
    stageLayers = first;
  } else if (c.schedule == "gpipe") {
    inFlight = c.microbatches;
    stageLayers = first;
  }
  return inFlight * stageLayers * perLayer;
}

/// Whether each mesh axis of `c` stays inside a node.
static std::map<std::string, bool> axesInsideNode(const Candidate &c,
                                                  const Cluster &cluster) {
  SmallVector<modelgen::MeshAxisSpec> axes =
      genOptionsFor(c, SearchOptions()).mesh;
  std::map<std::string, bool> inside;
  int64_t product = 1;
  for (const modelgen::MeshAxisSpec &axis : llvm::reverse(axes)) {
    product *= axis.size;
    inside[axis.name] = product <= cluster.devicesPerNode;
  }
  return inside;
}

std::vector<Candidate>
search::enumerateStructures(const SearchOptions &options) {
  std::vector<Candidate> out;
  int64_t devices = options.cluster.numDevices();
  for (int64_t tp : divisorsOf(devices))
    for (int64_t ep : divisorsOf(devices / tp))
      for (int64_t pp : divisorsOf(devices / tp / ep)) {
        Candidate c;
        c.tp = tp;
        c.ep = ep;
        c.pp = pp;
        c.dp = devices / tp / ep / pp;
        c.stages = pp;
        for (AxisOrder order :
             {AxisOrder::PipelineInside, AxisOrder::PipelineOutside}) {
          c.order = order;
          // The other order is a different strategy only when it moves an
          // axis across the node boundary.
          if (order == AxisOrder::PipelineOutside) {
            Candidate inside = c;
            inside.order = AxisOrder::PipelineInside;
            if (axesInsideNode(inside, options.cluster) ==
                axesInsideNode(c, options.cluster))
              continue;
          }
          out.push_back(c);
        }
      }
  return out;
}

SmallVector<int64_t> search::microbatchSizes(const Candidate &c,
                                             const SearchOptions &options) {
  if (options.globalBatch % c.dataReplicas())
    return {};
  return divisorsOf(options.globalBatch / c.dataReplicas());
}

llvm::Expected<Candidate>
search::describeFixedModel(const SearchOptions &options) {
  auto error = [&](const Twine &why) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   options.fixedModelName + ": " + why);
  };
  ModuleOp module = options.fixedModel;
  Candidate c;
  MeshOp mesh;
  module.walk([&](MeshOp op) {
    mesh = op;
    return WalkResult::interrupt();
  });
  if (!mesh)
    return error("the model has no piper.mesh");
  int64_t devices = 1;
  for (MeshAxisAttr axis : mesh.getAxisList()) {
    StringRef name = axis.getName().getValue();
    int64_t *degree = llvm::StringSwitch<int64_t *>(name)
                          .Case("tp", &c.tp)
                          .Case("ep", &c.ep)
                          .Case("pp", &c.pp)
                          .Case("dp", &c.dp)
                          .Default(nullptr);
    if (!degree)
      return error("mesh axis '" + name +
                   "' is not one the search places (tp, ep, pp, dp)");
    *degree = axis.getSize();
    devices *= axis.getSize();
  }
  // The file's axis order: the pipeline outermost is `pp-out`.
  SmallVector<MeshAxisAttr> axes = mesh.getAxisList();
  if (axes.size() > 1 && axes.front().getName().getValue() == "pp")
    c.order = AxisOrder::PipelineOutside;
  if (devices != options.cluster.numDevices())
    return error("the model's mesh has " + Twine(devices) +
                 " devices, but --mesh gives " +
                 Twine(options.cluster.numDevices()));
  std::set<int64_t> stages;
  module.walk([&](AnnotateOp op) {
    if (auto pp = dyn_cast_or_null<IntegerAttr>(op.getTags().get("PP")))
      stages.insert(pp.getInt());
  });
  c.stages = std::max<int64_t>(1, int64_t(stages.size()));
  if (c.stages % c.pp)
    return error("the model has " + Twine(c.stages) +
                 " pipeline chunks, not a multiple of pp = " + Twine(c.pp));
  // The microbatch size: rows of the first data input (neither a
  // parameter nor optimizer state) of the step function.
  c.microbatchSize = 0;
  module.walk([&](func::FuncOp f) {
    if (!f.isPublic() || c.microbatchSize)
      return;
    for (BlockArgument arg : f.getArguments())
      if (!f.getArgAttr(arg.getArgNumber(), "piper.param"))
        if (auto shaped = dyn_cast<RankedTensorType>(arg.getType()))
          if (shaped.getRank() >= 1 && !c.microbatchSize)
            c.microbatchSize = shaped.getDimSize(0);
  });
  if (c.microbatchSize < 1)
    return error("the model has no data input with a batch dimension");
  return c;
}
