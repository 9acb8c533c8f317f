//===- CudaBackend.h - The plan ABI on CUDA streams and NCCL ----*- C++ -*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// One rank per GPU (device = local rank modulo the node's GPUs). The piper_rt
// context (MPI) still gives the rank, the mesh, the timeout and the trace
// file; the device work runs on:
// - a compute stream (where kernels, GEMMs and copies run; mgpuStreamCreate
//   returns it) and, once an overlap's SM shares are set, two compute
//   streams in green contexts for the pair;
// - one CUDA stream per plan stream name (higher priority than compute),
//   each with its NCCL communicators, split from one world communicator
//   whose id rank 0 broadcast over MPI (Bootstrap.h), with CTA limits when
//   the SMs are partitioned;
// - a point-to-point stream and communicator: sends are staged on the
//   compute stream and posted together with the next receive (or at a host
//   wait) in one NCCL group, so a send never holds up this rank's later
//   receives, which is the rule the verifier proved deadlock-freedom under.
// Program events are CUDA events; a wait makes the compute stream wait, and
// the host blocks only at a step's end, a move and the plan's own
// synchronisations, polling with the context's timeout and NCCL's async
// errors; a timeout or NCCL error aborts every communicator and the job,
// naming the rank and the operation.
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_RT_BACKENDS_CUDA_CUDABACKEND_H
#define PIPER_RT_BACKENDS_CUDA_CUDABACKEND_H

#include "../../lib/plan/Backend.h"
#include "Api.h"
#include "CachingAllocator.h"
#include "Planning.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace piper::cuda {

/// The allocator's device: cuMemAlloc/cuMemFree and events as markers.
class CudaMemory final : public DeviceMemory {
public:
  explicit CudaMemory(const Driver &d) : d(d) {}
  ~CudaMemory() override;
  void *allocate(size_t bytes) override;
  void release(void *data) override;
  void *mark(void *stream) override;
  bool done(void *marker) override;
  void wait(void *marker) override;
  void forget(void *marker) override;

private:
  const Driver &d;
  std::vector<CUevent> spare; // events to reuse as markers
};

class CudaBackend final : public piper::plan::Backend {
public:
  CudaBackend(piper_rt_context context, piper::plan::StepError &errors)
      : context(context), errors(errors) {}
  ~CudaBackend() override;
  /// Opens the device, the streams and the NCCL world; false with piper_rt's
  /// last error set ("no CUDA device: ..." where there is none).
  bool start();

  using View = piper_memref_view;
  using Element = piper::plan::Element;
  void send(const View &in, Element e, int64_t peer, int64_t tag) override;
  void recv(const View &out, Element e, int64_t peer, int64_t tag) override;
  void iallReduce(const View &in, const View &out, Element e, int64_t comm,
                  double scale) override;
  void ireduceScatter(const View &in, const View &out, Element e, int64_t comm,
                      double scale) override;
  void iallGather(const View &in, const View &out, Element e,
                  int64_t comm) override;
  void allReduce(const View &in, const View &out, Element e, int64_t comm,
                 double scale) override;
  void allToAll(const View &in, const View &out, Element e, int64_t comm,
                int64_t direction) override;
  void shard(const View &in, const View &out, Element e, int64_t comm) override;
  void record(int64_t event, int64_t stream) override;
  void wait(int64_t event) override;
  void syncAll() override;
  void traceBegin(int64_t launch) override;
  void traceEnd(int64_t launch) override;
  bool addCommunicator(const std::vector<std::string> &axes,
                       const std::string &stream) override;
  void setStreams(const std::vector<std::string> &names) override {
    programStreams = names;
  }
  bool traceLaunches(const std::vector<std::string> &names) override;
  void finishStep() override;
  int member(int64_t comm) override;
  bool move(void *data, size_t count, piper_rt_dtype dtype, int from, int to,
            int tag) override;

