//===- piper_rt.h - Piper thin runtime C API ----------------------*- C -*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The runtime that compiled Piper plans call into on every rank. It is a C API
// so that generated code, the piper-run launcher and bindings in other
// languages can all call it without depending on a C++ ABI, and it never
// includes or links MLIR or LLVM: a training job carries no compiler.
//
// Conventions:
//  - Fallible functions return a piper_rt_status. On failure they also set the
//    calling thread's "last error" (code, message and source location), which
//    piper_rt_last_error() formats for logs.
//  - Like errno, the last error is only meaningful right after a call has
//    reported a failure; successful calls leave it untouched.
//  - No function throws. No function aborts the process, with one deliberate
//    exception: a communication wait that passes its deadline prints one line
//    and calls MPI_Abort, so that every rank of the job exits instead of
//    hanging (see "Timeouts" below; piper_rt_set_abort_on_timeout turns it
//    into a PIPER_RT_ERROR_TIMEOUT return).
//  - Handles (contexts, meshes, streams, events, communicators, buffers) are
//    opaque pointers. A context and everything created from it is driven by
//    one host thread; the runtime's own progress thread is internal.
//
// The header is C99 (it uses // comments and variadic macros).
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_RT_PIPER_RT_H
#define PIPER_RT_PIPER_RT_H

// Sizes (size_t) and fixed-width integers (int64_t ranks, byte counts) are
// what the buffer and communicator API will be written in.
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

// Lets the compiler check piper_rt_set_error's arguments against its format
// string, as it does for printf.
#if defined(__GNUC__) || defined(__clang__)
#define PIPER_RT_PRINTF_FORMAT(fmt_index, first_arg)                           \
  __attribute__((format(printf, fmt_index, first_arg)))
#else
#define PIPER_RT_PRINTF_FORMAT(fmt_index, first_arg)
#endif

//===----------------------------------------------------------------------===//
// Version
//===----------------------------------------------------------------------===//

/// Returns the Piper version this runtime was built from, e.g. "0.1.0".
/// Logged at start-up so that bug reports say which runtime ran, and lets a
/// launcher refuse a plan compiled by another release. The string is static;
/// do not free it.
const char *piper_rt_version(void);

//===----------------------------------------------------------------------===//
// Status codes
//===----------------------------------------------------------------------===//

/// Result of every fallible runtime call. The values are part of the ABI:
/// new codes are only ever appended, so a plan compiled against an older
/// runtime still interprets them correctly.
typedef enum piper_rt_status {
  PIPER_RT_OK = 0,
  /// The caller passed a bad value (null pointer, bad size, bad setting).
  PIPER_RT_ERROR_INVALID_ARGUMENT,
  /// A host or device allocation failed.
  PIPER_RT_ERROR_OUT_OF_MEMORY,
  /// A wait, typically on a collective, exceeded its deadline; see
  /// piper_rt_comm_timeout_seconds().
  PIPER_RT_ERROR_TIMEOUT,
  /// MPI or NCCL reported a failure, or a peer rank went away.
  PIPER_RT_ERROR_COMMUNICATION,
  /// A needed resource is missing on this machine, e.g. no GPU or no
  /// libcuda.so.1; the caller may fall back to another backend.
  PIPER_RT_ERROR_UNAVAILABLE,
  /// A bug in the runtime itself: an invariant did not hold.
  PIPER_RT_ERROR_INTERNAL,
  /// Not a status. Fixes the enum at 32 bits on every compiler, as Vulkan's
  /// *_MAX_ENUM values do, so the ABI cannot change size and any non-negative
  /// int32 (e.g. a code from a newer runtime) is a valid value in C++ too.
  PIPER_RT_STATUS_MAX_ENUM = 0x7FFFFFFF,
} piper_rt_status;

/// Returns a short lower-case description of `status`, e.g. "invalid
/// argument". Any other value (a corrupted or newer code) yields
/// "unknown status" rather than crashing, since this is called on error paths
/// where the value may be garbage. The string is static.
const char *piper_rt_status_string(piper_rt_status status);

