//===- Region.cpp - Which elements a piece or a device holds --------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// A device's region of a tensor comes from plan.json's layout (whole, ZeRO
// `shard`, TP/EP `split`) through plan::Tensor's own arithmetic, so a
// checkpoint tiles a tensor exactly as the running plan holds it.
//
//===----------------------------------------------------------------------===//

#include "piper-rt/checkpoint.h"

#include <algorithm>
#include <cstdio>

using namespace piper;
using namespace piper::ckpt;

int64_t Region::numel() const {
  if (flat)
    return std::max<int64_t>(end - begin, 0);
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

std::vector<std::pair<int64_t, int64_t>>
Region::runs(const std::vector<int64_t> &global) const {
  std::vector<std::pair<int64_t, int64_t>> out;
  if (numel() == 0)
    return out;
  if (flat) {
    out.push_back({begin, end - begin});
    return out;
  }
  size_t rank = shape.size();
  if (rank == 0) {
    out.push_back({0, 1});
    return out;
  }
  // Dimensions after k are covered whole, so each run spans dims k.. of the
  // box: prod(shape[k..]) elements.
  size_t k = rank - 1;
  while (k > 0 && shape[k] == global[k])
    --k;
  int64_t length = 1;
  for (size_t d = k; d < rank; ++d)
    length *= shape[d];
  // Row-major strides of the global tensor for the outer dims.
  std::vector<int64_t> strides(rank, 1);
  for (size_t d = rank - 1; d-- > 0;)
    strides[d] = strides[d + 1] * global[d + 1];
  std::vector<int64_t> index(k, 0);
  while (true) {
    int64_t start = offset[k] * strides[k];
    for (size_t d = 0; d < k; ++d)
      start += (offset[d] + index[d]) * strides[d];
    out.push_back({start, length});
    size_t d = k;
    while (d > 0) {
      --d;
      if (++index[d] < shape[d])
        break;
      index[d] = 0;
      if (d == 0)
        return out;
    }
    if (k == 0)
      return out;
  }
}

std::string Region::str() const {
  auto list = [](const std::vector<int64_t> &v) {
    std::string s = "[";
    for (size_t i = 0; i < v.size(); ++i)
      s += (i ? ", " : "") + std::to_string(v[i]);
    return s + "]";
  };
  if (flat)
    return "flat [" + std::to_string(begin) + ", " + std::to_string(end) + ")";
  if (shape.empty())
    return "scalar";
  return "box " + list(offset) + " + " + list(shape);
}

bool Region::operator==(const Region &o) const {
  return flat == o.flat && begin == o.begin && end == o.end &&
         offset == o.offset && shape == o.shape;
}

Region piper::ckpt::regionOf(const plan::Tensor &t, const plan::Mesh &mesh,
                             const plan::Coords &coords) {
  Region r;
  if (t.shard) {
    // A chunk's zero padding (past the tensor's end) is not saved.
    int64_t k = mesh.indexAlong(coords, t.shard->axes).first;
    r.flat = true;
    r.begin = std::min(k * t.shard->chunk, t.numel());
    r.end = std::min((k + 1) * t.shard->chunk, t.numel());
    return r;
  }
  r.shape = t.localShape();
  r.offset.assign(t.shape.size(), 0);
  std::vector<int64_t> parts = t.parts(mesh, coords);
  for (size_t k = 0; k < t.split.size(); ++k)
    r.offset[t.split[k].dim] += parts[k] * r.shape[t.split[k].dim];
  return r;
}

bool piper::ckpt::hasRegions(const plan::Manifest &m, bool paramsOnly,
                             std::string &error) {
  auto join = [](const std::vector<std::string> &axes) {
    std::string out;
    for (const std::string &axis : axes)
      out += (out.empty() ? "" : ", ") + axis;
    return out;
  };
  for (const plan::Tensor &t : m.arguments) {
    if (!isSaved(t) || !t.shard || t.split.empty() ||
        (paramsOnly && t.kind != "param"))
      continue;
    std::vector<std::string> splitAxes;
    for (const plan::Split &s : t.split)
      splitAxes.insert(splitAxes.end(), s.axes.begin(), s.axes.end());
    error = "checkpoints of '" + logicalName(t) +
            "' are not supported: it is split over [" + join(splitAxes) +
            "] and ZeRO-sharded over [" + join(t.shard->axes) +
            "] (use zero = 0 for split parameters to checkpoint this run)";
    return false;
  }
  return true;
}

bool piper::ckpt::isSaved(const plan::Tensor &t) {
  return t.kind == "param" || t.kind == "state";
}

std::string piper::ckpt::logicalName(const plan::Tensor &t) {
  if (t.kind == "state")
    return "optimizer." + t.param.value_or("") + "." + t.slot.value_or("");
  return t.name.value_or("");
}

std::vector<PlannedPiece>
piper::ckpt::planPieces(const plan::Manifest &manifest,
                        const std::vector<const plan::Role *> &roleOf) {
  std::vector<PlannedPiece> out;
  for (const plan::Tensor &arg : manifest.arguments) {
    if (!isSaved(arg))
      continue;
    std::vector<Region> seen;
    for (size_t r = 0; r < roleOf.size(); ++r) {
      const std::vector<int64_t> &inputs = roleOf[r]->inputs;
      if (std::find(inputs.begin(), inputs.end(), arg.index) == inputs.end())
        continue;
      Region region =
          regionOf(arg, manifest.mesh, manifest.mesh.coords(int64_t(r)));
      if (region.numel() == 0 ||
          std::find(seen.begin(), seen.end(), region) != seen.end())
        continue;
      seen.push_back(region);
      out.push_back({arg.index, static_cast<int>(r), std::move(region)});
    }
  }
  return out;
}

std::string piper::ckpt::rankFileName(int rank) {
  char name[64];
  std::snprintf(name, sizeof(name), "rank-%05d.safetensors", rank);
  return name;
}

std::string piper::ckpt::stepDirName(int64_t step) {
  char name[64];
  std::snprintf(name, sizeof(name), "step-%08lld",
                static_cast<long long>(step));
  return name;
}

int64_t TensorEntry::numel() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

const TensorEntry *Index::find(const std::string &name) const {
  for (const TensorEntry &t : tensors)
    if (t.name == name)
      return &t;
  return nullptr;
}
