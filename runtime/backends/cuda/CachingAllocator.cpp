//===- CachingAllocator.cpp - Stream-ordered device buffer cache
//-----------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "CachingAllocator.h"

#include <algorithm>

using namespace piper::cuda;

namespace {
constexpr size_t kSmall = 512, kLarge = size_t(2) << 20, kSplit = 1 << 20;
} // namespace

size_t CachingAllocator::roundUp(size_t bytes) {
  size_t unit = bytes < kSplit ? kSmall : kLarge;
  return std::max<size_t>(unit, (bytes + unit - 1) / unit * unit);
}

CachingAllocator::~CachingAllocator() {
  trim();
  for (auto &[data, entry] : live)
    device.release(data);
}

/// The smallest idle block of at least `size` (and under twice it, so a
/// small request does not pin a large block) usable on `stream`: freed on
/// it, or freed elsewhere with that free complete.
bool CachingAllocator::takeIdle(size_t size, void *stream, Block &out) {
  for (auto it = idle.lower_bound(size);
       it != idle.end() && it->first < 2 * size; ++it) {
    Block &b = it->second;
    if (b.stream != stream && b.marker && !device.done(b.marker))
      continue;
    out = b;
    idle.erase(it);
    return true;
  }
  return false;
}

void *CachingAllocator::handOut(Block block, size_t bytes, void *stream) {
  if (block.marker)
    device.forget(block.marker);
  block.marker = nullptr;
  block.stream = stream;
  live[block.data] = {block, bytes};
  counts.live_bytes += bytes;
  counts.peak_bytes = std::max(counts.peak_bytes, counts.live_bytes);
  return block.data;
}

void *CachingAllocator::allocate(size_t bytes, void *stream) {
  ++counts.requests;
  size_t size = roundUp(bytes);
  Block block;
  if (takeIdle(size, stream, block)) {
    ++counts.reused;
    return handOut(block, bytes, stream);
  }
  block.size = size;
  block.data = device.allocate(size);
  if (!block.data) {
    // Out of memory: give the cache back to the device and try once more.
    trim();
    block.data = device.allocate(size);
    if (!block.data)
      return nullptr;
  }
  counts.reserved_bytes += size;
  return handOut(block, bytes, stream);
}

bool CachingAllocator::free(void *data, void *stream) {
  auto it = live.find(data);
  if (it == live.end())
    return false;
  Block block = it->second.first;
  counts.live_bytes -= it->second.second;
  live.erase(it);
  block.stream = stream;
  block.marker = device.mark(stream);
  idle.emplace(block.size, block);
  return true;
}

void CachingAllocator::releaseIdle() {
  for (auto &[size, block] : idle) {
    if (block.marker) {
      device.wait(block.marker);
      device.forget(block.marker);
    }
    device.release(block.data);
    counts.reserved_bytes -= block.size;
  }
  idle.clear();
}

void CachingAllocator::trim() { releaseIdle(); }
