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
//  - No function aborts the process or throws; the caller decides what to do.
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

/// Returns how long, in seconds, a communication call may wait before failing
/// with PIPER_RT_ERROR_TIMEOUT. Read from the environment variable
/// PIPER_RT_TIMEOUT (a decimal number of seconds, fractions allowed, e.g.
/// "600" or "2.5") so that operators can lengthen it for a slow cluster
/// without recompiling a plan.
///
/// Unset or empty yields PIPER_RT_DEFAULT_COMM_TIMEOUT_SECONDS. Anything else
/// that is not a finite number > 0 (for example "abc", "10s", "0", "-5",
/// "inf") also yields the default, and sets the last error to
/// PIPER_RT_ERROR_INVALID_ARGUMENT with the offending value, so the launcher
/// can warn instead of silently running with a setting the user did not mean.
/// A valid value leaves the last error untouched.
///
/// The environment is read on every call and the result is not cached; call
/// it once at start-up, before threads that could call setenv() exist.
double piper_rt_comm_timeout_seconds(void);

#ifdef __cplusplus
} // extern "C"
#endif

#endif // PIPER_RT_PIPER_RT_H