//===----------------------------------------------------------------------===//
// Error reporting
//===----------------------------------------------------------------------===//

/// Size in bytes, including the terminating NUL, of the buffer that holds the
/// formatted last error. Longer messages are truncated and end in "...".
/// 1024 bytes fits a sentence of context plus a source path comfortably while
/// staying small, since every thread that reports an error owns one.
#define PIPER_RT_MAX_ERROR_LENGTH 1024

/// Records an error for the calling thread and returns `code`, so that a
/// failing function can end with `return PIPER_RT_ERROR(code, ...);`.
/// `file` and `line` name where the error was raised (pass __FILE__ and
/// __LINE__, or use PIPER_RT_ERROR); `file` may be NULL to omit the location.
/// `fmt` is a printf format; NULL means an empty message. Passing PIPER_RT_OK
/// clears the last error instead, since "ok" is not an error.
///
/// The state is thread-local: ranks driven by different threads (one per GPU,
/// or a progress thread next to the compute thread) never see or overwrite
/// each other's errors, and no lock is needed.
piper_rt_status piper_rt_set_error(piper_rt_status code, const char *file,
                                   int line, const char *fmt, ...)
    PIPER_RT_PRINTF_FORMAT(4, 5);

/// Records an error at the current source location and evaluates to `code`.
/// Needs a format string: PIPER_RT_ERROR(PIPER_RT_ERROR_TIMEOUT, "rank %d", r).
#define PIPER_RT_ERROR(code, ...)                                              \
  piper_rt_set_error((code), __FILE__, __LINE__, __VA_ARGS__)

/// Returns the calling thread's last error formatted for a log line:
///   "piper-rt: invalid argument: <message> (at <file>:<line>)"
/// ("piper-rt: invalid argument (at <file>:<line>)" for an empty message,
/// without " (at ...)" when no file was given), or "" when no error is set.
/// Never NULL. The pointer stays valid, with the same contents, until this
/// thread next sets or clears an error.
const char *piper_rt_last_error(void);

/// Returns the code of the calling thread's last error, or PIPER_RT_OK when no
/// error is set.
piper_rt_status piper_rt_last_status(void);

/// Forgets the calling thread's last error, e.g. after handling it.
void piper_rt_clear_error(void);

//===----------------------------------------------------------------------===//
// Settings read from the environment
//===----------------------------------------------------------------------===//

/// Communication timeout used when PIPER_RT_TIMEOUT is unset, empty or
/// invalid. Five minutes leaves room for a slow first step (allocator warm-up,
/// NCCL bootstrap, stragglers loading data) while still turning a hung
/// collective into an error within minutes instead of a job that idles on all
/// of its GPUs until the scheduler kills it.
#define PIPER_RT_DEFAULT_COMM_TIMEOUT_SECONDS 300.0
/// The range PIPER_RT_TIMEOUT must lie in (docs/Limits.md).
#define PIPER_RT_MIN_COMM_TIMEOUT_SECONDS 0.1
#define PIPER_RT_MAX_COMM_TIMEOUT_SECONDS 604800.0

/// Returns how long, in seconds, a communication call may wait before failing
/// with PIPER_RT_ERROR_TIMEOUT. Read from the environment variable
/// PIPER_RT_TIMEOUT (a decimal number of seconds, fractions allowed, e.g.
/// "600" or "2.5") so that operators can lengthen it for a slow cluster
/// without recompiling a plan.
///
/// Unset or empty yields PIPER_RT_DEFAULT_COMM_TIMEOUT_SECONDS. Anything else
/// that is not a number from PIPER_RT_MIN_COMM_TIMEOUT_SECONDS to
/// PIPER_RT_MAX_COMM_TIMEOUT_SECONDS (for example "abc", "10s", "0", "-5",
/// "inf", "1e-9") also yields the default, and sets the last error to
/// PIPER_RT_ERROR_INVALID_ARGUMENT with the offending value, so the launcher
/// can warn instead of silently running with a setting the user did not mean.
/// A valid value leaves the last error untouched.
///
/// The environment is read on every call and the result is not cached; call
/// it once at start-up, before threads that could call setenv() exist.
double piper_rt_comm_timeout_seconds(void);

