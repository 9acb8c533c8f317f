//===- ManifestReader.cpp - plan.json to Manifest -------------------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Every error names the file and the JSON path of the field, with
// llvm::json::ObjectMapper's wording ("missing value", "expected integer",
// ... "at plan.arguments[0].dtype"), which piper-run printed before the
// runtime read the manifest itself. The first error stops the read.
//
//===----------------------------------------------------------------------===//

#include "piper-rt/plan_json.h"
#include "piper-rt/plan_manifest.h"
#include "piper-rt/plan_validate.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

using namespace piper::plan;
using json::Value;

namespace {

/// Reads typed fields and records the first error with its path.
class Reader {
public:
  std::string error;

  bool fail(const std::string &path, const std::string &what) {
    if (error.empty())
      error = what + " at " + path;
    return false;
  }

  bool object(const Value &v, const std::string &path) {
    return v.getObject() || fail(path, "expected object");
  }

  bool get(const Value &v, const std::string &path, std::string &out) {
    if (const std::string *s = v.getString()) {
      out = *s;
      return true;
    }
    return fail(path, "expected string");
  }
  bool get(const Value &v, const std::string &path, int64_t &out) {
    return v.getInteger(out) || fail(path, "expected integer");
  }
  bool get(const Value &v, const std::string &path, double &out) {
    return v.getNumber(out) || fail(path, "expected number");
  }
  template <typename T>
  bool get(const Value &v, const std::string &path, std::vector<T> &out) {
    const json::Array *array = v.getArray();
    if (!array)
      return fail(path, "expected array");
    out.assign(array->size(), T());
    for (size_t i = 0; i < array->size(); ++i)
      if (!get((*array)[i], path + "[" + std::to_string(i) + "]", out[i]))
        return false;
    return true;
  }
  template <typename T>
  bool get(const Value &v, const std::string &path,
           std::map<std::string, T> &out) {
    const json::Object *o = v.getObject();
    if (!o)
      return fail(path, "expected object");
    for (const auto &[key, value] : *o)
      if (!get(value, path + "." + key, out[key]))
        return false;
    return true;
  }

  /// A required member of object `o` (at `path`).
  template <typename T>
  bool field(const Value &o, const std::string &path, const char *key, T &out) {
    const Value *v = o.get(key);
    if (!v)
      return fail(path + "." + key, "missing value");
    return get(*v, path + "." + key, out);
  }
  /// An optional member: absent or null leaves `out` alone.
  template <typename T>
  bool optional(const Value &o, const std::string &path, const char *key,
                T &out) {
    const Value *v = o.get(key);
    return !v || v->isNull() || get(*v, path + "." + key, out);
  }
  template <typename T>
  bool optional(const Value &o, const std::string &path, const char *key,
                std::optional<T> &out) {
    const Value *v = o.get(key);
    if (!v || v->isNull())
      return true;
    out.emplace();
    return get(*v, path + "." + key, *out);
  }
  /// A required array of objects, each read by `read`.
  template <typename T, typename F>
  bool objects(const Value &o, const std::string &path, const char *key,
               std::vector<T> &out, F read) {
    const Value *v = o.get(key);
    std::string at = path + "." + key;
    if (!v || !v->getArray())
      return fail(at, "expected an array");
    const json::Array &array = *v->getArray();
    out.assign(array.size(), T());
    for (size_t i = 0; i < array.size(); ++i) {
      std::string item = at + "[" + std::to_string(i) + "]";
      if (!object(array[i], item) || !read(array[i], item, out[i]))
        return false;
    }
    return true;
  }

