//===- CachingAllocator.h - Stream-ordered device buffer cache --*- C++ -*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The session's buffer pool for device memory (what mgpuMemAlloc and
// mgpuMemFree serve). cuMemAlloc and cuMemFree synchronise the device, so a
// training step must not call them: freed blocks are cached and handed out
// again. Frees are stream-ordered, as MLIR's gpu-to-llvm expects (it frees
// before it synchronises): a block freed on stream S may still be read by
// work enqueued on S, so it is reusable at once by later work on S (stream
// order protects it) and by another stream only once a marker (a CUDA event)
// recorded on S at the free has completed.
//
// The bookkeeping is device-independent: the device is behind DeviceMemory,
// which the CUDA backend implements with the driver and the unit tests with a
// fake, so the cache's logic is tested without a GPU.
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_RT_BACKENDS_CUDA_CACHINGALLOCATOR_H
#define PIPER_RT_BACKENDS_CUDA_CACHINGALLOCATOR_H

#include "piper-rt/plan_abi.h"

#include <cstddef>
#include <map>
#include <unordered_map>
#include <vector>

namespace piper::cuda {

/// Raw device memory and stream markers. Streams and markers are opaque.
class DeviceMemory {
public:
  virtual ~DeviceMemory() = default;
  /// Fresh device memory, or null when the device has none left.
  virtual void *allocate(size_t bytes) = 0;
  virtual void release(void *data) = 0;
  /// A marker that completes when everything enqueued on `stream` so far
  /// has run, or null when that has already happened.
  virtual void *mark(void *stream) = 0;
  virtual bool done(void *marker) = 0;
  /// Blocks until the marker completes.
  virtual void wait(void *marker) = 0;
  virtual void forget(void *marker) = 0;
};

class CachingAllocator {
public:
  explicit CachingAllocator(DeviceMemory &device) : device(device) {}
  /// Waits for pending frees, then returns every block to the device.
  ~CachingAllocator();

  /// A block of at least `bytes` for work on `stream`, or null when the
  /// device is out of memory even after the cache was emptied.
  void *allocate(size_t bytes, void *stream);
  /// Returns `data` to the cache, ordered after the work enqueued on
  /// `stream` so far. False if this allocator did not hand it out.
  bool free(void *data, void *stream);
  /// Waits for pending frees and returns every idle block to the device.
  void trim();

  piper_plan_buffer_stats stats() const { return counts; }
  /// Blocks a cache holds: live and idle.
  size_t blocks() const { return live.size() + idleCount(); }
  /// The block size `bytes` is served from: 512-byte multiples below
  /// 1 MiB, 2 MiB multiples above (large blocks are not split, so the
  /// coarse classes bound the waste at 2 MiB per block).
  static size_t roundUp(size_t bytes);

private:
  struct Block {
    void *data = nullptr;
    size_t size = 0;
    /// The stream it was last freed on, and the marker of that free
    /// (null once known complete).
    void *stream = nullptr;
    void *marker = nullptr;
  };
  DeviceMemory &device;
  /// Live blocks, and what the plan asked for (live_bytes).
  std::unordered_map<void *, std::pair<Block, size_t>> live;
  /// Idle blocks by size.
  std::multimap<size_t, Block> idle;
  piper_plan_buffer_stats counts = {0, 0, 0, 0, 0};

  size_t idleCount() const { return idle.size(); }
  bool takeIdle(size_t size, void *stream, Block &out);
  void releaseIdle();
  void *handOut(Block block, size_t bytes, void *stream);
};

} // namespace piper::cuda

#endif // PIPER_RT_BACKENDS_CUDA_CACHINGALLOCATOR_H
