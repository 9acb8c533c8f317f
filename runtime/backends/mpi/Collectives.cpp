//===- Collectives.cpp - Piper runtime collectives and posting to MPI -----===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Collectives are queued on their communicator's stream and posted as MPI's
// nonblocking collectives (MPI_Iallreduce, ...), which complete through
// MPI_Test in the progress loop. One communicator per (axes, stream) keeps
// MPI's rule that members issue a communicator's collectives in the same
// order equal to the program's rule for a stream.
//
//===----------------------------------------------------------------------===//

#include "Internal.h"

#include <climits>

using namespace piper::rt;

const char *piper::rt::dtypeName(piper_rt_dtype dtype) {
  switch (dtype) {
  case PIPER_RT_F32:
    return "f32";
  case PIPER_RT_F64:
    return "f64";
  case PIPER_RT_I64:
    return "i64";
  case PIPER_RT_DTYPE_MAX_ENUM:
    break;
  }
  return "?";
}

const char *piper::rt::opName(Op::Kind kind) {
  switch (kind) {
  case Op::Send:
    return "send";
  case Op::Recv:
    return "recv";
  case Op::AllReduce:
    return "all_reduce";
  case Op::ReduceScatter:
    return "reduce_scatter";
  case Op::AllGather:
    return "all_gather";
  case Op::AllToAll:
    return "all_to_all";
  case Op::Wait:
    return "wait";
  }
  return "?";
}

static const char *reduceName(piper_rt_reduce_op op) {
  switch (op) {
  case PIPER_RT_SUM:
    return "sum";
  case PIPER_RT_MAX:
    return "max";
  case PIPER_RT_MIN:
    return "min";
  case PIPER_RT_REDUCE_OP_MAX_ENUM:
    break;
  }
  return "?";
}

std::string piper::rt::describeOp(const Op &op) {
  std::string text = opName(op.kind);
  if (op.kind == Op::Wait)
    return "wait for an event of stream '" + op.waitStream->name + "'";
  if (op.kind == Op::AllReduce || op.kind == Op::ReduceScatter)
    text += std::string("(") + reduceName(op.reduce) + ")";
  text += " of " + std::to_string(op.count) + " " + dtypeName(op.dtype);
  if (op.kind == Op::Send)
    text += " to rank " + std::to_string(op.peer) + " tag " +
            std::to_string(op.tag);
  else if (op.kind == Op::Recv)
    text += " from rank " + std::to_string(op.peer) + " tag " +
            std::to_string(op.tag);
  else if (op.kind == Op::ReduceScatter || op.kind == Op::AllGather ||
           op.kind == Op::AllToAll)
    text += " per member";
  if (op.comm)
    text += " on " + op.comm->description;
  return text;
}

MPI_Datatype piper::rt::mpiType(piper_rt_dtype dtype) {
  switch (dtype) {
  case PIPER_RT_F32:
    return MPI_FLOAT;
  case PIPER_RT_F64:
    return MPI_DOUBLE;
  case PIPER_RT_I64:
    return MPI_INT64_T;
  case PIPER_RT_DTYPE_MAX_ENUM:
    break;
  }
  return MPI_DATATYPE_NULL;
}

MPI_Op piper::rt::mpiOp(piper_rt_reduce_op op) {
  switch (op) {
  case PIPER_RT_SUM:
    return MPI_SUM;
  case PIPER_RT_MAX:
    return MPI_MAX;
  case PIPER_RT_MIN:
    return MPI_MIN;
  case PIPER_RT_REDUCE_OP_MAX_ENUM:
    break;
  }
  return MPI_OP_NULL;
}

int piper::rt::postOp(piper_rt_context_impl &context, Op &op) {
  MPI_Datatype type = mpiType(op.dtype);
  MPI_Comm comm = op.comm ? op.comm->comm : context.p2p;
  switch (op.kind) {
  case Op::Send:
    return MPI_Isend(op.send, op.count, type, op.peer, op.tag, comm,
                     &op.request);
  case Op::Recv:
    return MPI_Irecv(op.recv, op.count, type, op.peer, op.tag, comm,
                     &op.request);
  case Op::AllReduce:
    return MPI_Iallreduce(op.send == op.recv ? MPI_IN_PLACE : op.send, op.recv,
                          op.count, type, mpiOp(op.reduce), comm, &op.request);
  case Op::ReduceScatter:
    return MPI_Ireduce_scatter_block(op.send, op.recv, op.count, type,
                                     mpiOp(op.reduce), comm, &op.request);
  case Op::AllGather:
    return MPI_Iallgather(op.send, op.count, type, op.recv, op.count, type,
                          comm, &op.request);
  case Op::AllToAll:
    return MPI_Ialltoall(op.send, op.count, type, op.recv, op.count, type, comm,
                         &op.request);
  case Op::Wait:
    break;
  }
  return MPI_SUCCESS;
}

