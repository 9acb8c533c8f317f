//===- Engine.h - Event-driven simulation of device programs ----*- C++ -*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The MLIR-free core of the simulator: programs of instructions on streams,
// already costed, run together in simulated time. One program instance
// stands for every replica of its role (they run in lockstep), so one device
// per program is simulated.
//
// Semantics (those of docs/DevicePrograms.md):
//   - a stream runs its instructions one at a time, in order;
//   - a record is reached once everything before it on its stream ended; a
//     wait holds its stream until its record was reached;
//   - a rendezvous (a send with its receive, a collective across programs)
//     starts when every participant is at it and ends for all at once;
//   - a launch with an overlap partner (DualPipe's F&B) starts together with
//     the partner, when both are at the head of their streams;
//   - work is a list of segments, each compute or communication, and runs
//     as a fluid: between two events every active segment progresses at a
//     constant rate that the device's SM split determines (see Rates below).
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_SIMULATOR_ENGINE_H
#define PIPER_SIMULATOR_ENGINE_H

#include <string>
#include <vector>

namespace piper::sim {

/// What a segment occupies.
enum class SegmentKind { Compute, Comm };

/// A piece of work of one instruction. `fixed` seconds run at rate 1 whatever
/// the device does (launch overhead, link latency), then `work` seconds of
/// work at full rate run at the rate the device grants.
struct Segment {
  SegmentKind kind = SegmentKind::Compute;
  double fixed = 0;
  double work = 0;
  /// Compute: the fraction of the device's SMs reserved for it (`sm_share`),
  /// 0 for a launch that takes whatever is free. Comm: the fraction of SMs
  /// the communication kernel needs for full bandwidth.
  double share = 0;
  /// What the timeline calls it (`all_to_all(...)` inside a launch).
  std::string label;
};

/// One instruction of a stream.
struct Instr {
  enum class Kind { Launch, Comm, Record, Wait, Nop };
  Kind kind = Kind::Nop;
  /// The op's name (task, transfer, collective).
  std::string name;
  /// `F`, `BI`, `BW`, `UPD`, `sum`, `send`, `recv`, `all_reduce`, ...
  std::string category;
  /// The work, in order. A rendezvous uses the longest of its participants'
  /// segments (a receive usually has none).
  std::vector<Segment> segments;
  /// Record/Wait: the event, numbered per program.
  long event = -1;
  /// Comm: the rendezvous it takes part in (index into Problem::rendezvous),
  /// or -1 for work local to this device (a collective among replicas).
  int rendezvous = -1;
  /// Launch: the index in this program of the partner it starts with.
  int partnerStream = -1, partnerInstr = -1;
};

struct Stream {
  std::string name;
  std::vector<Instr> instrs;
};

struct Program {
  std::string name;
  std::vector<Stream> streams;
};

/// Everything to simulate: the programs and, per rendezvous, how many
/// instructions take part.
struct Problem {
  std::vector<Program> programs;
  std::vector<int> rendezvous;
  /// Compute slows by this fraction while communication is active on the
  /// same device (HBM and L2 contention beyond the SMs it takes).
  double interference = 0;
};

/// One instruction or segment as it ran.
struct Span {
  int program = 0, stream = 0, instr = 0;
  /// Segments: compute or comm; instructions: the kind of their first
  /// segment (Comm for a transfer or collective).
  SegmentKind kind = SegmentKind::Compute;
  bool isSegment = false;
  std::string name, category;
  double start = 0, end = 0;
};

/// The outcome.
struct Trace {
  double makespan = 0;
  /// Instructions with work (launches, communication) and their segments.
  std::vector<Span> spans;
  /// Empty on success; otherwise why the run stopped (a deadlock).
  std::string error;
};

/// Runs the programs to completion.
///
/// Rates. On each device, reserved compute shares are granted first (scaled
/// down if they exceed the device), communication kernels take what they
/// need of the rest (at least 2% of the device, so a full reservation never
/// starves them) and progress at the fraction of their need they get;
/// unreserved compute splits what remains equally and slows by
/// `interference` while communication runs. A segment spanning devices (a
/// send, a collective across programs) progresses at its slowest device's
/// rate.
Trace simulate(const Problem &problem);

/// Length of the union of intervals.
double unionLength(std::vector<std::pair<double, double>> intervals);
/// Length of the intersection of the unions of `a` and `b`.
double overlapLength(std::vector<std::pair<double, double>> a,
                     std::vector<std::pair<double, double>> b);

} // namespace piper::sim

#endif // PIPER_SIMULATOR_ENGINE_H
