//===- Redistribute.cpp - Changing a live state's layout in memory --------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The in-memory form of save-then-resume: the pieces a checkpoint of plan A
// would hold (planPieces) are sent straight to the ranks that hold their
// regions under plan B. Every rank walks the same list of transfers (B's
// tensors in argument order, B's ranks, A's pieces) and takes part in those
// it sends or receives, one blocking move each, so the moves pair up in
// one global order and cannot deadlock. A rank that is both ends copies.
//
//===----------------------------------------------------------------------===//

#include "Overlap.h"
#include "piper-rt/checkpoint.h"

#include <cstring>
#include <map>

using namespace piper;
using namespace piper::ckpt;

bool piper::ckpt::redistribute(const plan::Manifest &from,
                               const std::vector<const plan::Role *> &fromRoles,
                               const std::vector<const void *> &fromHeld,
                               const plan::Manifest &to,
                               const std::vector<const plan::Role *> &toRoles,
                               const std::vector<void *> &toHeld,
                               const Comm &comm, std::string &error) {
  if (fromRoles.size() != toRoles.size()) {
    error = "the plans run on " + std::to_string(fromRoles.size()) + " and " +
            std::to_string(toRoles.size()) +
            " devices; a switch in memory keeps the ranks";
    return false;
  }
  std::map<std::string, const plan::Tensor *> source;
  for (const plan::Tensor &arg : from.arguments)
    if (isSaved(arg))
      source[logicalName(arg)] = &arg;
  std::vector<PlannedPiece> pieces = planPieces(from, fromRoles);
  std::vector<char> buffer;
  for (const plan::Tensor &arg : to.arguments) {
    if (!isSaved(arg))
      continue;
    auto it = source.find(logicalName(arg));
    if (it == source.end() || it->second->shape != arg.shape ||
        it->second->dtype != arg.dtype) {
      error = "tensor '" + logicalName(arg) +
              "' of the new plan is not in the old one with its shape and "
              "dtype";
      return false;
    }
    const plan::Tensor &old = *it->second;
    const int64_t size = static_cast<int64_t>(arg.elementSize());
    for (size_t q = 0; q < toRoles.size(); ++q) {
      const std::vector<int64_t> &inputs = toRoles[q]->inputs;
      if (std::find(inputs.begin(), inputs.end(), arg.index) == inputs.end())
        continue;
      std::vector<Run> dest = localRuns(
          regionOf(arg, to.mesh, to.mesh.coords(int64_t(q))), arg.shape);
      for (const PlannedPiece &piece : pieces) {
        if (piece.arg != old.index)
          continue;
        int p = piece.rank;
        if (comm.rank != p && comm.rank != int(q))
          continue;
        std::vector<Copy> copies =
            overlaps(localRuns(piece.region, arg.shape), dest);
        if (copies.empty())
          continue;
        int64_t elements = 0;
        for (const Copy &c : copies)
          elements += c.length;
        // Packed in copy order, in 8-byte words (the move's unit).
        buffer.assign(static_cast<size_t>((elements * size + 7) / 8 * 8), 0);
        if (comm.rank == p) {
          const char *held = static_cast<const char *>(fromHeld[old.index]);
          int64_t at = 0;
          for (const Copy &c : copies) {
            std::memcpy(buffer.data() + at, held + c.src * size,
                        size_t(c.length * size));
            at += c.length * size;
          }
        }
        if (p != int(q) &&
            !comm.move(reinterpret_cast<int64_t *>(buffer.data()),
                       buffer.size() / 8, p, int(q), error))
          return false;
        if (comm.rank == int(q)) {
          char *held = static_cast<char *>(toHeld[arg.index]);
          int64_t at = 0;
          for (const Copy &c : copies) {
            std::memcpy(held + c.dst * size, buffer.data() + at,
                        size_t(c.length * size));
            at += c.length * size;
          }
        }
      }
    }
  }
  return true;
}
