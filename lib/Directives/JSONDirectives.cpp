//===- JSONDirectives.cpp - Piper's JSON directive lists ------------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The accepted form (docs/Directives.md, "JSON directive lists"):
//
//   {"mesh": "mesh",                      // optional, default "mesh"
//    "directives": [                      // or the bare list
//      {"split":     {"filter": {}, "n": 4, "dim": 0}},
//      {"split_backward": {"filter": {"PASS": "B"}}},
//      {"place":     {"filter": {"PP": 0}, "devices": {"pp": 0},
//                     "stream": "pp"}},
//      {"replicate": {"filter": {}, "devices": ["dp"], "zero": 1,
//                     "shard_grads": false, "shard_params": false,
//                     "bucket_size": 0, "where": {"EP": "none"},
//                     "grad_stream": "dp_grad", "param_stream": "dp_param"}},
//      {"shard":     {"filter": {}, "kind": "expert", "devices": ["ep"],
//                     "stream": "ep"}},
//      {"shard":     {"filter": {}, "kind": "tensor", "devices": ["tp"],
//                     "column": ["*.wq"], "row": ["*.wo"],
//                     "sequence_parallel": false}},
//      {"order":     [{"PP": 0, "MB": 0}, [{"PASS": "F"}, {"PASS": "B"}]]},
//      {"schedule":  {"name": "1f1b", "axis": "pp"}},
//      {"recompute": {"filter": {"PP": 0}, "ops": ["attention"]}},
//      {"balance":   {"stages": 8, "cost": "roofline", "device": "a100",
//                     "microbatches": 16, "grad_axes": ["dp"],
//                     "expert_axes": ["ep"], "memory_limit": 8e10}}]}
//
// `balance` re-cuts the model's stages before autodiff, so it goes to a
// second named sequence, @__transform_model, whatever its position.
//
// Piper's own replicate flags map onto ZeRO stages: shard_grads is ZeRO-2,
// shard_params ZeRO-3. Every directive selects nodes with its filter
// through `transform.piper.match_nodes`, so "a filter matching nothing"
// and every other check is the transform op's.
//
//===----------------------------------------------------------------------===//

#include "piper/Directives/JSONDirectives.h"
#include "piper/Limits.h"

#include "JSONPositions.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;
using mlir::piper::checkJSONDepth;
using mlir::piper::kMaxMicrobatches;

namespace {

constexpr StringLiteral kHandle = "(!transform.any_op) -> !transform.any_op";

class Translator {
public:
  explicit Translator(StringRef source) : source(source) {}

  Error run(const json::Value &root,
            ArrayRef<mlir::piper::JSONPosition> positions);
  std::string take() { return std::move(body); }

private:
  Error fail(const Twine &path, const Twine &message) {
    return createStringError(inconvertibleErrorCode(),
                             source + ": " + path + ": " + message);
  }

  /// Keys of `object` must be in `allowed`.
  Error checkKeys(const json::Object &object, const Twine &path,
                  ArrayRef<StringRef> allowed);

  /// An MLIR string literal.
  static std::string quote(StringRef text);
  Expected<std::string> filter(const json::Value *value, const Twine &path);
  Expected<std::string> strings(const json::Value *value, const Twine &path);
  Expected<int64_t> integer(const json::Value *value, const Twine &path,
                            int64_t min);
  Expected<std::string> string(const json::Value *value, const Twine &path);
  Expected<bool> boolean(const json::Value *value, const Twine &path);

  /// Emits the match of `filterText` and returns its handle name.
  std::string match(StringRef filterText);
  std::string fresh(StringRef prefix) { return (prefix + Twine(next++)).str(); }

  Error split(const json::Object &args, const Twine &path);
  Error splitBackward(const json::Object &args, const Twine &path);
  Error place(const json::Object &args, const Twine &path);
  Error replicate(const json::Object &args, const Twine &path);
  Error shard(const json::Object &args, const Twine &path);
  Error order(const json::Array &groups, const Twine &path);
  Error schedule(const json::Object &args, const Twine &path);
  Error balance(const json::Object &args, const Twine &path);
  Error recompute(const json::Object &args, const Twine &path);