//===----------------------------------------------------------------------===//
// Data types and reductions
//===----------------------------------------------------------------------===//

/// Element type of a communicated buffer. Values are ABI: only appended to.
typedef enum piper_rt_dtype {
  PIPER_RT_F32 = 0,
  PIPER_RT_F64 = 1,
  PIPER_RT_I64 = 2,
  PIPER_RT_DTYPE_MAX_ENUM = 0x7FFFFFFF,
} piper_rt_dtype;

/// Reduction of all_reduce and reduce_scatter. Values are ABI.
typedef enum piper_rt_reduce_op {
  PIPER_RT_SUM = 0,
  PIPER_RT_MAX = 1,
  PIPER_RT_MIN = 2,
  PIPER_RT_REDUCE_OP_MAX_ENUM = 0x7FFFFFFF,
} piper_rt_reduce_op;

/// Size in bytes of one element of `dtype`; INVALID_ARGUMENT for values
/// outside the enum.
piper_rt_status piper_rt_dtype_size(piper_rt_dtype dtype, size_t *bytes);

//===----------------------------------------------------------------------===//
// Device mesh (pure arithmetic, no MPI)
//===----------------------------------------------------------------------===//

/// A named device mesh, e.g. (pp=2, dp=2). Ranks are laid out row-major: the
/// last axis varies fastest, so rank = ((c0 * s1) + c1) * s2 + c2 ..., which
/// is the layout of `piper.mesh` in the compiler.
typedef struct piper_rt_mesh_impl *piper_rt_mesh;

/// Most axes a mesh may have; more than any real strategy uses (PP, DP, EP,
/// TP, CP, ...), and small enough for fixed arrays on error paths.
#define PIPER_RT_MAX_MESH_AXES 16

/// Creates a mesh of `num_axes` axes (0 axes: one device). Names must be
/// non-empty and distinct, sizes >= 1, and the device count must fit in an
/// int (MPI ranks are ints). The names are copied.
piper_rt_status piper_rt_mesh_create(size_t num_axes, const char *const *names,
                                     const int64_t *sizes, piper_rt_mesh *mesh);
/// Frees a mesh; NULL is ignored.
piper_rt_status piper_rt_mesh_destroy(piper_rt_mesh mesh);
/// Number of axes.
piper_rt_status piper_rt_mesh_num_axes(piper_rt_mesh mesh, size_t *num_axes);
/// Number of devices: the product of the axis sizes.
piper_rt_status piper_rt_mesh_num_devices(piper_rt_mesh mesh,
                                          int64_t *num_devices);
/// Index of the axis called `name`; INVALID_ARGUMENT naming the known axes if
/// there is none.
piper_rt_status piper_rt_mesh_axis_index(piper_rt_mesh mesh, const char *name,
                                         size_t *index);
/// The coordinates of `rank` (num_axes values written to `coords`).
piper_rt_status piper_rt_mesh_coords(piper_rt_mesh mesh, int64_t rank,
                                     int64_t *coords);
/// The rank at `coords` (num_axes values).
piper_rt_status piper_rt_mesh_rank(piper_rt_mesh mesh, const int64_t *coords,
                                   int64_t *rank);
/// The members of `rank`'s group along `axes` (a set: order and repetition do
/// not matter): the devices whose coordinates differ from rank's only on those
/// axes, in increasing rank order, which is row-major order over the group's
/// axes in mesh order. A communicator's ranks follow this order. Writes up to
/// `capacity` ranks to `members` and the group size to `*count`;
/// INVALID_ARGUMENT if the group does not fit.
piper_rt_status piper_rt_mesh_group(piper_rt_mesh mesh, int64_t rank,
                                    size_t num_axes, const char *const *axes,
                                    int64_t *members, size_t capacity,
                                    size_t *count);

//===----------------------------------------------------------------------===//
// Host buffers (no MPI)
//===----------------------------------------------------------------------===//

