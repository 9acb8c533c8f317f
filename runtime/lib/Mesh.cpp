//===- Mesh.cpp - Piper runtime device mesh and coordinates ---------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Pure arithmetic over a named mesh, with no MPI, so that it is unit-tested in
// one process and shared by every backend. The row-major layout (last axis
// fastest) is the compiler's `piper.mesh` layout: a plan's rank r and the
// launcher's MPI rank r must be the same device.
//
//===----------------------------------------------------------------------===//

#include "Mesh.h"

#include <climits>
#include <cstring>
#include <new>

using namespace piper::rt;

piper_rt_status piper::rt::axisMask(const piper_rt_mesh_impl &mesh,
                                    size_t numAxes, const char *const *axes,
                                    uint32_t *mask) {
  if (numAxes > 0 && !axes)
    return PIPER_RT_ERROR(PIPER_RT_ERROR_INVALID_ARGUMENT,
                          "axes is NULL but num_axes is %zu", numAxes);
  uint32_t result = 0;
  for (size_t i = 0; i < numAxes; ++i) {
    const char *name = axes[i] ? axes[i] : "(null)";
    size_t a = 0;
    while (a < mesh.names.size() && mesh.names[a] != name)
      ++a;
    if (a == mesh.names.size())
      return PIPER_RT_ERROR(PIPER_RT_ERROR_INVALID_ARGUMENT,
                            "mesh %s has no axis '%s'",
                            describeMesh(mesh).c_str(), name);
    result |= 1u << a;
  }
  *mask = result;
  return PIPER_RT_OK;
}

std::vector<int64_t> piper::rt::groupMembers(const piper_rt_mesh_impl &mesh,
                                             int64_t rank, uint32_t mask) {
  // Enumerate every device and keep those equal to `rank` off the mask: at
  // most a few thousand ranks per job, once per communicator.
  size_t n = mesh.sizes.size();
  std::vector<int64_t> mine(n), coords(n);
  for (size_t a = n, r = rank; a-- > 0;) {
    mine[a] = static_cast<int64_t>(r) % mesh.sizes[a];
    r /= mesh.sizes[a];
  }
  std::vector<int64_t> members;
  for (int64_t d = 0; d < mesh.numDevices; ++d) {
    bool same = true;
    for (size_t a = n, r = d; a-- > 0;) {
      int64_t c = static_cast<int64_t>(r) % mesh.sizes[a];
      r /= mesh.sizes[a];
      if (!(mask & (1u << a)) && c != mine[a])
        same = false;
    }
    if (same)
      members.push_back(d);
  }
  return members;
}

std::string piper::rt::describeMesh(const piper_rt_mesh_impl &mesh) {
  std::string text = "(";
  for (size_t a = 0; a < mesh.names.size(); ++a)
    text +=
        (a ? ", " : "") + mesh.names[a] + "=" + std::to_string(mesh.sizes[a]);
  return text + ")";
}

std::string piper::rt::describeAxes(const piper_rt_mesh_impl &mesh,
                                    uint32_t mask) {
  std::string text = "{";
  bool first = true;
  for (size_t a = 0; a < mesh.names.size(); ++a)
    if (mask & (1u << a)) {
      text += (first ? "" : ", ") + mesh.names[a];
      first = false;
    }
  return text + "}";
}

piper_rt_status piper_rt_mesh_create(size_t num_axes, const char *const *names,
                                     const int64_t *sizes,
                                     piper_rt_mesh *mesh) {
  if (!mesh)
    return PIPER_RT_ERROR(PIPER_RT_ERROR_INVALID_ARGUMENT, "mesh is NULL");
  *mesh = nullptr;
  if (num_axes > PIPER_RT_MAX_MESH_AXES)
    return PIPER_RT_ERROR(PIPER_RT_ERROR_INVALID_ARGUMENT,
                          "a mesh has at most %d axes, not %zu",
                          PIPER_RT_MAX_MESH_AXES, num_axes);
  if (num_axes > 0 && (!names || !sizes))
    return PIPER_RT_ERROR(PIPER_RT_ERROR_INVALID_ARGUMENT,
                          "names or sizes is NULL for %zu axes", num_axes);
  int64_t devices = 1;
  for (size_t a = 0; a < num_axes; ++a) {
    if (!names[a] || !*names[a])
      return PIPER_RT_ERROR(PIPER_RT_ERROR_INVALID_ARGUMENT,
                            "axis %zu has an empty name", a);
    for (size_t b = 0; b < a; ++b)
      if (std::strcmp(names[a], names[b]) == 0)
        return PIPER_RT_ERROR(PIPER_RT_ERROR_INVALID_ARGUMENT,
                              "axis name '%s' is used twice", names[a]);
    if (sizes[a] < 1)
      return PIPER_RT_ERROR(PIPER_RT_ERROR_INVALID_ARGUMENT,
                            "axis '%s' has size %lld; sizes must be >= 1",
                            names[a], static_cast<long long>(sizes[a]));
    // MPI ranks are ints, so a mesh with more devices cannot be run.
    if (sizes[a] > INT_MAX / devices)
      return PIPER_RT_ERROR(PIPER_RT_ERROR_INVALID_ARGUMENT,
                            "the mesh has more than %d devices (at axis '%s')",
                            INT_MAX, names[a]);
    devices *= sizes[a];
  }
  auto *impl = new (std::nothrow) piper_rt_mesh_impl;
  if (!impl)
    return PIPER_RT_ERROR(PIPER_RT_ERROR_OUT_OF_MEMORY, "mesh");
  for (size_t a = 0; a < num_axes; ++a) {
    impl->names.emplace_back(names[a]);
    impl->sizes.push_back(sizes[a]);
  }
  impl->numDevices = devices;
  *mesh = impl;
  return PIPER_RT_OK;
}