  /// Gives every op emitted since `start` the directive's JSON position.
  void locate(size_t start, mlir::piper::JSONPosition position);

  StringRef source;
  std::string mesh = "mesh";
  std::string body;
  unsigned next = 0;

public:
  /// The @__transform_model sequence's ops (balance).
  std::string modelBody;
};

Error Translator::checkKeys(const json::Object &object, const Twine &path,
                            ArrayRef<StringRef> allowed) {
  for (const auto &entry : object)
    if (!llvm::is_contained(allowed, entry.first.str()))
      return fail(path, "unknown key '" + entry.first.str() +
                            "' (expected one of: " + join(allowed, ", ") + ")");
  return Error::success();
}

std::string Translator::quote(StringRef text) {
  std::string quoted = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\')
      quoted += '\\';
    quoted += c;
  }
  return quoted + "\"";
}

static bool isIdentifier(StringRef key) {
  if (key.empty() || !(isAlpha(key.front()) || key.front() == '_'))
    return false;
  return llvm::all_of(key, [](char c) { return isAlnum(c) || c == '_'; });
}

Expected<std::string> Translator::filter(const json::Value *value,
                                         const Twine &path) {
  if (!value)
    return std::string("{}");
  const json::Object *object = value->getAsObject();
  if (!object)
    return fail(path, "expected a tag filter object such as {\"PP\": 0}");
  // Sorted keys: the printed filter does not depend on the JSON's order.
  std::vector<std::string> keys;
  for (const auto &entry : *object)
    keys.push_back(entry.first.str());
  llvm::sort(keys);
  std::string text = "{";
  for (const std::string &key : keys) {
    if (!isIdentifier(key))
      return fail(path + "." + key, "a tag name must be an identifier");
    const json::Value &tag = *object->get(key);
    text += (text.size() > 1 ? ", " : "") + key + " = ";
    if (std::optional<int64_t> number = tag.getAsInteger())
      text += std::to_string(*number);
    else if (std::optional<StringRef> word = tag.getAsString())
      text += quote(*word);
    else
      return fail(path + "." + key,
                  "a tag value must be an integer or a string");
  }
  return text + "}";
}

Expected<std::string> Translator::strings(const json::Value *value,
                                          const Twine &path) {
  const json::Array *array = value ? value->getAsArray() : nullptr;
  if (!array)
    return fail(path, "expected a list of strings");
  std::string text = "[";
  for (auto [index, element] : llvm::enumerate(*array)) {
    std::optional<StringRef> word = element.getAsString();
    if (!word)
      return fail(path + "[" + Twine(index) + "]", "expected a string");
    text += (index ? ", " : "") + quote(*word);
  }
  return text + "]";
}

Expected<int64_t> Translator::integer(const json::Value *value,
                                      const Twine &path, int64_t min) {
  std::optional<int64_t> number = value ? value->getAsInteger() : std::nullopt;
  if (!number)
    return fail(path, "expected an integer");
  if (*number < min)
    return fail(path, "expected an integer of at least " + Twine(min) +
                          ", got " + Twine(*number));
  return *number;
}

Expected<std::string> Translator::string(const json::Value *value,
                                         const Twine &path) {
  std::optional<StringRef> word = value ? value->getAsString() : std::nullopt;
  if (!word)
    return fail(path, "expected a string");
  return word->str();
}

Expected<bool> Translator::boolean(const json::Value *value,
                                   const Twine &path) {
  std::optional<bool> flag = value ? value->getAsBoolean() : std::nullopt;
  if (!flag)
    return fail(path, "expected true or false");
  return *flag;
}

std::string Translator::match(StringRef filterText) {
  std::string handle = fresh("%nodes");
  body += formatv("    {0} = transform.piper.match_nodes {1} in %root : {2}\n",
                  handle, filterText, kHandle)
              .str();
  return handle;
}