/// Alignment of every buffer: a cache line, and the widest (AVX-512) vector
/// load, so kernels may use aligned vector loads and no two buffers share a
/// cache line between threads.
#define PIPER_RT_BUFFER_ALIGNMENT 64

typedef struct piper_rt_buffer_impl *piper_rt_buffer;

/// Allocates `bytes` of zeroed host memory aligned to
/// PIPER_RT_BUFFER_ALIGNMENT (zero bytes is allowed and gives a valid, unique
/// pointer). OUT_OF_MEMORY when the allocation fails.
piper_rt_status piper_rt_buffer_alloc(size_t bytes, piper_rt_buffer *buffer);
/// Frees a buffer; NULL is ignored.
piper_rt_status piper_rt_buffer_free(piper_rt_buffer buffer);
/// The buffer's memory.
piper_rt_status piper_rt_buffer_data(piper_rt_buffer buffer, void **data);
/// The size requested at allocation.
piper_rt_status piper_rt_buffer_size(piper_rt_buffer buffer, size_t *bytes);

//===----------------------------------------------------------------------===//
// Context (MPI backend)
//===----------------------------------------------------------------------===//

/// One rank's runtime: MPI, the mesh, streams, communicators and the trace.
typedef struct piper_rt_context_impl *piper_rt_context;
/// An in-order queue of work on one rank (see "Streams and events").
typedef struct piper_rt_stream_impl *piper_rt_stream;
/// A point in a stream's queue that hosts and other streams can wait for.
typedef struct piper_rt_event_impl *piper_rt_event;
/// The communicator of one (set of mesh axes, stream) pair.
typedef struct piper_rt_comm_impl *piper_rt_comm;

/// Exit code every rank gets when a communication timeout aborts the job.
#define PIPER_RT_ABORT_EXIT_CODE 3

/// Initialises MPI (MPI_Init_thread asking for MPI_THREAD_MULTIPLE, unless
/// MPI is already initialised) and creates this rank's context. `argc` and
/// `argv` may be NULL. Reads PIPER_RT_TIMEOUT, PIPER_RT_TRACE and
/// PIPER_RT_PROGRESS_THREAD. Collective over MPI_COMM_WORLD.
piper_rt_status piper_rt_init(int *argc, char ***argv,
                              piper_rt_context *context);
/// Waits for every stream, writes the trace if enabled (collective when the
/// trace is merged), frees the context and everything created from it, and
/// finalises MPI if piper_rt_init initialised it. NULL is ignored.
piper_rt_status piper_rt_finalize(piper_rt_context context);
/// This rank in MPI_COMM_WORLD.
piper_rt_status piper_rt_rank(piper_rt_context context, int *rank);
/// Number of ranks in MPI_COMM_WORLD.
piper_rt_status piper_rt_size(piper_rt_context context, int *size);
/// Sets the device mesh (copied). INVALID_ARGUMENT, naming the mesh and both
/// counts, when its device count is not the world size: this is how a job
/// started with the wrong `mpirun -np` is reported.
piper_rt_status piper_rt_set_mesh(piper_rt_context context, piper_rt_mesh mesh);
/// Replaces the mesh between two plans of one job (a strategy switch at a
/// step boundary; the device count is checked as by piper_rt_set_mesh).
/// Call it with every stream idle. Communicators made under the old mesh
/// stay valid until piper_rt_finalize frees them, but piper_rt_comm_get no
/// longer returns them: its axis names now mean the new mesh's axes.
/// Collective in effect: every rank replaces the mesh before it makes a
/// communicator of the new one.
piper_rt_status piper_rt_replace_mesh(piper_rt_context context,
                                      piper_rt_mesh mesh);
/// This rank's coordinates in the mesh (num_axes values; `capacity` is the
/// room in `coords`).
piper_rt_status piper_rt_coords(piper_rt_context context, int64_t *coords,
                                size_t capacity);
