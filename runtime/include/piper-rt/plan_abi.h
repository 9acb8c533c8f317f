//===- plan_abi.h - What compiled plans call, and who answers -----*- C -*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The contract between a compiled plan (one shared object per device role,
// written by piper-compile; docs/Lowering.md) and the runtime that runs it.
// Part 1 lists EVERY symbol a plan's object leaves undefined (besides the C
// and C++ libraries, libm and the CBLAS its kernels call, which it names as
// NEEDED libraries) with its exact semantics; the lowering (lib/Conversion)
// emits calls with these names and signatures. Part 2 is the host side: the
// session a driver (piper-run) opens for the plan, which the Part 1 calls
// act on. The runtime library PiperPlanRuntime implements both.
//
// Sessions, not globals. A session holds what one running plan needs: its
// buffer cache, its communicators and their streams, its events, the trace
// row of its launches and the first error of the step. A thread makes a
// session current with piper_plan_session_activate; every Part 1 call made
// on that thread acts on it. A Part 1 call on a thread with no current
// session is a driver bug: it prints one line and aborts.
//
// How plans resolve the symbols: PiperPlanRuntime is a static library
// linked whole into the driver executable, which exports its dynamic
// symbols (CMake ENABLE_EXPORTS, i.e. -rdynamic); dlopen(RTLD_NOW) binds the
// plan's undefined Part 1 symbols to the executable's. This keeps plans free
// of any runtime or MPI link (piper-compile links only the kernels), keeps
// one self-contained piper-run binary per build (no rpath or
// LD_LIBRARY_PATH to get right under mpiexec or srun), and costs nothing: a
// plan calls these functions directly, with no PLT indirection through a
// second shared library. The price is that a process hosts one
// implementation of the ABI, chosen at link time, which is the case anyway
// (one backend per job).
//
// Backends. Everything in this header is backend-neutral; a backend only
// supplies the communication and timing under it. PiperPlanRuntime's
// sources are the neutral core (runtime/lib/plan: sessions, buffers, the
// exported symbols) plus one backend file that implements the internal
// piper::plan::Backend interface (runtime/lib/plan/Backend.h): the MPI one
// (runtime/backends/mpi/PlanBackend.cpp) over piper_rt_*, or none
// (runtime/lib/plan/NoBackend.cpp) where MPI is missing, in which case
// sessions run single-device plans only. A second backend (NCCL/CUDA: device
// buffers, collectives on device streams, events as CUDA events) adds its own
// Backend implementation and is selected in runtime/CMakeLists.txt; piper-run
// calls only this header and piper_rt.h and does not change.
//
// Memref descriptors. MLIR passes a ranked memref as a pointer to
//   { T *allocated; T *aligned; int64_t offset;
//     int64_t sizes[rank]; int64_t strides[rank]; }   (strides in elements)
// and an unranked memref as two arguments: (int64_t rank, void *descriptor).
// Every tensor crosses Part 1 as an unranked memref. Inputs may have any
// strides (the calls copy them out at once; the plan may free them after the
// call returns); outputs are buffers the plan allocated with the identity
// layout. piper_memref_decode is the one place a descriptor is read.
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_RT_PLAN_ABI_H
#define PIPER_RT_PLAN_ABI_H

#include "piper-rt/piper_rt.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

//===----------------------------------------------------------------------===//
// Memref descriptors
//===----------------------------------------------------------------------===//

/// The fixed head of a ranked descriptor; sizes[rank] then strides[rank]
/// (int64_t each) follow it.
typedef struct piper_memref_header {
  void *allocated;
  void *aligned;
  int64_t offset;
} piper_memref_header;

/// A decoded descriptor: element (i0, i1, ...) is at
/// aligned + (offset + sum_d i_d strides[d]) * element size.
typedef struct piper_memref_view {
  char *aligned;
  int64_t offset;
  int64_t rank;
  const int64_t *sizes;
  const int64_t *strides;
} piper_memref_view;

