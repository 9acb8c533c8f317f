//===- GpuBench.cpp - GPU micro-benchmarks of the CUDA backend ------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Runs only on a GPU (scripts/gpu-check's bundle): prints "key value" lines
// that the bundle's driver turns into its table.
//   piper-gpu-bench gemm               bf16 GEMM TFLOP/s through
//                                      piper_gpu_gemm and through cuBLAS
//   piper-gpu-bench hbm CUBIN          copy GB/s of the bench's elementwise
//                                      kernel vs a device memcpy
//   piper-gpu-bench smpart CUBIN       a GEMM on N-k SMs beside a copy on k
//                                      SMs (green contexts) against each
//                                      alone and both unpartitioned
// Exits 77 with "SKIPPED: ..." where there is no GPU.
//
//===----------------------------------------------------------------------===//

#include "../../runtime/backends/cuda/Api.h"
#include "piper-rt/plan_abi_gpu.h"

#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

using namespace piper::cuda;

namespace {

const Driver *d = nullptr;

void check(CUresult r, const char *what) {
  if (r != CUDA_SUCCESS) {
    std::printf("FAIL: %s: %s\n", what, describe(*d, r).c_str());
    std::exit(1);
  }
}

/// Seconds per call of `body` (enqueues work), after a warm-up call.
double timed(int repeats, const std::function<void()> &body) {
  body();
  check(d->cuCtxSynchronize(), "synchronize");
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < repeats; ++i)
    body();
  check(d->cuCtxSynchronize(), "synchronize");
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
             .count() /
         repeats;
}

CUfunction loadKernel(const std::string &path, const std::string &name) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  std::string image = bytes.str();
  if (image.empty()) {
    std::printf("FAIL: cannot read %s\n", path.c_str());
    std::exit(1);
  }
  CUmodule module = nullptr;
  CUfunction f = nullptr;
  check(d->cuModuleLoadData(&module, image.data()), "module load");
  check(d->cuModuleGetFunction(&f, module, name.c_str()), "kernel lookup");
  return f;
}

void *deviceAlloc(size_t bytes) {
  void *p = nullptr;
  if (piper_plan_session_device_alloc(piper_plan_session_current(), bytes,
                                      &p) != PIPER_RT_OK) {
    std::printf("FAIL: %s\n", piper_rt_last_error());
    std::exit(1);
  }
  return p;
}

void launchCopy(CUfunction f, void *in, void *out, size_t bytes, int blocks,
                CUstream stream) {
  unsigned long long n = bytes / 16;
  void *params[] = {&in, &out, &n};
  check(
      d->cuLaunchKernel(f, blocks, 1, 1, 256, 1, 1, 0, stream, params, nullptr),
      "copy launch");
}

constexpr int64_t kGemm = 8192;
double gemmFlops() { return 2.0 * kGemm * kGemm * kGemm; }

struct Gemm {
  void *a, *b, *c;
  Gemm() {
    size_t bytes = kGemm * kGemm * 2;
    a = deviceAlloc(bytes);
    b = deviceAlloc(bytes);
    c = deviceAlloc(bytes * 2);
    CUstream s = static_cast<CUstream>(mgpuStreamCreate());
    d->cuMemsetD16Async(reinterpret_cast<CUdeviceptr>(a), 0x3c00, bytes / 2, s);
    d->cuMemsetD16Async(reinterpret_cast<CUdeviceptr>(b), 0x3c00, bytes / 2, s);
  }
  /// One bf16 GEMM with f32 output through the plan ABI's entry point.
  void run() {
    piper_gpu_gemm(PIPER_GPU_BF16, PIPER_RT_F32, 0, 0, 1, kGemm, kGemm, kGemm,
                   1.0, a, kGemm, 0, b, kGemm, 0, 0.0, c, kGemm, 0);
  }
};