  // The GPU ABI (plan_abi_gpu.h) acts on these.
  const Driver &driver() const { return *d; }
  CUstream computeStream() const { return compute; }
  CachingAllocator &allocator() { return *memory; }
  /// cuBLAS on the compute stream (loaded on first use); null with
  /// errors set.
  cublasHandle_t blas();
  /// Records `what` failing with `result` as the step's error; true if ok.
  bool check(CUresult result, const char *what);
  /// Blocks the host until `stream` has run what was enqueued so far, with
  /// the timeout and NCCL error checks; posts pending sends first.
  bool drain(CUstream stream, const std::string &what);
  /// Selects the compute stream: 0 the device's, 1 and 2 the SM partitions
  /// of an overlapped pair (the device's when unpartitioned).
  bool usePartition(int which);
  /// Partitions the SMs for an overlapped pair (before the communicators
  /// are added, so that their CTA limits apply); the fallback is logged.
  bool setSmShares(double first, double second);
  int rank() const { return self; }
  /// Records the step's error (the first one wins).
  void fail(const std::string &what) { errors.set(what); }
  /// Posts the staged sends (before the host blocks on the device).
  bool postSends() {
    return sends.empty() || flushSends(nullptr, {PIPER_RT_F32, 4}, -1);
  }
  /// Host <-> device copies for the driver (inputs, parameters, results).
  bool copyToDevice(void *device, const void *host, size_t bytes);
  bool copyToHost(void *host, const void *device, size_t bytes);

private:
  piper_rt_context context;
  piper::plan::StepError &errors;
  const Driver *d = nullptr;
  const Nccl *n = nullptr;
  int self = 0, worldSize = 1;
  CUdevice device = 0;
  CUcontext primary = nullptr;
  CUstream compute = nullptr, deviceCompute = nullptr, p2pStream = nullptr;
  int lowPriority = 0, highPriority = 0;
  std::unique_ptr<CudaMemory> raw;
  std::unique_ptr<CachingAllocator> memory;
  cublasHandle_t blasHandle = nullptr;
  CUstream blasStream = nullptr;

  ncclComm_t world = nullptr, p2p = nullptr;
  std::vector<ncclComm_t> comms;
  std::vector<CUstream> commStreams;
  std::vector<SplitPlan> commPlans;
  std::vector<std::string> commNames; // "{dp} of stream 'grad'"
  std::map<std::string, CUstream> streamsByName;
  std::vector<std::string> programStreams;
  std::map<int64_t, CUevent> events;

  /// Sends staged and not yet posted.
  struct Send {
    void *data;
    size_t count;
    piper_rt_dtype dtype;
    int peer;
    int64_t tag;
  };
  std::vector<Send> sends;

  /// SM partitions (green contexts) and NCCL's CTA limits beside them.
  SmPartition partition;
  CUgreenCtx green[2] = {nullptr, nullptr};
  CUstream partitionStreams[2] = {nullptr, nullptr};

  /// Tracing: CUDA events bracket launches and collectives; their times
  /// become spans at the step's end.
  bool tracing = false;
  std::vector<std::string> launchNames;
  CUevent traceOrigin = nullptr;
  double originSeconds = 0;
  struct Span {
    CUevent begin, end;
    std::string name;
    const char *category;
    piper_rt_stream row;
  };
  std::vector<Span> spans;
  CUevent openBegin = nullptr;
  std::map<std::string, piper_rt_stream> traceRows;

  // Helpers (CudaBackend.cpp, CudaCollectives.cpp).
  ncclComm_t commAt(int64_t index, const char *what);
  int commSize(int64_t index) {
    return static_cast<int>(commPlans[index].members.size());
  }
  CUstream streamOfProgram(int64_t index);
  /// `after` waits for what `before` has enqueued so far.
  bool order(CUstream before, CUstream after);
  bool gather(const View &v, size_t elt, void *packed, CUstream stream);
  void *scratch(size_t bytes, CUstream stream);
  void release(void *data, CUstream stream);
  bool nccl(ncclResult_t result, const std::string &what);
  bool flushSends(const View *recvInto, Element e, int peer);
  bool reduce(void *data, int64_t count, Element e, int64_t index, double scale,
              const char *what, void *out);
  bool makeComm(ncclComm_t &comm, int color, int key, const std::string &what);
  void abortAll(const std::string &message);
  piper_rt_stream traceRow(const std::string &name);
  void spanBegin(CUstream stream, CUevent &begin);
  void spanEnd(CUstream stream, CUevent begin, const std::string &name,
               const char *category, const std::string &row);
  void emitSpans();
};

/// The current session's CUDA backend, or null (printing nothing).
CudaBackend *current();

/// NCCL's type for a runtime dtype.
ncclDataType_t ncclType(piper_rt_dtype dtype);

} // namespace piper::cuda

#endif // PIPER_RT_BACKENDS_CUDA_CUDABACKEND_H
