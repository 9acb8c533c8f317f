//===- Plan.cpp - Reading plan.json ---------------------------------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "Plan.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

using namespace piper::run;

namespace {

bool parseDType(llvm::StringRef s, DType &out) {
  if (s == "f64")
    out = DType::F64;
  else if (s == "f32")
    out = DType::F32;
  else if (s == "i64")
    out = DType::I64;
  else
    return false;
  return true;
}

bool parseTensor(const llvm::json::Value &value, TensorInfo &info,
                 llvm::json::Path path) {
  llvm::json::ObjectMapper o(value, path);
  std::string dtype;
  if (!o || !o.map("index", info.index) || !o.map("kind", info.kind) ||
      !o.map("dtype", dtype) || !o.map("shape", info.shape) ||
      !o.mapOptional("name", info.name) || !o.mapOptional("init", info.init) ||
      !o.mapOptional("std", info.std) || !o.mapOptional("bound", info.bound) ||
      !o.mapOptional("updates", info.updates))
    return false;
  if (const llvm::json::Object *object = value.getAsObject())
    if (object->get("shard")) {
      llvm::json::ObjectMapper shard(*object->get("shard"),
                                     path.field("shard"));
      ShardInfo info2;
      if (!shard || !shard.map("axes", info2.axes) ||
          !shard.map("members", info2.members) ||
          !shard.map("chunk", info2.chunk))
        return false;
      if (info2.members < 1 || info2.chunk * info2.members < info.numel()) {
        path.field("shard").report("chunks do not cover the tensor");
        return false;
      }
      info.shard = info2;
    }
  if (const llvm::json::Object *object = value.getAsObject())
    if (const llvm::json::Array *splits = object->getArray("split")) {
      for (auto [k, entry] : llvm::enumerate(*splits)) {
        llvm::json::Path at = path.field("split").index(k);
        llvm::json::ObjectMapper split(entry, at);
        SplitInfo s;
        if (!split || !split.map("dim", s.dim) || !split.map("axes", s.axes) ||
            !split.map("parts", s.parts))
          return false;
        if (s.dim < 0 || static_cast<size_t>(s.dim) >= info.shape.size() ||
            s.parts < 1 || info.shape[s.dim] % s.parts != 0) {
          at.report("parts do not divide the dimension");
          return false;
        }
        info.split.push_back(std::move(s));
      }
    }
  if (!parseDType(dtype, info.dtype)) {
    path.field("dtype").report("unsupported dtype (f32, f64 or i64)");
    return false;
  }
  return true;
}

bool parseCommunicator(const llvm::json::Value &value,
                       std::pair<std::vector<std::string>, std::string> &comm,
                       llvm::json::Path path) {
  llvm::json::ObjectMapper o(value, path);
  return o && o.map("axes", comm.first) && o.map("stream", comm.second);
}

bool parseRole(const llvm::json::Value &value, RoleInfo &role,
               llvm::json::Path path) {
  llvm::json::ObjectMapper o(value, path);
  return o && o.map("program", role.program) && o.map("object", role.object) &&
         o.map("entry", role.entry) && o.map("role", role.role) &&
         o.map("inputs", role.inputs) && o.map("outputs", role.outputs) &&
         o.mapOptional("launches", role.launches) &&
         o.mapOptional("streams", role.streams);
}

} // namespace

bool piper::run::loadPlan(const std::string &directory, Plan &plan,
                          std::string &error) {
  llvm::SmallString<128> path(directory);
  llvm::sys::path::append(path, "plan.json");
  auto buffer = llvm::MemoryBuffer::getFile(path);
  if (!buffer) {
    error = "cannot read plan " + std::string(path) + ": " +
            buffer.getError().message();
    return false;
  }
  llvm::Expected<llvm::json::Value> json =
      llvm::json::parse((*buffer)->getBuffer());
  if (!json) {
    error = std::string(path) + ": " + llvm::toString(json.takeError());
    return false;
  }
  llvm::json::Path::Root root("plan");
  llvm::json::ObjectMapper o(*json, root);
  std::string format;
  int64_t version = 0;
  bool ok = o && o.map("format", format) && o.map("version", version);
  if (ok && (format != "piper-plan" || version != 1)) {
    error = std::string(path) + ": not a version 1 piper plan (format '" +
            format + "', version " + std::to_string(version) + ")";
    return false;
  }
  const llvm::json::Object *object = json->getAsObject();
  auto mapArray = [&](llvm::StringRef key, auto &out, auto parse) {
    const llvm::json::Array *array = object ? object->getArray(key) : nullptr;
    if (!array) {
      llvm::json::Path(root).field(key).report("expected an array");
      return false;
    }
    for (size_t i = 0; i < array->size(); ++i) {
      out.emplace_back();
      if (!parse((*array)[i], out.back(),
                 llvm::json::Path(root).field(key).index(i)))
        return false;
    }
    return true;
  };
  ok = ok && o.map("function", plan.function) &&
       mapArray("arguments", plan.arguments, parseTensor) &&
       mapArray("results", plan.results, parseTensor) &&
       mapArray("roles", plan.roles, parseRole) &&
       o.mapOptional("batch_axes", plan.batchAxes) &&
       (!object || !object->get("communicators") ||
        mapArray("communicators", plan.communicators, parseCommunicator));
  if (ok) {
    if (const llvm::json::Object *mesh = object->getObject("mesh")) {
      if (auto name = mesh->getString("name"))
        plan.meshName = name->str();
      if (const llvm::json::Array *axes = mesh->getArray("axes"))
        for (const llvm::json::Value &axis : *axes)
          if (const llvm::json::Object *a = axis.getAsObject())
            if (auto name = a->getString("name")) {
              int64_t size = a->getInteger("size").value_or(0);
              plan.mesh[name->str()] = size;
              plan.meshAxes.emplace_back(name->str(), size);
            }
    }
  }
  if (!ok) {
    std::string message;
    llvm::raw_string_ostream os(message);
    os << llvm::toString(root.getError());
    error = std::string(path) + ": bad manifest: " + message;
    return false;
  }
  for (const TensorInfo &arg : plan.arguments)
    if (arg.index < 0 ||
        static_cast<size_t>(arg.index) >= plan.arguments.size() ||
        plan.arguments[arg.index].index != arg.index) {
      error = std::string(path) + ": bad manifest: arguments must be listed "
                                  "by index";
      return false;
    }
  if (plan.roles.empty()) {
    error = std::string(path) + ": bad manifest: the plan has no role";
    return false;
  }
  plan.directory = directory;
  return true;
}
