//===- Threads.cpp - How many threads a rank's kernels use ----------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// piper_plan_default_threads (plan_abi.h): the kernels' thread count when the
// driver is not told one. The cores this process may run on
// (sched_getaffinity), shared with the other ranks of the node when the
// launcher did not bind ranks to their own cores:
//   - OMP_NUM_THREADS, when set to a positive integer, wins (the variable
//     OpenMP programs, OpenBLAS and PyTorch honour, so a job script that sets
//     it gets what it asked for);
//   - a rank whose affinity mask is smaller than the machine (mpirun
//     --bind-to core/socket, srun --cpu-bind, taskset) was given those cores
//     for itself: all of them;
//   - an unbound rank sees every core, as do the other ranks on its node
//     (OMPI_COMM_WORLD_LOCAL_SIZE under Open MPI, MPI_LOCALNRANKS under
//     MPICH/Hydra, SLURM_NTASKS_PER_NODE under srun): an equal share, at
//     least one.
// Ranks bound to a set they share (--bind-to socket with several ranks per
// socket) are the case this cannot see: pass --threads there.
//
//===----------------------------------------------------------------------===//

#include "../Cores.h"
#include "piper-rt/plan_abi.h"

#include <cstdlib>
#include <initializer_list>

namespace {

/// The positive integer in environment variable `name`, or 0.
int positiveEnv(const char *name) {
  const char *text = std::getenv(name);
  if (!text || !*text)
    return 0;
  char *end = nullptr;
  long value = std::strtol(text, &end, 10);
  return *end == '\0' && value > 0 && value < (1 << 20) ? int(value) : 0;
}

} // namespace

extern "C" int piper_plan_default_threads(void) {
  if (int fromEnv = positiveEnv("OMP_NUM_THREADS"))
    return fromEnv;
  piper::rt::Cores cores = piper::rt::processCores();
  int mine = cores.mine;
  if (cores.bound())
    return mine;
  int local = 0;
  for (const char *name : {"OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS",
                           "SLURM_NTASKS_PER_NODE"})
    if (!local)
      local = positiveEnv(name);
  return local > 1 ? (mine / local > 0 ? mine / local : 1) : mine;
}
