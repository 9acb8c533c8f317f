//===- Manifest.cpp - Layout arithmetic of the plan manifest --------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Which chunk or part of a tensor a device holds, and where its elements sit
// in the whole tensor (plan_manifest.h). piper-run's parameter
// initialisation and --params-out gathering both ask these, so the two
// directions cannot disagree.
//
//===----------------------------------------------------------------------===//

#include "piper-rt/plan_manifest.h"

#include <algorithm>

using namespace piper::plan;

namespace {
bool contains(const std::vector<std::string> &list, const std::string &s) {
  return std::find(list.begin(), list.end(), s) != list.end();
}
} // namespace

const char *piper::plan::dtypeName(DType dtype) {
  switch (dtype) {
  case DType::F32:
    return "f32";
  case DType::F64:
    return "f64";
  case DType::I64:
    return "i64";
  case DType::BF16:
    return "bf16";
  case DType::Other:
    break;
  }
  return "other";
}

size_t piper::plan::dtypeSize(DType dtype) {
  switch (dtype) {
  case DType::F32:
    return 4;
  case DType::F64:
  case DType::I64:
    return 8;
  case DType::BF16:
    return 2;
  case DType::Other:
    break;
  }
  return 0;
}

//===----------------------------------------------------------------------===//
// Mesh
//===----------------------------------------------------------------------===//

int64_t Mesh::numDevices() const {
  int64_t n = 1;
  for (const MeshAxis &axis : axes)
    n *= axis.size;
  return n;
}

Coords Mesh::coords(int64_t rank) const {
  Coords c(axes.size(), 0);
  for (size_t a = axes.size(); a-- > 0;) {
    int64_t size = std::max<int64_t>(axes[a].size, 1);
    c[a] = rank % size;
    rank /= size;
  }
  return c;
}

std::pair<int64_t, int64_t>
Mesh::indexAlong(const Coords &coords,
                 const std::vector<std::string> &over) const {
  int64_t index = 0, size = 1;
  for (size_t a = 0; a < axes.size(); ++a)
    if (contains(over, axes[a].name)) {
      index = index * axes[a].size + coords[a];
      size *= axes[a].size;
    }
  return {index, size};
}

bool Mesh::sameOutside(const Coords &a, const Coords &b,
                       const std::vector<std::string> &except) const {
  for (size_t k = 0; k < axes.size(); ++k)
    if (!contains(except, axes[k].name) && a[k] != b[k])
      return false;
  return true;
}

//===----------------------------------------------------------------------===//
// Tensor
//===----------------------------------------------------------------------===//

int64_t Tensor::numel() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

std::vector<int64_t> Tensor::localShape() const {
  std::vector<int64_t> local = shape;
  for (const Split &s : split)
    local[s.dim] /= s.parts;
  return local;
}

std::vector<int64_t> Tensor::heldShape() const {
  return shard ? std::vector<int64_t>{shard->chunk} : localShape();
}

int64_t Tensor::localNumel() const {
  int64_t n = 1;
  for (int64_t d : heldShape())
    n *= d;
  return n;
}

std::vector<int64_t> Tensor::parts(const Mesh &mesh,
                                   const Coords &coords) const {
  std::vector<int64_t> p;
  for (const Split &s : split)
    p.push_back(mesh.indexAlong(coords, s.axes).first);
  return p;
}

int64_t Tensor::globalIndexOfPart(const std::vector<int64_t> &parts,
                                  int64_t i) const {
  std::vector<int64_t> local = localShape();
  std::vector<int64_t> index(local.size());
  for (size_t d = local.size(); d-- > 0;) {
    index[d] = i % local[d];
    i /= local[d];
  }
  for (size_t k = 0; k < split.size(); ++k)
    index[split[k].dim] += parts[k] * local[split[k].dim];
  int64_t at = 0;
  for (size_t d = 0; d < index.size(); ++d)
    at = at * shape[d] + index[d];
  return at;
}