/// The communication timeout of this context, in seconds (from
/// PIPER_RT_TIMEOUT at init, or piper_rt_set_timeout).
piper_rt_status piper_rt_get_timeout(piper_rt_context context, double *seconds);
/// Sets the communication timeout (a finite number > 0).
piper_rt_status piper_rt_set_timeout(piper_rt_context context, double seconds);
/// Whether an expired wait aborts the job (non-zero, the default) or returns
/// PIPER_RT_ERROR_TIMEOUT with the same message (0; for tests and callers
/// that can recover).
piper_rt_status piper_rt_set_abort_on_timeout(piper_rt_context context,
                                              int abort_on_timeout);

//===----------------------------------------------------------------------===//
// Streams and events
//===----------------------------------------------------------------------===//

/// Creates a stream called `name` (unique in the context; it names the trace
/// thread and the communicators keyed by it). Local, not collective.
piper_rt_status piper_rt_stream_create(piper_rt_context context,
                                       const char *name,
                                       piper_rt_stream *stream);
/// Waits for the stream's work, then frees it. NULL is ignored.
piper_rt_status piper_rt_stream_destroy(piper_rt_stream stream);
/// Blocks the host until every operation enqueued on `stream` has completed,
/// or the timeout expires. Returns the first asynchronous error of the
/// stream's operations, if any (and forgets it).
piper_rt_status piper_rt_stream_synchronize(piper_rt_stream stream);
/// `*idle` = 1 when nothing is queued on the stream; drives progress once.
piper_rt_status piper_rt_stream_query(piper_rt_stream stream, int *idle);
/// Runs `fn(arg)` on the calling thread as the next operation of `stream`:
/// first waits (with progress and the timeout) for the stream's earlier
/// operations, then calls it, then records a compute span `name` in the
/// trace. CPU kernels run synchronously; communication on other streams keeps
/// progressing on the progress thread meanwhile. `fn` may itself enqueue and
/// synchronize communication, on its own stream too (the collectives inside a
/// tensor-parallel chunk).
piper_rt_status piper_rt_launch(piper_rt_stream stream, const char *name,
                                void (*fn)(void *), void *arg);

/// Creates an event, initially never recorded.
piper_rt_status piper_rt_event_create(piper_rt_context context,
                                      piper_rt_event *event);
/// Frees an event; NULL is ignored.
piper_rt_status piper_rt_event_destroy(piper_rt_event event);
/// Captures the current end of `stream`'s queue: the event completes once
/// every operation enqueued on `stream` so far has. Re-recording moves it.
piper_rt_status piper_rt_event_record(piper_rt_event event,
                                      piper_rt_stream stream);
/// `*done` = 1 when the event has completed; drives progress once.
/// INVALID_ARGUMENT for an event never recorded.
piper_rt_status piper_rt_event_query(piper_rt_event event, int *done);
/// Blocks the host until the event completes, or the timeout expires.
piper_rt_status piper_rt_event_synchronize(piper_rt_event event);
/// Makes `stream` hold its later operations until `event` (as last recorded
/// at the time of this call) completes; the host does not block.
piper_rt_status piper_rt_stream_wait_event(piper_rt_stream stream,
                                           piper_rt_event event);

//===----------------------------------------------------------------------===//
// Communicators and communication
//===----------------------------------------------------------------------===//

/// Returns the communicator over `axes` (a non-empty set of mesh axes) for
/// `stream`: the ranks whose coordinates differ from this rank's only on
/// those axes, in piper_rt_mesh_group order. Created on first use and cached
/// (the handle lives as long as the context). The first call for a key is
/// collective over the group's members only (MPI_Comm_create_group, then one
/// MPI_Comm_dup per stream); members must request keys they share in the same
/// order, e.g. all at start-up in sorted order. Needs a mesh.
piper_rt_status piper_rt_comm_get(piper_rt_context context, size_t num_axes,
                                  const char *const *axes,
                                  piper_rt_stream stream, piper_rt_comm *comm);
/// This rank's index in the communicator.
piper_rt_status piper_rt_comm_rank(piper_rt_comm comm, int *rank);
/// Number of members.
piper_rt_status piper_rt_comm_size(piper_rt_comm comm, int *size);
/// The members' world ranks, in communicator order (`capacity` entries of
/// room; at least comm size).
piper_rt_status piper_rt_comm_members(piper_rt_comm comm, int *world_ranks,
                                      size_t capacity);

