//===- ChunkUtils.cpp - Grouping generated ops into chunks ----------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "piper/Dialect/Piper/Transforms/ChunkUtils.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseSet.h"

using namespace mlir;
using namespace mlir::piper;

void mlir::piper::narrowToCommonPrefix(std::optional<ChunkPath> &common,
                                       ArrayRef<AnnotateOp> path) {
  if (!common) {
    common = ChunkPath(path.begin(), path.end());
    return;
  }
  size_t n = 0;
  while (n < common->size() && n < path.size() && (*common)[n] == path[n])
    ++n;
  common->resize(n);
}

AnnotateOp mlir::piper::wrapInChunk(ArrayRef<Operation *> ops,
                                    AnnotateOp forward, PassKind pass) {
  DenseSet<Operation *> inside(ops.begin(), ops.end());
  SmallVector<Value> escaping;
  for (Operation *op : ops)
    for (Value result : op->getResults())
      if (llvm::any_of(result.getUsers(),
                       [&](Operation *user) { return !inside.contains(user); }))
        escaping.push_back(result);

  OpBuilder b(ops.front());
  auto chunk = AnnotateOp::create(
      b, forward.getLoc(), ValueRange(escaping).getTypes(), forward.getTags(),
      PassKindAttr::get(b.getContext(), pass));
  Block *body = b.createBlock(&chunk.getBody());
  for (Operation *op : ops)
    op->moveBefore(body, body->end());
  b.setInsertionPointToEnd(body);
  YieldOp::create(b, forward.getLoc(), escaping);
  for (auto [value, result] : llvm::zip(escaping, chunk.getResults()))
    value.replaceUsesWithIf(result, [&](OpOperand &use) {
      return !chunk->isProperAncestor(use.getOwner());
    });
  return chunk;
}

void mlir::piper::formChunks(ArrayRef<Operation *> ops,
                             const DenseMap<Operation *, ChunkPath> &paths,
                             function_ref<PassKind(Operation *)> passOf,
                             unsigned depth) {
  auto chunkAt = [&](Operation *op) -> AnnotateOp {
    auto it = paths.find(op);
    if (it == paths.end() || it->second.size() <= depth)
      return {};
    return it->second[depth];
  };
  for (size_t i = 0; i < ops.size();) {
    AnnotateOp forward = chunkAt(ops[i]);
    if (!forward) {
      // Derived work outside every chunk keeps its pass on the op, so the
      // DAG builder can still tell forward from backward and update work.
      if (depth == 0)
        ops[i]->setAttr(
            PiperDialect::getPassAttrName(),
            PassKindAttr::get(ops[i]->getContext(), passOf(ops[i])));
      ++i;
      continue;
    }
    size_t end = i;
    while (end < ops.size() && chunkAt(ops[end]) == forward)
      ++end;
    // Stable split by pass; the op after the run is a fixed anchor.
    std::map<PassKind, SmallVector<Operation *>> parts;
    for (Operation *op : ops.slice(i, end - i))
      parts[passOf(op)].push_back(op);
    Operation *next = ops[end - 1]->getNextNode();
    for (auto &[pass, part] : parts)
      for (Operation *op : part)
        op->moveBefore(next);
    for (auto &[pass, part] : parts) {
      wrapInChunk(part, forward, pass);
      formChunks(part, paths, passOf, depth + 1);
    }
    i = end;
  }
}

std::optional<int64_t> mlir::piper::getIntTag(DictionaryAttr dict,
                                              StringRef key) {
  if (!dict)
    return std::nullopt;
  auto value = dict.getAs<IntegerAttr>(key);
  if (!value || value.getType().isInteger(1))
    return std::nullopt;
  return value.getInt();
}
