//===- Directives.cpp - A candidate as a model and a directive list -------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// A candidate names a generated model (the config at microbatch size, cut
// into its PP chunks, with a mesh whose axes carry the cluster's links) and
// Piper's JSON directive list that `piper-compile --directives` reads. The
// list is the one bench/strategy.py writes for the published runs: split,
// place (one transfer stream per stage boundary and direction), shard
// (experts over ep, attention and dense FFN weights over tp), replicate
// (dense weights over dp and ep, experts over dp), then the schedule.
//
//===----------------------------------------------------------------------===//

#include "Space.h"

#include "piper/Dialect/Piper/IR/PiperOps.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::piper;
using namespace mlir::piper::search;
namespace json = llvm::json;

std::string Candidate::label() const {
  std::string out;
  llvm::raw_string_ostream os(out);
  os << "tp" << tp << " ep" << ep << " pp" << pp << " dp" << dp << " "
     << (order == AxisOrder::PipelineInside ? "pp-in" : "pp-out") << " "
     << (schedule.empty() ? "none" : schedule);
  if (chunks > 1)
    os << "(v" << chunks << ")";
  os << " m" << microbatches << "x" << microbatchSize << " z" << zero;
  if (sharedCommStream)
    os << " 1comm";
  for (const auto &[dimension, choice] : hookChoices)
    os << " " << dimension << "=" << choice;
  return out;
}

/// The mesh axes of `c`, outermost first, sizes > 1 only (a serial
/// candidate gets `dp = 1`, so that it still has a mesh).
static SmallVector<modelgen::MeshAxisSpec> meshAxes(const Candidate &c) {
  SmallVector<std::pair<StringRef, int64_t>> order;
  if (c.order == AxisOrder::PipelineInside)
    order = {{"dp", c.dp}, {"ep", c.ep}, {"pp", c.pp}, {"tp", c.tp}};
  else
    order = {{"pp", c.pp}, {"dp", c.dp}, {"ep", c.ep}, {"tp", c.tp}};
  SmallVector<modelgen::MeshAxisSpec> axes;
  for (auto [name, size] : order)
    if (size > 1)
      axes.push_back({name.str(), size});
  if (axes.empty())
    axes.push_back({"dp", 1});
  return axes;
}

modelgen::GenOptions search::genOptionsFor(const Candidate &candidate,
                                           const SearchOptions &options) {
  modelgen::GenOptions gen;
  gen.model = options.model;
  gen.config = options.config;
  gen.config.batch = candidate.microbatchSize;
  gen.pipelineStages = candidate.stages;
  gen.mesh = meshAxes(candidate);
  gen.dtype = options.dtype;
  return gen;
}

void search::setMeshOrder(ModuleOp module, const Candidate &candidate) {
  SmallVector<modelgen::MeshAxisSpec> order = meshAxes(candidate);
  module.walk([&](MeshOp mesh) {
    SmallVector<MeshAxisAttr> axes = mesh.getAxisList();
    SmallVector<Attribute> sorted;
    for (const modelgen::MeshAxisSpec &spec : order)
      for (MeshAxisAttr axis : axes)
        if (axis.getName().getValue() == spec.name)
          sorted.push_back(axis);
    if (sorted.size() == axes.size())
      mesh.setAxesAttr(ArrayAttr::get(module.getContext(), sorted));
  });
}

void search::setMeshLinks(ModuleOp module, const Candidate &candidate,
                          const Cluster &cluster) {
  MLIRContext *ctx = module.getContext();
  module.walk([&](MeshOp mesh) {
    SmallVector<MeshAxisAttr> axes = mesh.getAxisList();
    // Innermost first: the last axis of the list varies fastest.
    int64_t inside = 1;
    SmallVector<Attribute> linked(axes.size());
    for (int64_t i = int64_t(axes.size()) - 1; i >= 0; --i) {
      MeshAxisAttr axis = axes[i];
      inside *= axis.getSize();
      const LinkChoice &link =
          inside <= cluster.devicesPerNode ? cluster.intra : cluster.inter;
      auto cls = symbolizeLinkClass(link.linkClass);
      FloatAttr bandwidth, latency;
      if (link.bandwidthGBs > 0)
        bandwidth = FloatAttr::get(Float64Type::get(ctx), link.bandwidthGBs);
      if (link.latencyUs > 0)
        latency = FloatAttr::get(Float64Type::get(ctx), link.latencyUs);
      linked[i] = MeshAxisAttr::get(ctx, axis.getName(), axis.getSize(), cls,
                                    bandwidth, latency);
    }
    mesh.setAxesAttr(ArrayAttr::get(ctx, linked));
  });
}

static json::Object directive(StringRef name, json::Value args) {
  return json::Object{{name, std::move(args)}};
}

