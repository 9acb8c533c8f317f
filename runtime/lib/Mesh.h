//===- Mesh.h - Piper runtime device mesh (internal) ------------*- C++ -*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The mesh's representation, shared by the C API in Mesh.cpp and the MPI
// backend, which builds communicators from axis masks.
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_RT_LIB_MESH_H
#define PIPER_RT_LIB_MESH_H

#include "piper-rt/piper_rt.h"

#include <cstdint>
#include <string>
#include <vector>

struct piper_rt_mesh_impl {
  std::vector<std::string> names;
  std::vector<int64_t> sizes;
  int64_t numDevices = 1;
};

namespace piper::rt {

/// Resolves `axes` (names of `mesh`) to a bit mask over axis indices; a set,
/// so order and repetition do not matter. Sets an INVALID_ARGUMENT error that
/// names the unknown axis and the mesh's axes.
piper_rt_status axisMask(const piper_rt_mesh_impl &mesh, size_t numAxes,
                         const char *const *axes, uint32_t *mask);

/// The world ranks of `rank`'s group along the axes in `mask`, ascending.
std::vector<int64_t> groupMembers(const piper_rt_mesh_impl &mesh, int64_t rank,
                                  uint32_t mask);

/// "(pp=2, dp=2)" for messages; "{dp, ep}" for an axis mask.
std::string describeMesh(const piper_rt_mesh_impl &mesh);
std::string describeAxes(const piper_rt_mesh_impl &mesh, uint32_t mask);

} // namespace piper::rt

#endif // PIPER_RT_LIB_MESH_H