/// Decodes the unranked memref (rank, descriptor).
piper_memref_view piper_memref_decode(int64_t rank, void *descriptor);
/// The first element's address: aligned + offset * element_size.
char *piper_memref_data(const piper_memref_view *view, size_t element_size);
/// Elements of the view (the product of its sizes).
int64_t piper_memref_numel(const piper_memref_view *view);
/// Copies the view's elements, of `element_size` bytes, in row-major order
/// into `out` (contiguous, numel * element_size bytes).
void piper_memref_gather(const piper_memref_view *view, size_t element_size,
                         void *out);
/// The bytes a rank-`rank` descriptor takes.
size_t piper_memref_descriptor_size(int64_t rank);
/// Writes a descriptor of `data` with `sizes` and the identity layout
/// (offset 0, row-major strides) into `descriptor`
/// (piper_memref_descriptor_size(rank) bytes, 8-byte aligned).
void piper_memref_describe(void *descriptor, void *data, int64_t rank,
                           const int64_t *sizes);

//===----------------------------------------------------------------------===//
// Part 1: the symbols a compiled plan calls
//===----------------------------------------------------------------------===//

// Memory. The plan allocates every temporary through MLIR's generic memref
// functions (finalize-memref-to-llvm{use-generic-functions}). They serve it
// from the session's cache of 64-byte-aligned runtime buffers
// (piper_rt_buffer_alloc), one free list per power-of-two size class: from the
// second step on, a plan's allocations reuse the previous step's buffers
// without malloc, page faults or zeroing. An alignment above
// PIPER_RT_BUFFER_ALIGNMENT, running out of memory, or freeing a pointer the
// session did not allocate prints one line and aborts (the plan has no way to
// handle an error here).
void *_mlir_memref_to_llvm_alloc(size_t bytes);
void *_mlir_memref_to_llvm_aligned_alloc(size_t alignment, size_t bytes);
void _mlir_memref_to_llvm_free(void *pointer);

// Tracing. Every launch of a program is bracketed by begin/end with its
// index among the program's launches (the manifest lists their names in
// roles[k].launches, in that order). With tracing on
// (piper_plan_session_trace_launches), each pair records a span on the
// session's trace row; otherwise they only test a flag. One thread runs a
// program, so pairs do not interleave.
void piper_trace_begin(int64_t launch);
void piper_trace_end(int64_t launch);
// A plan compiled with piper-compile --trace-kernels also brackets each op
// of a launched body by these, with the op kind's index in the manifest's
// kernel_kinds; with kernel tracing on (piper_plan_session_trace_kernels)
// each pair records a span named by the kind, inside its launch's span.
void piper_trace_kernel_begin(int64_t kind);
void piper_trace_kernel_end(int64_t kind);

// Point to point, <t> in f32, f64, i64:
//   void piper_comm_send_<t>(int64_t rank, void *desc, int64_t peer_offset,
//                            int64_t tag);
//   void piper_comm_recv_<t>(int64_t rank, void *desc, int64_t peer_offset,
//                            int64_t tag);
// `peer_offset` is the peer's world rank minus the caller's: a program is
// shared by every replica of its role, and its peer differs from each of
// them only on the roles' axes, so the offset is the same for all. A send
// copies its value (which may be a strided slice) and is only enqueued, on a
// stream of its own per (peer, tag), so that it never holds up this rank's
// later receives (the verifier proved the program order deadlock-free under
// that rule); the step's end (piper_plan_session_finish_step) waits for
// every send. A receive fills `desc` (identity layout) and returns when the
// value has arrived.
//   void piper_comm_irecv_<t>(int64_t rank, void *desc, int64_t peer_offset,
//                             int64_t tag, int64_t stream);
// is the nonblocking receive: enqueued, `desc` final only after the program
// waits for an event recorded after it on program stream `stream`
// (piper_comm_record/wait), after piper_comm_sync_all, or when a send or
// collective reads it. Receives complete in the order they were posted. The
// host computes in program order, so a blocking receive placed before an
// unrelated launch would hold the launch (and the peer waiting for its
// result) back; the lowering uses irecv wherever the program orders every
// read of the value after such a wait.
#define PIPER_PLAN_P2P(T)                                                      \
  void piper_comm_send_##T(int64_t rank, void *desc, int64_t peer_offset,      \
                           int64_t tag);                                       \
  void piper_comm_recv_##T(int64_t rank, void *desc, int64_t peer_offset,      \
                           int64_t tag);                                       \
  void piper_comm_irecv_##T(int64_t rank, void *desc, int64_t peer_offset,     \
                            int64_t tag, int64_t stream);
