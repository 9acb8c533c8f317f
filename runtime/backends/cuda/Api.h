//===- Api.h - The CUDA driver, NCCL and cuBLAS, loaded at run time -*- C++
//-*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Every CUDA-side library is opened with dlopen on first use, never linked:
// libcuda.so.1 (the driver, which only exists where a GPU is), libnccl.so.2
// and libcublas.so.13. So piper-run built with the CUDA backend starts on a
// machine without a GPU and says "no CUDA device" in one line instead of
// failing in the dynamic loader, and the GPU machine may supply NCCL and
// cuBLAS from wherever it keeps them (the bundle's lib/, the pip wheels of
// PyTorch, /usr/local/cuda/lib) through LD_LIBRARY_PATH. The headers give the
// types; the tables below hold the entry points. Driver names go through
// cuda.h's versioning macros (cuMemAlloc is cuMemAlloc_v2), so each pointer
// is looked up under the name the header binds.
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_RT_BACKENDS_CUDA_API_H
#define PIPER_RT_BACKENDS_CUDA_API_H

#include <cublas_api.h>
#include <cuda.h>
#include <nccl.h>

#include <string>

namespace piper::cuda {

// X(name): entry points a run cannot do without. O(name): optional ones
// (green contexts: drivers before 12.4 lack them; see Device.cpp).
#define PIPER_CUDA_DRIVER_FUNCTIONS(X, O)                                      \
  X(cuInit)                                                                    \
  X(cuDriverGetVersion)                                                        \
  X(cuGetErrorString)                                                          \
  X(cuDeviceGetCount)                                                          \
  X(cuDeviceGet)                                                               \
  X(cuDeviceGetName)                                                           \
  X(cuDeviceGetAttribute)                                                      \
  X(cuDevicePrimaryCtxRetain)                                                  \
  X(cuDevicePrimaryCtxRelease)                                                 \
  X(cuCtxSetCurrent)                                                           \
  X(cuCtxGetStreamPriorityRange)                                               \
  X(cuStreamCreateWithPriority)                                                \
  X(cuStreamDestroy)                                                           \
  X(cuStreamSynchronize)                                                       \
  X(cuStreamQuery)                                                             \
  X(cuStreamWaitEvent)                                                         \
  X(cuEventCreate)                                                             \
  X(cuEventDestroy)                                                            \
  X(cuEventRecord)                                                             \
  X(cuEventQuery)                                                              \
  X(cuEventSynchronize)                                                        \
  X(cuEventElapsedTime)                                                        \
  X(cuMemAlloc)                                                                \
  X(cuMemFree)                                                                 \
  X(cuMemGetInfo)                                                              \
  X(cuMemcpyAsync)                                                             \
  X(cuMemcpy2DAsync)                                                           \
  X(cuMemcpyHtoDAsync)                                                         \
  X(cuMemcpyDtoHAsync)                                                         \
  X(cuMemsetD8Async)                                                           \
  X(cuMemsetD16Async)                                                          \
  X(cuMemsetD32Async)                                                          \
  X(cuModuleLoadData)                                                          \
  X(cuModuleLoadDataEx)                                                        \
  X(cuModuleUnload)                                                            \
  X(cuModuleGetFunction)                                                       \
  X(cuLaunchKernel)                                                            \
  X(cuLaunchKernelEx)                                                          \
  X(cuPointerGetAttribute)                                                     \
  X(cuCtxSynchronize)                                                          \
  O(cuDeviceGetDevResource)                                                    \
  O(cuDevSmResourceSplitByCount)                                               \
  O(cuDevResourceGenerateDesc)                                                 \
  O(cuGreenCtxCreate)                                                          \
  O(cuGreenCtxDestroy)                                                         \
  O(cuGreenCtxStreamCreate)

#define PIPER_CUDA_NCCL_FUNCTIONS(X)                                           \
  X(ncclGetVersion)                                                            \
  X(ncclGetErrorString)                                                        \
  X(ncclGetLastError)                                                          \
  X(ncclGetUniqueId)                                                           \
  X(ncclCommInitRankConfig)                                                    \
  X(ncclCommSplit)                                                             \
  X(ncclCommDestroy)                                                           \
  X(ncclCommAbort)                                                             \
  X(ncclCommGetAsyncError)                                                     \
  X(ncclRedOpCreatePreMulSum)                                                  \
  X(ncclRedOpDestroy)                                                          \
  X(ncclAllReduce)                                                             \
  X(ncclReduceScatter)                                                         \
  X(ncclAllGather)                                                             \
  X(ncclSend)                                                                  \
  X(ncclRecv)                                                                  \
  X(ncclGroupStart)                                                            \
  X(ncclGroupEnd)

#define PIPER_CUDA_CUBLAS_FUNCTIONS(X)                                         \
  X(cublasCreate_v2)                                                           \
  X(cublasDestroy_v2)                                                          \
  X(cublasSetStream_v2)                                                        \
  X(cublasSetMathMode)                                                         \
  X(cublasGemmStridedBatchedEx_64)

#define PIPER_CUDA_POINTER(name) decltype(&::name) name = nullptr;

/// The driver's entry points (null until loaded; optional ones may stay
/// null).
struct Driver {
  PIPER_CUDA_DRIVER_FUNCTIONS(PIPER_CUDA_POINTER, PIPER_CUDA_POINTER)
  /// Whether every green-context entry point is present.
  bool hasGreenContexts() const {
    return cuDeviceGetDevResource && cuDevSmResourceSplitByCount &&
           cuDevResourceGenerateDesc && cuGreenCtxCreate && cuGreenCtxDestroy &&
           cuGreenCtxStreamCreate;
  }
};
struct Nccl {
  PIPER_CUDA_NCCL_FUNCTIONS(PIPER_CUDA_POINTER)
};
struct Cublas {
  PIPER_CUDA_CUBLAS_FUNCTIONS(PIPER_CUDA_POINTER)
};

/// The loaded driver with cuInit done and at least one device, or null with
/// `why` set to one line that starts "no CUDA device: " (no libcuda.so.1,
/// cuInit failing, zero devices). Loads once per process; later calls
/// return the same answer.
const Driver *driver(std::string &why);
/// NCCL and cuBLAS, or null with `why` naming the library and dlerror().
const Nccl *nccl(std::string &why);
const Cublas *cublas(std::string &why);

/// The file names tried, in order (tests and messages).
const char *driverLibrary();
const char *ncclLibrary();
const char *cublasLibrary();

/// "CUDA_ERROR_OUT_OF_MEMORY (out of memory)" for a driver result.
std::string describe(const Driver &d, CUresult result);

} // namespace piper::cuda

#endif // PIPER_RT_BACKENDS_CUDA_API_H
