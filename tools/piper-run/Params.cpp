//===- Params.cpp - Parameters in and out of a run ------------------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "Params.h"

#include "piper/Reference/Init.h"

#include <algorithm>
#include <cstdio>
#include <set>

using namespace piper;
using namespace piper::run;
using plan::Manifest;
using plan::Tensor;

bool piper::run::initParameters(const Manifest &manifest,
                                const plan::Coords &coords, uint64_t seed,
                                const ref::ParamsFile *file,
                                std::vector<HostTensor> &args,
                                std::string &error) {
  if (file) {
    std::vector<std::string> names;
    for (const Tensor &arg : manifest.arguments)
      if (arg.kind == "param")
        names.push_back(arg.name.value_or(""));
    if (ref::Status status = file->checkAllKnown(names); !status.ok()) {
      error = status.message();
      return false;
    }
  }
  for (const Tensor &arg : manifest.arguments) {
    if (arg.kind != "param")
      continue;
    std::string name = arg.name.value_or(""), init = arg.init.value_or("");
    ref::Tensor value;
    ref::Status status = file ? file->lookup(name, arg.shape, value)
                         : init == "normal"
                             ? ref::initNormal(seed, name, arg.shape,
                                               arg.std.value_or(0.0), value)
                         : init == "ones" ? ref::initOnes(arg.shape, value)
                                          : ref::initZeros(arg.shape, value);
    if (!status.ok()) {
      // The file's messages name the parameter themselves.
      error = file ? status.message()
                   : "parameter '" + name + "': " + status.message();
      return false;
    }
    // This device's chunk (zero-padded) or part, or the whole tensor.
    std::vector<double> held(arg.localNumel(), 0.0);
    for (int64_t i = 0; i < arg.localNumel(); ++i)
      if (int64_t at = arg.globalIndex(manifest.mesh, coords, i); at >= 0)
        held[i] = value.data[at];
    args[arg.index].setFloats(held);
  }
  return true;
}

namespace {

/// The ranks to read `arg` from, in the order their pieces concatenate: the
/// holder alone for a whole tensor, one per chunk (in member order) or one per
/// part (in rank order) of the holder's group; a split tensor that is also
/// sharded, one per (part, chunk).
std::vector<int> sourcesOf(const Manifest &m, const Tensor &arg, int holder) {
  const plan::Mesh &mesh = m.mesh;
  plan::Coords home = mesh.coords(holder);
  std::vector<int> sources;
  if (!arg.split.empty()) {
    std::vector<std::string> splitAxes;
    for (const plan::Split &s : arg.split)
      splitAxes.insert(splitAxes.end(), s.axes.begin(), s.axes.end());
    if (arg.shard)
      splitAxes.insert(splitAxes.end(), arg.shard->axes.begin(),
                       arg.shard->axes.end());
    std::set<std::pair<std::vector<int64_t>, int64_t>> seen;
    for (int64_t r = 0; r < mesh.numDevices(); ++r) {
      plan::Coords c = mesh.coords(r);
      int64_t member =
          arg.shard ? mesh.indexAlong(c, arg.shard->axes).first : 0;
      if (mesh.sameOutside(c, home, splitAxes) &&
          seen.insert({arg.parts(mesh, c), member}).second)
        sources.push_back(static_cast<int>(r));
    }
  } else if (arg.shard) {
    sources.assign(arg.shard->members, -1);
    for (int64_t r = 0; r < mesh.numDevices(); ++r) {
      plan::Coords c = mesh.coords(r);
      if (mesh.sameOutside(c, home, arg.shard->axes))
        sources[mesh.indexAlong(c, arg.shard->axes).first] =
            static_cast<int>(r);
    }
  } else {
    sources.push_back(holder);
  }
  return sources;
}

} // namespace

bool piper::run::gatherParameters(const Manifest &manifest,
                                  const std::vector<const plan::Role *> &roleOf,
                                  int rank, std::vector<HostTensor> &args,
                                  piper_plan_session session, std::string &text,
                                  std::string &error) {
  for (const Tensor &arg : manifest.arguments) {
    if (arg.kind != "param")
      continue;
    int holder = -1;
    for (size_t r = 0; r < roleOf.size() && holder < 0; ++r)
      if (std::count(roleOf[r]->inputs.begin(), roleOf[r]->inputs.end(),
                     arg.index))
        holder = static_cast<int>(r);
    if (holder < 0)
      continue;
    std::vector<double> whole(arg.split.empty() ? 0 : arg.numel(), 0.0);
    for (int from : sourcesOf(manifest, arg, holder)) {
      HostTensor piece;
      piece.allocate(arg);
      if (rank == from)
        piece.storage = args[arg.index].storage;
      if (session &&
          piper_plan_session_move(
              session, piece.data(), static_cast<size_t>(arg.localNumel()),
              arg.dtype == plan::DType::F32 ? PIPER_RT_F32 : PIPER_RT_F64, from,
              0, PIPER_RT_MAX_TAG - 1) != PIPER_RT_OK) {
        error = "--params-out: moving a tensor from rank " +
                std::to_string(from) + " to 0: " + piper_rt_last_error();
        return false;
      }
      if (!arg.split.empty()) {
        plan::Coords at = manifest.mesh.coords(from);
        for (int64_t i = 0; i < arg.localNumel(); ++i)
          if (int64_t g = arg.globalIndex(manifest.mesh, at, i); g >= 0)
            whole[g] = piece.floatAt(i);
        continue;
      }
      for (int64_t i = 0; i < arg.localNumel(); ++i)
        whole.push_back(piece.floatAt(i));
    }
    whole.resize(arg.numel());
    text += arg.name.value_or("");
    for (double v : whole) {
      char number[32];
      std::snprintf(number, sizeof(number), " %.17g", v);
      text += number;
    }
    text += "\n";
  }
  return true;
}
