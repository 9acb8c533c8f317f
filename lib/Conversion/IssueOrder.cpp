//===- IssueOrder.cpp - When the host issues a program's transfers --------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "IssueOrder.h"

#include "CommCalls.h"

#include "piper/Dialect/Piper/Transforms/Buffers.h"
#include "piper/Dialect/Piper/Transforms/Programs.h"

using namespace mlir;
using namespace mlir::piper;

void mlir::piper::issueSendsEarly(ProgramOp program) {
  Block &body = program.getBody().front();
  SmallVector<SendOp> sends(body.getOps<SendOp>());
  for (SendOp send : sends) {
    StringAttr stream = getProgramStream(send);
    // The waits on the send's stream right before it go with it.
    SmallVector<Operation *> group = {send};
    DenseSet<int64_t> events;
    for (Operation *prev = send->getPrevNode(); prev;
         prev = prev->getPrevNode()) {
      auto wait = dyn_cast<WaitOp>(prev);
      if (!wait || getProgramStream(wait) != stream)
        break;
      group.insert(group.begin(), prev);
      events.insert(wait.getEvent());
    }
    Operation *value = send.getValue().getDefiningOp();
    Operation *after = nullptr;
    for (Operation *prev = group.front()->getPrevNode(); prev;
         prev = prev->getPrevNode()) {
      auto record = dyn_cast<RecordOp>(prev);
      if (prev == value || isa<InputOp>(prev) ||
          getProgramStream(prev) == stream ||
          (record && events.contains(record.getEvent()))) {
        after = prev;
        break;
      }
    }
    if (after == group.front()->getPrevNode())
      continue;
    for (Operation *op : group) {
      if (after)
        op->moveAfter(after);
      else
        op->moveBefore(&body, body.begin());
      after = op;
    }
  }
}

DenseSet<Operation *> mlir::piper::findLazyReceives(ProgramOp program) {
  DenseSet<Operation *> lazy;
  auto receives = program.getBody().front().getOps<RecvOp>();
  if (receives.empty())
    return lazy;
  ProgramOrder order(program);
  for (RecvOp recv : receives) {
    Value value = recv.getResult();
    if (value.use_empty() || wireType(value.getType()) != value.getType())
      continue;
    if (llvm::all_of(value.getUsers(), [&](Operation *user) {
          return isa<OutputOp>(user) || order.happensBefore(recv, user);
        }))
      lazy.insert(recv);
  }
  return lazy;
}
