//===- Buffers.cpp - The plans' memory, on the runtime's buffers ----------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Compiled plans allocate every temporary through MLIR's generic memref
// functions (finalize-memref-to-llvm{use-generic-functions}):
//   void *_mlir_memref_to_llvm_alloc(size_t bytes)
//   void *_mlir_memref_to_llvm_aligned_alloc(size_t alignment, size_t bytes)
//   void _mlir_memref_to_llvm_free(void *)
// piper-run exports them on piper_rt_buffer_alloc (64-byte aligned) with a
// cache per power-of-two size class: a freed buffer waits for the next
// request of its class, so from the second step on a plan's allocations
// are served from the buffers of the step before, without malloc, page
// faults or zeroing. The cache holds at most what one step had live at once
// per class. Only the host thread that runs the plan calls these.
//
//===----------------------------------------------------------------------===//

#include "Buffers.h"

#include "piper-rt/piper_rt.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <unordered_map>
#include <vector>

namespace {

struct Pool {
  struct Entry {
    piper_rt_buffer buffer;
    size_t sizeClass;
  };
  std::unordered_map<void *, Entry> live;
  std::map<size_t, std::vector<Entry>> idle;
  piper::run::BufferStats stats;
};

Pool &pool() {
  static Pool *p = new Pool(); // never destroyed: plans may free at exit
  return *p;
}

size_t sizeClass(size_t bytes) {
  size_t c = PIPER_RT_BUFFER_ALIGNMENT;
  while (c < bytes)
    c <<= 1;
  return c;
}

void *allocate(size_t bytes, size_t alignment) {
  Pool &p = pool();
  if (alignment > PIPER_RT_BUFFER_ALIGNMENT) {
    std::fprintf(stderr,
                 "piper-run: a plan asked for %zu-byte alignment (at most %d "
                 "is supported)\n",
                 alignment, PIPER_RT_BUFFER_ALIGNMENT);
    std::abort();
  }
  size_t c = sizeClass(bytes);
  ++p.stats.requests;
  std::vector<Pool::Entry> &free = p.idle[c];
  Pool::Entry entry;
  if (!free.empty()) {
    entry = free.back();
    free.pop_back();
    ++p.stats.reused;
  } else {
    if (piper_rt_buffer_alloc(c, &entry.buffer) != PIPER_RT_OK) {
      std::fprintf(stderr, "piper-run: out of memory: %s\n",
                   piper_rt_last_error());
      std::abort();
    }
    entry.sizeClass = c;
    p.stats.reservedBytes += c;
  }
  void *data = nullptr;
  piper_rt_buffer_data(entry.buffer, &data);
  p.live[data] = entry;
  return data;
}

} // namespace

piper::run::BufferStats piper::run::bufferStats() { return pool().stats; }

extern "C" __attribute__((visibility("default"))) void *
_mlir_memref_to_llvm_alloc(size_t bytes) {
  return allocate(bytes, 1);
}

extern "C" __attribute__((visibility("default"))) void *
_mlir_memref_to_llvm_aligned_alloc(size_t alignment, size_t bytes) {
  return allocate(bytes, alignment);
}

extern "C" __attribute__((visibility("default"))) void
_mlir_memref_to_llvm_free(void *data) {
  if (!data)
    return;
  Pool &p = pool();
  auto it = p.live.find(data);
  if (it == p.live.end()) {
    std::fprintf(stderr,
                 "piper-run: a plan freed %p, which it never "
                 "allocated\n",
                 data);
    std::abort();
  }
  p.idle[it->second.sizeClass].push_back(it->second);
  p.live.erase(it);
}