piper_rt_status piper::rt::checkCount(size_t count, piper_rt_dtype dtype) {
  size_t bytes = 0;
  if (piper_rt_status s = piper_rt_dtype_size(dtype, &bytes))
    return s;
  // MPI counts are ints; larger messages would need chunking or MPI 4's
  // large-count calls, which OpenMPI 4.1 lacks.
  if (count > static_cast<size_t>(INT_MAX))
    return PIPER_RT_ERROR(PIPER_RT_ERROR_INVALID_ARGUMENT,
                          "count %zu exceeds MPI's limit of %d elements", count,
                          INT_MAX);
  return PIPER_RT_OK;
}

namespace {

piper_rt_status enqueueCollective(Op::Kind kind, piper_rt_comm comm,
                                  const void *send, void *recv, size_t count,
                                  piper_rt_dtype dtype,
                                  piper_rt_reduce_op reduce) {
  if (!comm)
    return PIPER_RT_ERROR(PIPER_RT_ERROR_INVALID_ARGUMENT, "comm is NULL");
  if (piper_rt_status s = checkStream(comm->stream))
    return s;
  if (piper_rt_status s = checkCount(count, dtype))
    return s;
  if (count > 0 && (!send || !recv))
    return PIPER_RT_ERROR(PIPER_RT_ERROR_INVALID_ARGUMENT,
                          "%s on the %s: send or recv is NULL", opName(kind),
                          comm->description.c_str());
  if ((kind == Op::AllReduce || kind == Op::ReduceScatter) &&
      mpiOp(reduce) == MPI_OP_NULL)
    return PIPER_RT_ERROR(PIPER_RT_ERROR_INVALID_ARGUMENT,
                          "unknown reduction %d", static_cast<int>(reduce));
  // Only all_reduce has an in-place form here; MPI's other in-place
  // conventions differ per collective and the plans never need them.
  if (kind != Op::AllReduce && count > 0 && send == recv)
    return PIPER_RT_ERROR(PIPER_RT_ERROR_INVALID_ARGUMENT,
                          "%s cannot run in place (send == recv)",
                          opName(kind));
  Op op;
  op.kind = kind;
  op.send = send;
  op.recv = recv;
  op.count = static_cast<int>(count);
  op.dtype = dtype;
  op.reduce = reduce;
  op.comm = comm;
  return enqueue(*comm->stream, op);
}

} // namespace

piper_rt_status piper_rt_all_reduce(piper_rt_comm comm, const void *send,
                                    void *recv, size_t count,
                                    piper_rt_dtype dtype,
                                    piper_rt_reduce_op op) {
  return enqueueCollective(Op::AllReduce, comm, send, recv, count, dtype, op);
}

piper_rt_status piper_rt_reduce_scatter(piper_rt_comm comm, const void *send,
                                        void *recv, size_t recv_count,
                                        piper_rt_dtype dtype,
                                        piper_rt_reduce_op op) {
  return enqueueCollective(Op::ReduceScatter, comm, send, recv, recv_count,
                           dtype, op);
}

piper_rt_status piper_rt_all_gather(piper_rt_comm comm, const void *send,
                                    void *recv, size_t send_count,
                                    piper_rt_dtype dtype) {
  return enqueueCollective(Op::AllGather, comm, send, recv, send_count, dtype,
                           PIPER_RT_SUM);
}

piper_rt_status piper_rt_all_to_all(piper_rt_comm comm, const void *send,
                                    void *recv, size_t count,
                                    piper_rt_dtype dtype) {
  return enqueueCollective(Op::AllToAll, comm, send, recv, count, dtype,
                           PIPER_RT_SUM);
}
