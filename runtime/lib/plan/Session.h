//===- Session.h - One running plan's state ---------------------*- C++ -*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// What a piper_plan_session handle points to (plan_abi.h): the buffer cache
// the plan allocates from, the step's first error and, when the plan runs on
// a runtime context, the backend that communicates and traces.
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_RUNTIME_LIB_PLAN_SESSION_H
#define PIPER_RUNTIME_LIB_PLAN_SESSION_H

#include "Backend.h"

#include <map>
#include <unordered_map>

namespace piper::plan {

/// A cache of runtime buffers per power-of-two size class: a freed buffer
/// waits for the next request of its class, so it holds at most what one
/// step had live at once per class.
class BufferPool {
public:
  ~BufferPool();
  /// Null, with piper_rt's last error set, if the runtime has no memory.
  void *allocate(size_t bytes);
  /// False if the pool did not allocate `data`.
  bool release(void *data);
  piper_plan_buffer_stats stats() const { return counts; }

private:
  struct Entry {
    piper_rt_buffer buffer = nullptr;
    size_t sizeClass = 0;
    /// What the plan asked for (counted in live_bytes while live).
    size_t bytes = 0;
  };
  std::unordered_map<void *, Entry> live;
  std::map<size_t, std::vector<Entry>> idle;
  piper_plan_buffer_stats counts = {0, 0, 0, 0, 0};
};

} // namespace piper::plan

struct piper_plan_session_impl {
  piper::plan::BufferPool buffers;
  piper::plan::StepError errors;
  /// The error of the last step that failed, as the calls worded it.
  std::string failedStep;
  /// Null without a runtime context (a single-device plan).
  std::unique_ptr<piper::plan::Backend> backend;
  /// The step's hyperparameters (piper_plan_session_set_hyperparameters).
  double lr = 0.0, clipMaxNorm = 0.0;
  /// Clipping: the communicator over every axis (-1: none), this step's
  /// weighted sum of squares, its norm (-1 before finish) and factor.
  int64_t clipComm = -1, communicators = 0;
  double clipSumOfSquares = 0.0, gradNorm = -1.0, clipCoef = 1.0;
};

#endif // PIPER_RUNTIME_LIB_PLAN_SESSION_H