Error Translator::split(const json::Object &args, const Twine &path) {
  if (Error e = checkKeys(args, path, {"filter", "n", "dim"}))
    return e;
  auto nodes = filter(args.get("filter"), path + ".filter");
  if (!nodes)
    return nodes.takeError();
  auto n = integer(args.get("n"), path + ".n", 1);
  if (!n)
    return n.takeError();
  if (*n > kMaxMicrobatches)
    return fail(path + ".n", "expected at most " + Twine(kMaxMicrobatches) +
                                 " microbatches, got " + Twine(*n));
  int64_t dim = 0;
  if (args.get("dim")) {
    auto value = integer(args.get("dim"), path + ".dim", 0);
    if (!value)
      return value.takeError();
    dim = *value;
  }
  std::string handle = match(*nodes);
  body +=
      formatv("    {0} = transform.piper.split {1} into {2} microbatches"
              "{3} : {4}\n",
              fresh("%split"), handle, *n,
              dim ? " along " + std::to_string(dim) : std::string(), kHandle)
          .str();
  return Error::success();
}

Error Translator::splitBackward(const json::Object &args, const Twine &path) {
  if (Error e = checkKeys(args, path, {"filter"}))
    return e;
  json::Value fused = json::Object{{"PASS", "B"}};
  auto nodes = filter(args.get("filter") ? args.get("filter") : &fused,
                      path + ".filter");
  if (!nodes)
    return nodes.takeError();
  std::string handle = match(*nodes);
  body += formatv("    {0} = transform.piper.split_backward {1} : {2}\n",
                  fresh("%parts"), handle, kHandle)
              .str();
  return Error::success();
}

Error Translator::recompute(const json::Object &args, const Twine &path) {
  if (Error e = checkKeys(args, path, {"filter", "ops"}))
    return e;
  json::Value forward = json::Object{{"PASS", "F"}};
  auto nodes = filter(args.get("filter") ? args.get("filter") : &forward,
                      path + ".filter");
  if (!nodes)
    return nodes.takeError();
  std::string ops;
  if (args.get("ops")) {
    auto list = strings(args.get("ops"), path + ".ops");
    if (!list)
      return list.takeError();
    ops = " ops " + *list;
  }
  std::string handle = match(*nodes);
  body += formatv("    {0} = transform.piper.recompute {1}{2} : {3}\n",
                  fresh("%recomputed"), handle, ops, kHandle)
              .str();
  return Error::success();
}

Error Translator::place(const json::Object &args, const Twine &path) {
  if (Error e = checkKeys(args, path, {"filter", "devices", "stream"}))
    return e;
  auto nodes = filter(args.get("filter"), path + ".filter");
  if (!nodes)
    return nodes.takeError();
  const json::Object *devices =
      args.get("devices") ? args.get("devices")->getAsObject() : nullptr;
  if (!devices)
    return fail(path + ".devices",
                "expected mesh coordinates such as {\"pp\": 1}");
  std::vector<std::string> axes;
  for (const auto &entry : *devices)
    axes.push_back(entry.first.str());
  llvm::sort(axes);
  std::string group = "{";
  for (const std::string &axis : axes) {
    if (!isIdentifier(axis))
      return fail(path + ".devices." + axis,
                  "an axis name must be an identifier");
    auto coordinate = integer(devices->get(axis), path + ".devices." + axis, 0);
    if (!coordinate)
      return coordinate.takeError();
    group += (group.size() > 1 ? ", " : "") + axis + " = " +
             std::to_string(*coordinate);
  }
  group += "}";
  std::string stream;
  if (args.get("stream")) {
    auto name = string(args.get("stream"), path + ".stream");
    if (!name)
      return name.takeError();
    stream = " stream " + quote(*name);
  }
  std::string handle = match(*nodes);
  body += formatv("    {0} = transform.piper.place {1} on @{2} {3}{4} : {5}\n",
                  fresh("%transfers"), handle, mesh, group, stream, kHandle)
              .str();
  return Error::success();
}

