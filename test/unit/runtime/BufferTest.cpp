//===- BufferTest.cpp - Tests for runtime host buffers and dtypes ---------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "piper-rt/piper_rt.h"

#include "gtest/gtest.h"

#include <cstdint>
#include <set>

namespace {

TEST(RuntimeBufferTest, AlignedZeroedAndSized) {
  for (size_t bytes : {size_t(1), size_t(63), size_t(64), size_t(1000)}) {
    piper_rt_buffer buffer = nullptr;
    ASSERT_EQ(piper_rt_buffer_alloc(bytes, &buffer), PIPER_RT_OK);
    void *data = nullptr;
    size_t size = 0;
    ASSERT_EQ(piper_rt_buffer_data(buffer, &data), PIPER_RT_OK);
    ASSERT_EQ(piper_rt_buffer_size(buffer, &size), PIPER_RT_OK);
    EXPECT_EQ(size, bytes);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(data) % PIPER_RT_BUFFER_ALIGNMENT,
              0u);
    for (size_t i = 0; i < bytes; ++i)
      ASSERT_EQ(static_cast<unsigned char *>(data)[i], 0) << "byte " << i;
    EXPECT_EQ(piper_rt_buffer_free(buffer), PIPER_RT_OK);
  }
}

TEST(RuntimeBufferTest, ZeroBytesGiveDistinctPointers) {
  piper_rt_buffer a = nullptr, b = nullptr;
  ASSERT_EQ(piper_rt_buffer_alloc(0, &a), PIPER_RT_OK);
  ASSERT_EQ(piper_rt_buffer_alloc(0, &b), PIPER_RT_OK);
  void *pa = nullptr, *pb = nullptr;
  piper_rt_buffer_data(a, &pa);
  piper_rt_buffer_data(b, &pb);
  EXPECT_NE(pa, nullptr);
  EXPECT_NE(pa, pb);
  piper_rt_buffer_free(a);
  piper_rt_buffer_free(b);
}

TEST(RuntimeBufferTest, HugeAllocationFailsCleanly) {
  piper_rt_buffer buffer = reinterpret_cast<piper_rt_buffer>(1);
  EXPECT_EQ(piper_rt_buffer_alloc(SIZE_MAX - 8, &buffer),
            PIPER_RT_ERROR_OUT_OF_MEMORY);
  EXPECT_EQ(buffer, nullptr);
  EXPECT_EQ(piper_rt_buffer_free(nullptr), PIPER_RT_OK);
}

TEST(RuntimeBufferTest, DtypeSizes) {
  size_t bytes = 0;
  ASSERT_EQ(piper_rt_dtype_size(PIPER_RT_F32, &bytes), PIPER_RT_OK);
  EXPECT_EQ(bytes, 4u);
  ASSERT_EQ(piper_rt_dtype_size(PIPER_RT_F64, &bytes), PIPER_RT_OK);
  EXPECT_EQ(bytes, 8u);
  ASSERT_EQ(piper_rt_dtype_size(PIPER_RT_I64, &bytes), PIPER_RT_OK);
  EXPECT_EQ(bytes, 8u);
  EXPECT_EQ(piper_rt_dtype_size(static_cast<piper_rt_dtype>(7), &bytes),
            PIPER_RT_ERROR_INVALID_ARGUMENT);
}

} // namespace
