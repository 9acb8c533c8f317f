//===- Bootstrap.cpp - The NCCL unique id, broadcast over MPI -------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "Bootstrap.h"

#include <cstring>

bool piper::cuda::broadcastUniqueId(
    MPI_Comm comm, int root,
    const std::function<std::string(ncclUniqueId &)> &make, ncclUniqueId &id,
    std::string &why) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  // One message: a status byte, the id, and rank 0's error text.
  struct Message {
    char failed;
    char id[NCCL_UNIQUE_ID_BYTES];
    char text[256];
  } message;
  std::memset(&message, 0, sizeof(message));
  if (rank == root) {
    ncclUniqueId made;
    std::memset(&made, 0, sizeof(made));
    std::string error = make(made);
    message.failed = !error.empty();
    std::memcpy(message.id, made.internal, NCCL_UNIQUE_ID_BYTES);
    std::strncpy(message.text, error.c_str(), sizeof(message.text) - 1);
  }
  int code = MPI_Bcast(&message, sizeof(message), MPI_BYTE, root, comm);
  if (code != MPI_SUCCESS) {
    why = "NCCL id broadcast: MPI_Bcast failed (code " + std::to_string(code) +
          ")";
    return false;
  }
  if (message.failed) {
    why = "NCCL id on rank " + std::to_string(root) + ": " + message.text;
    return false;
  }
  std::memcpy(id.internal, message.id, NCCL_UNIQUE_ID_BYTES);
  return true;
}