piper_rt_status piper_rt_mesh_destroy(piper_rt_mesh mesh) {
  delete mesh;
  return PIPER_RT_OK;
}

piper_rt_status piper_rt_mesh_num_axes(piper_rt_mesh mesh, size_t *num_axes) {
  if (!mesh || !num_axes)
    return PIPER_RT_ERROR(PIPER_RT_ERROR_INVALID_ARGUMENT,
                          "mesh or num_axes is NULL");
  *num_axes = mesh->names.size();
  return PIPER_RT_OK;
}

piper_rt_status piper_rt_mesh_num_devices(piper_rt_mesh mesh,
                                          int64_t *num_devices) {
  if (!mesh || !num_devices)
    return PIPER_RT_ERROR(PIPER_RT_ERROR_INVALID_ARGUMENT,
                          "mesh or num_devices is NULL");
  *num_devices = mesh->numDevices;
  return PIPER_RT_OK;
}

piper_rt_status piper_rt_mesh_axis_index(piper_rt_mesh mesh, const char *name,
                                         size_t *index) {
  if (!mesh || !name || !index)
    return PIPER_RT_ERROR(PIPER_RT_ERROR_INVALID_ARGUMENT,
                          "mesh, name or index is NULL");
  uint32_t mask = 0;
  if (piper_rt_status s = axisMask(*mesh, 1, &name, &mask))
    return s;
  size_t a = 0;
  while (!(mask & (1u << a)))
    ++a;
  *index = a;
  return PIPER_RT_OK;
}

piper_rt_status piper_rt_mesh_coords(piper_rt_mesh mesh, int64_t rank,
                                     int64_t *coords) {
  if (!mesh || (!coords && !mesh->names.empty()))
    return PIPER_RT_ERROR(PIPER_RT_ERROR_INVALID_ARGUMENT,
                          "mesh or coords is NULL");
  if (rank < 0 || rank >= mesh->numDevices)
    return PIPER_RT_ERROR(PIPER_RT_ERROR_INVALID_ARGUMENT,
                          "rank %lld is outside mesh %s of %lld devices",
                          static_cast<long long>(rank),
                          describeMesh(*mesh).c_str(),
                          static_cast<long long>(mesh->numDevices));
  for (size_t a = mesh->sizes.size(); a-- > 0;) {
    coords[a] = rank % mesh->sizes[a];
    rank /= mesh->sizes[a];
  }
  return PIPER_RT_OK;
}

piper_rt_status piper_rt_mesh_rank(piper_rt_mesh mesh, const int64_t *coords,
                                   int64_t *rank) {
  if (!mesh || !rank || (!coords && !mesh->names.empty()))
    return PIPER_RT_ERROR(PIPER_RT_ERROR_INVALID_ARGUMENT,
                          "mesh, coords or rank is NULL");
  int64_t r = 0;
  for (size_t a = 0; a < mesh->sizes.size(); ++a) {
    if (coords[a] < 0 || coords[a] >= mesh->sizes[a])
      return PIPER_RT_ERROR(
          PIPER_RT_ERROR_INVALID_ARGUMENT,
          "coordinate %lld on axis '%s' is outside 0..%lld of mesh %s",
          static_cast<long long>(coords[a]), mesh->names[a].c_str(),
          static_cast<long long>(mesh->sizes[a] - 1),
          describeMesh(*mesh).c_str());
    r = r * mesh->sizes[a] + coords[a];
  }
  *rank = r;
  return PIPER_RT_OK;
}

piper_rt_status piper_rt_mesh_group(piper_rt_mesh mesh, int64_t rank,
                                    size_t num_axes, const char *const *axes,
                                    int64_t *members, size_t capacity,
                                    size_t *count) {
  if (!mesh || !count || (capacity > 0 && !members))
    return PIPER_RT_ERROR(PIPER_RT_ERROR_INVALID_ARGUMENT,
                          "mesh, members or count is NULL");
  if (rank < 0 || rank >= mesh->numDevices)
    return PIPER_RT_ERROR(PIPER_RT_ERROR_INVALID_ARGUMENT,
                          "rank %lld is outside mesh %s of %lld devices",
                          static_cast<long long>(rank),
                          describeMesh(*mesh).c_str(),
                          static_cast<long long>(mesh->numDevices));
  uint32_t mask = 0;
  if (piper_rt_status s = axisMask(*mesh, num_axes, axes, &mask))
    return s;
  std::vector<int64_t> group = groupMembers(*mesh, rank, mask);
  *count = group.size();
  if (group.size() > capacity)
    return PIPER_RT_ERROR(PIPER_RT_ERROR_INVALID_ARGUMENT,
                          "the group %s of rank %lld has %zu members; "
                          "capacity is %zu",
                          describeAxes(*mesh, mask).c_str(),
                          static_cast<long long>(rank), group.size(), capacity);
  for (size_t i = 0; i < group.size(); ++i)
    members[i] = group[i];
  return PIPER_RT_OK;
}
