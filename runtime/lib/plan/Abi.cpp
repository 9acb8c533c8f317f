//===- Abi.cpp - The plan ABI's symbols, forwarded to the session ---------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Every extern "C" function of plan_abi.h, in this one file on purpose: a
// driver that calls any session function links this object, and with it every
// symbol a plan calls, so none can be dropped from the static archive and
// then be missing at dlopen. Part 1 calls decode their descriptors and act on
// the calling thread's current session.
//
//===----------------------------------------------------------------------===//

#include "Session.h"

#include "piper-rt/train.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

#define PIPER_PLAN_EXPORT extern "C" __attribute__((visibility("default")))

using namespace piper::plan;

namespace {

thread_local piper_plan_session current = nullptr;

/// The session a Part 1 call acts on.
piper_plan_session_impl &active(const char *call) {
  if (!current) {
    std::fprintf(stderr,
                 "piper-rt: a plan called %s on a thread with no current "
                 "session (piper_plan_session_activate)\n",
                 call);
    std::abort();
  }
  return *current;
}

void *allocate(size_t bytes, size_t alignment, const char *call) {
  if (alignment > PIPER_RT_BUFFER_ALIGNMENT) {
    std::fprintf(stderr,
                 "piper-rt: a plan asked for %zu-byte alignment (at most %d "
                 "is supported)\n",
                 alignment, PIPER_RT_BUFFER_ALIGNMENT);
    std::abort();
  }
  void *data = active(call).buffers.allocate(bytes);
  if (!data) {
    std::fprintf(stderr, "piper-rt: out of memory: %s\n",
                 piper_rt_last_error());
    std::abort();
  }
  return data;
}

/// The backend of the current session, or null with `missing` recorded as
/// the step's error (a plan that communicates, run without a runtime).
Backend *backendFor(const char *call, const std::string &missing) {
  piper_plan_session_impl &s = active(call);
  if (!s.backend)
    s.errors.set(missing);
  return s.backend.get();
}

std::string noCommunicator(const char *what, int64_t comm) {
  return std::string(what) + ": the plan has no communicator #" +
         std::to_string(comm);
}

constexpr Element kF32 = {PIPER_RT_F32, 4}, kF64 = {PIPER_RT_F64, 8},
                  kI64 = {PIPER_RT_I64, 8};

} // namespace

//===----------------------------------------------------------------------===//
// Part 1
//===----------------------------------------------------------------------===//

PIPER_PLAN_EXPORT void *_mlir_memref_to_llvm_alloc(size_t bytes) {
  return allocate(bytes, 1, "_mlir_memref_to_llvm_alloc");
}

PIPER_PLAN_EXPORT void *_mlir_memref_to_llvm_aligned_alloc(size_t alignment,
                                                           size_t bytes) {
  return allocate(bytes, alignment, "_mlir_memref_to_llvm_aligned_alloc");
}

PIPER_PLAN_EXPORT void _mlir_memref_to_llvm_free(void *pointer) {
  if (!pointer)
    return;
  if (!active("_mlir_memref_to_llvm_free").buffers.release(pointer)) {
    std::fprintf(stderr,
                 "piper-rt: a plan freed %p, which it never "
                 "allocated\n",
                 pointer);
    std::abort();
  }
}

PIPER_PLAN_EXPORT void piper_trace_begin(int64_t launch) {
  if (Backend *b = active("piper_trace_begin").backend.get())
    b->traceBegin(launch);
}

PIPER_PLAN_EXPORT void piper_trace_end(int64_t launch) {
  if (Backend *b = active("piper_trace_end").backend.get())
    b->traceEnd(launch);
}

PIPER_PLAN_EXPORT void piper_trace_kernel_begin(int64_t kind) {
  if (Backend *b = active("piper_trace_kernel_begin").backend.get())
    b->traceKernelBegin(kind);
}

PIPER_PLAN_EXPORT void piper_trace_kernel_end(int64_t kind) {
  if (Backend *b = active("piper_trace_kernel_end").backend.get())
    b->traceKernelEnd(kind);
}

