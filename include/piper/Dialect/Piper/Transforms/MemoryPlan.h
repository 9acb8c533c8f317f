//===- MemoryPlan.h - Memory per device group of a DAG ----------*- C++ -*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Memory planning on a placed (and usually scheduled) training DAG: for each
// device group, the nodes in the order the group runs them, every buffer one
// device of the group holds (parameters, gradients, optimizer state, saved
// activations, communication buffers, other temporaries) with the steps it
// is live, the peak with its breakdown, and the buffers left after greedy
// reuse. `--piper-memory-plan` prints it; the simulator and the device
// programs are meant to call `planMemory` directly. docs/Memory.md states
// the rules.
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_DIALECT_PIPER_TRANSFORMS_MEMORYPLAN_H
#define PIPER_DIALECT_PIPER_TRANSFORMS_MEMORYPLAN_H

#include "piper/Dialect/Piper/IR/PiperOps.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/STLFunctionalExtras.h"

#include <array>
#include <optional>
#include <string>
#include <vector>

namespace mlir::piper {

/// What a buffer holds. The order is the report's column order.
enum class MemoryKind : unsigned {
  /// Parameter shards, and ZeRO-3's gathered copies while in use.
  Params,
  /// Weight gradients, their accumulators and their reduce-scattered shards.
  Grads,
  /// Optimizer state (momentum, exp_avg, exp_avg_sq, step counters).
  OptimizerState,
  /// Forward outputs kept for a backward task of the group (received ones
  /// included): the activations a schedule keeps in flight.
  Activations,
  /// Received values and collective outputs that are neither of the above,
  /// and collectives inside task bodies while their task runs.
  CommBuffers,
  /// Everything else: step inputs and microbatch slices, forward outputs
  /// not saved (on their way to another stage), input gradients, the loss.
  Other,
};
constexpr unsigned kNumMemoryKinds = 6;

/// `params`, `grads`, `optimizer`, `activations`, `comm`, `other`.
StringRef stringifyMemoryKind(MemoryKind kind);

/// Bytes per kind.
struct MemoryBreakdown {
  std::array<int64_t, kNumMemoryKinds> bytes{};

  int64_t &operator[](MemoryKind kind) { return bytes[unsigned(kind)]; }
  int64_t operator[](MemoryKind kind) const { return bytes[unsigned(kind)]; }
  int64_t total() const;
};

/// One buffer of one device of a group: a value, or several values sharing
/// storage (an all-reduce in place, gradient contributions accumulated into
/// one accumulator), or a persistent argument.
struct MemoryBuffer {
  /// The value that allocates it (a block argument for persistent ones).
  Value value;
  MemoryKind kind = MemoryKind::Other;
  /// Bytes one device holds.
  int64_t bytes = 0;
  /// First and last step (inclusive) at which it is live.
  unsigned start = 0, end = 0;
  /// Parameters and optimizer state live across steps; they are never
  /// reused for anything else.
  bool persistent = false;
  /// The microbatch (`MB` tag) of a saved activation.
  std::optional<int64_t> microbatch;
};

/// The plan of one device group (every device of it holds the same).
struct DeviceMemoryPlan {
  /// `pp=0`, or `all` for a DAG placed nowhere (every device runs it).
  std::string group;
  DictionaryAttr devices;
  /// The nodes in the order the group runs them. A transfer appears in the
  /// sending group (a use of its operand) and in the receiving group (its
  /// buffer).
  SmallVector<Operation *> steps;
  SmallVector<MemoryBuffer> buffers;
  /// Live bytes per step, by kind.
  SmallVector<MemoryBreakdown> live;
  /// The first step where the total is largest, and the breakdown there.
  unsigned peakStep = 0;
  MemoryBreakdown atPeak;
  /// Each kind's own maximum over the steps (at any step).
  MemoryBreakdown maxPerKind;
  /// The most microbatches whose saved activations are live at one step.
  int64_t maxActivationMicrobatches = 0;
  /// Greedy reuse: transient buffers (the values) and the distinct
  /// allocations they fit in when a freed allocation of the same size class
  /// (the next power of two) is reused, and the bytes those allocations and
  /// the persistent buffers take.
  unsigned numTransientBuffers = 0;
  unsigned numAllocations = 0;
  int64_t reservedBytes = 0;

  int64_t peakBytes() const { return atPeak.total(); }
};

/// How data parallelism treats one parameter, learnt from the collectives
/// `transform.piper.replicate` created (see docs/Memory.md).
struct ParamSharding {
  /// 0-3. An all-reduced gradient is ZeRO-0; a reduce-scattered one ZeRO-2,
  /// or ZeRO-1 when the parameter's placement says `zero = 1` (the two
  /// stages have the same collectives); a gathered parameter ZeRO-3.
  unsigned zero = 0;
  /// Devices the gradient is reduced over (1 without data parallelism).
  int64_t dataParallel = 1;
  /// Devices splitting the parameter (tensor or expert parallelism).
  int64_t split = 1;
};

/// Plans every device group of `dag`. Fails, reporting through `emitError`,
/// when some tasks are placed and others are not, or the edges form a
/// cycle.
FailureOr<std::vector<DeviceMemoryPlan>>
planMemory(DAGOp dag, function_ref<InFlightDiagnostic()> emitError);

/// The sharding of the parameter named `name` in `dag`'s function, as
/// `planMemory` uses it.
ParamSharding getParamSharding(DAGOp dag, StringRef name);

} // namespace mlir::piper

#endif // PIPER_DIALECT_PIPER_TRANSFORMS_MEMORYPLAN_H
