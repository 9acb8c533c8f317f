//===- Context.cpp - Piper runtime MPI context, mesh and settings ---------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// MPI is process-wide but contexts are objects: the runtime initialises MPI
// only if nobody did (so a host that already uses MPI keeps its own setup)
// and finalises it only when the last context it created is gone.
//
//===----------------------------------------------------------------------===//

#include "Internal.h"

#include "../../lib/Cores.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>

using namespace piper::rt;

namespace {

std::mutex processMutex;
int liveContexts = 0;
bool runtimeInitialisedMpi = false;

/// PIPER_RT_PROGRESS_THREAD=0 turns the progress thread off (progress then
/// happens only inside runtime calls); for measuring what it buys.
bool progressThreadWanted() {
  const char *text = std::getenv("PIPER_RT_PROGRESS_THREAD");
  return !(text && std::strcmp(text, "0") == 0);
}

/// Whether a rank waiting for communication should keep polling (spin)
/// rather than sleep between polls. Polling finishes a transfer sooner (a
/// large message moves in fragments, each needing a test on both sides) but
/// takes a core: right when every rank of the node has a core of its own,
/// wrong when ranks share cores (8 ranks on 2), where a spinning rank holds
/// back the peer it waits for. PIPER_RT_WAIT=spin or sleep overrides; any
/// other value is reported in `error` and ignored. `local` is the number
/// of ranks on this node.
bool spinWhileWaiting(int local, std::string &error) {
  if (const char *text = std::getenv("PIPER_RT_WAIT"); text && *text) {
    if (std::strcmp(text, "spin") == 0)
      return true;
    if (std::strcmp(text, "sleep") == 0)
      return false;
    error = std::string("piper-rt: PIPER_RT_WAIT='") + text +
            "' is neither spin nor sleep; deciding from the cores";
  }
  Cores cores = processCores();
  return cores.bound() || local <= cores.online;
}

} // namespace

double piper::rt::now(const piper_rt_context_impl &context) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                       context.origin)
      .count();
}

std::string piper::rt::mpiErrorString(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS)
    return "MPI error " + std::to_string(code);
  return std::string(text, length);
}

piper_rt_status piper_rt_init(int *argc, char ***argv,
                              piper_rt_context *context) {
  if (!context)
    return PIPER_RT_ERROR(PIPER_RT_ERROR_INVALID_ARGUMENT, "context is NULL");
  *context = nullptr;
  // Until the liveness watchdog runs, start-up has a deadline of its own.
  StartupWatch startup;

  int provided = MPI_THREAD_SINGLE;
  {
    std::lock_guard<std::mutex> guard(processMutex);
    int initialised = 0, finalised = 0;
    MPI_Initialized(&initialised);
    MPI_Finalized(&finalised);
    if (finalised)
      return PIPER_RT_ERROR(PIPER_RT_ERROR_UNAVAILABLE,
                            "MPI was already finalised in this process; MPI "
                            "cannot be initialised twice");
    if (!initialised) {
      if (MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided) !=
          MPI_SUCCESS)
        return PIPER_RT_ERROR(PIPER_RT_ERROR_COMMUNICATION,
                              "MPI_Init_thread failed");
      runtimeInitialisedMpi = true;
    } else {
      MPI_Query_thread(&provided);
    }
    ++liveContexts;
  }

  auto *ctx = new (std::nothrow) piper_rt_context_impl;
  if (!ctx)
    return PIPER_RT_ERROR(PIPER_RT_ERROR_OUT_OF_MEMORY, "context");
  MPI_Comm_rank(MPI_COMM_WORLD, &ctx->rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ctx->size);
  ctx->threadMultiple = provided >= MPI_THREAD_MULTIPLE;

  // Errors come back as codes so that they turn into a status and a message
  // naming the operation, instead of MPI's default of aborting silently.
  MPI_Comm_dup(MPI_COMM_WORLD, &ctx->p2p);
  MPI_Comm_set_errhandler(ctx->p2p, MPI_ERRORS_RETURN);
  MPI_Comm node = MPI_COMM_NULL;
  int local = ctx->size;
  if (MPI_Comm_split_type(ctx->p2p, MPI_COMM_TYPE_SHARED, ctx->rank,
                          MPI_INFO_NULL, &node) == MPI_SUCCESS) {
    MPI_Comm_size(node, &local);
    MPI_Comm_free(&node);
  }
  std::string waitError;
  ctx->spinWhileWaiting = spinWhileWaiting(local, waitError);
  if (!waitError.empty() && ctx->rank == 0)
    std::fprintf(stderr, "%s\n", waitError.c_str());

  piper_rt_status saved = piper_rt_last_status();
  ctx->timeoutSeconds = piper_rt_comm_timeout_seconds();
  if (piper_rt_last_status() != saved && ctx->rank == 0)
    std::fprintf(stderr, "%s\n", piper_rt_last_error());
  piper_rt_clear_error();

  // The barrier aligns every rank's trace origin to within its latency
  // (microseconds on one machine), so merged timelines line up.
  MPI_Barrier(ctx->p2p);
  ctx->origin = std::chrono::steady_clock::now();

  if (const char *trace = std::getenv("PIPER_RT_TRACE"))
    if (*trace) {
      ctx->tracing = true;
      ctx->tracePath = trace;
    }

  if (ctx->threadMultiple && progressThreadWanted())
    startProgressThread(*ctx);
  startLiveness(*ctx);
  startup.done();
  *context = ctx;
  return PIPER_RT_OK;
}

