//===- Index.cpp - index.json of a checkpoint -----------------------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The global index, in the runtime's small JSON (plan_json.h): the step and
// data cursor, the strategy, and every logical tensor with its pieces
// (docs/Checkpoints.md has the schema).
//
//===----------------------------------------------------------------------===//

#include "piper-rt/checkpoint.h"

using namespace piper;
using namespace piper::ckpt;
using plan::json::Array;
using plan::json::Object;
using plan::json::Value;

namespace {

Value ints(const std::vector<int64_t> &v) {
  Array a;
  for (int64_t x : v)
    a.push_back(x);
  return a;
}

Value pieceJson(const Piece &p) {
  Object o{{"file", p.file}, {"offset", p.offset}, {"bytes", p.bytes}};
  if (p.crc >= 0)
    o.push_back({"crc32", p.crc});
  if (p.region.flat)
    o.push_back({"flat", ints({p.region.begin, p.region.end})});
  else
    o.push_back({"box", Object{{"offset", ints(p.region.offset)},
                               {"shape", ints(p.region.shape)}}});
  return o;
}

Value tensorJson(const TensorEntry &t) {
  Object o{{"name", t.name},
           {"kind", t.kind},
           {"dtype", plan::dtypeName(t.dtype)},
           {"shape", ints(t.shape)}};
  if (t.kind == "state") {
    o.push_back({"param", t.param});
    o.push_back({"slot", t.slot});
  }
  Array pieces;
  for (const Piece &p : t.pieces)
    pieces.push_back(pieceJson(p));
  o.push_back({"pieces", std::move(pieces)});
  return o;
}

/// Reads fields, keeping the first error with its path.
struct Reader {
  std::string error;
  bool fail(const std::string &path, const std::string &what) {
    if (error.empty())
      error = what + " at " + path;
    return false;
  }
  const Value *member(const Value &o, const std::string &path,
                      const char *key) {
    const Value *v = o.get(key);
    if (!v)
      fail(path + "." + key, "missing value");
    return v;
  }
  bool get(const Value &o, const std::string &path, const char *key,
           int64_t &out) {
    const Value *v = member(o, path, key);
    return v &&
           (v->getInteger(out) || fail(path + "." + key, "expected integer"));
  }
  bool get(const Value &o, const std::string &path, const char *key,
           std::string &out) {
    const Value *v = member(o, path, key);
    if (!v)
      return false;
    if (const std::string *s = v->getString()) {
      out = *s;
      return true;
    }
    return fail(path + "." + key, "expected string");
  }
  bool get(const Value &o, const std::string &path, const char *key,
           std::vector<int64_t> &out) {
    const Value *v = member(o, path, key);
    if (!v)
      return false;
    const Array *a = v->getArray();
    if (!a)
      return fail(path + "." + key, "expected array");
    out.clear();
    for (const Value &x : *a) {
      int64_t i = 0;
      if (!x.getInteger(i))
        return fail(path + "." + key, "expected integers");
      out.push_back(i);
    }
    return true;
  }
  const Array *array(const Value &o, const std::string &path, const char *key) {
    const Value *v = member(o, path, key);
    if (v && !v->getArray())
      fail(path + "." + key, "expected array");
    return v ? v->getArray() : nullptr;
  }

  bool piece(const Value &v, const std::string &path, Piece &p) {
    if (!get(v, path, "file", p.file) || !get(v, path, "offset", p.offset) ||
        !get(v, path, "bytes", p.bytes))
      return false;
    if (const Value *c = v.get("crc32"); c && !c->getInteger(p.crc))
      return fail(path + ".crc32", "expected integer");
    if (v.get("flat")) {
      std::vector<int64_t> range;
      if (!get(v, path, "flat", range))
        return false;
      if (range.size() != 2)
        return fail(path + ".flat", "expected [begin, end]");
      p.region.flat = true;
      p.region.begin = range[0];
      p.region.end = range[1];
      return true;
    }
    const Value *box = member(v, path, "box");
    return box && get(*box, path + ".box", "offset", p.region.offset) &&
           get(*box, path + ".box", "shape", p.region.shape);
  }

  bool tensor(const Value &v, const std::string &path, TensorEntry &t) {
    std::string dtype;
    if (!get(v, path, "name", t.name) || !get(v, path, "kind", t.kind) ||
        !get(v, path, "dtype", dtype) || !get(v, path, "shape", t.shape))
      return false;
    if (t.kind == "state" &&
        (!get(v, path, "param", t.param) || !get(v, path, "slot", t.slot)))
      return false;
    t.dtype = plan::DType::Other;
    for (plan::DType d : {plan::DType::F32, plan::DType::F64, plan::DType::I64,
                          plan::DType::BF16})
      if (dtype == plan::dtypeName(d))
        t.dtype = d;
    if (t.dtype == plan::DType::Other)
      return fail(path + ".dtype", "unknown dtype '" + dtype + "'");
    const Array *pieces = array(v, path, "pieces");
    if (!pieces)
      return false;
    t.pieces.resize(pieces->size());
    for (size_t i = 0; i < pieces->size(); ++i) {
      std::string at = path + ".pieces[" + std::to_string(i) + "]";
      if (!piece((*pieces)[i], at, t.pieces[i]))
        return false;
      const Region &r = t.pieces[i].region;
      bool fits = r.flat
                      ? 0 <= r.begin && r.begin <= r.end && r.end <= t.numel()
                      : r.offset.size() == t.shape.size() &&
                            r.shape.size() == t.shape.size();
      for (size_t d = 0; fits && !r.flat && d < t.shape.size(); ++d)
        fits = r.offset[d] >= 0 && r.shape[d] >= 0 &&
               r.offset[d] + r.shape[d] <= t.shape[d];
      if (!fits)
        return fail(at, "piece outside the tensor");
      if (t.pieces[i].bytes !=
          r.numel() * static_cast<int64_t>(plan::dtypeSize(t.dtype)))
        return fail(at + ".bytes", "size does not match the region");
    }
    return true;
  }
};

} // namespace

