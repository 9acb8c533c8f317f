//===- HostTensor.h - A step argument or result on the host -----*- C++ -*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// What one device holds of a step argument or result (its chunk, its part or
// the whole tensor; plan_manifest.h), with the memref descriptor the plan's
// entry point reads (plan_abi.h).
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_TOOLS_PIPER_RUN_HOSTTENSOR_H
#define PIPER_TOOLS_PIPER_RUN_HOSTTENSOR_H

#include "piper-rt/plan_abi.h"
#include "piper-rt/plan_manifest.h"

#include <cstring>
#include <vector>

namespace piper::run {

struct HostTensor {
  const plan::Tensor *info = nullptr;
  std::vector<uint64_t> storage; // 8-byte aligned, zeroed
  std::vector<uint64_t> descriptor;

  /// Zeroed storage for what this device holds of `t`, and its descriptor.
  void allocate(const plan::Tensor &t) {
    info = &t;
    std::vector<int64_t> shape = t.heldShape();
    size_t bytes = static_cast<size_t>(t.localNumel()) * t.elementSize();
    storage.assign((bytes + 7) / 8 + 1, 0);
    int64_t rank = static_cast<int64_t>(shape.size());
    descriptor.assign(piper_memref_descriptor_size(rank) / 8, 0);
    piper_memref_describe(descriptor.data(), storage.data(), rank,
                          shape.data());
  }
  void *data() { return storage.data(); }
  size_t bytes() const { return info->localNumel() * info->elementSize(); }
  /// Stores f64 values in the tensor's element type.
  void setFloats(const std::vector<double> &values) {
    if (info->dtype == plan::DType::F32) {
      float *p = static_cast<float *>(data());
      for (size_t i = 0; i < values.size(); ++i)
        p[i] = static_cast<float>(values[i]);
    } else {
      std::memcpy(data(), values.data(), values.size() * sizeof(double));
    }
  }
  double floatAt(int64_t i) const {
    const void *p = storage.data();
    return info->dtype == plan::DType::F32 ? static_cast<const float *>(p)[i]
                                           : static_cast<const double *>(p)[i];
  }
};

} // namespace piper::run

#endif // PIPER_TOOLS_PIPER_RUN_HOSTTENSOR_H
