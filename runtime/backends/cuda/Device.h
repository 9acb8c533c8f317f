//===- Device.h - This process's GPU ----------------------------*- C++ -*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// One GPU per process, chosen before any session exists: a plan's kernels
// are loaded by its object's constructors (MLIR's gpu-to-llvm puts
// mgpuModuleLoad in llvm.global_ctors), i.e. at dlopen, so the device and
// its primary context are process-wide. The device is PIPER_RT_CUDA_DEVICE
// if set, else the node-local rank (OMPI_COMM_WORLD_LOCAL_RANK,
// MPI_LOCALRANKID, SLURM_LOCALID) modulo the GPUs the driver sees.
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_RT_BACKENDS_CUDA_DEVICE_H
#define PIPER_RT_BACKENDS_CUDA_DEVICE_H

#include "Api.h"

#include <string>

namespace piper::cuda {

struct Process {
  const Driver *d = nullptr;
  int ordinal = 0;
  CUdevice device = 0;
  CUcontext primary = nullptr;
  int major = 0, sms = 0;
  std::string name;
};

/// The process's device with its primary context current on the calling
/// thread, or null with `why` ("no CUDA device: ...").
const Process *process(std::string &why);

/// The process's device, or a one-line message and exit(1): for the plan's
/// own calls (mgpu*), which have no way to report an error.
const Process &processOrDie(const char *caller);

} // namespace piper::cuda

#endif // PIPER_RT_BACKENDS_CUDA_DEVICE_H