piper_rt_status piper_rt_finalize(piper_rt_context context) {
  if (!context)
    return PIPER_RT_OK;
  piper_rt_status result = PIPER_RT_OK;
  for (auto &stream : context->streams)
    if (!stream->destroyed)
      if (piper_rt_status s = piper_rt_stream_synchronize(stream.get()))
        if (result == PIPER_RT_OK)
          result = s;
  if (context->tracing)
    if (piper_rt_status s = writeTrace(*context))
      if (result == PIPER_RT_OK)
        result = s;
  stopLiveness(*context);
  stopProgressThread(*context);
  for (auto &entry : context->comms)
    MPI_Comm_free(&entry.second->comm);
  for (auto &entry : context->groups)
    if (entry.second != MPI_COMM_NULL)
      MPI_Comm_free(&entry.second);
  for (auto &comm : context->retiredComms)
    MPI_Comm_free(&comm->comm);
  for (MPI_Comm &group : context->retiredGroups)
    MPI_Comm_free(&group);
  MPI_Comm_free(&context->p2p);
  for (piper_rt_event_impl *event : context->events)
    event->context = nullptr;
  delete context;

  std::lock_guard<std::mutex> guard(processMutex);
  if (--liveContexts == 0 && runtimeInitialisedMpi) {
    MPI_Finalize();
    runtimeInitialisedMpi = false;
  }
  return result;
}

piper_rt_status piper_rt_rank(piper_rt_context context, int *rank) {
  if (!context || !rank)
    return PIPER_RT_ERROR(PIPER_RT_ERROR_INVALID_ARGUMENT,
                          "context or rank is NULL");
  *rank = context->rank;
  return PIPER_RT_OK;
}

piper_rt_status piper_rt_size(piper_rt_context context, int *size) {
  if (!context || !size)
    return PIPER_RT_ERROR(PIPER_RT_ERROR_INVALID_ARGUMENT,
                          "context or size is NULL");
  *size = context->size;
  return PIPER_RT_OK;
}