/// The stage `s` of `c` runs on this pipeline rank.
static int64_t rankOf(const Candidate &c, int64_t s) {
  if (c.schedule == "zb-v" || c.schedule == "dualpipev")
    return s < c.pp ? s : 2 * c.pp - 1 - s;
  return s % c.pp;
}

static void appendHooks(const Candidate &c, const SearchOptions &options,
                        DirectiveHook::Point point, json::Array &out) {
  for (const DirectiveHook &hook : options.hooks) {
    if (hook.point != point || !hook.emit)
      continue;
    auto it = c.hookChoices.find(hook.dimension);
    if (it != c.hookChoices.end())
      hook.emit(c, it->second, out);
  }
}

/// Tensor-parallel weights of the model family: attention always, the
/// dense FFN of a GPT (a MoE's FFN is its experts).
static void appendTensorShard(const Candidate &c, const SearchOptions &options,
                              json::Array &out) {
  json::Array column{"layers.*.attn.w[qkv]"}, row{"layers.*.attn.wo"};
  if (options.model == modelgen::ModelKind::GPT) {
    column.push_back("layers.*.mlp.w_{gate,up}");
    row.push_back("layers.*.mlp.w_down");
  }
  out.push_back(directive("shard", json::Object{{"filter", json::Object{}},
                                                {"kind", "tensor"},
                                                {"devices", json::Array{"tp"}},
                                                {"column", std::move(column)},
                                                {"row", std::move(row)}}));
}

static json::Object replicate(json::Array axes, int64_t zero,
                              std::optional<StringRef> where,
                              bool sharedStream) {
  json::Object args{
      {"filter", json::Object{}}, {"devices", std::move(axes)}, {"zero", zero}};
  if (where)
    args["where"] = json::Object{{"EP", *where}};
  if (sharedStream) {
    args["grad_stream"] = "comm";
    args["param_stream"] = "comm";
  }
  return directive("replicate", std::move(args));
}

json::Value search::buildDirectives(const Candidate &c,
                                    const SearchOptions &options) {
  json::Array out;
  // Schedules read MB tags, so a pipeline is split even into one.
  if (c.microbatches > 1 || c.pp > 1)
    out.push_back(directive("split", json::Object{{"filter", json::Object{}},
                                                  {"n", c.microbatches}}));
  appendHooks(c, options, DirectiveHook::Point::BeforePlace, out);
  if (c.pp > 1) {
    for (auto [pass, dir] :
         {std::pair<StringRef, StringRef>{"F", "f"}, {"B", "b"}, {"UPD", "b"}})
      for (int64_t s = 0; s < c.stages; ++s)
        out.push_back(directive(
            "place",
            json::Object{{"filter", json::Object{{"PP", s}, {"PASS", pass}}},
                         {"devices", json::Object{{"pp", rankOf(c, s)}}},
                         {"stream", ("pp_" + dir + std::to_string(s)).str()}}));
  }
  if (c.ep > 1) {
    json::Object args{{"filter", json::Object{}},
                      {"kind", "expert"},
                      {"devices", json::Array{"ep"}}};
    args["stream"] = c.sharedCommStream ? "comm" : "ep";
    out.push_back(directive("shard", std::move(args)));
  }
  if (c.tp > 1)
    appendTensorShard(c, options, out);
  if (c.ep > 1) {
    json::Array dense;
    if (c.dp > 1)
      dense.push_back("dp");
    dense.push_back("ep");
    out.push_back(replicate(std::move(dense), c.zero, StringRef("none"),
                            c.sharedCommStream));
    if (c.dp > 1)
      out.push_back(replicate(json::Array{"dp"}, c.zero, StringRef("*"),
                              c.sharedCommStream));
  } else if (c.dp > 1) {
    out.push_back(
        replicate(json::Array{"dp"}, c.zero, std::nullopt, c.sharedCommStream));
  }
  appendHooks(c, options, DirectiveHook::Point::BeforeSchedule, out);
  if (c.pp > 1)
    out.push_back(directive("schedule", json::Object{{"name", c.schedule}}));
  appendHooks(c, options, DirectiveHook::Point::AfterSchedule, out);
  return json::Object{{"mesh", "mesh"}, {"directives", std::move(out)}};
}

std::string search::renderDirectives(const json::Value &value) {
  std::string text;
  llvm::raw_string_ostream os(text);
  const json::Object *object = value.getAsObject();
  const json::Array *list =
      object ? object->getArray("directives") : value.getAsArray();
  os << "{\"mesh\": \"mesh\",\n \"directives\": [\n";
  for (auto [i, d] : llvm::enumerate(*list))
    os << "  " << d << (i + 1 < list->size() ? ",\n" : "\n");
  os << " ]}\n";
  return text;
}
