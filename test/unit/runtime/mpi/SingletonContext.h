//===- SingletonContext.h - One MPI-singleton context for a test binary ---===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// MPI can be initialised only once per process, so the one-process MPI
// tests share one runtime context over a one-device mesh (dp = 1), set up
// by a gtest environment.
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_TEST_UNIT_RUNTIME_MPI_SINGLETONCONTEXT_H
#define PIPER_TEST_UNIT_RUNTIME_MPI_SINGLETONCONTEXT_H

#include "piper-rt/piper_rt.h"

#include "gtest/gtest.h"

namespace piper::test {

/// Initialises the runtime as an MPI singleton into `ctx` and gives it the
/// mesh dp = 1.
inline void initSingletonContext(piper_rt_context &ctx) {
  ASSERT_EQ(piper_rt_init(nullptr, nullptr, &ctx), PIPER_RT_OK)
      << piper_rt_last_error();
  const char *names[] = {"dp"};
  int64_t sizes[] = {1};
  piper_rt_mesh mesh = nullptr;
  ASSERT_EQ(piper_rt_mesh_create(1, names, sizes, &mesh), PIPER_RT_OK);
  ASSERT_EQ(piper_rt_set_mesh(ctx, mesh), PIPER_RT_OK) << piper_rt_last_error();
  piper_rt_mesh_destroy(mesh);
}

} // namespace piper::test

#endif // PIPER_TEST_UNIT_RUNTIME_MPI_SINGLETONCONTEXT_H
