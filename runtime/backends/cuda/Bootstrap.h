//===- Bootstrap.h - The NCCL unique id, broadcast over MPI -----*- C++ -*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// One NCCL world communicator per job: rank 0 makes its unique id and MPI
// broadcasts it; every plan communicator is then split from that world
// (ncclCommSplit), so one id is all the bootstrap there is. A failure on
// rank 0 travels with the broadcast, so that no rank waits in
// ncclCommInitRank for an id that never comes. Needs no GPU: the unit tests
// run it on CPU ranks with a made-up id.
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_RT_BACKENDS_CUDA_BOOTSTRAP_H
#define PIPER_RT_BACKENDS_CUDA_BOOTSTRAP_H

#include <mpi.h>
#include <nccl.h>

#include <functional>
#include <string>

namespace piper::cuda {

/// Rank `root` of `comm` calls `make` (ncclGetUniqueId; it returns "" or
/// what went wrong); every rank gets the id in `id`. False on every rank,
/// with `why`, if `make` or the broadcast failed.
bool broadcastUniqueId(MPI_Comm comm, int root,
                       const std::function<std::string(ncclUniqueId &)> &make,
                       ncclUniqueId &id, std::string &why);

} // namespace piper::cuda

#endif // PIPER_RT_BACKENDS_CUDA_BOOTSTRAP_H