PIPER_PLAN_P2P(f32)
PIPER_PLAN_P2P(f64)
PIPER_PLAN_P2P(i64)
#undef PIPER_PLAN_P2P

// Collectives, <t> in f32, f64. `comm` indexes the manifest's communicators
// (piper_plan_session_add_communicator, in that order); every member runs
// the same program, so members reach a communicator's collectives in the same
// order. Reductions sum, then multiply by `scale`. Flat chunks
// (plan_manifest.h, Shard): a tensor's row-major flattening zero-padded to
// members x chunk elements, member k holding chunk k.
//
// Nonblocking (the program's own gradient reductions and ZeRO gathers):
// enqueued on the communicator's stream, the output final only after the
// program waits for an event recorded after it on that stream, or after
// piper_comm_sync_all. The input is copied out at once.
//   void piper_comm_iall_reduce_<t>(int64_t rin, void *in, int64_t rout,
//                                   void *out, int64_t comm, double scale);
//     out = scale * sum over members of in (same shape).
//   void piper_comm_ireduce_scatter_<t>(int64_t rin, void *in, int64_t rout,
//                                       void *out, int64_t comm,
//                                       double scale);
//     out (one chunk) = scale * this member's chunk of the sum of the
//     flattened, zero-padded inputs.
//   void piper_comm_iall_gather_<t>(int64_t rin, void *in, int64_t rout,
//                                   void *out, int64_t comm);
//     out (the whole tensor) = the members' chunks concatenated, cut to the
//     tensor's elements.
// Blocking (inside a program's bodies; complete on return):
//   void piper_comm_all_reduce_<t>(int64_t rin, void *in, int64_t rout,
//                                  void *out, int64_t comm, double scale);
//     tensor parallelism's in-body sum (scale 1.0).
//   void piper_comm_all_to_all_<t>(int64_t rin, void *in, int64_t rout,
//                                  void *out, int64_t comm,
//                                  int64_t direction);
//     expert parallelism's exchange among N members. Direction 0 (to the
//     experts' owners): in is [E, C, R...] (this member's tokens for every
//     expert); member j owns experts [j E/N, (j+1) E/N); out is
//     [E/N, N C, R...] with what source s sent for expert e, slot c, at
//     [e, s C + c]. Direction 1 (back) is its inverse.
//   void piper_comm_shard_<t>(int64_t rin, void *in, int64_t rout, void *out,
//                             int64_t comm);
//     out (one chunk) = this member's chunk of the whole tensor in; no
//     communication (a ZeRO-1/2 update of a whole parameter).
#define PIPER_PLAN_COLLECTIVES(T)                                              \
  void piper_comm_iall_reduce_##T(int64_t rin, void *in, int64_t rout,         \
                                  void *out, int64_t comm, double scale);      \
  void piper_comm_ireduce_scatter_##T(int64_t rin, void *in, int64_t rout,     \
                                      void *out, int64_t comm, double scale);  \
  void piper_comm_iall_gather_##T(int64_t rin, void *in, int64_t rout,         \
                                  void *out, int64_t comm);                    \
  void piper_comm_all_reduce_##T(int64_t rin, void *in, int64_t rout,          \
                                 void *out, int64_t comm, double scale);       \
  void piper_comm_all_to_all_##T(int64_t rin, void *in, int64_t rout,          \
                                 void *out, int64_t comm, int64_t direction);  \
  void piper_comm_shard_##T(int64_t rin, void *in, int64_t rout, void *out,    \
                            int64_t comm);
PIPER_PLAN_COLLECTIVES(f32)
PIPER_PLAN_COLLECTIVES(f64)
#undef PIPER_PLAN_COLLECTIVES

