//===- GpuABIHeaderTest.c - The GPU plan ABI from C -----------------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Compiled as C: plan_abi_gpu.h must be valid C with C linkage, and every
// symbol it declares must be defined in PiperPlanRuntimeCUDA (else the link
// of PiperCudaNoDeviceTests fails).
//
//===----------------------------------------------------------------------===//

#include "piper-rt/plan_abi_gpu.h"

/// The number of GPU ABI symbols (CudaNoDeviceTest checks it).
int piperGpuTestCountSymbols(void) {
  void (*const functions[])(void) = {
      (void (*)(void))mgpuModuleLoad,
      (void (*)(void))mgpuModuleLoadJIT,
      (void (*)(void))mgpuModuleUnload,
      (void (*)(void))mgpuModuleGetFunction,
      (void (*)(void))mgpuLaunchKernel,
      (void (*)(void))mgpuLaunchClusterKernel,
      (void (*)(void))mgpuStreamCreate,
      (void (*)(void))mgpuStreamDestroy,
      (void (*)(void))mgpuStreamSynchronize,
      (void (*)(void))mgpuStreamWaitEvent,
      (void (*)(void))mgpuEventCreate,
      (void (*)(void))mgpuEventDestroy,
      (void (*)(void))mgpuEventSynchronize,
      (void (*)(void))mgpuEventRecord,
      (void (*)(void))mgpuMemAlloc,
      (void (*)(void))mgpuMemFree,
      (void (*)(void))mgpuMemcpy,
      (void (*)(void))mgpuMemset32,
      (void (*)(void))mgpuMemset16,
      (void (*)(void))mgpuSetDefaultDevice,
      (void (*)(void))piper_gpu_gemm,
      (void (*)(void))piper_gpu_probe,
      (void (*)(void))piper_gpu_device_info,
      (void (*)(void))piper_plan_session_device_alloc,
      (void (*)(void))piper_plan_session_device_free,
      (void (*)(void))piper_plan_session_copy_to_device,
      (void (*)(void))piper_plan_session_copy_to_host,
      (void (*)(void))piper_plan_session_device_stats,
      (void (*)(void))piper_plan_session_set_sm_shares,
      (void (*)(void))piper_plan_session_use_partition,
  };
  int n = 0;
  for (unsigned i = 0; i < sizeof(functions) / sizeof(functions[0]); ++i)
    n += functions[i] != 0;
  return n;
}
