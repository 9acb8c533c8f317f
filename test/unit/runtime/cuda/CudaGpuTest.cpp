//===- CudaGpuTest.cpp - The CUDA backend on a GPU (one rank) -------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Labelled "gpu" in ctest. Where piper_gpu_probe finds no device it prints
// "SKIPPED: ..." and exits 77, which ctest reports as skipped (never as
// passed). On a GPU, through the plan ABI as a plan calls it: the caching
// allocator (mgpuMemAlloc/Free, reuse in the second round), a one-rank NCCL
// all-reduce with a scale and a self send/recv, strided (2-D slice) inputs,
// and piper_gpu_gemm in f32, bf16 -> f32 and f64 against a host GEMM. Prints
// "PASS" and the figures; scripts/gpu-check runs it as row (4).
//
//===----------------------------------------------------------------------===//

#include "piper-rt/plan_abi_gpu.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace {

int failures = 0;
void expect(bool ok, const std::string &what) {
  if (!ok) {
    std::printf("FAIL: %s\n", what.c_str());
    ++failures;
  }
}

/// A ranked memref descriptor of rank 2 (what the plan passes).
struct Desc2 {
  void *allocated, *aligned;
  int64_t offset, sizes[2], strides[2];
};
Desc2 desc(void *data, int64_t rows, int64_t cols, int64_t ld,
           int64_t offset = 0) {
  return {data, data, offset, {rows, cols}, {ld, 1}};
}

std::vector<float> download(piper_plan_session s, void *d, size_t n) {
  std::vector<float> h(n);
  piper_plan_session_copy_to_host(s, h.data(), d, n * 4);
  return h;
}

void *upload(piper_plan_session s, const std::vector<float> &h) {
  void *d = mgpuMemAlloc(h.size() * 4, nullptr, false);
  piper_plan_session_copy_to_device(s, d, h.data(), h.size() * 4);
  return d;
}

uint16_t toBf16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return static_cast<uint16_t>((u + 0x7FFF + ((u >> 16) & 1)) >> 16);
}
float fromBf16(uint16_t b) {
  uint32_t u = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

void communication(piper_plan_session s) {
  // A 6 x 8 buffer; its [2:6, 1:5] slice (ld 8) is the strided input.
  std::vector<float> host(48);
  for (size_t i = 0; i < host.size(); ++i)
    host[i] = static_cast<float>(i);
  for (int round = 0; round < 2; ++round) {
    void *src = upload(s, host);
    void *dst = mgpuMemAlloc(16 * 4, nullptr, false);
    Desc2 in = desc(src, 4, 4, 8, 2 * 8 + 1), out = desc(dst, 4, 4, 4);
    piper_comm_iall_reduce_f32(2, &in, 2, &out, 0, 0.5);
    piper_comm_record(1, 0);
    piper_comm_wait(1, 0);
    piper_comm_sync_all();
    std::vector<float> got = download(s, dst, 16);
    for (int r = 0; r < 4; ++r)
      for (int c = 0; c < 4; ++c)
        expect(got[r * 4 + c] == 0.5f * host[(r + 2) * 8 + c + 1],
               "all_reduce element " + std::to_string(r * 4 + c));
    // Self send/recv: posted together in one NCCL group.
    void *back = mgpuMemAlloc(16 * 4, nullptr, false);
    Desc2 recvd = desc(back, 4, 4, 4);
    piper_comm_send_f32(2, &in, 0, 7);
    piper_comm_recv_f32(2, &recvd, 0, 7);
    got = download(s, back, 16);
    for (int r = 0; r < 4; ++r)
      for (int c = 0; c < 4; ++c)
        expect(got[r * 4 + c] == host[(r + 2) * 8 + c + 1],
               "send/recv element " + std::to_string(r * 4 + c));
    expect(piper_plan_session_finish_step(s) == PIPER_RT_OK,
           std::string("finish_step: ") + piper_plan_session_step_error(s));
    for (void *p : {src, dst, back})
      mgpuMemFree(p, nullptr);
  }
  piper_plan_buffer_stats stats;
  piper_plan_session_device_stats(s, &stats);
  std::printf("allocator: %llu requests, %llu reused, %llu bytes reserved\n",
              (unsigned long long)stats.requests,
              (unsigned long long)stats.reused,
              (unsigned long long)stats.reserved_bytes);
  expect(stats.reused > 0, "the second round reused cached blocks");
}

template <typename T>
void gemmCase(piper_plan_session s, int32_t dtype, const char *name,
              double tolerance) {
  int64_t batch = 2, m = 33, n = 17, k = 65;
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<double> A(batch * m * k), B(batch * k * n), C(batch * m * n);
  for (double &x : A)
    x = u(rng);
  for (double &x : B)
    x = u(rng);
  std::vector<T> a(A.size()), b(B.size());
  for (size_t i = 0; i < A.size(); ++i) {
    if constexpr (sizeof(T) == 2)
      a[i] = toBf16(static_cast<float>(A[i])), A[i] = fromBf16(a[i]);
    else
      a[i] = static_cast<T>(A[i]);
  }
  for (size_t i = 0; i < B.size(); ++i) {
    if constexpr (sizeof(T) == 2)
      b[i] = toBf16(static_cast<float>(B[i])), B[i] = fromBf16(b[i]);
    else
      b[i] = static_cast<T>(B[i]);
  }
  int32_t cdtype = dtype == PIPER_GPU_BF16 ? PIPER_RT_F32 : dtype;
  size_t celt = cdtype == PIPER_RT_F64 ? 8 : 4;
  void *da = mgpuMemAlloc(a.size() * sizeof(T), nullptr, false);
  void *db = mgpuMemAlloc(b.size() * sizeof(T), nullptr, false);
  void *dc = mgpuMemAlloc(C.size() * celt, nullptr, false);
  piper_plan_session_copy_to_device(s, da, a.data(), a.size() * sizeof(T));
  piper_plan_session_copy_to_device(s, db, b.data(), b.size() * sizeof(T));
  mgpuMemset32(dc, 0, C.size() * celt / 4, nullptr);
  piper_gpu_gemm(dtype, cdtype, 0, 0, batch, m, n, k, 1.0, da, k, m * k, db, n,
                 k * n, 0.0, dc, n, m * n);
  std::vector<char> raw(C.size() * celt);
  piper_plan_session_copy_to_host(s, raw.data(), dc, raw.size());
  double worst = 0;
  for (int64_t i = 0; i < batch; ++i)
    for (int64_t r = 0; r < m; ++r)
      for (int64_t c = 0; c < n; ++c) {
        double sum = 0;
        for (int64_t p = 0; p < k; ++p)
          sum += A[i * m * k + r * k + p] * B[i * k * n + p * n + c];
        size_t at = i * m * n + r * n + c;
        double got = celt == 8 ? reinterpret_cast<double *>(raw.data())[at]
                               : reinterpret_cast<float *>(raw.data())[at];
        worst = std::max(worst, std::fabs(got - sum));
      }
  std::printf("gemm %s: max |error| %.3g\n", name, worst);
  expect(worst < tolerance, std::string("gemm ") + name);
  for (void *p : {da, db, dc})
    mgpuMemFree(p, nullptr);
}

} // namespace