  bool tensor(const Value &v, const std::string &path, Tensor &t);
  bool shard(const Value &v, const std::string &path, Tensor &t);
  bool split(const Value &v, const std::string &path, Tensor &t);
  bool role(const Value &v, const std::string &path, Role &r);
  bool evalEntry(const Value &v, const std::string &path, const char *key,
                 std::optional<EvalEntry> &out);
  bool mesh(const Value &v, const std::string &path, Mesh &m);
  bool manifest(const Value &v, Manifest &m);
};

bool parseDType(const std::string &name, DType &out) {
  for (DType d : {DType::F32, DType::F64, DType::I64})
    if (name == dtypeName(d)) {
      out = d;
      return true;
    }
  return false;
}

bool Reader::shard(const Value &v, const std::string &path, Tensor &t) {
  Shard s;
  if (!object(v, path) || !field(v, path, "axes", s.axes) ||
      !field(v, path, "members", s.members) ||
      !field(v, path, "chunk", s.chunk))
    return false;
  // The chunks flatten the device's part of a split tensor (read first).
  int64_t covered = 1;
  for (int64_t d : t.localShape())
    covered *= d;
  if (s.members < 1 || s.chunk < 0 || s.chunk * s.members < covered)
    return fail(path, "chunks do not cover the tensor");
  t.shard = std::move(s);
  return true;
}

bool Reader::split(const Value &v, const std::string &path, Tensor &t) {
  const json::Array *dims = v.getArray();
  if (!dims)
    return fail(path, "expected array");
  for (size_t k = 0; k < dims->size(); ++k) {
    std::string at = path + "[" + std::to_string(k) + "]";
    const Value &entry = (*dims)[k];
    Split s;
    if (!object(entry, at) || !field(entry, at, "dim", s.dim) ||
        !field(entry, at, "axes", s.axes) ||
        !field(entry, at, "parts", s.parts))
      return false;
    if (s.dim < 0 || static_cast<size_t>(s.dim) >= t.shape.size() ||
        s.parts < 1 || t.shape[s.dim] % s.parts != 0)
      return fail(at, "parts do not divide the dimension");
    t.split.push_back(std::move(s));
  }
  return true;
}

bool Reader::tensor(const Value &v, const std::string &path, Tensor &t) {
  std::string dtype;
  if (!field(v, path, "index", t.index) || !field(v, path, "kind", t.kind) ||
      !field(v, path, "dtype", dtype) || !field(v, path, "shape", t.shape) ||
      !optional(v, path, "name", t.name) ||
      !optional(v, path, "init", t.init) || !optional(v, path, "std", t.std) ||
      !optional(v, path, "bound", t.bound) ||
      !optional(v, path, "updates", t.updates) ||
      !optional(v, path, "param", t.param) ||
      !optional(v, path, "slot", t.slot))
    return false;
  for (int64_t d : t.shape)
    if (d < 0)
      return fail(path + ".shape", "negative dimension");
  if (const Value *s = v.get("split"); s && !split(*s, path + ".split", t))
    return false;
  if (const Value *s = v.get("shard"); s && !shard(*s, path + ".shard", t))
    return false;
  if (!parseDType(dtype, t.dtype))
    return fail(path + ".dtype", "unsupported dtype (f32, f64 or i64)");
  return true;
}

bool Reader::role(const Value &v, const std::string &path, Role &r) {
  return field(v, path, "program", r.program) &&
         field(v, path, "object", r.object) &&
         field(v, path, "entry", r.entry) && field(v, path, "role", r.role) &&
         field(v, path, "inputs", r.inputs) &&
         field(v, path, "outputs", r.outputs) &&
         optional(v, path, "launches", r.launches) &&
         optional(v, path, "streams", r.streams) &&
         optional(v, path, "object_bytes", r.objectBytes) &&
         optional(v, path, "object_checksum", r.objectChecksum) &&
         evalEntry(v, path, "eval", r.eval) &&
         evalEntry(v, path, "sample", r.sample) &&
         optional(v, path, "sm_shares", r.smShares);
}

bool Reader::evalEntry(const Value &v, const std::string &path, const char *key,
                       std::optional<EvalEntry> &out) {
  const Value *e = v.get(key);
  if (!e || e->isNull())
    return true;
  std::string at = path + "." + key;
  EvalEntry eval;
  if (!object(*e, at) || !field(*e, at, "entry", eval.entry) ||
      !field(*e, at, "inputs", eval.inputs) ||
      !field(*e, at, "outputs", eval.outputs))
    return false;
  if (const Value *logits = e->get("logits")) {
    std::string dtype;
    if (!object(*logits, at + ".logits") ||
        !field(*logits, at + ".logits", "dtype", dtype) ||
        !field(*logits, at + ".logits", "shape", eval.logitsShape))
      return false;
    if (!parseDType(dtype, eval.logitsDtype) || eval.logitsDtype == DType::I64)
      return fail(at + ".logits.dtype", "unsupported dtype (f32 or f64)");
    if (eval.logitsShape.size() != 2 || eval.logitsShape[0] < 1 ||
        eval.logitsShape[1] < 1 ||
        eval.logitsShape[0] > kMaxTensorElements / eval.logitsShape[1])
      return fail(at + ".logits.shape", "expected [rows, vocabulary]");
  }
  out = std::move(eval);
  return true;
}

/// A role's SM shares: streams of the role, each in (0, 1], at most the
/// whole device together.
bool checkSmShares(const Role &role, const std::string &at, Reader &r) {
  double sum = 0;
  for (const auto &[stream, share] : role.smShares) {
    std::string path = at + ".sm_shares." + stream;
    if (std::find(role.streams.begin(), role.streams.end(), stream) ==
        role.streams.end())
      return r.fail(path, "'" + stream + "' is not a stream of the role");
    if (!(share > 0 && share <= 1))
      return r.fail(path, "an SM share is in (0, 1], not " +
                              json::print(Value(share), 0));
    sum += share;
  }
  // Rounding slack for shares written as decimals (0.7 + 0.3).
  if (sum > 1 + 1e-9)
    return r.fail(at + ".sm_shares", "SM shares sum to " +
                                         json::print(Value(sum), 0) +
                                         ", more than the device");
  return true;
}

bool Reader::mesh(const Value &v, const std::string &path, Mesh &m) {
  if (!object(v, path) || !optional(v, path, "name", m.name))
    return false;
  const Value *axes = v.get("axes");
  if (!axes)
    return true;
  if (!axes->getArray())
    return fail(path + ".axes", "expected array");
  for (size_t i = 0; i < axes->getArray()->size(); ++i) {
    std::string at = path + ".axes[" + std::to_string(i) + "]";
    const Value &axis = (*axes->getArray())[i];
    MeshAxis a;
    if (!object(axis, at) || !field(axis, at, "name", a.name) ||
        !field(axis, at, "size", a.size))
      return false;
    if (a.size < 1)
      return fail(at + ".size", "an axis has at least one device");
    m.axes.push_back(std::move(a));
  }
  return true;
}

bool Reader::manifest(const Value &v, Manifest &m) {
  const std::string root = "plan";
  auto tensor = [this](const Value &e, const std::string &p, Tensor &t) {
    return this->tensor(e, p, t);
  };
  if (!object(v, root) || !field(v, root, "function", m.function) ||
      !objects(v, root, "arguments", m.arguments, tensor) ||
      !objects(v, root, "results", m.results, tensor) ||
      !objects(v, root, "roles", m.roles,
               [this](const Value &e, const std::string &p, Role &r) {
                 return role(e, p, r);
               }) ||
      !optional(v, root, "batch_axes", m.batchAxes) ||
      !optional(v, root, "source", m.source) ||
      !optional(v, root, "target", m.target) ||
      !optional(v, root, "gpu_arch", m.gpuArch) ||
      !optional(v, root, "kernel_kinds", m.kernelKinds))
    return false;
  if (const Value *c = v.get("communicators");
      c && !objects(v, root, "communicators", m.communicators,
                    [this](const Value &e, const std::string &p,
                           Communicator &comm) {
                      return field(e, p, "axes", comm.axes) &&
                             field(e, p, "stream", comm.stream);
                    }))
    return false;
  if (const Value *o = v.get("optimizer")) {
    Optimizer opt;
    if (!object(*o, root + ".optimizer") ||
        !field(*o, root + ".optimizer", "kind", opt.kind) ||
        !field(*o, root + ".optimizer", "lr", opt.lr) ||
        !optional(*o, root + ".optimizer", "clip_grad_norm", opt.clipGradNorm))
      return false;
    m.optimizer = opt;
  }
  if (const Value *mesh = v.get("mesh");
      mesh && !this->mesh(*mesh, root + ".mesh", m.mesh))
    return false;
  return true;
}

/// Cross-field rules: what the runtime indexes must exist.
bool checkReferences(const Manifest &m, Reader &r) {
  for (size_t i = 0; i < m.arguments.size(); ++i)
    if (m.arguments[i].index != static_cast<int64_t>(i))
      return r.fail("plan.arguments[" + std::to_string(i) + "].index",
                    "arguments must be listed by index");
  for (size_t k = 0; k < m.roles.size(); ++k) {
    std::string at = "plan.roles[" + std::to_string(k) + "]";
    const Role &role = m.roles[k];
    for (size_t n = 0; n < role.inputs.size(); ++n)
      if (role.inputs[n] < 0 ||
          static_cast<size_t>(role.inputs[n]) >= m.arguments.size())
        return r.fail(at + ".inputs[" + std::to_string(n) + "]",
                      "role input " + std::to_string(role.inputs[n]) +
                          " is not an argument");
    for (size_t n = 0; n < role.outputs.size(); ++n)
      if (role.outputs[n] < 0 ||
          static_cast<size_t>(role.outputs[n]) >= m.results.size())
        return r.fail(at + ".outputs[" + std::to_string(n) + "]",
                      "role output " + std::to_string(role.outputs[n]) +
                          " is not a result");
    if (!checkSmShares(role, at, r))
      return false;
  }
  for (size_t j = 0; j < m.results.size(); ++j)
    if (m.results[j].updates &&
        (*m.results[j].updates < 0 ||
         static_cast<size_t>(*m.results[j].updates) >= m.arguments.size()))
      return r.fail("plan.results[" + std::to_string(j) + "].updates",
                    "not an argument");
  if (m.roles.empty())
    return r.fail("plan.roles", "the plan has no role");
  return true;
}

} // namespace

