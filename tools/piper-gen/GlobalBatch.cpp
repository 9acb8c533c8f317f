//===- GlobalBatch.cpp - The model's batch from the global batch ----------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "GlobalBatch.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"

#include <set>

using namespace llvm;
using namespace piper::gen;

std::string BatchSplit::describe() const {
  std::string text = "global batch " + std::to_string(global) + " = " +
                     std::to_string(replicas) + " replica(s) over [" +
                     join(axes, ", ") + "] x " + std::to_string(perReplica) +
                     ", " + std::to_string(microbatches) +
                     " microbatch(es) of " + std::to_string(microbatch);
  return text;
}

namespace {

Error fail(const Twine &message) {
  return createStringError(inconvertibleErrorCode(), message);
}

/// The split count and the replicated axes the strategy's directives name.
/// Only `split` and `replicate` decide how data divides; everything else
/// (place, shard, schedule, ...) is piper-compile's to check.
Error readDirectives(const json::Array &directives, StringRef path,
                     int64_t &microbatches, std::set<std::string> &axes) {
  for (auto [i, directive] : enumerate(directives)) {
    const json::Object *object = directive.getAsObject();
    if (!object)
      continue; // piper-compile reports a malformed directive, located
    if (const json::Object *split = object->getObject("split")) {
      std::optional<int64_t> n = split->getInteger("n");
      if (!n || *n < 1)
        return fail(path + ": directives[" + Twine(i) +
                    "].split.n must be a positive integer");
      microbatches = std::max(microbatches, *n);
    }
    if (const json::Object *replicate = object->getObject("replicate")) {
      const json::Array *devices = replicate->getArray("devices");
      if (!devices)
        return fail(path + ": directives[" + Twine(i) +
                    "].replicate.devices must be an array of mesh axes");
      for (const json::Value &axis : *devices) {
        std::optional<StringRef> name = axis.getAsString();
        if (!name)
          return fail(path + ": directives[" + Twine(i) +
                      "].replicate.devices must name mesh axes");
        axes.insert(name->str());
      }
    }
  }
  return Error::success();
}

} // namespace

Expected<BatchSplit> piper::gen::splitGlobalBatch(
    int64_t global, StringRef strategyPath,
    ArrayRef<mlir::piper::modelgen::MeshAxisSpec> mesh) {
  if (global < 1)
    return fail("--global-batch must be a positive integer, got " +
                Twine(global));
  ErrorOr<std::unique_ptr<MemoryBuffer>> file =
      MemoryBuffer::getFile(strategyPath);
  if (!file)
    return fail(strategyPath + ": " + file.getError().message());
  Expected<json::Value> root = json::parse((*file)->getBuffer());
  if (!root)
    return fail(strategyPath + ": invalid JSON: " + toString(root.takeError()));
  const json::Object *object = root->getAsObject();
  const json::Array *directives =
      object ? object->getArray("directives") : nullptr;
  if (!directives)
    return fail(strategyPath +
                ": expected an object with a \"directives\" array");

  BatchSplit split;
  split.global = global;
  std::set<std::string> axes;
  if (Error error =
          readDirectives(*directives, strategyPath, split.microbatches, axes))
    return std::move(error);
  for (const std::string &axis : axes) {
    if (!llvm::any_of(mesh, [&](const mlir::piper::modelgen::MeshAxisSpec &a) {
          return a.name == axis;
        }))
      return fail(strategyPath + " replicates over mesh axis '" + axis +
                  "', which --mesh does not have");
  }
  for (const mlir::piper::modelgen::MeshAxisSpec &a : mesh)
    if (axes.count(a.name)) {
      split.axes.push_back(a.name);
      split.replicas *= a.size;
    }
  if (global % split.replicas)
    return fail("--global-batch=" + Twine(global) + " does not divide over " +
                Twine(split.replicas) + " data-parallel replicas (mesh axes [" +
                join(split.axes, ", ") + "] of " + strategyPath + ")");
  split.perReplica = global / split.replicas;
  if (split.perReplica % split.microbatches)
    return fail("--global-batch=" + Twine(global) + " gives " +
                Twine(split.perReplica) + " per replica, which " +
                strategyPath + "'s split into " + Twine(split.microbatches) +
                " microbatches does not divide");
  split.microbatch = split.perReplica / split.microbatches;
  return split;
}
