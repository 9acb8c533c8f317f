/*===- plan_abi_gpu.h - What GPU plans call, beside plan_abi.h ----*- C -*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// A plan compiled with --target=cuda leaves undefined, besides plan_abi.h's
// Part 1 (communication, events, trace, learning rate, clipping: the same
// names and semantics, with device pointers inside the memref views), the
// symbols below. PiperPlanRuntimeCUDA implements them over the CUDA driver,
// cuBLAS and NCCL, all loaded with dlopen (runtime/backends/cuda/Api.h), and
// piper-run-cuda exports them to the plans' dlopen like the CPU ABI.
//
// Part 1a: the functions MLIR 22's gpu-to-llvm emits, with its exact
// signatures (checked against mlir-opt --gpu-to-llvm and mlir-translate
// output; upstream's CudaRuntimeWrappers.cpp is not packaged). Semantics in
// Piper:
// - mgpuModuleLoad runs from the plan object's constructors, at dlopen,
//   before any session: it uses the process's device (PIPER_RT_CUDA_DEVICE
//   or the node-local rank modulo the GPUs) and prints one line and exits
//   where there is no CUDA device.
// - mgpuStreamCreate returns the current session's compute stream (it makes
//   no stream) and mgpuStreamDestroy of that stream does nothing: kernels,
//   GEMMs, copies and the plan's collectives are ordered on it.
// - mgpuMemAlloc/mgpuMemFree use the session's stream-ordered caching
//   allocator (runtime/backends/cuda/CachingAllocator.h): a free is ordered
//   after the work enqueued on its stream so far (MLIR frees before it
//   synchronises), and no step after the first calls cuMemAlloc.
//   isHostShared (gpu.alloc host_shared) is not supported: one line, exit.
// - mgpuStreamSynchronize and mgpuEventSynchronize first post this rank's
//   staged sends, then wait with the context's timeout.
// - A failing launch, copy or memset records the step's error (read by
//   piper_plan_session_finish_step), as the communication calls do; running
//   out of device memory, freeing a foreign pointer or a call without a
//   current session prints one line and exits.
//
// Part 1b: one GEMM entry point (piper_gpu_gemm), on the compute stream.
//
// Part 2: what a driver needs beside plan_abi.h's sessions to run a GPU
// plan: the device probe, device buffers and copies for inputs, parameters
// and results, and the SM partitions of an overlapped pair.
//
//===----------------------------------------------------------------------===*/

#ifndef PIPER_RT_PLAN_ABI_GPU_H
#define PIPER_RT_PLAN_ABI_GPU_H

#include "piper-rt/plan_abi.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*===----------------------------------------------------------------------===//
// Part 1a: MLIR 22's gpu-to-llvm runtime calls
//===----------------------------------------------------------------------===*/

void *mgpuModuleLoad(void *data, uint64_t size);
/* PTX (a gpu.object in assembly format), compiled by the driver's JIT. */
void *mgpuModuleLoadJIT(void *data, int32_t opt_level);
void mgpuModuleUnload(void *module);
void *mgpuModuleGetFunction(void *module, const char *name);
void mgpuLaunchKernel(void *function, intptr_t grid_x, intptr_t grid_y,
                      intptr_t grid_z, intptr_t block_x, intptr_t block_y,
                      intptr_t block_z, int32_t smem, void *stream,
                      void **params, void **extra, size_t params_count);
void mgpuLaunchClusterKernel(void *function, intptr_t cluster_x,
                             intptr_t cluster_y, intptr_t cluster_z,
                             intptr_t grid_x, intptr_t grid_y, intptr_t grid_z,
                             intptr_t block_x, intptr_t block_y,
                             intptr_t block_z, int32_t smem, void *stream,
                             void **params, void **extra);