// The operations below are enqueued on a stream and return at once; they are
// posted to MPI, in order, when the operations before them on the stream have
// completed, and complete asynchronously (record an event after them to wait).
// Buffers must stay valid and untouched until then. Counts are elements and
// must fit in an int. Errors found while enqueuing are returned; errors MPI
// reports later are returned by the next synchronize of that stream.

/// Sums (or max/min) `count` elements over the communicator into every
/// member's `recv`. `send == recv` is in place.
piper_rt_status piper_rt_all_reduce(piper_rt_comm comm, const void *send,
                                    void *recv, size_t count,
                                    piper_rt_dtype dtype,
                                    piper_rt_reduce_op op);
/// Reduces `recv_count * size` elements of `send`; member i receives block i
/// (`recv_count` elements). ZeRO's gradient shard.
piper_rt_status piper_rt_reduce_scatter(piper_rt_comm comm, const void *send,
                                        void *recv, size_t recv_count,
                                        piper_rt_dtype dtype,
                                        piper_rt_reduce_op op);
/// Concatenates every member's `send_count` elements, in member order, into
/// every member's `recv` (`send_count * size` elements).
piper_rt_status piper_rt_all_gather(piper_rt_comm comm, const void *send,
                                    void *recv, size_t send_count,
                                    piper_rt_dtype dtype);
/// Member i's block j (`count` elements) goes to member j's block i.
piper_rt_status piper_rt_all_to_all(piper_rt_comm comm, const void *send,
                                    void *recv, size_t count,
                                    piper_rt_dtype dtype);
/// Sends `count` elements to world rank `peer` with `tag` (0 ..
/// PIPER_RT_MAX_TAG), matched by the peer's piper_rt_recv with this rank and
/// the same tag. Tags, not streams, tell messages between two ranks apart.
piper_rt_status piper_rt_send(piper_rt_stream stream, const void *data,
                              size_t count, piper_rt_dtype dtype, int peer,
                              int64_t tag);
/// Receives exactly `count` elements from world rank `peer` with `tag`.
piper_rt_status piper_rt_recv(piper_rt_stream stream, void *data, size_t count,
                              piper_rt_dtype dtype, int peer, int64_t tag);

/// Largest tag every MPI supports (the standard's minimum MPI_TAG_UB).
#define PIPER_RT_MAX_TAG 32767

//===----------------------------------------------------------------------===//
// Chrome-trace profiling
//===----------------------------------------------------------------------===//

/// Starts recording spans (launches, communication from post to completion)
/// and sets where piper_rt_finalize writes them. A `path` containing "%r" is
/// written by every rank with "%r" replaced by its rank; any other path is
/// written once, by rank 0, with every rank's spans (gathered at finalize, so
/// enabling must then be collective). PIPER_RT_TRACE=<path> at init does the
/// same. The JSON is Chrome's trace format: pid = rank, tid = stream, times in
/// microseconds since piper_rt_init; the simulator writes the same format.
piper_rt_status piper_rt_trace_enable(piper_rt_context context,
                                      const char *path);
/// Writes the trace now (collective for a merged trace); spans keep being
/// recorded and finalize writes again.
piper_rt_status piper_rt_trace_write(piper_rt_context context);
/// Seconds since piper_rt_init: the trace's clock.
piper_rt_status piper_rt_time(piper_rt_context context, double *seconds);
/// Records a span the host timed itself (a kernel it ran) on `stream`'s row
/// of the trace, from `start` to `end` (piper_rt_time seconds); `category`
/// as Chrome's "cat" (e.g. "compute"). A no-op while tracing is off.
piper_rt_status piper_rt_trace_span(piper_rt_stream stream, const char *name,
                                    const char *category, double start,
                                    double end);

#ifdef __cplusplus
} // extern "C"
#endif

#endif // PIPER_RT_PIPER_RT_H
