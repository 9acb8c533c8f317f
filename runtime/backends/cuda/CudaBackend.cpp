//===- CudaBackend.cpp - Device, streams, events, waits and the trace -----===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The CUDA backend's setup and everything but the collectives
// (CudaCollectives.cpp): see CudaBackend.h.
//
//===----------------------------------------------------------------------===//

#include "CudaBackend.h"
#include "Bootstrap.h"
#include "Device.h"

#include "../../lib/plan/Session.h"
#include "../mpi/Internal.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

using namespace piper::cuda;
using piper::plan::Element;

namespace {
/// Where a failing start records its error for piper_plan_session_create.
bool unavailable(const std::string &why) {
  PIPER_RT_ERROR(PIPER_RT_ERROR_UNAVAILABLE, "%s", why.c_str());
  return false;
}
} // namespace

ncclDataType_t piper::cuda::ncclType(piper_rt_dtype dtype) {
  switch (dtype) {
  case PIPER_RT_F32:
    return ncclFloat32;
  case PIPER_RT_F64:
    return ncclFloat64;
  case PIPER_RT_I64:
    return ncclInt64;
  default:
    return ncclBfloat16; // 3: bf16 (plan_abi_gpu.h)
  }
}

CudaBackend *piper::cuda::current() {
  piper_plan_session s = piper_plan_session_current();
  if (!s || !s->backend)
    return nullptr;
  // The only backend linked beside the GPU ABI is this one.
  return static_cast<CudaBackend *>(s->backend.get());
}

//===----------------------------------------------------------------------===//
// Start and stop
//===----------------------------------------------------------------------===//

bool CudaBackend::start() {
  std::string why;
  const Process *p = process(why);
  if (!p)
    return unavailable(why);
  d = p->d;
  device = p->device;
  primary = p->primary;
  if (!(n = piper::cuda::nccl(why)))
    return unavailable(why);
  piper_rt_rank(context, &self);
  piper_rt_size(context, &worldSize);
  d->cuCtxGetStreamPriorityRange(&lowPriority, &highPriority);
  // Communication outranks compute, so that a collective's kernels are
  // scheduled as soon as SMs free up.
  if (!check(d->cuStreamCreateWithPriority(&deviceCompute,
                                           CU_STREAM_NON_BLOCKING, lowPriority),
             "compute stream") ||
      !check(d->cuStreamCreateWithPriority(&p2pStream, CU_STREAM_NON_BLOCKING,
                                           highPriority),
             "point-to-point stream"))
    return unavailable(errors.message);
  compute = deviceCompute;
  raw = std::make_unique<CudaMemory>(*d);
  memory = std::make_unique<CachingAllocator>(*raw);
  if (const char *shares = std::getenv("PIPER_RT_SM_SHARES")) {
    double a = 0, b = 0;
    if (std::sscanf(shares, "%lf,%lf", &a, &b) != 2)
      return unavailable("PIPER_RT_SM_SHARES='" + std::string(shares) +
                         "' is not two numbers 'a,b'");
    setSmShares(a, b);
  }
  ncclUniqueId id;
  const Nccl &nc = *n;
  if (!broadcastUniqueId(
          MPI_COMM_WORLD, 0,
          [&](ncclUniqueId &out) {
            ncclResult_t r = nc.ncclGetUniqueId(&out);
            return r == ncclSuccess ? std::string()
                                    : std::string(nc.ncclGetErrorString(r));
          },
          id, why))
    return unavailable(why);
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  if (!nccl(n->ncclCommInitRankConfig(&world, worldSize, id, self, &config),
            "NCCL world communicator") ||
      !makeComm(p2p, 0, self, "point-to-point communicator"))
    return unavailable(errors.message);
  return true;
}

CudaBackend::~CudaBackend() {
  if (!d)
    return;
  // Every stream of ours, collectives included, before their buffers go.
  d->cuCtxSynchronize();
  for (auto &[id, event] : events)
    d->cuEventDestroy(event);
  for (ncclComm_t c : comms)
    if (c)
      n->ncclCommDestroy(c);
  if (p2p)
    n->ncclCommDestroy(p2p);
  if (world)
    n->ncclCommDestroy(world);
  if (blasHandle) {
    std::string why;
    if (const Cublas *b = cublas(why))
      b->cublasDestroy_v2(blasHandle);
  }
  memory.reset();
  raw.reset();
  for (auto &[name, s] : streamsByName)
    d->cuStreamDestroy(s);
  for (CUstream s : partitionStreams)
    if (s)
      d->cuStreamDestroy(s);
  for (CUgreenCtx g : green)
    if (g)
      d->cuGreenCtxDestroy(g);
  if (traceOrigin)
    d->cuEventDestroy(traceOrigin);
  d->cuStreamDestroy(p2pStream);
  d->cuStreamDestroy(deviceCompute);
}

