//===- CudaBootstrapMPITest.cpp - The NCCL id over MPI, on CPU ranks ------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Run under mpiexec (run-mpi.sh). Case "id": rank 0 makes a real NCCL
// unique id (NCCL needs no GPU for that) and every rank must receive the
// same bytes; a second broadcast from the last rank with a fake id checks
// the root argument. Case "fail": rank 0's maker fails, and every rank must
// get its message instead of waiting. One "PASS" line per rank.
//
//===----------------------------------------------------------------------===//

#include "../../../../runtime/backends/cuda/Api.h"
#include "../../../../runtime/backends/cuda/Bootstrap.h"

#include <cstdio>
#include <cstring>
#include <string>

using namespace piper::cuda;

namespace {

int failWith(int rank, const std::string &what) {
  std::printf("rank %d: FAIL: %s\n", rank, what.c_str());
  return 1;
}

int idCase(int rank, int size) {
  std::string why;
  const Nccl *n = nccl(why);
  if (!n)
    return failWith(rank, why);
  ncclUniqueId id;
  bool ok = broadcastUniqueId(
      MPI_COMM_WORLD, 0,
      [&](ncclUniqueId &out) {
        ncclResult_t r = n->ncclGetUniqueId(&out);
        return r == ncclSuccess ? std::string() : n->ncclGetErrorString(r);
      },
      id, why);
  if (!ok)
    return failWith(rank, why);
  // Compare with rank 0's bytes, gathered separately.
  std::vector<char> all(size * NCCL_UNIQUE_ID_BYTES);
  MPI_Allgather(id.internal, NCCL_UNIQUE_ID_BYTES, MPI_BYTE, all.data(),
                NCCL_UNIQUE_ID_BYTES, MPI_BYTE, MPI_COMM_WORLD);
  bool nonzero = false;
  for (int i = 0; i < NCCL_UNIQUE_ID_BYTES; ++i)
    nonzero |= id.internal[i] != 0;
  if (!nonzero)
    return failWith(rank, "the id is all zeros");
  for (int r = 0; r < size; ++r)
    if (std::memcmp(all.data() + r * NCCL_UNIQUE_ID_BYTES, id.internal,
                    NCCL_UNIQUE_ID_BYTES) != 0)
      return failWith(rank, "rank " + std::to_string(r) + " got another id");
  // Another root, a made-up id.
  ok = broadcastUniqueId(
      MPI_COMM_WORLD, size - 1,
      [&](ncclUniqueId &out) {
        for (int i = 0; i < NCCL_UNIQUE_ID_BYTES; ++i)
          out.internal[i] = static_cast<char>(i * 7 + 1);
        return std::string();
      },
      id, why);
  if (!ok)
    return failWith(rank, why);
  for (int i = 0; i < NCCL_UNIQUE_ID_BYTES; ++i)
    if (id.internal[i] != static_cast<char>(i * 7 + 1))
      return failWith(rank, "byte " + std::to_string(i) + " of root " +
                                std::to_string(size - 1) + "'s id differs");
  return 0;
}

int failCase(int rank) {
  ncclUniqueId id;
  std::string why;
  bool ok = broadcastUniqueId(
      MPI_COMM_WORLD, 0,
      [](ncclUniqueId &) { return std::string("no network interface"); }, id,
      why);
  if (ok)
    return failWith(rank, "a failed id was accepted");
  if (why != "NCCL id on rank 0: no network interface")
    return failWith(rank, "unexpected message: " + why);
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  std::string which = argc > 1 ? argv[1] : "";
  int status = which == "id"     ? idCase(rank, size)
               : which == "fail" ? failCase(rank)
                                 : failWith(rank, "unknown case " + which);
  if (status == 0)
    std::printf("PASS rank %d\n", rank);
  MPI_Finalize();
  return status;
}