// Events and the end of a step (programs with collectives).
/// `piper.record event on streams[stream]`: `stream` indexes the running
/// role's streams (piper_plan_session_set_streams). On a stream the host runs
/// itself (compute), recorded means complete.
void piper_comm_record(int64_t event, int64_t stream);
/// `piper.wait event on ...`: the host waits for the recorded point, after
/// which the outputs of the nonblocking collectives before it are final.
void piper_comm_wait(int64_t event, int64_t stream);
/// Completes every nonblocking collective (before the step's results are
/// read).
void piper_comm_sync_all(void);

// Per-step hyperparameters (docs/Training.md). The learning rate and the
// gradient-norm bound are inputs of each step, not constants of the plan:
// the driver sets them before every step
// (piper_plan_session_set_hyperparameters) and the plan reads them.
/// The learning rate of the running step (the optimizer updates read it once
/// per update, outside their loops).
double piper_step_lr(void);
// Global gradient-norm clipping, in plans compiled with --clip-grad-norm.
// Before its first update, a program adds every gradient it is about to
// apply, each weighted by 1 / (the devices that hold the same elements), to
// the step's sum of squares; finish sums that over every rank of the job
// (the session's clip communicator), so the norm is that of the serial
// model's gradients under any strategy; scale multiplies a gradient by
// min(1, max_norm / (norm + 1e-6)) (piper-rt/train.h, clipCoefficient).
//   void piper_clip_accumulate_<t>(int64_t rank, void *desc, double weight);
//   void piper_clip_finish(void);
//   void piper_clip_scale_<t>(int64_t rin, void *in, int64_t rout, void *out);
#define PIPER_PLAN_CLIP(T)                                                     \
  void piper_clip_accumulate_##T(int64_t rank, void *desc, double weight);     \
  void piper_clip_scale_##T(int64_t rin, void *in, int64_t rout, void *out);
PIPER_PLAN_CLIP(f32)
PIPER_PLAN_CLIP(f64)
#undef PIPER_PLAN_CLIP
void piper_clip_finish(void);
// The same on device buffers (GPU plans, --piper-gpu-clip): the plan sums a
// gradient's squares where it lives and hands the host only that weighted
// sum; scale reads the factor finish set and multiplies on the device.
//   void piper_clip_add_squares(double weighted_sum_of_squares);
//   double piper_clip_coefficient(void);
void piper_clip_add_squares(double weighted_sum_of_squares);
double piper_clip_coefficient(void);

// Errors. Part 1 calls return nothing: a failing call records the first
// error of the step in the session (later calls of the step still run, so
// that peers are not left waiting where possible), and the driver reads it
// from piper_plan_session_finish_step. A call that can do nothing sensible
// (a communicator index out of range) records an error and returns.
//
// Defined BY the plan (the driver looks them up with dlsym): the entry point
// `void piper_entry_<program>(void **args)` (descriptors of the role's
// inputs, then of its outputs) and the kernels' error hooks
// `const char *piper_kernels_last_error(void)` and
// `void piper_kernels_clear_error(void)`.

//===----------------------------------------------------------------------===//
// Part 2: sessions (the driver's side)
//===----------------------------------------------------------------------===//

typedef struct piper_plan_session_impl *piper_plan_session;

/// Opens a session. `context` is the runtime the plan communicates and
/// traces through (meshed already), or NULL for a single-device plan run
/// without one: then the communication calls record an error.
piper_rt_status piper_plan_session_create(piper_rt_context context,
                                          piper_plan_session *session);
/// Frees the session's streams, events and cached buffers (deactivating it).
/// Call before piper_rt_finalize.
piper_rt_status piper_plan_session_destroy(piper_plan_session session);
/// Makes `session` (or NULL) the current session of the calling thread;
/// returns the previous one.
piper_plan_session piper_plan_session_activate(piper_plan_session session);
/// The calling thread's current session, or NULL.
piper_plan_session piper_plan_session_current(void);

/// Appends communicator #n (n = the number added so far): the group over the
/// mesh axes `axes`, its operations on a runtime stream named `stream`
/// (created on first use). Every rank adds the same list in the same order.
piper_rt_status piper_plan_session_add_communicator(piper_plan_session session,
                                                    size_t num_axes,
                                                    const char *const *axes,
                                                    const char *stream);
