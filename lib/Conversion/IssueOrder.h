//===- IssueOrder.h - When the host issues a program's transfers -*- C++ -*-=//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// A lowered program runs its compute streams on the host, in program order,
// and only enqueues communication. So where a transfer stands in program
// order is when it starts, and a blocking receive stops the host:
//
//  - a send placed after a launch it does not depend on waits for that
//    launch, and the peer waits with it (1F1B's last stage sent each input
//    gradient only after the weight-gradient launch that follows it);
//  - a receive waited for where it is posted holds back the launches placed
//    between it and the value's first reader (1F1B's first stage waited for
//    microbatch 0's gradient before running microbatch 1's forward).
//
// issueSendsEarly moves sends up; findLazyReceives picks the receives that
// can be nonblocking. Neither changes what happens before what on the
// program's streams (docs/DevicePrograms.md), so buffers and the verifier's
// deadlock proof hold as they are.
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_LIB_CONVERSION_ISSUEORDER_H
#define PIPER_LIB_CONVERSION_ISSUEORDER_H

#include "piper/Dialect/Piper/IR/PiperOps.h"

#include "llvm/ADT/DenseSet.h"

namespace mlir::piper {

/// Moves each `piper.send` of `program`, with the waits on its stream right
/// before it, up to just after the last of: the definition of its value,
/// the previous instruction on its stream, and the record of an event those
/// waits wait for (or `piper.input`s).
void issueSendsEarly(ProgramOp program);

/// The receives of `program` whose value every reader reads after the
/// receive has finished, by the program's happens-before (the same stream
/// later, or after a wait for an event recorded after the receive), or at
/// the end of the step; and whose value arrives in its own type (bf16
/// travels as f32 and is narrowed at once, so it stays blocking) and is
/// read at all.
llvm::DenseSet<Operation *> findLazyReceives(ProgramOp program);

} // namespace mlir::piper

#endif // PIPER_LIB_CONVERSION_ISSUEORDER_H