#define PIPER_PLAN_P2P(T, ELEMENT)                                             \
  PIPER_PLAN_EXPORT void piper_comm_send_##T(int64_t rank, void *desc,         \
                                             int64_t peer, int64_t tag) {      \
    if (Backend *b = backendFor("piper_comm_send_" #T,                         \
                                "a plan sent a value but piper-run started "   \
                                "no runtime"))                                 \
      b->send(piper_memref_decode(rank, desc), ELEMENT, peer, tag);            \
  }                                                                            \
  PIPER_PLAN_EXPORT void piper_comm_recv_##T(int64_t rank, void *desc,         \
                                             int64_t peer, int64_t tag) {      \
    if (Backend *b = backendFor("piper_comm_recv_" #T,                         \
                                "a plan received a value but piper-run "       \
                                "started no runtime"))                         \
      b->recv(piper_memref_decode(rank, desc), ELEMENT, peer, tag);            \
  }                                                                            \
  PIPER_PLAN_EXPORT void piper_comm_irecv_##T(                                 \
      int64_t rank, void *desc, int64_t peer, int64_t tag, int64_t stream) {   \
    if (Backend *b = backendFor("piper_comm_irecv_" #T,                        \
                                "a plan received a value but piper-run "       \
                                "started no runtime"))                         \
      b->irecv(piper_memref_decode(rank, desc), ELEMENT, peer, tag, stream);   \
  }
PIPER_PLAN_P2P(f32, kF32)
PIPER_PLAN_P2P(f64, kF64)
PIPER_PLAN_P2P(i64, kI64)

// One body per collective: decode both views, then call the backend.
#define PIPER_PLAN_COLLECTIVE(NAME, T, ELEMENT, WHAT, METHOD, EXTRA_TYPE)      \
  PIPER_PLAN_EXPORT void piper_comm_##NAME##_##T(                              \
      int64_t rin, void *din, int64_t rout, void *dout, int64_t comm,          \
      EXTRA_TYPE extra) {                                                      \
    if (Backend *b = backendFor("piper_comm_" #NAME "_" #T,                    \
                                noCommunicator(WHAT, comm)))                   \
      b->METHOD(piper_memref_decode(rin, din),                                 \
                piper_memref_decode(rout, dout), ELEMENT, comm, extra);        \
  }
#define PIPER_PLAN_COLLECTIVE2(NAME, T, ELEMENT, WHAT, METHOD)                 \
  PIPER_PLAN_EXPORT void piper_comm_##NAME##_##T(                              \
      int64_t rin, void *din, int64_t rout, void *dout, int64_t comm) {        \
    if (Backend *b = backendFor("piper_comm_" #NAME "_" #T,                    \
                                noCommunicator(WHAT, comm)))                   \
      b->METHOD(piper_memref_decode(rin, din),                                 \
                piper_memref_decode(rout, dout), ELEMENT, comm);               \
  }
#define PIPER_PLAN_COLLECTIVES(T, ELEMENT)                                     \
  PIPER_PLAN_COLLECTIVE(iall_reduce, T, ELEMENT, "all_reduce", iallReduce,     \
                        double)                                                \
  PIPER_PLAN_COLLECTIVE(ireduce_scatter, T, ELEMENT, "reduce_scatter",         \
                        ireduceScatter, double)                                \
  PIPER_PLAN_COLLECTIVE(all_reduce, T, ELEMENT, "all_reduce", allReduce,       \
                        double)                                                \
  PIPER_PLAN_COLLECTIVE(all_to_all, T, ELEMENT, "all_to_all", allToAll,        \
                        int64_t)                                               \
  PIPER_PLAN_COLLECTIVE2(iall_gather, T, ELEMENT, "all_gather", iallGather)    \
  PIPER_PLAN_COLLECTIVE2(shard, T, ELEMENT, "shard", shard)
PIPER_PLAN_COLLECTIVES(f32, kF32)
PIPER_PLAN_COLLECTIVES(f64, kF64)

PIPER_PLAN_EXPORT void piper_comm_record(int64_t event, int64_t stream) {
  // Without a runtime the host runs every stream: recorded means complete.
  if (Backend *b = active("piper_comm_record").backend.get())
    b->record(event, stream);
}

PIPER_PLAN_EXPORT void piper_comm_wait(int64_t event, int64_t stream) {
  (void)stream;
  if (Backend *b = active("piper_comm_wait").backend.get())
    b->wait(event);
}

PIPER_PLAN_EXPORT void piper_comm_sync_all(void) {
  if (Backend *b = active("piper_comm_sync_all").backend.get())
    b->syncAll();
}

//===----------------------------------------------------------------------===//
// Part 2
//===----------------------------------------------------------------------===//

//===----------------------------------------------------------------------===//
// Per-step hyperparameters and gradient clipping
//===----------------------------------------------------------------------===//

PIPER_PLAN_EXPORT double piper_step_lr(void) {
  return active("piper_step_lr").lr;
}