/// The running role's program streams, in order (piper_comm_record/wait's
/// indices).
piper_rt_status piper_plan_session_set_streams(piper_plan_session session,
                                               size_t count,
                                               const char *const *names);
/// Turns launch tracing on: spans named `names[launch]` on a stream
/// "compute" of the session's context (whose trace must be enabled).
piper_rt_status piper_plan_session_trace_launches(piper_plan_session session,
                                                  size_t count,
                                                  const char *const *names);
/// Turns kernel tracing on (after piper_plan_session_trace_launches): spans
/// named `names[kind]`, category "kernel", on the same "compute" stream.
piper_rt_status piper_plan_session_trace_kernels(piper_plan_session session,
                                                 size_t count,
                                                 const char *const *names);
/// The end of a step: completes every collective and send of the step and
/// frees their staging. Fails with the step's first error (a call's or the
/// wait's), then clears it.
piper_rt_status piper_plan_session_finish_step(piper_plan_session session);
/// The last failed step's error in the calls' own words, e.g.
/// "send (peer rank 1, tag 0): piper-rt: ...", without piper_rt_last_error's
/// "piper-rt: communication error: " decoration ("" if none failed).
const char *piper_plan_session_step_error(piper_plan_session session);
/// This rank's index in communicator `comm` (0 if there is none).
int piper_plan_session_member(piper_plan_session session, int64_t comm);
/// Moves `count` elements of `data` from world rank `from` to `to`, outside
/// any program (the loss to rank 0, --params-out): a no-op on other ranks and
/// when from == to. `tag` must be above the plans' tags (they count from 0):
/// use PIPER_RT_MAX_TAG and below.
piper_rt_status piper_plan_session_move(piper_plan_session session, void *data,
                                        size_t count, piper_rt_dtype dtype,
                                        int from, int to, int tag);

/// The step's learning rate and gradient-norm bound (<= 0: no clipping),
/// read by the next steps' piper_step_lr and piper_clip_finish.
piper_rt_status
piper_plan_session_set_hyperparameters(piper_plan_session session, double lr,
                                       double clip_max_norm);
/// Adds the communicator over every mesh axis (`axes`, the mesh's names)
/// that piper_clip_finish sums over, on its own stream "clip". Collective:
/// every rank calls it once, after the plan's communicators.
piper_rt_status piper_plan_session_enable_clip(piper_plan_session session,
                                               size_t num_axes,
                                               const char *const *axes);
/// The global gradient norm the last step computed (before clipping), or -1
/// if it computed none.
double piper_plan_session_grad_norm(piper_plan_session session);

/// How the session's buffer cache served the plan's allocations.
typedef struct piper_plan_buffer_stats {
  /// Allocations asked for, how many a cached buffer served, and the bytes
  /// of runtime buffers held (live or cached).
  uint64_t requests, reused, reserved_bytes;
  /// Bytes the plan has allocated and not freed (as asked for, before the
  /// size classes round them up), now and at their highest since the
  /// session began: the high-water mark of the plan's own buffers.
  uint64_t live_bytes, peak_bytes;
} piper_plan_buffer_stats;
piper_rt_status piper_plan_session_buffer_stats(piper_plan_session session,
                                                piper_plan_buffer_stats *stats);

/// The kernels' thread count for this rank when the driver is given none:
/// OMP_NUM_THREADS if it is a positive integer; else the cores of the
/// process's affinity mask, all of them when the mask is smaller than the
/// machine (the launcher bound the rank), else divided by the ranks on this
/// node (OMPI_COMM_WORLD_LOCAL_SIZE, MPI_LOCALNRANKS or
/// SLURM_NTASKS_PER_NODE); at least 1. The driver applies it through the
/// plan's piper_k_set_threads (BLAS and the generated parallel loops).
int piper_plan_default_threads(void);

#ifdef __cplusplus
} // extern "C"
#endif

#endif // PIPER_RT_PLAN_ABI_H
