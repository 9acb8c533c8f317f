//===- Device.cpp - This process's GPU and its memory
//----------------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "Device.h"
#include "CudaBackend.h"

#include <cstdio>
#include <cstdlib>
#include <mutex>

using namespace piper::cuda;

namespace {

int localRank() {
  for (const char *name : {"PIPER_RT_CUDA_DEVICE", "OMPI_COMM_WORLD_LOCAL_RANK",
                           "MPI_LOCALRANKID", "SLURM_LOCALID"})
    if (const char *v = std::getenv(name))
      if (*v)
        return std::atoi(v);
  return 0;
}

} // namespace

const Process *piper::cuda::process(std::string &why) {
  static Process p;
  static std::string error;
  static std::once_flag once;
  std::call_once(once, [] {
    p.d = driver(error);
    if (!p.d)
      return;
    const Driver &d = *p.d;
    int count = 0;
    d.cuDeviceGetCount(&count);
    p.ordinal = localRank() % count;
    char name[256] = {0};
    CUresult r = d.cuDeviceGet(&p.device, p.ordinal);
    if (r == CUDA_SUCCESS)
      r = d.cuDevicePrimaryCtxRetain(&p.primary, p.device);
    if (r != CUDA_SUCCESS) {
      error = "no CUDA device: device " + std::to_string(p.ordinal) +
              " cannot be opened: " + describe(d, r);
      p.d = nullptr;
      return;
    }
    d.cuDeviceGetName(name, sizeof(name) - 1, p.device);
    p.name = name;
    d.cuDeviceGetAttribute(
        &p.major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, p.device);
    d.cuDeviceGetAttribute(&p.sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
                           p.device);
  });
  why = error;
  if (!p.d)
    return nullptr;
  // Each thread that calls the driver needs the context current.
  thread_local bool current = false;
  if (!current) {
    p.d->cuCtxSetCurrent(p.primary);
    current = true;
  }
  return &p;
}

const Process &piper::cuda::processOrDie(const char *caller) {
  std::string why;
  const Process *p = process(why);
  if (!p) {
    std::fprintf(stderr, "piper-rt: %s: %s\n", caller, why.c_str());
    std::exit(1);
  }
  return *p;
}

//===----------------------------------------------------------------------===//
// The allocator's device
//===----------------------------------------------------------------------===//

CudaMemory::~CudaMemory() {
  for (CUevent e : spare)
    d.cuEventDestroy(e);
}

void *CudaMemory::allocate(size_t bytes) {
  CUdeviceptr p = 0;
  if (d.cuMemAlloc(&p, bytes) != CUDA_SUCCESS)
    return nullptr;
  return reinterpret_cast<void *>(p);
}

void CudaMemory::release(void *data) {
  d.cuMemFree(reinterpret_cast<CUdeviceptr>(data));
}

void *CudaMemory::mark(void *stream) {
  CUevent e = nullptr;
  if (!spare.empty()) {
    e = spare.back();
    spare.pop_back();
  } else if (d.cuEventCreate(&e, CU_EVENT_DISABLE_TIMING) != CUDA_SUCCESS) {
    // No event to mark with: wait instead, so that "no marker" keeps
    // meaning "complete" (CachingAllocator.h).
    d.cuStreamSynchronize(static_cast<CUstream>(stream));
    return nullptr;
  }
  d.cuEventRecord(e, static_cast<CUstream>(stream));
  return e;
}

bool CudaMemory::done(void *marker) {
  return d.cuEventQuery(static_cast<CUevent>(marker)) == CUDA_SUCCESS;
}

void CudaMemory::wait(void *marker) {
  d.cuEventSynchronize(static_cast<CUevent>(marker));
}

void CudaMemory::forget(void *marker) {
  spare.push_back(static_cast<CUevent>(marker));
}