//===----------------------------------------------------------------------===//
// Errors, waits and timeouts
//===----------------------------------------------------------------------===//

bool CudaBackend::check(CUresult result, const char *what) {
  if (result == CUDA_SUCCESS)
    return true;
  fail(std::string(what) + ": " + describe(*d, result));
  return false;
}

bool CudaBackend::nccl(ncclResult_t result, const std::string &what) {
  if (result == ncclSuccess || result == ncclInProgress)
    return true;
  const char *last = n->ncclGetLastError(nullptr);
  fail(what + ": NCCL " + n->ncclGetErrorString(result) +
       (last && *last ? std::string(" (") + last + ")" : std::string()));
  return false;
}

/// Aborts every communicator (so that no kernel of ours keeps a peer
/// waiting), then reports through the context: one line naming this rank and
/// the operation, and the job's abort unless the context says otherwise.
void CudaBackend::abortAll(const std::string &message) {
  for (ncclComm_t &c : comms)
    if (c)
      n->ncclCommAbort(c), c = nullptr;
  for (ncclComm_t *c : {&p2p, &world})
    if (*c)
      n->ncclCommAbort(*c), *c = nullptr;
  fail(message);
  piper::rt::reportTimeout(*context, message);
}

bool CudaBackend::drain(CUstream stream, const std::string &what) {
  if (!postSends())
    return false;
  CUevent done = nullptr;
  if (!check(d->cuEventCreate(&done, CU_EVENT_DISABLE_TIMING), what.c_str()) ||
      !check(d->cuEventRecord(done, stream), what.c_str()))
    return false;
  double timeout = PIPER_RT_DEFAULT_COMM_TIMEOUT_SECONDS;
  piper_rt_get_timeout(context, &timeout);
  auto start = std::chrono::steady_clock::now();
  for (int spins = 0;; ++spins) {
    CUresult r = d->cuEventQuery(done);
    if (r == CUDA_SUCCESS)
      break;
    if (r != CUDA_ERROR_NOT_READY) {
      d->cuEventDestroy(done);
      return check(r, what.c_str());
    }
    // NCCL reports a failed peer or network asynchronously.
    std::vector<std::pair<ncclComm_t, std::string>> all = {
        {world, "the world communicator"}, {p2p, "point-to-point"}};
    for (size_t i = 0; i < comms.size(); ++i)
      all.push_back({comms[i], commNames[i]});
    for (auto &[c, name] : all) {
      ncclResult_t async = ncclSuccess;
      if (c && n->ncclCommGetAsyncError(c, &async) == ncclSuccess &&
          async != ncclSuccess && async != ncclInProgress) {
        abortAll("rank " + std::to_string(self) + ": " + what + ": NCCL " +
                 n->ncclGetErrorString(async) + " on " + name);
        d->cuEventDestroy(done);
        return false;
      }
    }
    double waited =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    if (waited > timeout) {
      char text[64];
      std::snprintf(text, sizeof(text), "%.1f", timeout);
      abortAll("rank " + std::to_string(self) + ": " + what +
               " did not complete within " + text +
               " s (PIPER_RT_TIMEOUT); aborted every NCCL communicator");
      d->cuEventDestroy(done);
      return false;
    }
    if (spins > 64)
      std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
  d->cuEventDestroy(done);
  return true;
}

bool CudaBackend::order(CUstream before, CUstream after) {
  if (before == after)
    return true;
  CUevent e = nullptr;
  bool ok = check(d->cuEventCreate(&e, CU_EVENT_DISABLE_TIMING), "order") &&
            check(d->cuEventRecord(e, before), "order") &&
            check(d->cuStreamWaitEvent(after, e, 0), "order");
  // Destroying a recorded event is safe: the wait keeps what it needs.
  if (e)
    d->cuEventDestroy(e);
  return ok;
}

//===----------------------------------------------------------------------===//
// Memory helpers
//===----------------------------------------------------------------------===//

void *CudaBackend::scratch(size_t bytes, CUstream stream) {
  void *p = memory->allocate(bytes ? bytes : 1, stream);
  if (!p)
    fail("device memory: out of memory for " + std::to_string(bytes) +
         " bytes of staging");
  return p;
}

void CudaBackend::release(void *data, CUstream stream) {
  if (data)
    memory->free(data, stream);
}

bool CudaBackend::gather(const View &v, size_t elt, void *packed,
                         CUstream stream) {
  std::vector<Copy2D> copies;
  std::string why;
  if (!stridedCopies(v.sizes, v.strides, v.rank, elt, copies, why)) {
    fail("copy: " + why);
    return false;
  }
  const char *base = piper_memref_data(&v, elt);
  char *out = static_cast<char *>(packed);
  for (const Copy2D &c : copies) {
    CUresult r;
    if (c.height == 1 || (static_cast<size_t>(c.viewPitch) == c.width &&
                          static_cast<size_t>(c.packedPitch) == c.width)) {
      r = d->cuMemcpyAsync(reinterpret_cast<CUdeviceptr>(out + c.packedOffset),
                           reinterpret_cast<CUdeviceptr>(base + c.viewOffset),
                           c.width * c.height, stream);
    } else {
      CUDA_MEMCPY2D m = {};
      m.srcMemoryType = CU_MEMORYTYPE_DEVICE;
      m.srcDevice = reinterpret_cast<CUdeviceptr>(base + c.viewOffset);
      m.srcPitch = static_cast<size_t>(c.viewPitch);
      m.dstMemoryType = CU_MEMORYTYPE_DEVICE;
      m.dstDevice = reinterpret_cast<CUdeviceptr>(out + c.packedOffset);
      m.dstPitch = static_cast<size_t>(c.packedPitch);
      m.WidthInBytes = c.width;
      m.Height = c.height;
      r = d->cuMemcpy2DAsync(&m, stream);
    }
    if (!check(r, "strided copy"))
      return false;
  }
  return true;
}

bool CudaBackend::copyToDevice(void *device, const void *host, size_t bytes) {
  return check(d->cuMemcpyHtoDAsync(reinterpret_cast<CUdeviceptr>(device), host,
                                    bytes, compute),
               "copy to the device") &&
         drain(compute, "copy to the device");
}

bool CudaBackend::copyToHost(void *host, const void *device, size_t bytes) {
  return check(d->cuMemcpyDtoHAsync(host, reinterpret_cast<CUdeviceptr>(device),
                                    bytes, compute),
               "copy to the host") &&
         drain(compute, "copy to the host");
}

cublasHandle_t CudaBackend::blas() {
  std::string why;
  const Cublas *b = cublas(why);
  if (!b) {
    fail(why);
    return nullptr;
  }
  if (!blasHandle) {
    if (b->cublasCreate_v2(&blasHandle) != CUBLAS_STATUS_SUCCESS) {
      fail("cublasCreate failed");
      return nullptr;
    }
    // f32 GEMMs stay f32 (no TF32): the plans must match the CPU path.
    b->cublasSetMathMode(blasHandle, CUBLAS_DEFAULT_MATH);
  }
  if (blasStream != compute) {
    b->cublasSetStream_v2(blasHandle, compute);
    blasStream = compute;
  }
  return blasHandle;
}

//===----------------------------------------------------------------------===//
// SM partitions
//===----------------------------------------------------------------------===//

bool CudaBackend::setSmShares(double first, double second) {
  std::string why;
  const Process *p = process(why);
  partition = partitionSms(p->sms, first, second, smGranularity(p->major));
  auto fallback = [&](const std::string &reason) {
    std::fprintf(stderr,
                 "piper-rt: rank %d: SM shares %.3f/%.3f not enforced (%s); "
                 "the overlapped streams share the device\n",
                 self, first, second, reason.c_str());
    partition.partitioned = false;
    return false;
  };
  if (!partition.partitioned)
    return fallback(partition.why);
  if (!d->hasGreenContexts())
    return fallback("the driver has no green contexts (CUDA 12.4+)");
  CUdevResource all = {}, groups[2] = {}, rest = {}, rest2 = {};
  unsigned one = 1;
  if (d->cuDeviceGetDevResource(device, &all, CU_DEV_RESOURCE_TYPE_SM) !=
          CUDA_SUCCESS ||
      d->cuDevSmResourceSplitByCount(&groups[0], &one, &all, &rest, 0,
                                     partition.first) != CUDA_SUCCESS ||
      d->cuDevSmResourceSplitByCount(&groups[1], &one, &rest, &rest2, 0,
                                     partition.second) != CUDA_SUCCESS)
    return fallback("the SM split failed");
  for (int i = 0; i < 2; ++i) {
    CUdevResourceDesc desc = nullptr;
    if (d->cuDevResourceGenerateDesc(&desc, &groups[i], 1) != CUDA_SUCCESS ||
        d->cuGreenCtxCreate(&green[i], desc, device,
                            CU_GREEN_CTX_DEFAULT_STREAM) != CUDA_SUCCESS ||
        d->cuGreenCtxStreamCreate(&partitionStreams[i], green[i],
                                  CU_STREAM_NON_BLOCKING,
                                  lowPriority) != CUDA_SUCCESS)
      return fallback("green context creation failed");
  }
  d->cuCtxSetCurrent(primary);
  return true;
}

bool CudaBackend::usePartition(int which) {
  if (which < 0 || which > 2) {
    fail("piper_gpu_use_partition: no partition " + std::to_string(which));
    return false;
  }
  CUstream next = which == 0 || !partitionStreams[which - 1]
                      ? deviceCompute
                      : partitionStreams[which - 1];
  // The new stream continues the program: it waits for the old one.
  bool ok = order(compute, next);
  compute = next;
  return ok;
}

//===----------------------------------------------------------------------===//
// Events, streams and the step's end
//===----------------------------------------------------------------------===//

CUstream CudaBackend::streamOfProgram(int64_t index) {
  if (index >= 0 && static_cast<size_t>(index) < programStreams.size()) {
    auto it = streamsByName.find(programStreams[index]);
    if (it != streamsByName.end())
      return it->second;
  }
  return compute;
}

void CudaBackend::record(int64_t event, int64_t streamIndex) {
  CUevent &e = events[event];
  if (!e && !check(d->cuEventCreate(&e, CU_EVENT_DISABLE_TIMING), "record"))
    return;
  check(d->cuEventRecord(e, streamOfProgram(streamIndex)), "record");
}

void CudaBackend::wait(int64_t event) {
  auto it = events.find(event);
  if (it != events.end())
    check(d->cuStreamWaitEvent(compute, it->second, 0), "wait");
}

void CudaBackend::syncAll() {
  for (CUstream s : commStreams)
    order(s, compute);
}

void CudaBackend::finishStep() {
  syncAll();
  order(p2pStream, compute);
  drain(compute, "the step's end");
  emitSpans();
}

int CudaBackend::member(int64_t index) {
  return index >= 0 && static_cast<size_t>(index) < commPlans.size()
             ? commPlans[index].key
             : 0;
}

//===----------------------------------------------------------------------===//
// Tracing with CUDA events
//===----------------------------------------------------------------------===//

piper_rt_stream CudaBackend::traceRow(const std::string &name) {
  piper_rt_stream &row = traceRows[name];
  if (!row)
    piper_rt_stream_create(context, name.c_str(), &row);
  return row;
}

bool CudaBackend::traceLaunches(const std::vector<std::string> &names) {
  launchNames = names;
  if (tracing)
    return true;
  // The origin: an event the host sees complete at a known context time.
  if (d->cuEventCreate(&traceOrigin, CU_EVENT_DEFAULT) != CUDA_SUCCESS ||
      d->cuEventRecord(traceOrigin, compute) != CUDA_SUCCESS ||
      d->cuEventSynchronize(traceOrigin) != CUDA_SUCCESS)
    return unavailable("trace: cannot record a CUDA event");
  piper_rt_time(context, &originSeconds);
  tracing = traceRow("compute") != nullptr;
  return tracing;
}

void CudaBackend::spanBegin(CUstream stream, CUevent &begin) {
  begin = nullptr;
  if (tracing && d->cuEventCreate(&begin, CU_EVENT_DEFAULT) == CUDA_SUCCESS)
    d->cuEventRecord(begin, stream);
}

void CudaBackend::spanEnd(CUstream stream, CUevent begin,
                          const std::string &name, const char *category,
                          const std::string &row) {
  CUevent end = nullptr;
  if (!begin || d->cuEventCreate(&end, CU_EVENT_DEFAULT) != CUDA_SUCCESS)
    return;
  d->cuEventRecord(end, stream);
  spans.push_back({begin, end, name, category, traceRow(row)});
}

void CudaBackend::traceBegin(int64_t) { spanBegin(compute, openBegin); }

void CudaBackend::traceEnd(int64_t launch) {
  const std::string name =
      launch >= 0 && static_cast<size_t>(launch) < launchNames.size()
          ? launchNames[launch]
          : "launch";
  spanEnd(compute, openBegin, name, "compute", "compute");
  openBegin = nullptr;
}

/// After the step's drain: every event has completed.
void CudaBackend::emitSpans() {
  for (Span &s : spans) {
    float begin = 0, end = 0;
    if (d->cuEventElapsedTime(&begin, traceOrigin, s.begin) == CUDA_SUCCESS &&
        d->cuEventElapsedTime(&end, traceOrigin, s.end) == CUDA_SUCCESS)
      piper_rt_trace_span(s.row, s.name.c_str(), s.category,
                          originSeconds + begin * 1e-3,
                          originSeconds + end * 1e-3);
    d->cuEventDestroy(s.begin);
    d->cuEventDestroy(s.end);
  }
  spans.clear();
}

std::unique_ptr<piper::plan::Backend>
piper::plan::makeBackend(piper_rt_context context, StepError &errors) {
  auto backend = std::make_unique<CudaBackend>(context, errors);
  if (!backend->start())
    return nullptr;
  return backend;
}
