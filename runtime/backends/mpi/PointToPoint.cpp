//===- PointToPoint.cpp - Piper runtime send and recv ---------------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Sends and receives of every stream share one duplicate of the world
// communicator, created at init: a per-stream duplicate would have to be
// created collectively by every rank, while streams are local. The program
// verifier guarantees a (peer, tag) pair is unique, which is all MPI matching
// needs.
//
//===----------------------------------------------------------------------===//

#include "Internal.h"

using namespace piper::rt;

namespace {

piper_rt_status enqueueP2P(Op::Kind kind, piper_rt_stream stream,
                           const void *send, void *recv, size_t count,
                           piper_rt_dtype dtype, int peer, int64_t tag) {
  if (piper_rt_status s = checkStream(stream))
    return s;
  if (piper_rt_status s = checkCount(count, dtype))
    return s;
  const piper_rt_context_impl &context = *stream->context;
  const char *name = kind == Op::Send ? "send" : "recv";
  if (count > 0 && !send && !recv)
    return PIPER_RT_ERROR(PIPER_RT_ERROR_INVALID_ARGUMENT,
                          "%s on stream '%s': data is NULL", name,
                          stream->name.c_str());
  if (peer < 0 || peer >= context.size)
    return PIPER_RT_ERROR(PIPER_RT_ERROR_INVALID_ARGUMENT,
                          "%s on stream '%s': peer %d is not a rank of the "
                          "%d-rank world",
                          name, stream->name.c_str(), peer, context.size);
  if (tag < 0 || tag > PIPER_RT_MAX_TAG)
    return PIPER_RT_ERROR(PIPER_RT_ERROR_INVALID_ARGUMENT,
                          "%s on stream '%s': tag %lld is outside 0..%d", name,
                          stream->name.c_str(), static_cast<long long>(tag),
                          PIPER_RT_MAX_TAG);
  Op op;
  op.kind = kind;
  op.send = send;
  op.recv = recv;
  op.count = static_cast<int>(count);
  op.dtype = dtype;
  op.peer = peer;
  op.tag = static_cast<int>(tag);
  return enqueue(*stream, op);
}

} // namespace

piper_rt_status piper_rt_send(piper_rt_stream stream, const void *data,
                              size_t count, piper_rt_dtype dtype, int peer,
                              int64_t tag) {
  return enqueueP2P(Op::Send, stream, data, nullptr, count, dtype, peer, tag);
}

piper_rt_status piper_rt_recv(piper_rt_stream stream, void *data, size_t count,
                              piper_rt_dtype dtype, int peer, int64_t tag) {
  return enqueueP2P(Op::Recv, stream, nullptr, data, count, dtype, peer, tag);
}