Error Translator::replicate(const json::Object &args, const Twine &path) {
  if (Error e =
          checkKeys(args, path,
                    {"filter", "devices", "zero", "shard_grads", "shard_params",
                     "bucket_size", "where", "grad_stream", "param_stream"}))
    return e;
  auto nodes = filter(args.get("filter"), path + ".filter");
  if (!nodes)
    return nodes.takeError();
  auto axes = strings(args.get("devices"), path + ".devices");
  if (!axes)
    return axes.takeError();
  int64_t zero = 0;
  if (args.get("zero")) {
    auto stage = integer(args.get("zero"), path + ".zero", 0);
    if (!stage)
      return stage.takeError();
    zero = *stage;
  }
  for (auto [key, stage] :
       {std::pair<StringRef, int64_t>{"shard_grads", 2}, {"shard_params", 3}}) {
    if (!args.get(key))
      continue;
    auto flag = boolean(args.get(key), path + "." + key);
    if (!flag)
      return flag.takeError();
    if (*flag && args.get("zero") && zero != stage)
      return fail(path + "." + key, "contradicts \"zero\": " + Twine(zero));
    if (*flag)
      zero = std::max(zero, stage);
  }
  std::string extra;
  if (zero)
    extra += " zero = " + std::to_string(zero);
  if (args.get("where")) {
    auto where = filter(args.get("where"), path + ".where");
    if (!where)
      return where.takeError();
    extra += " where " + *where;
  }
  if (args.get("bucket_size")) {
    auto bytes = integer(args.get("bucket_size"), path + ".bucket_size", 0);
    if (!bytes)
      return bytes.takeError();
    extra += " bucket_size = " + std::to_string(*bytes);
  }
  std::string streams;
  for (StringRef key : {"grad_stream", "param_stream"}) {
    if (!args.get(key))
      continue;
    auto name = string(args.get(key), path + "." + key);
    if (!name)
      return name.takeError();
    streams +=
        (streams.empty() ? " {" : ", ") + key.str() + " = " + quote(*name);
  }
  if (!streams.empty())
    streams += "}";
  std::string handle = match(*nodes);
  body += formatv("    {0} = transform.piper.replicate {1} over @{2} {3}{4}{5}"
                  " : {6}\n",
                  fresh("%collectives"), handle, mesh, *axes, extra, streams,
                  kHandle)
              .str();
  return Error::success();
}

Error Translator::shard(const json::Object &args, const Twine &path) {
  if (Error e = checkKeys(args, path,
                          {"filter", "kind", "devices", "stream", "column",
                           "row", "sequence_parallel"}))
    return e;
  auto nodes = filter(args.get("filter"), path + ".filter");
  if (!nodes)
    return nodes.takeError();
  // Piper's shard is expert parallelism; tensor parallelism is ours.
  std::string kind = "expert";
  if (args.get("kind")) {
    auto name = string(args.get("kind"), path + ".kind");
    if (!name)
      return name.takeError();
    if (*name != "expert" && *name != "tensor")
      return fail(path + ".kind",
                  "expected \"expert\" or \"tensor\", got \"" + *name + "\"");
    kind = *name;
  }
  auto axes = strings(args.get("devices"), path + ".devices");
  if (!axes)
    return axes.takeError();
  std::string extra;
  if (kind == "tensor") {
    for (StringRef key : {"column", "row"}) {
      auto globs = strings(args.get(key), path + "." + key);
      if (!globs)
        return globs.takeError();
      extra += " " + key.str() + " " + *globs;
    }
    if (args.get("sequence_parallel")) {
      auto flag =
          boolean(args.get("sequence_parallel"), path + ".sequence_parallel");
      if (!flag)
        return flag.takeError();
      if (*flag)
        extra += " sequence_parallel";
    }
  } else {
    for (StringRef key : {"column", "row", "sequence_parallel"})
      if (args.get(key))
        return fail(path + "." + key, "applies to \"kind\": \"tensor\" only");
  }
  if (args.get("stream")) {
    auto name = string(args.get("stream"), path + ".stream");
    if (!name)
      return name.takeError();
    extra += " stream " + quote(*name);
  }
  std::string handle = match(*nodes);
  body += formatv("    {0} = transform.piper.shard {1} {2} over @{3} {4}{5} : "
                  "{6}\n",
                  fresh("%sharded"), handle, kind, mesh, *axes, extra, kHandle)
              .str();
  return Error::success();
}

