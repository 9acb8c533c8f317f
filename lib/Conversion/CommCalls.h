//===- CommCalls.h - Runtime and kernel calls on tensors -------*- C++ -*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// piper-program-to-func lowers a program's communication to calls of C-ABI
// shims that piper-run exports and implements on the piper_rt_* runtime
// (tools/piper-run/Comm.cpp), so plans link no MPI. Every tensor crosses as
// an unranked memref (rank, descriptor); inputs may have any strides (the
// shims copy them out), outputs are freshly allocated identity buffers.
//
//   piper_comm_send_<t>(in, int64 peer_offset, int64 tag)
//   piper_comm_recv_<t>(out, int64 peer_offset, int64 tag)
//   piper_comm_iall_reduce_<t>(in, out, int64 comm, f64 scale)
//   piper_comm_ireduce_scatter_<t>(in, out, int64 comm, f64 scale)
//   piper_comm_iall_gather_<t>(in, out, int64 comm)
//   piper_comm_all_reduce_<t>(in, out, int64 comm, f64 scale)   (in bodies)
//   piper_comm_all_to_all_<t>(in, out, int64 comm, int64 direction)
//   piper_comm_shard_<t>(in, out, int64 comm)
//   piper_trace_begin(int64 launch) / piper_trace_end(int64 launch)
//
// `peer_offset` is the peer's world rank minus the caller's: a program is
// shared by every replica of its role, and its peer differs from each of
// them only on the roles' axes, so the offset is the same for all. `comm`
// indexes the plan's communicator list. Reductions sum, then scale.
// all_gather and shard work on flat chunks (ReplicaLayout.h): all_gather
// concatenates the members' chunks and keeps the whole tensor's elements;
// shard copies this member's chunk of a whole tensor (no communication).
// The trace hooks bracket every launch (its index in program order) so that
// piper-run can time kernels into the runtime's Chrome trace.
// all_to_all moves an expert buffer between N members: direction 0 (to the
// experts' owners) takes [E, C, H] (member j owns experts [j E/N, (j+1)
// E/N)) to [E/N, N C, H], the tokens of source s at [:, s C : (s+1) C];
// direction 1 (back) is its inverse.
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_LIB_CONVERSION_COMMCALLS_H
#define PIPER_LIB_CONVERSION_COMMCALLS_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir::piper {

/// "f32", "f64" (and "i64" when `allowInteger`): the shim suffix of a tensor
/// type's element type; a located error for anything else.
FailureOr<StringRef> commSuffix(Operation *op, Type type, bool allowInteger);

/// Calls C-ABI function `name` (declared once in `module`) with `inputs`
/// (tensors, passed read-only with any layout), fresh buffers of
/// `outputTypes` and the scalar `extra` operands (i64 or f64 values); returns
/// the outputs as tensors. The runtime's shims above and the kernel
/// library's piper_k_* functions (Kernels.h) share this convention, so
/// --piper-convert-to-kernels calls kernels through it too.
SmallVector<Value> callShim(OpBuilder &builder, Location loc, ModuleOp module,
                            StringRef name, ValueRange inputs,
                            TypeRange outputTypes, ValueRange extra);

/// An i64 / f64 constant, for `extra`.
Value i64Constant(OpBuilder &builder, Location loc, int64_t value);
Value f64Constant(OpBuilder &builder, Location loc, double value);

} // namespace mlir::piper

#endif // PIPER_LIB_CONVERSION_COMMCALLS_H
