//===- CheckpointMPITest.cpp - Layout changes in memory over MPI ----------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// ckpt::redistribute on 4 ranks: the live state of a DP4 ZeRO-3 plan (a
// 8x6 weight and a 5-element bias in chunks, the last chunk all padding, and
// an AdamW step counter) moves to a PP2 x TP2 plan (the weight in column
// parts on pipeline rank 0, the bias whole on pipeline rank 1). Every rank
// checks every element it holds afterwards against the value its global
// index says. Prints "redistribute: OK" on each rank; exits 1 otherwise.
//
//===----------------------------------------------------------------------===//

#include "piper-rt/checkpoint.h"

#include <mpi.h>

#include <cstdio>
#include <cstring>

using namespace piper;

namespace {

plan::Tensor tensor(int64_t index, std::string kind, std::string name,
                    plan::DType dtype, std::vector<int64_t> shape) {
  plan::Tensor t;
  t.index = index;
  t.kind = std::move(kind);
  t.dtype = dtype;
  t.shape = std::move(shape);
  if (t.kind == "param") {
    t.name = name;
  } else {
    t.param = name;
    t.slot = "step";
  }
  return t;
}

plan::Manifest dp4() {
  plan::Manifest m;
  m.mesh.axes = {{"dp", 4}};
  m.arguments = {tensor(0, "param", "w", plan::DType::F64, {8, 6}),
                 tensor(1, "state", "w", plan::DType::I64, {}),
                 tensor(2, "param", "b", plan::DType::F64, {5})};
  m.arguments[0].shard = plan::Shard{{"dp"}, 4, 12};
  m.arguments[2].shard = plan::Shard{{"dp"}, 4, 2};
  plan::Role role;
  role.program = "all";
  role.inputs = {0, 1, 2};
  m.roles = {role};
  return m;
}

plan::Manifest pp2tp2() {
  plan::Manifest m;
  m.mesh.axes = {{"pp", 2}, {"tp", 2}};
  m.arguments = {tensor(0, "param", "w", plan::DType::F64, {8, 6}),
                 tensor(1, "state", "w", plan::DType::I64, {}),
                 tensor(2, "param", "b", plan::DType::F64, {5})};
  m.arguments[0].split = {plan::Split{1, {"tp"}, 2}};
  plan::Role first, second;
  first.program = "stage0";
  first.role = {{"pp", 0}};
  first.inputs = {0, 1};
  second.program = "stage1";
  second.role = {{"pp", 1}};
  second.inputs = {2};
  m.roles = {first, second};
  return m;
}

/// Each argument's storage on this rank, filled with 1000 * (index + 1) +
/// the element's global index (padding 0); the counter with 7.
std::vector<std::vector<int64_t>> storage(const plan::Manifest &m, int rank,
                                          bool fill) {
  plan::Coords coords = m.mesh.coords(rank);
  std::vector<std::vector<int64_t>> out;
  for (const plan::Tensor &t : m.arguments) {
    std::vector<int64_t> words(size_t(t.localNumel()), 0);
    for (int64_t i = 0; fill && i < t.localNumel(); ++i) {
      int64_t g = t.globalIndex(m.mesh, coords, i);
      if (t.dtype == plan::DType::I64)
        words[i] = 7;
      else if (g >= 0) {
        double v = 1000.0 * double(t.index + 1) + double(g);
        std::memcpy(&words[i], &v, 8);
      }
    }
    out.push_back(std::move(words));
  }
  return out;
}

} // namespace

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  plan::Manifest from = dp4(), to = pp2tp2();
  std::vector<const plan::Role *> fromRoles, toRoles;
  std::string error;
  if (size != 4 || !from.rolesOfRanks(fromRoles, error) ||
      !to.rolesOfRanks(toRoles, error)) {
    std::fprintf(stderr, "setup: %s (ranks %d)\n", error.c_str(), size);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  auto before = storage(from, rank, true);
  auto after = storage(to, rank, false);
  auto expected = storage(to, rank, true);
  std::vector<const void *> fromHeld;
  std::vector<void *> toHeld;
  for (auto &v : before)
    fromHeld.push_back(v.data());
  for (size_t i = 0; i < after.size(); ++i) {
    bool reads = false;
    for (int64_t in : toRoles[rank]->inputs)
      reads |= in == int64_t(i);
    toHeld.push_back(reads ? after[i].data() : nullptr);
    if (!reads)
      expected[i].assign(after[i].size(), 0);
  }
  ckpt::Comm comm;
  comm.rank = rank;
  comm.size = size;
  comm.move = [rank](int64_t *data, size_t count, int src, int dst,
                     std::string &) {
    if (rank == src)
      MPI_Send(data, int(count), MPI_INT64_T, dst, 7, MPI_COMM_WORLD);
    else if (rank == dst)
      MPI_Recv(data, int(count), MPI_INT64_T, src, 7, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE);
    return true;
  };
  bool ok = ckpt::redistribute(from, fromRoles, fromHeld, to, toRoles, toHeld,
                               comm, error);
  if (!ok)
    std::fprintf(stderr, "rank %d: %s\n", rank, error.c_str());
  for (size_t i = 0; ok && i < after.size(); ++i)
    if (after[i] != expected[i]) {
      std::fprintf(stderr, "rank %d: argument %zu differs\n", rank, i);
      ok = false;
    }
  if (ok)
    std::printf("rank %d: redistribute: OK\n", rank);
  int mine = ok, all = 0;
  MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  MPI_Finalize();
  return all ? 0 : 1;
}
