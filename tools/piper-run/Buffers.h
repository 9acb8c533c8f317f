//===- Buffers.h - The plans' memory, on the runtime's buffers ------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The allocation functions compiled plans call (see Buffers.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_TOOLS_PIPER_RUN_BUFFERS_H
#define PIPER_TOOLS_PIPER_RUN_BUFFERS_H

#include <cstdint>

namespace piper::run {

struct BufferStats {
  /// Allocations the plan asked for, how many a cached buffer served, and
  /// the bytes of runtime buffers held (live or cached).
  uint64_t requests = 0, reused = 0, reservedBytes = 0;
};

BufferStats bufferStats();

} // namespace piper::run

#endif // PIPER_TOOLS_PIPER_RUN_BUFFERS_H
