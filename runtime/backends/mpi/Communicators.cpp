//===- Communicators.cpp - Piper runtime communicators per axes x stream --===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// A device program names its collectives' communicators by (mesh axes,
// stream). The group of an axis set is built with MPI_Comm_create_group
// rather than MPI_Comm_split: split is collective over the whole world, so
// every rank would have to create every group in the same order, including
// groups of roles it never talks to; create_group involves only the members,
// so each program creates just the communicators it uses, lazily. Each stream
// then gets its own duplicate, because MPI matches collectives on one
// communicator in issue order: two streams sharing one would serialise, and
// could deadlock when members interleave the streams differently.
//
//===----------------------------------------------------------------------===//

#include "Internal.h"

#include <new>

using namespace piper::rt;

namespace {

/// The create_group tag of an axis set: distinct per set (for meshes of up to
/// 15 axes; the standard guarantees tags up to 32767), so that members
/// creating different groups at once never match each other's messages.
int groupTag(uint32_t mask) { return static_cast<int>(mask & 0x7FFF); }

std::string joinRanks(const std::vector<int> &ranks) {
  std::string text;
  for (size_t i = 0; i < ranks.size(); ++i)
    text += (i ? ", " : "") + std::to_string(ranks[i]);
  return text;
}

} // namespace

piper_rt_status piper_rt_comm_get(piper_rt_context context, size_t num_axes,
                                  const char *const *axes,
                                  piper_rt_stream stream, piper_rt_comm *comm) {
  if (!context || !comm)
    return PIPER_RT_ERROR(PIPER_RT_ERROR_INVALID_ARGUMENT,
                          "context or comm is NULL");
  *comm = nullptr;
  if (piper_rt_status s = checkStream(stream))
    return s;
  if (stream->context != context)
    return PIPER_RT_ERROR(PIPER_RT_ERROR_INVALID_ARGUMENT,
                          "stream '%s' belongs to another context",
                          stream->name.c_str());
  if (!context->hasMesh)
    return PIPER_RT_ERROR(PIPER_RT_ERROR_INVALID_ARGUMENT,
                          "no mesh is set (piper_rt_set_mesh)");
  if (num_axes == 0)
    return PIPER_RT_ERROR(PIPER_RT_ERROR_INVALID_ARGUMENT,
                          "a communicator needs at least one mesh axis");
  uint32_t mask = 0;
  if (piper_rt_status s = axisMask(context->mesh, num_axes, axes, &mask))
    return s;

  auto key = std::make_pair(mask, stream->index);
  auto found = context->comms.find(key);
  if (found != context->comms.end()) {
    *comm = found->second.get();
    return PIPER_RT_OK;
  }

  std::vector<int64_t> group = groupMembers(context->mesh, context->rank, mask);
  std::vector<int> members(group.begin(), group.end());
  std::string axesText = describeAxes(context->mesh, mask);
  std::string what = "creating communicator " + axesText + " for stream '" +
                     stream->name + "' (world ranks " + joinRanks(members) +
                     ")";

  // MPI_COMM_NULL is not a zero value in OpenMPI, so a map's value-initialised
  // entry would not read as "absent": insert it explicitly.
  auto inserted = context->groups.emplace(mask, MPI_COMM_NULL);
  MPI_Comm &groupComm = inserted.first->second;
  if (groupComm == MPI_COMM_NULL) {
    MPI_Group world, subset;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_incl(world, static_cast<int>(members.size()), members.data(),
                   &subset);
    setBlocking(*context, what);
    int code = MPI_Comm_create_group(MPI_COMM_WORLD, subset, groupTag(mask),
                                     &groupComm);
    setBlocking(*context, "");
    MPI_Group_free(&subset);
    MPI_Group_free(&world);
    if (code != MPI_SUCCESS) {
      groupComm = MPI_COMM_NULL;
      return PIPER_RT_ERROR(PIPER_RT_ERROR_COMMUNICATION, "%s: %s",
                            what.c_str(), mpiErrorString(code).c_str());
    }
    MPI_Comm_set_errhandler(groupComm, MPI_ERRORS_RETURN);
  }

  auto impl = std::unique_ptr<piper_rt_comm_impl>(new (std::nothrow)
                                                      piper_rt_comm_impl);
  if (!impl)
    return PIPER_RT_ERROR(PIPER_RT_ERROR_OUT_OF_MEMORY, "communicator");
  setBlocking(*context, what);
  int code = MPI_Comm_dup(groupComm, &impl->comm);
  setBlocking(*context, "");
  if (code != MPI_SUCCESS)
    return PIPER_RT_ERROR(PIPER_RT_ERROR_COMMUNICATION, "%s: %s", what.c_str(),
                          mpiErrorString(code).c_str());
  impl->context = context;
  impl->stream = stream;
  impl->mask = mask;
  MPI_Comm_rank(impl->comm, &impl->rank);
  impl->members = std::move(members);
  impl->description = "communicator " + axesText + " of stream '" +
                      stream->name + "' (rank " + std::to_string(impl->rank) +
                      " of " + std::to_string(impl->members.size()) +
                      ": world ranks " + joinRanks(impl->members) + ")";
  *comm = impl.get();
  context->comms.emplace(key, std::move(impl));
  return PIPER_RT_OK;
}

piper_rt_status piper_rt_comm_rank(piper_rt_comm comm, int *rank) {
  if (!comm || !rank)
    return PIPER_RT_ERROR(PIPER_RT_ERROR_INVALID_ARGUMENT,
                          "comm or rank is NULL");
  *rank = comm->rank;
  return PIPER_RT_OK;
}

piper_rt_status piper_rt_comm_size(piper_rt_comm comm, int *size) {
  if (!comm || !size)
    return PIPER_RT_ERROR(PIPER_RT_ERROR_INVALID_ARGUMENT,
                          "comm or size is NULL");
  *size = static_cast<int>(comm->members.size());
  return PIPER_RT_OK;
}

piper_rt_status piper_rt_comm_members(piper_rt_comm comm, int *world_ranks,
                                      size_t capacity) {
  if (!comm || !world_ranks)
    return PIPER_RT_ERROR(PIPER_RT_ERROR_INVALID_ARGUMENT,
                          "comm or world_ranks is NULL");
  if (capacity < comm->members.size())
    return PIPER_RT_ERROR(PIPER_RT_ERROR_INVALID_ARGUMENT,
                          "the %s has %zu members; capacity is %zu",
                          comm->description.c_str(), comm->members.size(),
                          capacity);
  for (size_t i = 0; i < comm->members.size(); ++i)
    world_ranks[i] = comm->members[i];
  return PIPER_RT_OK;
}
