//===- Schedule.h - Pipeline schedules as per-rank action lists -*- C++ -*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The MLIR-free model of a pipeline schedule: every rank runs an ordered list
// of actions, each the forward (F), input-gradient (I, "BI"), weight-gradient
// (W) or full backward (B = I + W) of one stage on one microbatch, or an
// overlapped F&B pair as DualPipe runs it. This is exactly what a
// `transform.piper.order` directive needs (one group per action, per device
// group) and what PyTorch's pipelining CSV stores, so builders, the validator,
// the simulator, the CSV codec and the pictures all share this one type.
//
// Plain C++17: no MLIR, no LLVM, so the runtime may link it too.
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_SCHEDULE_SCHEDULE_H
#define PIPER_SCHEDULE_SCHEDULE_H

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace piper::sched {

//===----------------------------------------------------------------------===//
// Results
//===----------------------------------------------------------------------===//

/// An error message; builders, the validator and the CSV reader return one
/// instead of throwing so that callers (a transform op, the CLI) can turn it
/// into their own diagnostic.
struct Error {
  std::string message;
};

/// Either a value or an Error, like llvm::Expected without the must-check
/// machinery (this library is plain C++17).
template <typename T> class Result {
public:
  Result(T value) : value(std::move(value)) {}
  Result(Error error) : message(std::move(error.message)) {}

  explicit operator bool() const { return value.has_value(); }
  bool ok() const { return value.has_value(); }
  const std::string &error() const { return message; }

  T &operator*() { return *value; }
  const T &operator*() const { return *value; }
  T *operator->() { return &*value; }
  const T *operator->() const { return &*value; }

private:
  std::optional<T> value;
  std::string message;
};

/// Success or an Error.
class Status {
public:
  Status() = default;
  Status(Error error) : message(std::move(error.message)) {}
  static Status success() { return Status(); }

  explicit operator bool() const { return !message; }
  bool ok() const { return !message; }
  const std::string &error() const {
    static const std::string none;
    return message ? *message : none;
  }

private:
  std::optional<std::string> message;
};

//===----------------------------------------------------------------------===//
// Actions
//===----------------------------------------------------------------------===//

/// What one computation does. Letters as in PyTorch's CSV format.
enum class Kind : unsigned char {
  F, ///< Forward.
  I, ///< Backward with respect to the input ("BI"): on the critical path.
  W, ///< Backward with respect to the weights ("BW"): deferrable.
  B, ///< Full backward, I and W fused.
};

/// The letter of a kind: 'F', 'I', 'W' or 'B'.
char kindLetter(Kind kind);

/// One computation: a kind applied to one stage and one microbatch.
struct Compute {
  Kind kind = Kind::F;
  int stage = 0;
  int microbatch = 0;

  /// PyTorch spelling: `2F0` is the forward of stage 2 on microbatch 0.
  std::string str() const;
  bool operator==(const Compute &o) const {
    return kind == o.kind && stage == o.stage && microbatch == o.microbatch;
  }
  bool operator!=(const Compute &o) const { return !(*this == o); }
};

/// One entry of a rank's list: a computation, or a forward co-scheduled with
/// a backward (DualPipe's F&B, PyTorch's OVERLAP_F_B). The pair starts when
/// both halves may start and both finish together: it costs F&B.
struct Action {
  Compute first;
  std::optional<Compute> overlapped;

  Action() = default;
  Action(Compute c) : first(c) {}
  static Action f(int stage, int mb) { return Compute{Kind::F, stage, mb}; }
  static Action i(int stage, int mb) { return Compute{Kind::I, stage, mb}; }
  static Action w(int stage, int mb) { return Compute{Kind::W, stage, mb}; }
  static Action b(int stage, int mb) { return Compute{Kind::B, stage, mb}; }
  /// Forward of (fStage, fMb) overlapped with full backward of (bStage, bMb).
  static Action overlap(int fStage, int fMb, int bStage, int bMb) {
    Action a = f(fStage, fMb);
    a.overlapped = Compute{Kind::B, bStage, bMb};
    return a;
  }

  bool isOverlap() const { return overlapped.has_value(); }
  /// The one or two computations this action performs.
  std::vector<Compute> parts() const;
  /// PyTorch spelling: `2F0`, or `(0F7;7B3)OVERLAP_F_B` for a pair.
  std::string str() const;
  bool operator==(const Action &o) const {
    return first == o.first && overlapped == o.overlapped;
  }
  bool operator!=(const Action &o) const { return !(*this == o); }
};

/// Parses one PyTorch CSV cell (without surrounding spaces): `2F0`, `7I0`,
/// `7W0`, `1B2` or `(0F7;7B3)OVERLAP_F_B`. A `B` is read as a full backward;
/// the CSV reader decides whether it meant only the input gradient.
Result<Action> parseAction(std::string_view text);

//===----------------------------------------------------------------------===//
// Schedules
//===----------------------------------------------------------------------===//

/// Per-rank ordered action lists over `numStages` stages and
/// `numMicrobatches` microbatches.
///
/// Stages form `numChains` independent pipelines of equal length: stage s
/// belongs to chain s / (numStages / numChains) and feeds the next stage of
/// its chain. Every chain runs every microbatch. One chain is the usual case;
/// bidirectional DualPipe has two (stages 0..p-1 run rank 0 -> p-1, stages
/// p..2p-1 run rank p-1 -> 0) and each carries half of the microbatches.
struct Schedule {
  std::string name;
  int numRanks = 0;
  int numStages = 0;
  int numMicrobatches = 0;
  int numChains = 1;
  /// stageToRank[s]: the rank that holds stage s.
  std::vector<int> stageToRank;
  /// ranks[r]: what rank r runs, in order.
  std::vector<std::vector<Action>> ranks;

  int stagesPerChain() const { return numStages / numChains; }
  bool isFirstInChain(int stage) const { return stage % stagesPerChain() == 0; }
  bool isLastInChain(int stage) const {
    return stage % stagesPerChain() == stagesPerChain() - 1;
  }
  /// The stages rank r holds, in increasing order.
  std::vector<int> stagesOf(int rank) const;
  /// Total number of actions over all ranks.
  size_t size() const;
};

} // namespace piper::sched

#endif // PIPER_SCHEDULE_SCHEDULE_H
