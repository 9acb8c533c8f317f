//===- Buffer.cpp - Piper runtime host buffers and element types ----------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Host buffers are zeroed so that a plan that reads memory it never wrote
// gets the same numbers on every run and every rank, which is what lets the
// end-to-end tests compare against the interpreter bit for bit.
//
//===----------------------------------------------------------------------===//

#include "piper-rt/piper_rt.h"

#include <cstdlib>
#include <cstring>
#include <new>

struct piper_rt_buffer_impl {
  void *data;
  size_t bytes;
};

piper_rt_status piper_rt_dtype_size(piper_rt_dtype dtype, size_t *bytes) {
  if (!bytes)
    return PIPER_RT_ERROR(PIPER_RT_ERROR_INVALID_ARGUMENT, "bytes is NULL");
  switch (dtype) {
  case PIPER_RT_F32:
    *bytes = 4;
    return PIPER_RT_OK;
  case PIPER_RT_F64:
  case PIPER_RT_I64:
    *bytes = 8;
    return PIPER_RT_OK;
  case PIPER_RT_DTYPE_MAX_ENUM:
    break;
  }
  return PIPER_RT_ERROR(PIPER_RT_ERROR_INVALID_ARGUMENT, "unknown dtype %d",
                        static_cast<int>(dtype));
}

piper_rt_status piper_rt_buffer_alloc(size_t bytes, piper_rt_buffer *buffer) {
  if (!buffer)
    return PIPER_RT_ERROR(PIPER_RT_ERROR_INVALID_ARGUMENT, "buffer is NULL");
  *buffer = nullptr;
  // aligned_alloc wants a multiple of the alignment; a zero-byte buffer still
  // gets one line so its pointer is unique and non-null.
  size_t rounded = bytes == 0 ? PIPER_RT_BUFFER_ALIGNMENT
                              : (bytes + PIPER_RT_BUFFER_ALIGNMENT - 1) /
                                    PIPER_RT_BUFFER_ALIGNMENT *
                                    PIPER_RT_BUFFER_ALIGNMENT;
  if (rounded < bytes)
    return PIPER_RT_ERROR(PIPER_RT_ERROR_OUT_OF_MEMORY,
                          "cannot allocate %zu bytes", bytes);
  void *data = std::aligned_alloc(PIPER_RT_BUFFER_ALIGNMENT, rounded);
  if (!data)
    return PIPER_RT_ERROR(PIPER_RT_ERROR_OUT_OF_MEMORY,
                          "cannot allocate %zu bytes", bytes);
  std::memset(data, 0, rounded);
  auto *impl = new (std::nothrow) piper_rt_buffer_impl{data, bytes};
  if (!impl) {
    std::free(data);
    return PIPER_RT_ERROR(PIPER_RT_ERROR_OUT_OF_MEMORY, "buffer handle");
  }
  *buffer = impl;
  return PIPER_RT_OK;
}

piper_rt_status piper_rt_buffer_free(piper_rt_buffer buffer) {
  if (buffer) {
    std::free(buffer->data);
    delete buffer;
  }
  return PIPER_RT_OK;
}

piper_rt_status piper_rt_buffer_data(piper_rt_buffer buffer, void **data) {
  if (!buffer || !data)
    return PIPER_RT_ERROR(PIPER_RT_ERROR_INVALID_ARGUMENT,
                          "buffer or data is NULL");
  *data = buffer->data;
  return PIPER_RT_OK;
}

piper_rt_status piper_rt_buffer_size(piper_rt_buffer buffer, size_t *bytes) {
  if (!buffer || !bytes)
    return PIPER_RT_ERROR(PIPER_RT_ERROR_INVALID_ARGUMENT,
                          "buffer or bytes is NULL");
  *bytes = buffer->bytes;
  return PIPER_RT_OK;
}
