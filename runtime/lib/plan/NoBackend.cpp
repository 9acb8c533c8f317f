//===- NoBackend.cpp - A runtime built without communication --------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Linked into PiperPlanRuntime where no backend is (MPI missing): sessions
// then run single-device plans, whose only Part 1 calls are memory and
// trace hooks, and a context (which nothing could have created) is refused.
//
//===----------------------------------------------------------------------===//

#include "Backend.h"

std::unique_ptr<piper::plan::Backend> piper::plan::makeBackend(piper_rt_context,
                                                               StepError &) {
  PIPER_RT_ERROR(PIPER_RT_ERROR_UNAVAILABLE,
                 "the plan runtime was built without a communication "
                 "backend");
  return nullptr;
}
