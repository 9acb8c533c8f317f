//===- BufferPool.cpp - The plans' memory, on the runtime's buffers -------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// From the second step on, a plan's allocations are served from the buffers
// of the step before, without malloc, page faults or zeroing (plan_abi.h,
// "Memory"). Only the thread that runs the plan calls this.
//
//===----------------------------------------------------------------------===//

#include "Session.h"

#include <algorithm>

using namespace piper::plan;

namespace {
size_t sizeClassOf(size_t bytes) {
  size_t c = PIPER_RT_BUFFER_ALIGNMENT;
  while (c < bytes)
    c <<= 1;
  return c;
}
} // namespace

BufferPool::~BufferPool() {
  for (auto &[data, entry] : live)
    piper_rt_buffer_free(entry.buffer);
  for (auto &[sizeClass, entries] : idle)
    for (Entry &entry : entries)
      piper_rt_buffer_free(entry.buffer);
}

void *BufferPool::allocate(size_t bytes) {
  size_t c = sizeClassOf(bytes);
  ++counts.requests;
  std::vector<Entry> &free = idle[c];
  Entry entry;
  if (!free.empty()) {
    entry = free.back();
    free.pop_back();
    ++counts.reused;
  } else {
    if (piper_rt_buffer_alloc(c, &entry.buffer) != PIPER_RT_OK)
      return nullptr;
    entry.sizeClass = c;
    counts.reserved_bytes += c;
  }
  entry.bytes = bytes;
  counts.live_bytes += bytes;
  counts.peak_bytes = std::max(counts.peak_bytes, counts.live_bytes);
  void *data = nullptr;
  piper_rt_buffer_data(entry.buffer, &data);
  live[data] = entry;
  return data;
}

bool BufferPool::release(void *data) {
  auto it = live.find(data);
  if (it == live.end())
    return false;
  counts.live_bytes -= it->second.bytes;
  idle[it->second.sizeClass].push_back(it->second);
  live.erase(it);
  return true;
}