int main(int argc, char **argv) {
  if (piper_gpu_probe() != PIPER_RT_OK) {
    std::printf("SKIPPED: %s\n", piper_rt_last_error());
    return 77;
  }
  char name[128];
  int sms = 0, major = 0;
  piper_gpu_device_info(name, sizeof(name), &sms, &major);
  std::printf("device: %s, %d SMs, sm_%d0\n", name, sms, major);
  piper_rt_context context = nullptr;
  piper_rt_mesh mesh = nullptr;
  const char *axis = "dp";
  int64_t one = 1;
  piper_plan_session s = nullptr;
  if (piper_rt_init(&argc, &argv, &context) != PIPER_RT_OK ||
      piper_rt_mesh_create(1, &axis, &one, &mesh) != PIPER_RT_OK ||
      piper_rt_set_mesh(context, mesh) != PIPER_RT_OK ||
      piper_plan_session_create(context, &s) != PIPER_RT_OK) {
    std::printf("FAIL: setup: %s\n", piper_rt_last_error());
    return 1;
  }
  piper_plan_session_activate(s);
  const char *names[] = {"compute", "grad"};
  if (piper_plan_session_add_communicator(s, 1, &axis, "grad") != PIPER_RT_OK) {
    std::printf("FAIL: communicator: %s\n", piper_rt_last_error());
    return 1;
  }
  piper_plan_session_set_streams(s, 2, names);
  auto start = std::chrono::steady_clock::now();
  communication(s);
  gemmCase<float>(s, PIPER_RT_F32, "f32", 1e-4);
  gemmCase<uint16_t>(s, PIPER_GPU_BF16, "bf16->f32", 1e-4);
  gemmCase<double>(s, PIPER_RT_F64, "f64", 1e-12);
  expect(piper_plan_session_finish_step(s) == PIPER_RT_OK,
         std::string("finish: ") + piper_plan_session_step_error(s));
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  piper_plan_session_destroy(s);
  piper_rt_mesh_destroy(mesh);
  piper_rt_finalize(context);
  if (failures)
    return 1;
  std::printf("PASS (%.3f s)\n", seconds);
  return 0;
}