void *mgpuStreamCreate(void);
void mgpuStreamDestroy(void *stream);
void mgpuStreamSynchronize(void *stream);
void mgpuStreamWaitEvent(void *stream, void *event);
void *mgpuEventCreate(void);
void mgpuEventDestroy(void *event);
void mgpuEventSynchronize(void *event);
void mgpuEventRecord(void *event, void *stream);
void *mgpuMemAlloc(uint64_t size_bytes, void *stream, bool is_host_shared);
void mgpuMemFree(void *pointer, void *stream);
void mgpuMemcpy(void *dst, void *src, size_t size_bytes, void *stream);
void mgpuMemset32(void *dst, uint32_t value, size_t count, void *stream);
void mgpuMemset16(void *dst, uint16_t value, size_t count, void *stream);
/* One rank per GPU: a device other than the process's is an error. */
void mgpuSetDefaultDevice(int32_t device);

/*===----------------------------------------------------------------------===//
// Part 1b: GEMM
//===----------------------------------------------------------------------===*/

/* bf16 in piper_gpu_gemm's dtypes: the piper_rt_dtype value after I64. */
#define PIPER_GPU_BF16 3

/* Row-major strided-batched C[i] = alpha op(A[i]) op(B[i]) + beta C[i] for
   i < batch, op transposing when trans_* != 0, A[i] at a + i stride_a
   elements (likewise B, C). a_dtype and c_dtype are PIPER_RT_F32,
   PIPER_RT_F64 or PIPER_GPU_BF16: f32 -> f32, bf16 -> bf16 or f32 (f32
   accumulation; no TF32), f64 -> f64. cuBLAS's
   cublasGemmStridedBatchedEx on the compute stream. Invalid arguments (a
   leading dimension under the row length, a dtype pair outside those)
   record the step's error, naming the argument, and launch nothing. */
void piper_gpu_gemm(int32_t a_dtype, int32_t c_dtype, int32_t trans_a,
                    int32_t trans_b, int64_t batch, int64_t m, int64_t n,
                    int64_t k, double alpha, const void *a, int64_t lda,
                    int64_t stride_a, const void *b, int64_t ldb,
                    int64_t stride_b, double beta, void *c, int64_t ldc,
                    int64_t stride_c);

/*===----------------------------------------------------------------------===//
// Part 2: the driver's side
//===----------------------------------------------------------------------===*/

/* PIPER_RT_OK if this process has a CUDA device; else UNAVAILABLE with the
   last error "no CUDA device: <why>" (no libcuda.so.1, cuInit failing, no
   GPU). Loads the driver on first call. */
piper_rt_status piper_gpu_probe(void);
/* The process's device: name, SM count and compute capability major. */
piper_rt_status piper_gpu_device_info(char *name, size_t capacity, int *sms,
                                      int *major);

/* Device buffers of the session (its caching allocator) and blocking copies
   on its compute stream, for inputs, parameters and results. */
piper_rt_status piper_plan_session_device_alloc(piper_plan_session session,
                                                size_t bytes, void **data);
piper_rt_status piper_plan_session_device_free(piper_plan_session session,
                                               void *data);
piper_rt_status piper_plan_session_copy_to_device(piper_plan_session session,
                                                  void *device,
                                                  const void *host,
                                                  size_t bytes);
piper_rt_status piper_plan_session_copy_to_host(piper_plan_session session,
                                                void *host, const void *device,
                                                size_t bytes);
piper_rt_status piper_plan_session_device_stats(piper_plan_session session,
                                                piper_plan_buffer_stats *stats);

/* SM partitioning of an overlapped pair (`overlap ... sm_shares [a, b]`):
   green contexts of about a and b of the SMs for the pair's compute streams,
   NCCL CTA limits for the communicators added afterwards (the rest of the
   SMs). Call before piper_plan_session_add_communicator. Where the driver
   lacks green contexts or a share is under one SM group, prints one line
   and leaves the device unpartitioned (still PIPER_RT_OK).
   PIPER_RT_SM_SHARES="a,b" sets the same at session creation. */
piper_rt_status piper_plan_session_set_sm_shares(piper_plan_session session,
                                                 double first, double second);
/* Makes partition `which` (1 or 2; 0: the whole device) the calling
   session's compute stream; it continues after the previous one. */
piper_rt_status piper_plan_session_use_partition(piper_plan_session session,
                                                 int which);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* PIPER_RT_PLAN_ABI_GPU_H */