Error Translator::order(const json::Array &groups, const Twine &path) {
  if (groups.size() < 2)
    return fail(path, "expected at least two groups to order");
  std::string text = "[";
  for (auto [index, group] : llvm::enumerate(groups)) {
    std::string groupPath = (path + "[" + Twine(index) + "]").str();
    text += index ? ", " : "";
    if (const json::Array *together = group.getAsArray()) {
      text += "[";
      for (auto [inner, element] : llvm::enumerate(*together)) {
        auto one =
            filter(&element, groupPath + "[" + std::to_string(inner) + "]");
        if (!one)
          return one.takeError();
        text += (inner ? ", " : "") + *one;
      }
      text += "]";
      continue;
    }
    auto one = filter(&group, groupPath);
    if (!one)
      return one.takeError();
    text += *one;
  }
  body += formatv("    transform.piper.order {0}] in %root : "
                  "!transform.any_op\n",
                  text)
              .str();
  return Error::success();
}

Error Translator::schedule(const json::Object &args, const Twine &path) {
  if (Error e = checkKeys(args, path, {"name", "axis"}))
    return e;
  auto name = string(args.get("name"), path + ".name");
  if (!name)
    return name.takeError();
  std::string axis;
  if (args.get("axis")) {
    auto value = string(args.get("axis"), path + ".axis");
    if (!value)
      return value.takeError();
    axis = " axis " + quote(*value);
  }
  body += formatv("    transform.piper.schedule {0} in %root{1} : "
                  "!transform.any_op\n",
                  quote(*name), axis)
              .str();
  return Error::success();
}

Error Translator::balance(const json::Object &args, const Twine &path) {
  if (Error e = checkKeys(args, path,
                          {"stages", "cost", "device", "microbatches",
                           "grad_axes", "expert_axes", "memory_limit"}))
    return e;
  auto stages = integer(args.get("stages"), path + ".stages", 1);
  if (!stages)
    return stages.takeError();
  SmallVector<std::string> attrs;
  for (StringRef key : {"cost", "device"})
    if (args.get(key)) {
      auto value = string(args.get(key), path + "." + key);
      if (!value)
        return value.takeError();
      attrs.push_back((key + " = " + quote(*value)).str());
    }
  if (args.get("microbatches")) {
    auto value = integer(args.get("microbatches"), path + ".microbatches", 1);
    if (!value)
      return value.takeError();
    attrs.push_back("microbatches = " + std::to_string(*value));
  }
  for (StringRef key : {"grad_axes", "expert_axes"})
    if (args.get(key)) {
      auto value = strings(args.get(key), path + "." + key);
      if (!value)
        return value.takeError();
      attrs.push_back((key + " = " + *value).str());
    }
  if (const json::Value *limit = args.get("memory_limit")) {
    // Bytes: JSON writers print large integers as 8e10.
    std::optional<double> bytes = limit->getAsNumber();
    if (!bytes || *bytes < 1 || *bytes > 9.2e18 ||
        *bytes != double(int64_t(*bytes)))
      return fail(path + ".memory_limit",
                  "expected a positive whole number of bytes");
    attrs.push_back("memory_limit = " + std::to_string(int64_t(*bytes)));
  }
  body +=
      formatv("    transform.piper.balance %root into {0} stages{1} : "
              "!transform.any_op\n",
              *stages,
              attrs.empty() ? std::string() : " {" + join(attrs, ", ") + "}")
          .str();
  return Error::success();
}

void Translator::locate(size_t start, mlir::piper::JSONPosition position) {
  std::string loc = formatv(" loc({0}:{1}:{2})", quote(source), position.line,
                            position.column)
                        .str();
  std::string located = body.substr(0, start);
  for (char c : StringRef(body).drop_front(start)) {
    if (c == '\n')
      located += loc;
    located += c;
  }
  body = std::move(located);
}