namespace {

/// Sum of squares of a view's elements, in f64.
template <typename T> double sumOfSquares(const piper_memref_view &view) {
  int64_t n = piper_memref_numel(&view);
  std::vector<T> data(n);
  piper_memref_gather(&view, sizeof(T), data.data());
  double sum = 0.0;
  for (T x : data)
    sum += static_cast<double>(x) * static_cast<double>(x);
  return sum;
}

/// out = in * the step's clip factor, elementwise, in f64, rounded once.
template <typename T>
void scaleByClip(const piper_memref_view &in, const piper_memref_view &out,
                 double coef) {
  int64_t n = piper_memref_numel(&in);
  T *dst = reinterpret_cast<T *>(piper_memref_data(&out, sizeof(T)));
  piper_memref_gather(&in, sizeof(T), dst);
  for (int64_t i = 0; i < n; ++i)
    dst[i] = static_cast<T>(static_cast<double>(dst[i]) * coef);
}

} // namespace

#define PIPER_PLAN_CLIP(T, CT)                                                 \
  PIPER_PLAN_EXPORT void piper_clip_accumulate_##T(int64_t rank, void *desc,   \
                                                   double weight) {            \
    piper_plan_session_impl &s = active("piper_clip_accumulate_" #T);          \
    s.clipSumOfSquares +=                                                      \
        weight * sumOfSquares<CT>(piper_memref_decode(rank, desc));            \
  }                                                                            \
  PIPER_PLAN_EXPORT void piper_clip_scale_##T(int64_t rin, void *in,           \
                                              int64_t rout, void *out) {       \
    piper_plan_session_impl &s = active("piper_clip_scale_" #T);               \
    scaleByClip<CT>(piper_memref_decode(rin, in),                              \
                    piper_memref_decode(rout, out), s.clipCoef);               \
  }
PIPER_PLAN_CLIP(f32, float)
PIPER_PLAN_CLIP(f64, double)
#undef PIPER_PLAN_CLIP

PIPER_PLAN_EXPORT void piper_clip_add_squares(double weighted) {
  active("piper_clip_add_squares").clipSumOfSquares += weighted;
}

PIPER_PLAN_EXPORT double piper_clip_coefficient(void) {
  return active("piper_clip_coefficient").clipCoef;
}

PIPER_PLAN_EXPORT void piper_clip_finish(void) {
  piper_plan_session_impl &s = active("piper_clip_finish");
  double total = s.clipSumOfSquares;
  s.clipSumOfSquares = 0.0;
  if (s.backend) {
    if (s.clipComm < 0) {
      s.errors.set("clip: the plan clips gradients but the session has no "
                   "clip communicator (piper_plan_session_enable_clip)");
    } else {
      piper_memref_view view = {reinterpret_cast<char *>(&total), 0, 0, nullptr,
                                nullptr};
      s.backend->allReduce(view, view, kF64, s.clipComm, 1.0);
    }
  }
  s.gradNorm = std::sqrt(total);
  s.clipCoef = piper::train::clipCoefficient(total, s.clipMaxNorm);
}

#define PIPER_PLAN_CHECK_SESSION(session)                                      \
  do {                                                                         \
    if (!(session))                                                            \
      return PIPER_RT_ERROR(PIPER_RT_ERROR_INVALID_ARGUMENT,                   \
                            "%s: session is NULL", __func__);                  \
  } while (0)

PIPER_PLAN_EXPORT piper_rt_status piper_plan_session_create(
    piper_rt_context context, piper_plan_session *session) {
  if (!session)
    return PIPER_RT_ERROR(PIPER_RT_ERROR_INVALID_ARGUMENT,
                          "piper_plan_session_create: session is NULL");
  auto s = std::make_unique<piper_plan_session_impl>();
  if (context) {
    s->backend = makeBackend(context, s->errors);
    if (!s->backend)
      return piper_rt_last_status();
  }
  *session = s.release();
  return PIPER_RT_OK;
}

PIPER_PLAN_EXPORT piper_rt_status
piper_plan_session_destroy(piper_plan_session session) {
  PIPER_PLAN_CHECK_SESSION(session);
  if (current == session)
    current = nullptr;
  delete session;
  return PIPER_RT_OK;
}

PIPER_PLAN_EXPORT piper_plan_session
piper_plan_session_activate(piper_plan_session session) {
  piper_plan_session previous = current;
  current = session;
  return previous;
}

PIPER_PLAN_EXPORT piper_plan_session piper_plan_session_current(void) {
  return current;
}

namespace {
std::vector<std::string> names(size_t count, const char *const *list) {
  return std::vector<std::string>(list, list + count);
}
piper_rt_status noRuntime(const char *call) {
  return PIPER_RT_ERROR(PIPER_RT_ERROR_UNAVAILABLE,
                        "%s: the session has no runtime context", call);
}
} // namespace

PIPER_PLAN_EXPORT piper_rt_status piper_plan_session_add_communicator(
    piper_plan_session session, size_t num_axes, const char *const *axes,
    const char *stream) {
  PIPER_PLAN_CHECK_SESSION(session);
  if (!session->backend)
    return noRuntime(__func__);
  if (!session->backend->addCommunicator(names(num_axes, axes), stream))
    return piper_rt_last_status();
  ++session->communicators;
  return PIPER_RT_OK;
}

PIPER_PLAN_EXPORT piper_rt_status piper_plan_session_set_streams(
    piper_plan_session session, size_t count, const char *const *list) {
  PIPER_PLAN_CHECK_SESSION(session);
  if (session->backend)
    session->backend->setStreams(names(count, list));
  return PIPER_RT_OK;
}

PIPER_PLAN_EXPORT piper_rt_status piper_plan_session_trace_launches(
    piper_plan_session session, size_t count, const char *const *list) {
  PIPER_PLAN_CHECK_SESSION(session);
  if (!session->backend)
    return noRuntime(__func__);
  return session->backend->traceLaunches(names(count, list))
             ? PIPER_RT_OK
             : piper_rt_last_status();
}

PIPER_PLAN_EXPORT piper_rt_status piper_plan_session_trace_kernels(
    piper_plan_session session, size_t count, const char *const *list) {
  PIPER_PLAN_CHECK_SESSION(session);
  if (!session->backend)
    return noRuntime(__func__);
  session->backend->traceKernels(names(count, list));
  return PIPER_RT_OK;
}

PIPER_PLAN_EXPORT piper_rt_status
piper_plan_session_finish_step(piper_plan_session session) {
  PIPER_PLAN_CHECK_SESSION(session);
  if (session->backend)
    session->backend->finishStep();
  if (session->errors.message.empty())
    return PIPER_RT_OK;
  session->failedStep = std::move(session->errors.message);
  session->errors.message.clear();
  PIPER_RT_ERROR(PIPER_RT_ERROR_COMMUNICATION, "%s",
                 session->failedStep.c_str());
  return PIPER_RT_ERROR_COMMUNICATION;
}

PIPER_PLAN_EXPORT const char *
piper_plan_session_step_error(piper_plan_session session) {
  return session ? session->failedStep.c_str() : "";
}

PIPER_PLAN_EXPORT int piper_plan_session_member(piper_plan_session session,
                                                int64_t comm) {
  return session && session->backend ? session->backend->member(comm) : 0;
}

PIPER_PLAN_EXPORT piper_rt_status
piper_plan_session_move(piper_plan_session session, void *data, size_t count,
                        piper_rt_dtype dtype, int from, int to, int tag) {
  PIPER_PLAN_CHECK_SESSION(session);
  if (from == to)
    return PIPER_RT_OK;
  if (!session->backend)
    return noRuntime(__func__);
  return session->backend->move(data, count, dtype, from, to, tag)
             ? PIPER_RT_OK
             : piper_rt_last_status();
}

PIPER_PLAN_EXPORT piper_rt_status piper_plan_session_set_hyperparameters(
    piper_plan_session session, double lr, double clip_max_norm) {
  PIPER_PLAN_CHECK_SESSION(session);
  session->lr = lr;
  session->clipMaxNorm = clip_max_norm;
  session->gradNorm = -1.0;
  return PIPER_RT_OK;
}

PIPER_PLAN_EXPORT piper_rt_status piper_plan_session_enable_clip(
    piper_plan_session session, size_t num_axes, const char *const *axes) {
  PIPER_PLAN_CHECK_SESSION(session);
  if (!session->backend)
    return PIPER_RT_OK; // one device: the local sum is the global one
  std::vector<std::string> list = names(num_axes, axes);
  if (!session->backend->addCommunicator(list, "clip"))
    return piper_rt_last_status();
  session->clipComm = session->communicators++;
  return PIPER_RT_OK;
}

PIPER_PLAN_EXPORT double
piper_plan_session_grad_norm(piper_plan_session session) {
  return session ? session->gradNorm : -1.0;
}

PIPER_PLAN_EXPORT piper_rt_status piper_plan_session_buffer_stats(
    piper_plan_session session, piper_plan_buffer_stats *stats) {
  PIPER_PLAN_CHECK_SESSION(session);
  if (!stats)
    return PIPER_RT_ERROR(PIPER_RT_ERROR_INVALID_ARGUMENT,
                          "piper_plan_session_buffer_stats: stats is NULL");
  *stats = session->buffers.stats();
  return PIPER_RT_OK;
}
