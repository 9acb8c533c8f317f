//===- ManifestWriter.cpp - Manifest to plan.json -------------------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The keys and their values are those piper-compile's llvm::json writer
// produced, so that plans (and the lit tests that FileCheck them) keep
// their bytes; the printer sorts the keys.
//
//===----------------------------------------------------------------------===//

#include "piper-rt/plan_json.h"
#include "piper-rt/plan_manifest.h"

using namespace piper::plan;
using json::Array;
using json::Object;
using json::Value;

namespace {

Value strings(const std::vector<std::string> &list) {
  Array array;
  for (const std::string &s : list)
    array.emplace_back(s);
  return array;
}

Value integers(const std::vector<int64_t> &list) {
  Array array;
  for (int64_t i : list)
    array.emplace_back(i);
  return array;
}

Value tensorJSON(const Tensor &t) {
  Object o{{"index", t.index},
           {"kind", t.kind},
           {"dtype", dtypeName(t.dtype)},
           {"shape", integers(t.shape)}};
  auto optional = [&](const char *key, const auto &field) {
    if (field)
      o.emplace_back(key, Value(*field));
  };
  optional("name", t.name);
  optional("init", t.init);
  optional("std", t.std);
  optional("param", t.param);
  optional("slot", t.slot);
  optional("bound", t.bound);
  optional("updates", t.updates);
  if (t.shard)
    o.emplace_back("shard", Object{{"axes", strings(t.shard->axes)},
                                   {"members", t.shard->members},
                                   {"chunk", t.shard->chunk}});
  if (!t.split.empty()) {
    Array dims;
    for (const Split &s : t.split)
      dims.emplace_back(Object{
          {"dim", s.dim}, {"axes", strings(s.axes)}, {"parts", s.parts}});
    o.emplace_back("split", std::move(dims));
  }
  return o;
}

Value evalJSON(const EvalEntry &e) {
  Object o{{"entry", e.entry},
           {"inputs", integers(e.inputs)},
           {"outputs", integers(e.outputs)}};
  if (!e.logitsShape.empty())
    o.emplace_back("logits", Object{{"dtype", dtypeName(e.logitsDtype)},
                                    {"shape", integers(e.logitsShape)}});
  return o;
}

Value roleJSON(const Role &role) {
  Object coords;
  for (const auto &[axis, coord] : role.role)
    coords.emplace_back(axis, coord);
  Object o{{"program", role.program},
           {"role", std::move(coords)},
           {"object", role.object},
           {"entry", role.entry},
           {"inputs", integers(role.inputs)},
           {"outputs", integers(role.outputs)},
           {"launches", strings(role.launches)},
           {"streams", strings(role.streams)}};
  if (role.objectBytes)
    o.emplace_back("object_bytes", *role.objectBytes);
  if (role.objectChecksum)
    o.emplace_back("object_checksum", *role.objectChecksum);
  if (role.eval)
    o.emplace_back("eval", evalJSON(*role.eval));
  if (role.sample)
    o.emplace_back("sample", evalJSON(*role.sample));
  if (!role.smShares.empty()) {
    Object shares;
    for (const auto &[stream, share] : role.smShares)
      shares.emplace_back(stream, share);
    o.emplace_back("sm_shares", std::move(shares));
  }
  return o;
}

Value meshJSON(const Mesh &mesh) {
  // A module without a mesh is written as {}.
  if (mesh.name.empty() && mesh.axes.empty())
    return Object{};
  Array axes;
  for (const MeshAxis &axis : mesh.axes)
    axes.emplace_back(Object{{"name", axis.name}, {"size", axis.size}});
  return Object{{"name", mesh.name}, {"axes", std::move(axes)}};
}

} // namespace

std::string piper::plan::writeManifest(const Manifest &m) {
  Object o{{"format", kFormat},        {"version", kVersion},
           {"function", m.function},   {"source", m.source},
           {"mesh", meshJSON(m.mesh)}, {"batch_axes", strings(m.batchAxes)}};
  Array comms, args, results, roles;
  for (const Communicator &c : m.communicators)
    comms.emplace_back(Object{{"axes", strings(c.axes)}, {"stream", c.stream}});
  o.emplace_back("communicators", std::move(comms));
  // Absent for the CPU, so that CPU plans stay byte for byte as they were.
  if (m.target != "cpu") {
    o.emplace_back("target", m.target);
    o.emplace_back("gpu_arch", m.gpuArch);
  }
  // Absent unless traced, for the same reason.
  if (!m.kernelKinds.empty())
    o.emplace_back("kernel_kinds", strings(m.kernelKinds));
  if (m.optimizer) {
    Object opt{{"kind", m.optimizer->kind}, {"lr", m.optimizer->lr}};
    if (m.optimizer->clipGradNorm > 0)
      opt.emplace_back("clip_grad_norm", m.optimizer->clipGradNorm);
    o.emplace_back("optimizer", std::move(opt));
  }
  for (const Tensor &t : m.arguments)
    args.push_back(tensorJSON(t));
  for (const Tensor &t : m.results)
    results.push_back(tensorJSON(t));
  for (const Role &r : m.roles)
    roles.push_back(roleJSON(r));
  o.emplace_back("arguments", std::move(args));
  o.emplace_back("results", std::move(results));
  o.emplace_back("roles", std::move(roles));
  return json::print(o, 2) + "\n";
}
