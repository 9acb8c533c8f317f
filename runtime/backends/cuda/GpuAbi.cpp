//===- GpuAbi.cpp - The GPU plan ABI (plan_abi_gpu.h)
//----------------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// MLIR 22's mgpu* runtime calls, piper_gpu_gemm and the driver's GPU
// functions, on the current session's CudaBackend (semantics in the
// header). Module loading needs no session: it runs at the plan's dlopen.
//
//===----------------------------------------------------------------------===//

#include "piper-rt/plan_abi_gpu.h"

#include "../../lib/plan/Session.h"
#include "CudaBackend.h"
#include "Device.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

#define PIPER_GPU_EXPORT extern "C" __attribute__((visibility("default")))

using namespace piper::cuda;

namespace {

/// The current session's backend; a Part 1 call without one is a driver
/// bug (plan_abi.h): one line and exit.
CudaBackend &backend(const char *caller) {
  processOrDie(caller); // makes the context current on this thread
  CudaBackend *b = current();
  if (!b) {
    std::fprintf(stderr,
                 "piper-rt: %s: no current session with a CUDA backend "
                 "(piper_plan_session_activate)\n",
                 caller);
    std::exit(1);
  }
  return *b;
}

[[noreturn]] void die(const char *caller, const std::string &why) {
  std::fprintf(stderr, "piper-rt: %s: %s\n", caller, why.c_str());
  std::exit(1);
}

/// A call made outside any step (module loading): failures end the run.
void mustSucceed(const Process &p, CUresult r, const char *caller) {
  if (r != CUDA_SUCCESS)
    die(caller, describe(*p.d, r));
}

CUstream streamOr(CudaBackend &b, void *stream) {
  return stream ? static_cast<CUstream>(stream) : b.computeStream();
}

CudaBackend *sessionBackend(piper_plan_session s) {
  return s && s->backend ? static_cast<CudaBackend *>(s->backend.get())
                         : nullptr;
}

#define PIPER_GPU_SESSION(session, b)                                          \
  CudaBackend *b = sessionBackend(session);                                    \
  if (!b)                                                                      \
    return PIPER_RT_ERROR(PIPER_RT_ERROR_INVALID_ARGUMENT,                     \
                          "%s: the session has no CUDA backend", __func__);

piper_rt_status stepStatus(piper_plan_session s, const char *caller) {
  if (s->errors.message.empty())
    return PIPER_RT_OK;
  std::string m = std::move(s->errors.message);
  s->errors.message.clear();
  return PIPER_RT_ERROR(PIPER_RT_ERROR_COMMUNICATION, "%s: %s", caller,
                        m.c_str());
}

} // namespace

//===----------------------------------------------------------------------===//
// Modules and launches
//===----------------------------------------------------------------------===//

PIPER_GPU_EXPORT void *mgpuModuleLoad(void *data, uint64_t) {
  const Process &p = processOrDie("mgpuModuleLoad");
  CUmodule module = nullptr;
  mustSucceed(p, p.d->cuModuleLoadData(&module, data), "mgpuModuleLoad");
  return module;
}

