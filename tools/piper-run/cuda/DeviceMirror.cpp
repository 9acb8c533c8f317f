//===- DeviceMirror.cpp - Device copies of a GPU plan's step tensors ------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "DeviceMirror.h"

#include "piper-rt/plan_abi_gpu.h"

#include <map>

using namespace piper;
using namespace piper::run;

namespace {
/// "parameter 'w1'" or "argument #3", for messages.
std::string label(const HostTensor &t) {
  return t.info->name ? "parameter '" + *t.info->name + "'"
                      : t.info->kind + " #" + std::to_string(t.info->index);
}

struct Mirror {
  void *data = nullptr;
  std::vector<uint64_t> descriptor;
};
/// One device copy per host tensor, for the whole run (one session).
std::map<const HostTensor *, Mirror> mirrors;
} // namespace

void *piper::run::deviceDescriptor(piper_plan_session session, HostTensor &t,
                                   bool upload, std::string &error) {
  Mirror &m = mirrors[&t];
  if (!m.data) {
    std::vector<int64_t> shape = t.info->heldShape();
    int64_t rank = static_cast<int64_t>(shape.size());
    if (piper_plan_session_device_alloc(session, t.bytes() ? t.bytes() : 1,
                                        &m.data) != PIPER_RT_OK) {
      error = "device copy of " + label(t) + ": " + piper_rt_last_error();
      return nullptr;
    }
    m.descriptor.assign(piper_memref_descriptor_size(rank) / 8, 0);
    piper_memref_describe(m.descriptor.data(), m.data, rank, shape.data());
  }
  if (upload && t.bytes() &&
      piper_plan_session_copy_to_device(session, m.data, t.data(), t.bytes()) !=
          PIPER_RT_OK) {
    error = "copy of " + label(t) + " to the device: " + piper_rt_last_error();
    return nullptr;
  }
  return m.descriptor.data();
}

bool piper::run::downloadTensor(piper_plan_session session, HostTensor &t,
                                std::string &error) {
  auto it = mirrors.find(&t);
  if (it == mirrors.end() || !t.bytes())
    return true;
  if (piper_plan_session_copy_to_host(session, t.data(), it->second.data,
                                      t.bytes()) != PIPER_RT_OK) {
    error = "copy of " + label(t) + " to the host: " + piper_rt_last_error();
    return false;
  }
  return true;
}