Error Translator::run(const json::Value &root,
                      ArrayRef<mlir::piper::JSONPosition> positions) {
  const json::Array *directives = root.getAsArray();
  if (const json::Object *object = root.getAsObject()) {
    if (Error e = checkKeys(*object, "(top level)", {"mesh", "directives"}))
      return e;
    if (object->get("mesh")) {
      auto name = string(object->get("mesh"), "mesh");
      if (!name)
        return name.takeError();
      if (!isIdentifier(*name))
        return fail("mesh", "a mesh name must be an identifier");
      mesh = *name;
    }
    directives = object->getArray("directives");
  }
  if (!directives)
    return fail("(top level)", "expected a list of directives, or an object "
                               "with \"directives\": [...]");
  for (auto [index, directive] : llvm::enumerate(*directives)) {
    std::string path = "directives[" + std::to_string(index) + "]";
    const json::Object *object = directive.getAsObject();
    if (!object || object->size() != 1)
      return fail(path, "expected an object with one key naming the "
                        "directive, such as {\"place\": {...}}");
    StringRef kind = object->begin()->first;
    const json::Value &args = object->begin()->second;
    std::string argsPath = path + "." + kind.str();
    size_t start = body.size();
    if (kind == "order") {
      const json::Array *groups = args.getAsArray();
      if (!groups)
        return fail(argsPath, "expected a list of groups");
      if (Error e = order(*groups, argsPath))
        return e;
      if (index < positions.size())
        locate(start, positions[index]);
      continue;
    }
    const json::Object *fields = args.getAsObject();
    if (!fields)
      return fail(argsPath, "expected an object of arguments");
    Error result = Error::success();
    if (kind == "split")
      result = split(*fields, argsPath);
    else if (kind == "split_backward")
      result = splitBackward(*fields, argsPath);
    else if (kind == "place")
      result = place(*fields, argsPath);
    else if (kind == "replicate")
      result = replicate(*fields, argsPath);
    else if (kind == "shard")
      result = shard(*fields, argsPath);
    else if (kind == "schedule")
      result = schedule(*fields, argsPath);
    else if (kind == "balance")
      result = balance(*fields, argsPath);
    else if (kind == "recompute")
      result = recompute(*fields, argsPath);
    else
      result = fail(path, "unknown directive '" + kind +
                              "' (expected split, split_backward, place, "
                              "replicate, shard, order, schedule, balance or "
                              "recompute)");
    if (result)
      return result;
    if (index < positions.size())
      locate(start, positions[index]);
    if (kind == "balance") {
      modelBody += body.substr(start);
      body.resize(start);
    }
  }
  return Error::success();
}

} // namespace

Expected<std::string>
mlir::piper::translateJSONDirectives(StringRef json, StringRef sourceName) {
  // Depth first: llvm::json recurses once per level.
  if (std::optional<std::string> deep = checkJSONDepth(json))
    return createStringError(inconvertibleErrorCode(),
                             sourceName + ": invalid JSON: " + *deep);
  Expected<json::Value> root = json::parse(json);
  if (!root)
    return createStringError(
        inconvertibleErrorCode(),
        sourceName + ": invalid JSON: " + toString(root.takeError()));
  Translator translator(sourceName);
  if (Error e =
          translator.run(*root, mlir::piper::findDirectivePositions(json)))
    return std::move(e);
  std::string model;
  if (!translator.modelBody.empty())
    model = "  transform.named_sequence @__transform_model(%root: "
            "!transform.any_op {transform.readonly}) {\n" +
            translator.modelBody + "    transform.yield\n  }\n";
  return "// Generated by piper-directives from " + sourceName.str() +
         ".\n"
         "module attributes {transform.with_named_sequence} {\n" +
         model +
         "  transform.named_sequence @__transform_main(%root: "
         "!transform.any_op {transform.readonly}) {\n" +
         translator.take() + "    transform.yield\n  }\n}\n";
}