PIPER_GPU_EXPORT void *mgpuModuleLoadJIT(void *data, int32_t optLevel) {
  const Process &p = processOrDie("mgpuModuleLoadJIT");
  CUmodule module = nullptr;
  char log[4096] = {0};
  CUjit_option options[] = {CU_JIT_OPTIMIZATION_LEVEL, CU_JIT_ERROR_LOG_BUFFER,
                            CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void *values[] = {reinterpret_cast<void *>(static_cast<intptr_t>(optLevel)),
                    log, reinterpret_cast<void *>(sizeof(log) - 1)};
  CUresult r = p.d->cuModuleLoadDataEx(&module, data, 3, options, values);
  if (r != CUDA_SUCCESS)
    die("mgpuModuleLoadJIT", describe(*p.d, r) + ": " + log);
  return module;
}

PIPER_GPU_EXPORT void mgpuModuleUnload(void *module) {
  std::string why;
  // At exit the driver may be gone already; unloading is then moot.
  if (const Process *p = process(why))
    p->d->cuModuleUnload(static_cast<CUmodule>(module));
}

PIPER_GPU_EXPORT void *mgpuModuleGetFunction(void *module, const char *name) {
  const Process &p = processOrDie("mgpuModuleGetFunction");
  CUfunction f = nullptr;
  CUresult r =
      p.d->cuModuleGetFunction(&f, static_cast<CUmodule>(module), name);
  if (r != CUDA_SUCCESS)
    die("mgpuModuleGetFunction", std::string(name) + ": " + describe(*p.d, r));
  return f;
}

PIPER_GPU_EXPORT void mgpuLaunchKernel(void *function, intptr_t gridX,
                                       intptr_t gridY, intptr_t gridZ,
                                       intptr_t blockX, intptr_t blockY,
                                       intptr_t blockZ, int32_t smem,
                                       void *stream, void **params,
                                       void **extra, size_t) {
  CudaBackend &b = backend("mgpuLaunchKernel");
  b.check(b.driver().cuLaunchKernel(static_cast<CUfunction>(function), gridX,
                                    gridY, gridZ, blockX, blockY, blockZ, smem,
                                    streamOr(b, stream), params, extra),
          "kernel launch");
}

PIPER_GPU_EXPORT void
mgpuLaunchClusterKernel(void *function, intptr_t clusterX, intptr_t clusterY,
                        intptr_t clusterZ, intptr_t gridX, intptr_t gridY,
                        intptr_t gridZ, intptr_t blockX, intptr_t blockY,
                        intptr_t blockZ, int32_t smem, void *stream,
                        void **params, void **extra) {
  CudaBackend &b = backend("mgpuLaunchClusterKernel");
  CUlaunchAttribute cluster = {};
  cluster.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
  cluster.value.clusterDim.x = static_cast<unsigned>(clusterX);
  cluster.value.clusterDim.y = static_cast<unsigned>(clusterY);
  cluster.value.clusterDim.z = static_cast<unsigned>(clusterZ);
  CUlaunchConfig config = {};
  config.gridDimX = static_cast<unsigned>(gridX);
  config.gridDimY = static_cast<unsigned>(gridY);
  config.gridDimZ = static_cast<unsigned>(gridZ);
  config.blockDimX = static_cast<unsigned>(blockX);
  config.blockDimY = static_cast<unsigned>(blockY);
  config.blockDimZ = static_cast<unsigned>(blockZ);
  config.sharedMemBytes = static_cast<unsigned>(smem);
  config.hStream = streamOr(b, stream);
  config.attrs = &cluster;
  config.numAttrs = 1;
  b.check(b.driver().cuLaunchKernelEx(
              &config, static_cast<CUfunction>(function), params, extra),
          "cluster kernel launch");
}

//===----------------------------------------------------------------------===//
// Streams and events
//===----------------------------------------------------------------------===//

PIPER_GPU_EXPORT void *mgpuStreamCreate(void) {
  return backend("mgpuStreamCreate").computeStream();
}

PIPER_GPU_EXPORT void mgpuStreamDestroy(void *stream) {
  CudaBackend &b = backend("mgpuStreamDestroy");
  if (stream && stream != b.computeStream())
    b.check(b.driver().cuStreamDestroy(static_cast<CUstream>(stream)),
            "stream destroy");
}

PIPER_GPU_EXPORT void mgpuStreamSynchronize(void *stream) {
  CudaBackend &b = backend("mgpuStreamSynchronize");
  b.drain(streamOr(b, stream), "stream synchronize");
}

PIPER_GPU_EXPORT void mgpuStreamWaitEvent(void *stream, void *event) {
  CudaBackend &b = backend("mgpuStreamWaitEvent");
  b.check(b.driver().cuStreamWaitEvent(streamOr(b, stream),
                                       static_cast<CUevent>(event), 0),
          "stream wait");
}

PIPER_GPU_EXPORT void *mgpuEventCreate(void) {
  CudaBackend &b = backend("mgpuEventCreate");
  CUevent e = nullptr;
  b.check(b.driver().cuEventCreate(&e, CU_EVENT_DISABLE_TIMING),
          "event create");
  return e;
}

PIPER_GPU_EXPORT void mgpuEventDestroy(void *event) {
  CudaBackend &b = backend("mgpuEventDestroy");
  b.check(b.driver().cuEventDestroy(static_cast<CUevent>(event)),
          "event destroy");
}

PIPER_GPU_EXPORT void mgpuEventSynchronize(void *event) {
  CudaBackend &b = backend("mgpuEventSynchronize");
  b.postSends();
  b.check(b.driver().cuEventSynchronize(static_cast<CUevent>(event)),
          "event synchronize");
}

PIPER_GPU_EXPORT void mgpuEventRecord(void *event, void *stream) {
  CudaBackend &b = backend("mgpuEventRecord");
  b.check(b.driver().cuEventRecord(static_cast<CUevent>(event),
                                   streamOr(b, stream)),
          "event record");
}

//===----------------------------------------------------------------------===//
// Memory
//===----------------------------------------------------------------------===//

PIPER_GPU_EXPORT void *mgpuMemAlloc(uint64_t bytes, void *stream,
                                    bool isHostShared) {
  CudaBackend &b = backend("mgpuMemAlloc");
  if (isHostShared)
    die("mgpuMemAlloc", "host-shared allocations (gpu.alloc host_shared) are "
                        "not supported");
  void *p = b.allocator().allocate(bytes, streamOr(b, stream));
  if (!p)
    die("mgpuMemAlloc",
        "out of device memory for " + std::to_string(bytes) + " bytes");
  return p;
}

PIPER_GPU_EXPORT void mgpuMemFree(void *pointer, void *stream) {
  CudaBackend &b = backend("mgpuMemFree");
  if (!b.allocator().free(pointer, streamOr(b, stream)))
    die("mgpuMemFree", "the session did not allocate this pointer");
}

PIPER_GPU_EXPORT void mgpuMemcpy(void *dst, void *src, size_t bytes,
                                 void *stream) {
  CudaBackend &b = backend("mgpuMemcpy");
  // Unified addressing: the driver infers the direction.
  b.check(b.driver().cuMemcpyAsync(reinterpret_cast<CUdeviceptr>(dst),
                                   reinterpret_cast<CUdeviceptr>(src), bytes,
                                   streamOr(b, stream)),
          "copy");
}

PIPER_GPU_EXPORT void mgpuMemset32(void *dst, uint32_t value, size_t count,
                                   void *stream) {
  CudaBackend &b = backend("mgpuMemset32");
  b.check(b.driver().cuMemsetD32Async(reinterpret_cast<CUdeviceptr>(dst), value,
                                      count, streamOr(b, stream)),
          "memset");
}

PIPER_GPU_EXPORT void mgpuMemset16(void *dst, uint16_t value, size_t count,
                                   void *stream) {
  CudaBackend &b = backend("mgpuMemset16");
  b.check(b.driver().cuMemsetD16Async(reinterpret_cast<CUdeviceptr>(dst), value,
                                      count, streamOr(b, stream)),
          "memset");
}

PIPER_GPU_EXPORT void mgpuSetDefaultDevice(int32_t device) {
  const Process &p = processOrDie("mgpuSetDefaultDevice");
  if (device != p.ordinal)
    die("mgpuSetDefaultDevice",
        "this rank runs on device " + std::to_string(p.ordinal) +
            ", not device " + std::to_string(device) + " (one rank per GPU)");
}

//===----------------------------------------------------------------------===//
// GEMM
//===----------------------------------------------------------------------===//

namespace {
cudaDataType cudaType(int32_t dtype) {
  return dtype == PIPER_RT_F64     ? CUDA_R_64F
         : dtype == PIPER_GPU_BF16 ? CUDA_R_16BF
                                   : CUDA_R_32F;
}
} // namespace

PIPER_GPU_EXPORT void
piper_gpu_gemm(int32_t aDtype, int32_t cDtype, int32_t transA, int32_t transB,
               int64_t batch, int64_t m, int64_t n, int64_t k, double alpha,
               const void *a, int64_t lda, int64_t strideA, const void *b,
               int64_t ldb, int64_t strideB, double beta, void *c, int64_t ldc,
               int64_t strideC) {
  CudaBackend &be = backend("piper_gpu_gemm");
  std::string bad = checkGemm(aDtype, cDtype, transA, transB, batch, m, n, k, a,
                              lda, strideA, b, ldb, strideB, c, ldc, strideC);
  if (!bad.empty())
    return be.fail(bad);
  if (batch == 0 || m == 0 || n == 0)
    return;
  cublasHandle_t h = be.blas();
  if (!h)
    return;
  std::string why;
  const Cublas &cb = *cublas(why);
  GemmPlan p = planGemm(aDtype, cDtype, transA, transB, m, n, k, lda, strideA,
                        ldb, strideB);
  float alpha32 = static_cast<float>(alpha), beta32 = static_cast<float>(beta);
  const void *al = p.f64Compute ? static_cast<const void *>(&alpha) : &alpha32;
  const void *bt = p.f64Compute ? static_cast<const void *>(&beta) : &beta32;
  const void *first = p.firstIsB ? b : a, *second = p.firstIsB ? a : b;
  cublasStatus_t s = cb.cublasGemmStridedBatchedEx_64(
      h, p.transFirst ? CUBLAS_OP_T : CUBLAS_OP_N,
      p.transSecond ? CUBLAS_OP_T : CUBLAS_OP_N, p.m, p.n, p.k, al, first,
      cudaType(p.inputType), p.ldFirst, p.strideFirst, second,
      cudaType(p.inputType), p.ldSecond, p.strideSecond, bt, c,
      cudaType(p.outputType), ldc, strideC, batch,
      p.f64Compute ? CUBLAS_COMPUTE_64F : CUBLAS_COMPUTE_32F,
      CUBLAS_GEMM_DEFAULT);
  if (s != CUBLAS_STATUS_SUCCESS)
    be.fail("piper_gpu_gemm: cuBLAS status " +
            std::to_string(static_cast<int>(s)) + " for " +
            std::to_string(batch) + " x (" + std::to_string(m) + " x " +
            std::to_string(k) + ") x (" + std::to_string(k) + " x " +
            std::to_string(n) + ")");
}

//===----------------------------------------------------------------------===//
// Part 2
//===----------------------------------------------------------------------===//

PIPER_GPU_EXPORT piper_rt_status piper_gpu_probe(void) {
  std::string why;
  if (!process(why))
    return PIPER_RT_ERROR(PIPER_RT_ERROR_UNAVAILABLE, "%s", why.c_str());
  return PIPER_RT_OK;
}

PIPER_GPU_EXPORT piper_rt_status piper_gpu_device_info(char *name,
                                                       size_t capacity,
                                                       int *sms, int *major) {
  std::string why;
  const Process *p = process(why);
  if (!p)
    return PIPER_RT_ERROR(PIPER_RT_ERROR_UNAVAILABLE, "%s", why.c_str());
  if (name && capacity) {
    std::strncpy(name, p->name.c_str(), capacity - 1);
    name[capacity - 1] = '\0';
  }
  if (sms)
    *sms = p->sms;
  if (major)
    *major = p->major;
  return PIPER_RT_OK;
}

PIPER_GPU_EXPORT piper_rt_status piper_plan_session_device_alloc(
    piper_plan_session session, size_t bytes, void **data) {
  PIPER_GPU_SESSION(session, b);
  if (!data)
    return PIPER_RT_ERROR(PIPER_RT_ERROR_INVALID_ARGUMENT,
                          "piper_plan_session_device_alloc: data is NULL");
  *data = b->allocator().allocate(bytes, b->computeStream());
  if (!*data)
    return PIPER_RT_ERROR(PIPER_RT_ERROR_OUT_OF_MEMORY,
                          "out of device memory for %zu bytes", bytes);
  return PIPER_RT_OK;
}

PIPER_GPU_EXPORT piper_rt_status
piper_plan_session_device_free(piper_plan_session session, void *data) {
  PIPER_GPU_SESSION(session, b);
  if (!b->allocator().free(data, b->computeStream()))
    return PIPER_RT_ERROR(PIPER_RT_ERROR_INVALID_ARGUMENT,
                          "piper_plan_session_device_free: the session did "
                          "not allocate %p",
                          data);
  return PIPER_RT_OK;
}

PIPER_GPU_EXPORT piper_rt_status piper_plan_session_copy_to_device(
    piper_plan_session session, void *device, const void *host, size_t bytes) {
  PIPER_GPU_SESSION(session, b);
  b->copyToDevice(device, host, bytes);
  return stepStatus(session, "copy to the device");
}

PIPER_GPU_EXPORT piper_rt_status piper_plan_session_copy_to_host(
    piper_plan_session session, void *host, const void *device, size_t bytes) {
  PIPER_GPU_SESSION(session, b);
  b->copyToHost(host, device, bytes);
  return stepStatus(session, "copy to the host");
}

PIPER_GPU_EXPORT piper_rt_status piper_plan_session_device_stats(
    piper_plan_session session, piper_plan_buffer_stats *stats) {
  PIPER_GPU_SESSION(session, b);
  if (!stats)
    return PIPER_RT_ERROR(PIPER_RT_ERROR_INVALID_ARGUMENT,
                          "piper_plan_session_device_stats: stats is NULL");
  *stats = b->allocator().stats();
  return PIPER_RT_OK;
}

PIPER_GPU_EXPORT piper_rt_status piper_plan_session_set_sm_shares(
    piper_plan_session session, double first, double second) {
  PIPER_GPU_SESSION(session, b);
  if (!(first > 0 && second > 0 && first + second <= 1))
    return PIPER_RT_ERROR(PIPER_RT_ERROR_INVALID_ARGUMENT,
                          "SM shares %g and %g: each must be in (0, 1] and "
                          "their sum at most 1",
                          first, second);
  b->setSmShares(first, second);
  return PIPER_RT_OK;
}

PIPER_GPU_EXPORT piper_rt_status
piper_plan_session_use_partition(piper_plan_session session, int which) {
  PIPER_GPU_SESSION(session, b);
  if (which < 0 || which > 2)
    return PIPER_RT_ERROR(PIPER_RT_ERROR_INVALID_ARGUMENT,
                          "partition %d: expected 0 (the whole device), 1 or 2",
                          which);
  b->usePartition(which);
  return stepStatus(session, "partition");
}
