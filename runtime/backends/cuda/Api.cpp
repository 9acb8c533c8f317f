//===- Api.cpp - Opening the CUDA libraries at run time
//--------------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "Api.h"

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>

using namespace piper::cuda;

namespace {

// Two levels, so that the argument's macros (cuda.h's versioned names)
// expand before it is quoted.
#define PIPER_CUDA_STRING2(x) #x
#define PIPER_CUDA_STRING(x) PIPER_CUDA_STRING2(x)

/// The library's handle, trying PIPER_RT_<env> (a path) first.
void *open(const char *env, const char *name, std::string &why) {
  const char *override = std::getenv(env);
  const char *path = override && *override ? override : name;
  void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char *e = dlerror();
    why = std::string(path) + " cannot be loaded (" + (e ? e : "?") + ")";
  }
  return handle;
}

template <typename T>
bool bind(void *handle, const char *name, T &pointer, bool required,
          std::string &why) {
  pointer = reinterpret_cast<T>(dlsym(handle, name));
  if (!pointer && required && why.empty())
    why = std::string("symbol ") + name + " is missing";
  return pointer || !required;
}

struct Loaded {
  std::once_flag once;
  bool ok = false;
  std::string why;
};

} // namespace

const char *piper::cuda::driverLibrary() { return "libcuda.so.1"; }
const char *piper::cuda::ncclLibrary() { return "libnccl.so.2"; }
const char *piper::cuda::cublasLibrary() { return "libcublas.so.13"; }

const Driver *piper::cuda::driver(std::string &why) {
  static Driver table;
  static Loaded state;
  std::call_once(state.once, [] {
    std::string error;
    void *h = open("PIPER_RT_CUDA_DRIVER", driverLibrary(), error);
    if (!h) {
      state.why = "no CUDA device: " + error;
      return;
    }
#define PIPER_CUDA_BIND(name)                                                  \
  bind(h, PIPER_CUDA_STRING(name), table.name, true, error);
#define PIPER_CUDA_BIND_OPTIONAL(name)                                         \
  bind(h, PIPER_CUDA_STRING(name), table.name, false, error);
    PIPER_CUDA_DRIVER_FUNCTIONS(PIPER_CUDA_BIND, PIPER_CUDA_BIND_OPTIONAL)
#undef PIPER_CUDA_BIND
#undef PIPER_CUDA_BIND_OPTIONAL
    if (!error.empty()) {
      state.why = "no CUDA device: " + std::string(driverLibrary()) +
                  " is too old (" + error + ")";
      return;
    }
    CUresult r = table.cuInit(0);
    int count = 0;
    if (r == CUDA_SUCCESS)
      r = table.cuDeviceGetCount(&count);
    if (r != CUDA_SUCCESS) {
      state.why = "no CUDA device: cuInit failed: " + describe(table, r);
      return;
    }
    if (count == 0) {
      state.why = "no CUDA device: the driver sees no GPU";
      return;
    }
    state.ok = true;
  });
  why = state.why;
  return state.ok ? &table : nullptr;
}

const Nccl *piper::cuda::nccl(std::string &why) {
  static Nccl table;
  static Loaded state;
  std::call_once(state.once, [] {
    std::string error;
    void *h = open("PIPER_RT_NCCL", ncclLibrary(), error);
    if (h) {
#define PIPER_CUDA_BIND(name) bind(h, #name, table.name, true, error);
      PIPER_CUDA_NCCL_FUNCTIONS(PIPER_CUDA_BIND)
#undef PIPER_CUDA_BIND
    }
    state.ok = error.empty();
    state.why = state.ok ? "" : "NCCL: " + error;
  });
  why = state.why;
  return state.ok ? &table : nullptr;
}

const Cublas *piper::cuda::cublas(std::string &why) {
  static Cublas table;
  static Loaded state;
  std::call_once(state.once, [] {
    std::string error;
    void *h = open("PIPER_RT_CUBLAS", cublasLibrary(), error);
    if (h) {
#define PIPER_CUDA_BIND(name) bind(h, #name, table.name, true, error);
      PIPER_CUDA_CUBLAS_FUNCTIONS(PIPER_CUDA_BIND)
#undef PIPER_CUDA_BIND
    }
    state.ok = error.empty();
    state.why = state.ok ? "" : "cuBLAS: " + error;
  });
  why = state.why;
  return state.ok ? &table : nullptr;
}

std::string piper::cuda::describe(const Driver &d, CUresult result) {
  const char *text = nullptr;
  if (d.cuGetErrorString)
    d.cuGetErrorString(result, &text);
  return "CUDA error " + std::to_string(static_cast<int>(result)) +
         (text ? std::string(" (") + text + ")" : std::string());
}
