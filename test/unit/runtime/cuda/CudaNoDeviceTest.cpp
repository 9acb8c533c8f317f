//===- CudaNoDeviceTest.cpp - The CUDA backend where there is no GPU ------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The machine this runs on has no GPU and no libcuda.so.1. Each case that
// loads the driver runs in a forked child (a death test), because the driver
// is loaded once per process. The installed NCCL and cuBLAS
// (PIPER_RT_NCCL, PIPER_RT_CUBLAS point at the CUDA lib directory) must open
// and resolve every entry point the backend uses; so must the CUDA 13
// driver stub (every versioned driver name), whose cuInit then fails.
//
//===----------------------------------------------------------------------===//

#include "../../../../runtime/backends/cuda/Api.h"
#include "../../../../runtime/lib/plan/Backend.h"
#include "piper-rt/plan_abi_gpu.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <type_traits>

extern "C" int piperGpuTestCountSymbols(void);

using namespace piper::cuda;

namespace {

/// Points the loader at the installed NCCL, cuBLAS and driver stub
/// (PIPER_CUDA_LIB_DIR, from CMake) unless the environment already does.
struct InstalledLibraries : testing::Environment {
  void SetUp() override {
    std::string dir = PIPER_CUDA_LIB_DIR;
    setenv("PIPER_RT_NCCL", (dir + "/libnccl.so.2").c_str(), 0);
    setenv("PIPER_RT_CUBLAS", (dir + "/libcublas.so.13").c_str(), 0);
    setenv("PIPER_TEST_CUDA_STUB", (dir + "/stubs/libcuda.so").c_str(), 0);
  }
};
testing::Environment *const installed =
    testing::AddGlobalTestEnvironment(new InstalledLibraries);

/// In a child: loads the driver and exits 0 if it loaded, else prints why
/// and exits 1.
[[noreturn]] void loadDriver() {
  std::string why;
  const Driver *d = driver(why);
  std::fprintf(stderr, "%s\n", why.c_str());
  std::exit(d ? 0 : 1);
}

TEST(CudaNoDevice, NoDriverLibrary) {
  EXPECT_EXIT(
      {
        unsetenv("PIPER_RT_CUDA_DRIVER");
        loadDriver();
      },
      testing::ExitedWithCode(1),
      "^no CUDA device: libcuda.so.1 cannot be loaded \\(libcuda.so.1: "
      "cannot open shared object file");
}

TEST(CudaNoDevice, StubDriverResolvesEveryEntryPoint) {
  const char *stub = std::getenv("PIPER_TEST_CUDA_STUB");
  if (!stub)
    GTEST_SKIP() << "PIPER_TEST_CUDA_STUB is not set";
  // Every required name resolves (else "is too old (symbol ...)"), and the
  // stub's cuInit fails: CUDA_ERROR_STUB_LIBRARY is 34.
  EXPECT_EXIT(
      {
        setenv("PIPER_RT_CUDA_DRIVER", stub, 1);
        loadDriver();
      },
      testing::ExitedWithCode(1),
      "^no CUDA device: cuInit failed: CUDA error 34");
}

TEST(CudaNoDevice, ProbeAndBackend) {
  EXPECT_EXIT(
      {
        unsetenv("PIPER_RT_CUDA_DRIVER");
        bool probe = piper_gpu_probe() == PIPER_RT_ERROR_UNAVAILABLE;
        std::string probeText = piper_rt_last_error();
        char name[16] = "unchanged";
        bool info =
            piper_gpu_device_info(name, sizeof(name), nullptr, nullptr) ==
            PIPER_RT_ERROR_UNAVAILABLE;
        // The backend refuses before it looks at the context.
        piper::plan::StepError errors;
        bool none = !piper::plan::makeBackend(nullptr, errors);
        std::fprintf(stderr, "%d%d%d %s | %s\n", probe, info, none,
                     std::string(name).c_str(), probeText.c_str());
        std::exit(0);
      },
      testing::ExitedWithCode(0),
      "111 unchanged \\| piper-rt: unavailable: no CUDA device: libcuda.so.1 "
      "cannot be loaded");
}

TEST(CudaNoDevice, PlanCallsExitWithOneLine) {
  // A plan's module constructor (mgpuModuleLoad) where there is no GPU.
  EXPECT_EXIT(mgpuModuleLoad(nullptr, 0), testing::ExitedWithCode(1),
              "^piper-rt: mgpuModuleLoad: no CUDA device: libcuda.so.1 "
              "cannot be loaded");
  EXPECT_EXIT(mgpuStreamCreate(), testing::ExitedWithCode(1),
              "^piper-rt: mgpuStreamCreate: no CUDA device");
  EXPECT_EXIT(piper_gpu_gemm(0, 0, 0, 0, 1, 1, 1, 1, 1.0, nullptr, 1, 0,
                             nullptr, 1, 0, 0.0, nullptr, 1, 0),
              testing::ExitedWithCode(1),
              "^piper-rt: piper_gpu_gemm: no CUDA device");
}

TEST(CudaNoDevice, SessionArgumentChecks) {
  // A session without a runtime context has no backend: the GPU calls say
  // so instead of touching a device.
  piper_plan_session session = nullptr;
  ASSERT_EQ(piper_plan_session_create(nullptr, &session), PIPER_RT_OK);
  void *data = nullptr;
  EXPECT_EQ(piper_plan_session_device_alloc(session, 64, &data),
            PIPER_RT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(piper_rt_last_error())
                .find("piper_plan_session_device_alloc: the session has no "
                      "CUDA backend"),
            std::string::npos)
      << piper_rt_last_error();
  EXPECT_EQ(piper_plan_session_set_sm_shares(session, 0.5, 0.4),
            PIPER_RT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(piper_plan_session_use_partition(nullptr, 1),
            PIPER_RT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(piper_plan_session_copy_to_host(session, &data, nullptr, 8),
            PIPER_RT_ERROR_INVALID_ARGUMENT);
  piper_plan_buffer_stats stats;
  EXPECT_EQ(piper_plan_session_device_stats(session, &stats),
            PIPER_RT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(piper_plan_session_destroy(session), PIPER_RT_OK);
}

// The declarations MLIR 22's gpu-to-llvm and its LLVM IR translation emit
// (mlir-opt --gpu-to-llvm | mlir-translate --mlir-to-llvmir, LLVM 22.1.8):
//   ptr @mgpuModuleLoad(ptr, i64)          ptr @mgpuModuleLoadJIT(ptr, i32)
//   void @mgpuModuleUnload(ptr)            ptr @mgpuModuleGetFunction(ptr, ptr)
//   void @mgpuLaunchKernel(ptr, i64 x6, i32, ptr, ptr, ptr, i64)
//   void @mgpuLaunchClusterKernel(ptr, i64 x9, i32, ptr, ptr, ptr)
//   ptr @mgpuStreamCreate()   void @mgpuStreamDestroy/Synchronize(ptr)
//   void @mgpuStreamWaitEvent(ptr, ptr)    ptr @mgpuEventCreate()
//   void @mgpuEventDestroy/Synchronize(ptr)  void @mgpuEventRecord(ptr, ptr)
//   ptr @mgpuMemAlloc(i64, ptr, i8)        void @mgpuMemFree(ptr, ptr)
//   void @mgpuMemcpy(ptr, ptr, i64, ptr)   void @mgpuMemset32(ptr, i32, i64,
//   ptr) void @mgpuMemset16(ptr, i16, i64, ptr) void @mgpuSetDefaultDevice(i32)
// The header's C types must lower to exactly these on x86-64.
template <typename F, typename G> constexpr bool same = std::is_same_v<F, G>;
static_assert(same<decltype(&mgpuModuleLoad), void *(*)(void *, uint64_t)>);
static_assert(same<decltype(&mgpuModuleLoadJIT), void *(*)(void *, int32_t)>);
static_assert(same<decltype(&mgpuModuleUnload), void (*)(void *)>);
static_assert(
    same<decltype(&mgpuModuleGetFunction), void *(*)(void *, const char *)>);
static_assert(
    same<decltype(&mgpuLaunchKernel),
         void (*)(void *, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t,
                  intptr_t, int32_t, void *, void **, void **, size_t)>);
static_assert(same<decltype(&mgpuLaunchClusterKernel),
                   void (*)(void *, intptr_t, intptr_t, intptr_t, intptr_t,
                            intptr_t, intptr_t, intptr_t, intptr_t, intptr_t,
                            int32_t, void *, void **, void **)>);
static_assert(same<decltype(&mgpuStreamCreate), void *(*)()>);
static_assert(same<decltype(&mgpuStreamWaitEvent), void (*)(void *, void *)>);
static_assert(same<decltype(&mgpuEventRecord), void (*)(void *, void *)>);
static_assert(same<decltype(&mgpuMemAlloc), void *(*)(uint64_t, void *, bool)>);
static_assert(same<decltype(&mgpuMemFree), void (*)(void *, void *)>);
static_assert(
    same<decltype(&mgpuMemcpy), void (*)(void *, void *, size_t, void *)>);
static_assert(
    same<decltype(&mgpuMemset32), void (*)(void *, uint32_t, size_t, void *)>);
static_assert(
    same<decltype(&mgpuMemset16), void (*)(void *, uint16_t, size_t, void *)>);
static_assert(same<decltype(&mgpuSetDefaultDevice), void (*)(int32_t)>);
static_assert(
    same<decltype(&piper_gpu_gemm),
         void (*)(int32_t, int32_t, int32_t, int32_t, int64_t, int64_t, int64_t,
                  int64_t, double, const void *, int64_t, int64_t, const void *,
                  int64_t, int64_t, double, void *, int64_t, int64_t)>);

TEST(CudaAbi, EverySymbolIsDefined) {
  // GpuABIHeaderTest.c (C) takes the address of each of the 30 symbols.
  EXPECT_EQ(piperGpuTestCountSymbols(), 30);
}

TEST(CudaInstalledLibraries, NcclAndCublasResolve) {
  if (!std::getenv("PIPER_RT_NCCL") || !std::getenv("PIPER_RT_CUBLAS"))
    GTEST_SKIP() << "PIPER_RT_NCCL/PIPER_RT_CUBLAS are not set";
  std::string why;
  const Nccl *n = nccl(why);
  ASSERT_NE(n, nullptr) << why;
  int version = 0;
  ASSERT_EQ(n->ncclGetVersion(&version), ncclSuccess);
  EXPECT_GE(version, 22800); // 2.28, whose ncclConfig_t has the CTA limits
  // Needs no GPU: the id is a host bootstrap address.
  ncclUniqueId id;
  EXPECT_EQ(n->ncclGetUniqueId(&id), ncclSuccess);
  const Cublas *b = cublas(why);
  ASSERT_NE(b, nullptr) << why;
  // Without a driver, cublasCreate fails cleanly rather than crashing.
  cublasHandle_t h = nullptr;
  EXPECT_NE(b->cublasCreate_v2(&h), CUBLAS_STATUS_SUCCESS);
}

} // namespace
