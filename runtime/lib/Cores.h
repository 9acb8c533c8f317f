//===- Cores.h - The cores a rank may run on ----------------*- C++ -*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// What a rank's thread count (plan/Threads.cpp) and its way of waiting for
// communication (backends/mpi/Context.cpp) are decided from.
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_RUNTIME_LIB_CORES_H
#define PIPER_RUNTIME_LIB_CORES_H

namespace piper::rt {

/// The machine's online cores and those this process's affinity mask
/// allows, each at least 1.
struct Cores {
  int online = 1, mine = 1;
  /// Bound to fewer cores than the machine has (mpirun --bind-to, srun
  /// --cpu-bind, taskset): the launcher gave the rank those cores.
  bool bound() const { return mine < online; }
};

Cores processCores();

} // namespace piper::rt

#endif // PIPER_RUNTIME_LIB_CORES_H