std::string piper::ckpt::writeIndex(const Index &index) {
  Array data;
  for (const auto &[arg, shape] : index.globalData)
    data.push_back(Object{{"argument", arg}, {"shape", ints(shape)}});
  Array tensors;
  for (const TensorEntry &t : index.tensors)
    tensors.push_back(tensorJson(t));
  Object root{{"format", kFormat},
              {"version", kVersion},
              {"step", index.step},
              {"seed", static_cast<int64_t>(index.seed)},
              {"data", Object{{"source", index.data},
                              {"bytes", index.dataBytes},
                              {"global_shapes", std::move(data)}}},
              {"strategy", index.strategy},
              {"tensors", std::move(tensors)}};
  return plan::json::print(root, 1) + "\n";
}

bool piper::ckpt::readIndex(const std::string &text, const std::string &file,
                            Index &index, std::string &error) {
  Value root;
  std::string parseError;
  if (!plan::json::parse(text, root, parseError)) {
    error = file + ": " + parseError;
    return false;
  }
  Reader r;
  std::string format;
  int64_t version = 0, seed = 0;
  if (!root.getObject() || !r.get(root, "index", "format", format) ||
      !r.get(root, "index", "version", version) || format != kFormat ||
      version != kVersion) {
    error = file + ": not a version 1 piper checkpoint index";
    return false;
  }
  index = Index();
  const Value *data = r.member(root, "index", "data");
  const Array *tensors = nullptr;
  if (r.get(root, "index", "step", index.step) &&
      r.get(root, "index", "seed", seed) && data &&
      r.get(*data, "index.data", "source", index.data) &&
      r.get(*data, "index.data", "bytes", index.dataBytes) &&
      (tensors = r.array(root, "index", "tensors"))) {
    index.seed = static_cast<uint64_t>(seed);
    if (const Value *s = root.get("strategy"))
      index.strategy = *s;
    if (const Value *g = data->get("global_shapes"); g && g->getArray())
      for (const Value &e : *g->getArray()) {
        std::pair<int64_t, std::vector<int64_t>> shape;
        if (!r.get(e, "index.data.global_shapes", "argument", shape.first) ||
            !r.get(e, "index.data.global_shapes", "shape", shape.second))
          break;
        index.globalData.push_back(std::move(shape));
      }
    index.tensors.resize(tensors->size());
    for (size_t i = 0; i < tensors->size() && r.error.empty(); ++i)
      r.tensor((*tensors)[i], "index.tensors[" + std::to_string(i) + "]",
               index.tensors[i]);
  }
  if (r.error.empty())
    return true;
  error = file + ": bad index: " + r.error;
  return false;
}

std::vector<std::pair<int64_t, std::vector<int64_t>>>
piper::ckpt::globalDataShapes(const plan::Manifest &manifest) {
  int64_t replicas = 1;
  for (const plan::MeshAxis &axis : manifest.mesh.axes)
    for (const std::string &b : manifest.batchAxes)
      if (axis.name == b)
        replicas *= axis.size;
  std::vector<std::pair<int64_t, std::vector<int64_t>>> out;
  for (const plan::Tensor &arg : manifest.arguments) {
    if (arg.kind != "data")
      continue;
    std::vector<int64_t> shape = arg.shape;
    if (!shape.empty())
      shape[0] *= replicas;
    out.push_back({arg.index, shape});
  }
  return out;
}

Value piper::ckpt::describeStrategy(const plan::Manifest &manifest,
                                    const std::string &planDir) {
  Array axes, batch, roles;
  for (const plan::MeshAxis &a : manifest.mesh.axes)
    axes.push_back(Object{{"name", a.name}, {"size", a.size}});
  for (const std::string &b : manifest.batchAxes)
    batch.push_back(b);
  for (const plan::Role &role : manifest.roles) {
    Object coords;
    for (const auto &[axis, at] : role.role)
      coords.push_back({axis, at});
    roles.push_back(Object{{"program", role.program}, {"role", coords}});
  }
  return Object{
      {"plan", planDir},
      {"source", manifest.source},
      {"mesh", Object{{"name", manifest.mesh.name}, {"axes", std::move(axes)}}},
      {"batch_axes", std::move(batch)},
      {"roles", std::move(roles)}};
}
