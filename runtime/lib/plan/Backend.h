//===- Backend.h - What the plan ABI needs from a backend ------*- C++ -*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The session (Session.h) serves memory itself and hands every call that
// needs the machine's communication or clock to its Backend. One backend is
// linked into PiperPlanRuntime (plan_abi.h, "Backends"): the MPI one over
// piper_rt_* (runtime/backends/mpi/PlanBackend.cpp) or none (NoBackend.cpp).
// Views are decoded already (piper_memref_decode); `dtype` and `elt` (bytes
// of an element) describe their elements. A failing call records the step's
// first error in `errors` and returns.
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_RUNTIME_LIB_PLAN_BACKEND_H
#define PIPER_RUNTIME_LIB_PLAN_BACKEND_H

#include "piper-rt/plan_abi.h"

#include <memory>
#include <string>
#include <vector>

namespace piper::plan {

/// The first error of a step, kept until the driver reads it.
struct StepError {
  std::string message;
  void set(std::string m) {
    if (message.empty())
      message = std::move(m);
  }
};

/// An element type of the ABI: the runtime's dtype and its size.
struct Element {
  piper_rt_dtype dtype;
  size_t size;
};

class Backend {
public:
  virtual ~Backend() = default;

  // Part 1 (plan_abi.h): the semantics are the header's.
  virtual void send(const piper_memref_view &in, Element e, int64_t peer,
                    int64_t tag) = 0;
  virtual void recv(const piper_memref_view &out, Element e, int64_t peer,
                    int64_t tag) = 0;
  /// A backend without nonblocking receives completes it at once, which
  /// meets the header's contract (final no later than the wait).
  virtual void irecv(const piper_memref_view &out, Element e, int64_t peer,
                     int64_t tag, int64_t stream) {
    (void)stream;
    recv(out, e, peer, tag);
  }
  virtual void iallReduce(const piper_memref_view &in,
                          const piper_memref_view &out, Element e, int64_t comm,
                          double scale) = 0;
  virtual void ireduceScatter(const piper_memref_view &in,
                              const piper_memref_view &out, Element e,
                              int64_t comm, double scale) = 0;
  virtual void iallGather(const piper_memref_view &in,
                          const piper_memref_view &out, Element e,
                          int64_t comm) = 0;
  virtual void allReduce(const piper_memref_view &in,
                         const piper_memref_view &out, Element e, int64_t comm,
                         double scale) = 0;
  virtual void allToAll(const piper_memref_view &in,
                        const piper_memref_view &out, Element e, int64_t comm,
                        int64_t direction) = 0;
  virtual void shard(const piper_memref_view &in, const piper_memref_view &out,
                     Element e, int64_t comm) = 0;
  virtual void record(int64_t event, int64_t stream) = 0;
  virtual void wait(int64_t event) = 0;
  virtual void syncAll() = 0;
  virtual void traceBegin(int64_t launch) = 0;
  virtual void traceEnd(int64_t launch) = 0;
  /// Kernel spans (piper-compile --trace-kernels); a backend that does not
  /// record them ignores the calls.
  virtual void traceKernelBegin(int64_t kind) { (void)kind; }
  virtual void traceKernelEnd(int64_t kind) { (void)kind; }

  // Part 2: false with piper_rt's last error set.
  virtual bool addCommunicator(const std::vector<std::string> &axes,
                               const std::string &stream) = 0;
  virtual void setStreams(const std::vector<std::string> &names) = 0;
  virtual bool traceLaunches(const std::vector<std::string> &names) = 0;
  /// The names of kernel kinds; spans only after traceLaunches succeeded.
  virtual void traceKernels(const std::vector<std::string> &names) {
    (void)names;
  }
  /// Completes the step's operations; errors go to `errors`.
  virtual void finishStep() = 0;
  virtual int member(int64_t comm) = 0;
  virtual bool move(void *data, size_t count, piper_rt_dtype dtype, int from,
                    int to, int tag) = 0;
};

/// The linked backend for `context` (not null), reporting into `errors`;
/// null with piper_rt's last error set if it cannot serve the context.
std::unique_ptr<Backend> makeBackend(piper_rt_context context,
                                     StepError &errors);

} // namespace piper::plan

#endif // PIPER_RUNTIME_LIB_PLAN_BACKEND_H
