//===- Buffers.h - Buffers of device programs -------------------*- C++ -*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Buffers of a `piper.program`: the happens-before order of its instructions
// across streams and events, the lifetime of each value under it, and the
// rule for when two values may share a buffer. `--piper-assign-buffers`
// assigns buffers with it and `--piper-verify-programs` checks an assignment
// with it, so the two cannot disagree. docs/DevicePrograms.md states the
// rules.
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_DIALECT_PIPER_TRANSFORMS_BUFFERS_H
#define PIPER_DIALECT_PIPER_TRANSFORMS_BUFFERS_H

#include "piper/Dialect/Piper/IR/PiperOps.h"

#include "llvm/ADT/DenseMap.h"

namespace mlir::piper {

/// Happens-before among the instructions of one program. Instructions of one
/// stream are ordered by program order; across streams only through events:
/// everything before `piper.record e` on stream A happens before everything
/// after `piper.wait e` on stream B. Orderings through other programs (a
/// send answered by a receive that is followed by a send back) are not
/// used: the relation is a safe under-approximation.
class ProgramOrder {
public:
  explicit ProgramOrder(ProgramOp program);

  /// Whether `before` finishes before `after` starts. Both run on streams.
  bool happensBefore(Operation *before, Operation *after) const;

private:
  /// Instruction -> (stream index, 1-based position on the stream).
  DenseMap<Operation *, std::pair<unsigned, int64_t>> place;
  /// Instruction -> per stream, the last position known finished when it
  /// starts (a vector clock).
  DenseMap<Operation *, SmallVector<int64_t>> clock;
};

/// When a program value occupies its buffer.
struct BufferLifetime {
  /// The defining instruction; null for `piper.input`, whose value is there
  /// from the start of the step.
  Operation *def = nullptr;
  /// The instructions that must have finished before the buffer is free:
  /// the definition and every use on a stream.
  SmallVector<Operation *> ends;
  /// A `piper.output` reads it at the end of the step.
  Operation *output = nullptr;
};

/// The lifetime of `value`, a result of a program instruction.
BufferLifetime getBufferLifetime(Value value);

/// Whether `op` may write its result over operand `value` (in place): a
/// `piper.comm` over its operand, a `piper.sum` over its first operand, and,
/// in a persistent buffer, a `piper.launch` over any operand (an optimizer
/// update writing a parameter or its state).
bool mayWriteInPlace(Operation *op, Value value, bool persistent);

/// Why `later` may not share a buffer with `earlier` (defined before it in
/// program order), or success. On failure, `witness` is the end of
/// `earlier`'s lifetime (an instruction, or the `piper.output` reading it)
/// not ordered before `later`'s definition; null when `later` is an input
/// (every input is there from the start) or when the buffer is persistent
/// and `later` is not written in place.
LogicalResult checkBufferSharing(const ProgramOrder &order, Value earlier,
                                 Value later, bool persistent,
                                 Operation *&witness);

/// The bytes a value occupies (its static tensor type; 0 otherwise).
int64_t getBufferBytes(Value value);

/// Assigns a buffer to every value of `program` (see
/// `--piper-assign-buffers`). Fails, reporting on the program, when it
/// already has a buffer table.
LogicalResult assignBuffers(ProgramOp program);

} // namespace mlir::piper

#endif // PIPER_DIALECT_PIPER_TRANSFORMS_BUFFERS_H