int gemm() {
  Gemm g;
  double viaRuntime = timed(10, [&] { g.run(); });
  std::string why;
  const Cublas *cb = cublas(why);
  cublasHandle_t h = nullptr;
  cb->cublasCreate_v2(&h);
  cb->cublasSetStream_v2(h, static_cast<CUstream>(mgpuStreamCreate()));
  float one = 1, zero = 0;
  double direct = timed(10, [&] {
    cb->cublasGemmStridedBatchedEx_64(
        h, CUBLAS_OP_N, CUBLAS_OP_N, kGemm, kGemm, kGemm, &one, g.b,
        CUDA_R_16BF, kGemm, 0, g.a, CUDA_R_16BF, kGemm, 0, &zero, g.c,
        CUDA_R_32F, kGemm, 0, 1, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
  });
  std::printf("gemm_tflops_runtime %.1f\n", gemmFlops() / viaRuntime * 1e-12);
  std::printf("gemm_tflops_cublas %.1f\n", gemmFlops() / direct * 1e-12);
  return 0;
}

int hbm(const std::string &cubin) {
  CUfunction f = loadKernel(cubin, "piper_bench_copy");
  size_t bytes = size_t(2) << 30;
  void *in = deviceAlloc(bytes), *out = deviceAlloc(bytes);
  CUstream s = static_cast<CUstream>(mgpuStreamCreate());
  int sms = 0;
  piper_gpu_device_info(nullptr, 0, &sms, nullptr);
  double kernel = timed(10, [&] { launchCopy(f, in, out, bytes, sms * 8, s); });
  double copy = timed(10, [&] {
    check(d->cuMemcpyAsync(reinterpret_cast<CUdeviceptr>(out),
                           reinterpret_cast<CUdeviceptr>(in), bytes, s),
          "memcpy");
  });
  // A copy reads and writes every byte.
  std::printf("hbm_gbs_kernel %.0f\n", 2.0 * bytes / kernel * 1e-9);
  std::printf("hbm_gbs_memcpy %.0f\n", 2.0 * bytes / copy * 1e-9);
  return 0;
}

int smpart(const std::string &cubin) {
  CUfunction f = loadKernel(cubin, "piper_bench_copy");
  piper_plan_session s = piper_plan_session_current();
  int sms = 0;
  piper_gpu_device_info(nullptr, 0, &sms, nullptr);
  // k = 16 SMs for the copy, 8 left to communication, the rest the GEMM's.
  int k = 16, gemmSms = (sms - k - 8) / 8 * 8;
  Gemm g;
  size_t bytes = size_t(1) << 30;
  void *in = deviceAlloc(bytes), *out = deviceAlloc(bytes);
  CUstream side = nullptr;
  check(d->cuStreamCreateWithPriority(&side, CU_STREAM_NON_BLOCKING, 0),
        "stream");
  auto both = [&](CUstream copyStream, int copyBlocks) {
    for (int i = 0; i < 4; ++i)
      g.run();
    launchCopy(f, in, out, bytes, copyBlocks, copyStream);
  };
  // Unpartitioned: the GEMM on the compute stream, the copy beside it.
  double gemmAlone = timed(5, [&] {
    for (int i = 0; i < 4; ++i)
      g.run();
  });
  double copyAlone =
      timed(5, [&] { launchCopy(f, in, out, bytes, k * 8, side); });
  double shared = timed(5, [&] { both(side, k * 8); });
  if (piper_plan_session_set_sm_shares(s, double(gemmSms) / sms,
                                       double(k) / sms) != PIPER_RT_OK ||
      piper_plan_session_use_partition(s, 2) != PIPER_RT_OK) {
    std::printf("FAIL: %s\n", piper_rt_last_error());
    return 1;
  }
  CUstream copyStream = static_cast<CUstream>(mgpuStreamCreate());
  piper_plan_session_use_partition(s, 1);
  double gemmPart = timed(5, [&] {
    for (int i = 0; i < 4; ++i)
      g.run();
  });
  double copyPart =
      timed(5, [&] { launchCopy(f, in, out, bytes, k * 8, copyStream); });
  double partitioned = timed(5, [&] { both(copyStream, k * 8); });
  // Without green contexts both partitions are the device's stream.
  bool isPartitioned = copyStream != static_cast<CUstream>(mgpuStreamCreate());
  std::printf("smpart_sms gemm=%d copy=%d of %d\n", gemmSms, k, sms);
  std::printf("smpart_green_contexts %d\n", isPartitioned ? 1 : 0);
  std::printf("smpart_ms gemm_alone=%.2f copy_alone=%.2f both=%.2f\n",
              gemmAlone * 1e3, copyAlone * 1e3, shared * 1e3);
  std::printf("smpart_ms gemm_part=%.2f copy_part=%.2f both_part=%.2f\n",
              gemmPart * 1e3, copyPart * 1e3, partitioned * 1e3);
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  // The bundle's MPI, relocated (scripts/gpu-check-run.sh): a singleton
  // init and finalize, no GPU needed.
  if (argc > 1 && std::string(argv[1]) == "mpi") {
    piper_rt_context context = nullptr;
    if (piper_rt_init(&argc, &argv, &context) != PIPER_RT_OK) {
      std::printf("FAIL: %s\n", piper_rt_last_error());
      return 1;
    }
    piper_rt_finalize(context);
    std::printf("mpi_singleton ok\n");
    return 0;
  }
  if (piper_gpu_probe() != PIPER_RT_OK) {
    std::printf("SKIPPED: %s\n", piper_rt_last_error());
    return 77;
  }
  std::string why;
  d = driver(why);
  std::string mode = argc > 1 ? argv[1] : "";
  piper_rt_context context = nullptr;
  piper_rt_mesh mesh = nullptr;
  piper_plan_session s = nullptr;
  const char *axis = "dp";
  int64_t one = 1;
  if (piper_rt_init(&argc, &argv, &context) != PIPER_RT_OK ||
      piper_rt_mesh_create(1, &axis, &one, &mesh) != PIPER_RT_OK ||
      piper_rt_set_mesh(context, mesh) != PIPER_RT_OK ||
      piper_plan_session_create(context, &s) != PIPER_RT_OK) {
    std::printf("FAIL: setup: %s\n", piper_rt_last_error());
    return 1;
  }
  piper_plan_session_activate(s);
  int status = 2;
  if (mode == "gemm")
    status = gemm();
  else if (mode == "hbm" && argc > 2)
    status = hbm(argv[2]);
  else if (mode == "smpart" && argc > 2)
    status = smpart(argv[2]);
  else
    std::printf("usage: piper-gpu-bench gemm | hbm CUBIN | smpart CUBIN\n");
  if (piper_plan_session_finish_step(s) != PIPER_RT_OK) {
    std::printf("FAIL: %s\n", piper_plan_session_step_error(s));
    status = 1;
  }
  piper_plan_session_destroy(s);
  piper_rt_mesh_destroy(mesh);
  piper_rt_finalize(context);
  return status;
}