piper_rt_status piper_rt_set_mesh(piper_rt_context context,
                                  piper_rt_mesh mesh) {
  if (!context || !mesh)
    return PIPER_RT_ERROR(PIPER_RT_ERROR_INVALID_ARGUMENT,
                          "context or mesh is NULL");
  if (context->hasMesh)
    return PIPER_RT_ERROR(PIPER_RT_ERROR_INVALID_ARGUMENT,
                          "the mesh is already set to %s",
                          describeMesh(context->mesh).c_str());
  if (mesh->numDevices != context->size)
    return PIPER_RT_ERROR(
        PIPER_RT_ERROR_INVALID_ARGUMENT,
        "rank %d: the mesh %s has %lld devices but MPI started %d ranks; "
        "run with %lld ranks (mpirun -np %lld, or srun -n %lld)",
        context->rank, describeMesh(*mesh).c_str(),
        static_cast<long long>(mesh->numDevices), context->size,
        static_cast<long long>(mesh->numDevices),
        static_cast<long long>(mesh->numDevices),
        static_cast<long long>(mesh->numDevices));
  context->mesh = *mesh;
  context->coords.assign(mesh->names.size(), 0);
  if (piper_rt_status s =
          piper_rt_mesh_coords(mesh, context->rank, context->coords.data()))
    return s;
  context->hasMesh = true;
  return PIPER_RT_OK;
}

piper_rt_status piper_rt_replace_mesh(piper_rt_context context,
                                      piper_rt_mesh mesh) {
  if (!context || !mesh)
    return PIPER_RT_ERROR(PIPER_RT_ERROR_INVALID_ARGUMENT,
                          "context or mesh is NULL");
  if (mesh->numDevices != context->size)
    return piper_rt_set_mesh(context, mesh); // reports the count mismatch
  {
    // The progress thread reads the maps only under the mutex.
    std::lock_guard<std::mutex> guard(context->mutex);
    for (auto &entry : context->comms)
      context->retiredComms.push_back(std::move(entry.second));
    context->comms.clear();
    for (auto &entry : context->groups)
      if (entry.second != MPI_COMM_NULL)
        context->retiredGroups.push_back(entry.second);
    context->groups.clear();
  }
  context->hasMesh = false;
  return piper_rt_set_mesh(context, mesh);
}

piper_rt_status piper_rt_coords(piper_rt_context context, int64_t *coords,
                                size_t capacity) {
  if (!context)
    return PIPER_RT_ERROR(PIPER_RT_ERROR_INVALID_ARGUMENT, "context is NULL");
  if (!context->hasMesh)
    return PIPER_RT_ERROR(PIPER_RT_ERROR_INVALID_ARGUMENT,
                          "no mesh is set (piper_rt_set_mesh)");
  if (capacity < context->coords.size() || (capacity > 0 && !coords))
    return PIPER_RT_ERROR(PIPER_RT_ERROR_INVALID_ARGUMENT,
                          "the mesh has %zu axes but coords has room for %zu",
                          context->coords.size(), capacity);
  for (size_t a = 0; a < context->coords.size(); ++a)
    coords[a] = context->coords[a];
  return PIPER_RT_OK;
}

piper_rt_status piper_rt_get_timeout(piper_rt_context context,
                                     double *seconds) {
  if (!context || !seconds)
    return PIPER_RT_ERROR(PIPER_RT_ERROR_INVALID_ARGUMENT,
                          "context or seconds is NULL");
  *seconds = context->timeoutSeconds;
  return PIPER_RT_OK;
}

piper_rt_status piper_rt_set_timeout(piper_rt_context context, double seconds) {
  if (!context)
    return PIPER_RT_ERROR(PIPER_RT_ERROR_INVALID_ARGUMENT, "context is NULL");
  if (!std::isfinite(seconds) || !(seconds > 0))
    return PIPER_RT_ERROR(PIPER_RT_ERROR_INVALID_ARGUMENT,
                          "timeout %g s is not a finite number > 0", seconds);
  std::lock_guard<std::mutex> guard(context->mutex);
  context->timeoutSeconds = seconds;
  return PIPER_RT_OK;
}

piper_rt_status piper_rt_set_abort_on_timeout(piper_rt_context context,
                                              int abort_on_timeout) {
  if (!context)
    return PIPER_RT_ERROR(PIPER_RT_ERROR_INVALID_ARGUMENT, "context is NULL");
  std::lock_guard<std::mutex> guard(context->mutex);
  context->abortOnTimeout = abort_on_timeout != 0;
  return PIPER_RT_OK;
}