bool piper::plan::readManifest(const std::string &text, const std::string &file,
                               Manifest &manifest, std::string &error) {
  Value root;
  std::string parseError;
  if (!json::parse(text, root, parseError)) {
    error = file + ": " + parseError;
    return false;
  }
  // The format first: another file's fields mean nothing.
  Reader reader;
  std::string format;
  int64_t version = 0;
  if (reader.object(root, "plan") &&
      reader.field(root, "plan", "format", format) &&
      reader.field(root, "plan", "version", version) &&
      (format != kFormat || version != kVersion)) {
    error = file + ": not a version 1 piper plan (format '" + format +
            "', version " + std::to_string(version) + ")";
    return false;
  }
  // "version": 1.0 reads as the integer 1 everywhere else; the format's
  // version is an integer.
  if (const Value *ver = root.get("version");
      reader.error.empty() && ver && ver->kind() != Value::Kind::Integer)
    reader.fail("plan.version", "expected an integer");
  manifest = Manifest();
  if (reader.error.empty() && reader.manifest(root, manifest) &&
      checkReferences(manifest, reader))
    validateManifest(manifest, reader.error);
  if (reader.error.empty())
    return true;
  error = file + ": bad manifest: " + reader.error;
  return false;
}

bool piper::plan::loadManifest(const std::string &directory, Manifest &manifest,
                               std::string &error) {
  std::string path = directory;
  if (!path.empty() && path.back() != '/')
    path += '/';
  path += kManifestFile;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = "cannot read plan " + path + ": " + std::strerror(errno);
    return false;
  }
  std::ostringstream text;
  text << in.rdbuf();
  return readManifest(text.str(), path, manifest, error);
}
