//===- MemRef.cpp - Memref copies and the kernel error slot ---------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "MemRef.h"

#include "piper/Kernels/Kernels.h"

#include <mutex>
#include <string>

using namespace piper;
using namespace piper::kernels;

namespace {
// One error per process: the first failing kernel is the one to report,
// later ones usually follow from it (zeroed results).
std::mutex errorMutex;
bool hasError = false;
std::string errorMessage;

bool sameShape(const ref::Shape &a, MemRef m) { return a == m.shape(); }
} // namespace

bool piper::kernels::report(const char *op, const ref::Status &status) {
  if (status.ok())
    return true;
  std::lock_guard<std::mutex> lock(errorMutex);
  if (!hasError) {
    hasError = true;
    errorMessage = std::string(op) + ": " + status.message();
  }
  return false;
}

ref::IndexTensor piper::kernels::readIndex(MemRef m) {
  ref::IndexTensor t = ref::IndexTensor::zeros(m.shape());
  const int64_t *base = static_cast<const int64_t *>(m.aligned());
  for (int64_t i = 0, n = m.numel(); i < n; ++i)
    t.data[i] = base[m.elementOffset(i)];
  return t;
}

template <typename T>
void piper::kernels::writeFloat(const char *op, const ref::Tensor &t,
                                MemRef m) {
  T *base = static_cast<T *>(m.aligned());
  if (!sameShape(t.shape, m)) {
    report(op, ref::Status::error(
                   "result has shape " + ref::shapeToString(t.shape) +
                   " but the plan expects " + ref::shapeToString(m.shape())));
    for (int64_t i = 0, n = m.numel(); i < n; ++i)
      base[m.elementOffset(i)] = T(0);
    return;
  }
  for (int64_t i = 0, n = m.numel(); i < n; ++i)
    base[m.elementOffset(i)] = static_cast<T>(t.data[i]);
}

template void piper::kernels::writeFloat<float>(const char *,
                                                const ref::Tensor &, MemRef);
template void piper::kernels::writeFloat<double>(const char *,
                                                 const ref::Tensor &, MemRef);

void piper::kernels::writeIndex(const char *op, const ref::IndexTensor &t,
                                MemRef m) {
  int64_t *base = static_cast<int64_t *>(m.aligned());
  if (!sameShape(t.shape, m)) {
    report(op, ref::Status::error(
                   "result has shape " + ref::shapeToString(t.shape) +
                   " but the plan expects " + ref::shapeToString(m.shape())));
    return;
  }
  for (int64_t i = 0, n = m.numel(); i < n; ++i)
    base[m.elementOffset(i)] = t.data[i];
}

extern "C" const char *piper_kernels_last_error(void) {
  std::lock_guard<std::mutex> lock(errorMutex);
  return hasError ? errorMessage.c_str() : nullptr;
}

extern "C" void piper_kernels_clear_error(void) {
  std::lock_guard<std::mutex> lock(errorMutex);
  hasError = false;
  errorMessage.clear();
}