int64_t Tensor::globalIndex(const Mesh &mesh, const Coords &coords,
                            int64_t i) const {
  if (shard) {
    // A split tensor's chunks flatten its part (ZeRO over the axes a split
    // parameter is replicated on), a whole tensor's the tensor.
    int64_t at = mesh.indexAlong(coords, shard->axes).first * shard->chunk + i;
    if (split.empty())
      return at < numel() ? at : -1;
    int64_t partNumel = 1;
    for (int64_t d : localShape())
      partNumel *= d;
    return at < partNumel ? globalIndexOfPart(parts(mesh, coords), at) : -1;
  }
  if (!split.empty())
    return globalIndexOfPart(parts(mesh, coords), i);
  return i;
}

bool Tensor::operator==(const Tensor &o) const {
  return index == o.index && kind == o.kind && dtype == o.dtype &&
         shape == o.shape && name == o.name && init == o.init && std == o.std &&
         param == o.param && slot == o.slot && bound == o.bound &&
         updates == o.updates && shard == o.shard && split == o.split;
}

//===----------------------------------------------------------------------===//
// Roles and the manifest
//===----------------------------------------------------------------------===//

bool Role::matches(const Mesh &mesh, const Coords &coords) const {
  for (size_t a = 0; a < mesh.axes.size(); ++a) {
    auto it = role.find(mesh.axes[a].name);
    if (it != role.end() && it->second != coords[a])
      return false;
  }
  return true;
}

bool Role::operator==(const Role &o) const {
  return program == o.program && object == o.object && entry == o.entry &&
         role == o.role && inputs == o.inputs && outputs == o.outputs &&
         launches == o.launches && streams == o.streams &&
         objectBytes == o.objectBytes && objectChecksum == o.objectChecksum &&
         eval == o.eval && sample == o.sample && smShares == o.smShares;
}

bool Manifest::operator==(const Manifest &o) const {
  return function == o.function && source == o.source && mesh == o.mesh &&
         optimizer == o.optimizer && arguments == o.arguments &&
         results == o.results && roles == o.roles && batchAxes == o.batchAxes &&
         communicators == o.communicators && target == o.target &&
         gpuArch == o.gpuArch && kernelKinds == o.kernelKinds;
}

bool Manifest::rolesOfRanks(std::vector<const Role *> &out,
                            std::string &error) const {
  int64_t devices = mesh.numDevices();
  out.assign(devices, nullptr);
  for (int64_t r = 0; r < devices; ++r) {
    Coords coords = mesh.coords(r);
    for (const Role &candidate : roles) {
      if (!candidate.matches(mesh, coords))
        continue;
      if (out[r]) {
        error = "rank " + std::to_string(r) + " matches roles " +
                out[r]->program + " and " + candidate.program;
        return false;
      }
      out[r] = &candidate;
    }
    if (!out[r]) {
      error = "rank " + std::to_string(r) + " has no role";
      return false;
    }
  }
  return true;
}

std::vector<int>
Manifest::lossRanks(const std::vector<const Role *> &roleOf) const {
  std::vector<int> ranks;
  for (size_t r = 0; r < roleOf.size(); ++r) {
    const std::vector<int64_t> &outputs = roleOf[r]->outputs;
    if (std::find(outputs.begin(), outputs.end(), 0) == outputs.end())
      continue;
    // The first device along every axis that neither selects the role nor
    // splits the batch: the others hold copies of its loss.
    Coords coords = mesh.coords(static_cast<int64_t>(r));
    bool first = true;
    for (size_t a = 0; a < mesh.axes.size(); ++a)
      if (!roleOf[r]->role.count(mesh.axes[a].name) &&
          !contains(batchAxes, mesh.axes[a].name))
        first &= coords[a] == 0;
    if (first)
      ranks.push_back(static_cast<int>(r));
  }
  return ranks;
}
