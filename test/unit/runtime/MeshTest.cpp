//===- MeshTest.cpp - Tests for the runtime's mesh arithmetic -------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "piper-rt/piper_rt.h"

#include "gtest/gtest.h"

#include <string>
#include <vector>

namespace {

/// Owns a mesh for one test.
struct Mesh {
  piper_rt_mesh mesh = nullptr;
  Mesh(std::vector<const char *> names, std::vector<int64_t> sizes) {
    EXPECT_EQ(
        piper_rt_mesh_create(names.size(), names.data(), sizes.data(), &mesh),
        PIPER_RT_OK)
        << piper_rt_last_error();
  }
  ~Mesh() { piper_rt_mesh_destroy(mesh); }
};

std::vector<int64_t> group(piper_rt_mesh mesh, int64_t rank,
                           std::vector<const char *> axes) {
  std::vector<int64_t> members(64);
  size_t count = 0;
  EXPECT_EQ(piper_rt_mesh_group(mesh, rank, axes.size(), axes.data(),
                                members.data(), members.size(), &count),
            PIPER_RT_OK)
      << piper_rt_last_error();
  members.resize(count);
  return members;
}

TEST(RuntimeMeshTest, RowMajorCoordinates) {
  Mesh m({"pp", "dp", "tp"}, {2, 3, 4});
  int64_t devices = 0;
  ASSERT_EQ(piper_rt_mesh_num_devices(m.mesh, &devices), PIPER_RT_OK);
  EXPECT_EQ(devices, 24);
  size_t axes = 0;
  ASSERT_EQ(piper_rt_mesh_num_axes(m.mesh, &axes), PIPER_RT_OK);
  EXPECT_EQ(axes, 3u);
  // Every rank round-trips, and the last axis varies fastest.
  for (int64_t rank = 0; rank < devices; ++rank) {
    int64_t c[3];
    ASSERT_EQ(piper_rt_mesh_coords(m.mesh, rank, c), PIPER_RT_OK);
    EXPECT_EQ(c[0], rank / 12);
    EXPECT_EQ(c[1], rank / 4 % 3);
    EXPECT_EQ(c[2], rank % 4);
    int64_t back = -1;
    ASSERT_EQ(piper_rt_mesh_rank(m.mesh, c, &back), PIPER_RT_OK);
    EXPECT_EQ(back, rank);
  }
}

TEST(RuntimeMeshTest, AxisIndex) {
  Mesh m({"pp", "dp"}, {2, 2});
  size_t index = 9;
  ASSERT_EQ(piper_rt_mesh_axis_index(m.mesh, "dp", &index), PIPER_RT_OK);
  EXPECT_EQ(index, 1u);
  EXPECT_EQ(piper_rt_mesh_axis_index(m.mesh, "ep", &index),
            PIPER_RT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(piper_rt_last_error())
                .find("mesh (pp=2, dp=2) has no axis 'ep'"),
            std::string::npos)
      << piper_rt_last_error();
}

TEST(RuntimeMeshTest, GroupsOf2x2x2) {
  Mesh m({"pp", "dp", "tp"}, {2, 2, 2});
  // Rank 5 = (1, 0, 1).
  EXPECT_EQ(group(m.mesh, 5, {"tp"}), (std::vector<int64_t>{4, 5}));
  EXPECT_EQ(group(m.mesh, 5, {"dp"}), (std::vector<int64_t>{5, 7}));
  EXPECT_EQ(group(m.mesh, 5, {"pp"}), (std::vector<int64_t>{1, 5}));
  EXPECT_EQ(group(m.mesh, 5, {"dp", "tp"}), (std::vector<int64_t>{4, 5, 6, 7}));
  // A set: order and repetition do not matter.
  EXPECT_EQ(group(m.mesh, 5, {"tp", "pp", "tp"}),
            (std::vector<int64_t>{0, 1, 4, 5}));
  EXPECT_EQ(group(m.mesh, 5, {"pp", "dp", "tp"}).size(), 8u);
  EXPECT_EQ(group(m.mesh, 5, {}), (std::vector<int64_t>{5}));
}

TEST(RuntimeMeshTest, GroupCapacityIsChecked) {
  Mesh m({"dp"}, {4});
  const char *axes[] = {"dp"};
  int64_t members[2];
  size_t count = 0;
  EXPECT_EQ(piper_rt_mesh_group(m.mesh, 0, 1, axes, members, 2, &count),
            PIPER_RT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(count, 4u);
}

TEST(RuntimeMeshTest, NoAxesIsOneDevice) {
  piper_rt_mesh mesh = nullptr;
  ASSERT_EQ(piper_rt_mesh_create(0, nullptr, nullptr, &mesh), PIPER_RT_OK);
  int64_t devices = 0, rank = -1;
  ASSERT_EQ(piper_rt_mesh_num_devices(mesh, &devices), PIPER_RT_OK);
  EXPECT_EQ(devices, 1);
  ASSERT_EQ(piper_rt_mesh_rank(mesh, nullptr, &rank), PIPER_RT_OK);
  EXPECT_EQ(rank, 0);
  piper_rt_mesh_destroy(mesh);
}

TEST(RuntimeMeshTest, InvalidMeshes) {
  struct Case {
    std::vector<const char *> names;
    std::vector<int64_t> sizes;
    const char *message;
  } cases[] = {
      {{"dp", "dp"}, {2, 2}, "axis name 'dp' is used twice"},
      {{"dp", ""}, {2, 2}, "axis 1 has an empty name"},
      {{"dp"}, {0}, "axis 'dp' has size 0; sizes must be >= 1"},
      {{"a", "b", "c"},
       {1 << 16, 1 << 16, 2},
       "the mesh has more than 2147483647 devices (at axis 'b')"},
  };
  for (const Case &c : cases) {
    piper_rt_mesh mesh = reinterpret_cast<piper_rt_mesh>(1);
    EXPECT_EQ(piper_rt_mesh_create(c.names.size(), c.names.data(),
                                   c.sizes.data(), &mesh),
              PIPER_RT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(mesh, nullptr);
    EXPECT_NE(std::string(piper_rt_last_error()).find(c.message),
              std::string::npos)
        << piper_rt_last_error();
  }
}

TEST(RuntimeMeshTest, OutOfRangeRankAndCoordinates) {
  Mesh m({"pp", "dp"}, {2, 3});
  int64_t c[2];
  EXPECT_EQ(piper_rt_mesh_coords(m.mesh, 6, c),
            PIPER_RT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(piper_rt_last_error())
                .find("rank 6 is outside mesh (pp=2, dp=3) of 6 devices"),
            std::string::npos)
      << piper_rt_last_error();
  int64_t bad[2] = {1, 3}, rank = 0;
  EXPECT_EQ(piper_rt_mesh_rank(m.mesh, bad, &rank),
            PIPER_RT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(piper_rt_last_error())
                .find("coordinate 3 on axis 'dp' is outside 0..2"),
            std::string::npos)
      << piper_rt_last_error();
}

} // namespace
