//===- Comm.cpp - Send/receive shims of compiled plans --------------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// `piper-program-to-func` lowers piper.send / piper.recv to calls of
//   void piper_comm_send_<f32|f64|i64>(int64_t rank, void *desc,
//                                      int64_t peer, int64_t tag)
// (an unranked memref as MLIR passes it, then the peer's world rank and the
// tag), left undefined in the plan's shared object and resolved against
// piper-run's exported symbols at dlopen time, so plans link no MPI.
//
// One thread runs a role's streams in program order, and the verifier proved
// that order deadlock-free with rendezvous sends only if a send does not hold
// up this rank's later receives (stage 0 sends microbatch 1 forward before it
// receives microbatch 0's gradient). So a send copies its value (which may be
// a strided slice, freed right after the call) into a staging vector and is
// only enqueued, on a stream of its own per (peer, tag) so that no send waits
// behind another; the step's end waits for them all. A receive is enqueued on
// one receive stream and waited for at once: the value is needed next.
//
//===----------------------------------------------------------------------===//

#include "Comm.h"

#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <vector>

using namespace piper::run;

namespace {

struct State {
  piper_rt_context context = nullptr;
  piper_rt_stream recvStream = nullptr;
  std::map<std::pair<int64_t, int64_t>, piper_rt_stream> sendStreams;
  /// Copies of this step's sent values, alive until their sends complete.
  std::vector<std::unique_ptr<std::vector<uint64_t>>> staging;
  std::string error;
};
State state;

void record(const char *what, int64_t peer, int64_t tag) {
  if (!state.error.empty())
    return;
  state.error = std::string(what) + " (peer rank " + std::to_string(peer) +
                ", tag " + std::to_string(tag) + "): " + piper_rt_last_error();
}

/// The memref descriptor {allocated, aligned, offset, sizes, strides}.
struct View {
  char *aligned;
  int64_t offset;
  const int64_t *sizes, *strides;
  int64_t rank;
  int64_t numel() const {
    int64_t n = 1;
    for (int64_t d = 0; d < rank; ++d)
      n *= sizes[d];
    return n;
  }
};

View view(int64_t rank, void *desc) {
  auto *words = static_cast<int64_t *>(desc);
  char *aligned;
  std::memcpy(&aligned, &words[1], sizeof(void *));
  return {aligned, words[2], words + 3, words + 3 + rank, rank};
}

/// Copies a strided view into `out` (row-major, contiguous).
void gather(const View &v, size_t elt, char *out) {
  int64_t n = v.numel();
  std::vector<int64_t> index(v.rank, 0);
  for (int64_t i = 0; i < n; ++i) {
    int64_t at = v.offset;
    for (int64_t d = 0; d < v.rank; ++d)
      at += index[d] * v.strides[d];
    std::memcpy(out + i * elt, v.aligned + at * elt, elt);
    for (int64_t d = v.rank - 1; d >= 0; --d) {
      if (++index[d] < v.sizes[d])
        break;
      index[d] = 0;
    }
  }
}

void send(int64_t rank, void *desc, int64_t peer, int64_t tag,
          piper_rt_dtype dtype, size_t elt) {
  if (!state.context) {
    state.error = "a plan sent a value but piper-run started no runtime";
    return;
  }
  View v = view(rank, desc);
  size_t n = static_cast<size_t>(v.numel());
  auto copy = std::make_unique<std::vector<uint64_t>>((n * elt + 7) / 8 + 1);
  gather(v, elt, reinterpret_cast<char *>(copy->data()));
  piper_rt_stream &stream = state.sendStreams[{peer, tag}];
  // Stream names are unique per context (they label the trace).
  std::string name =
      "send to " + std::to_string(peer) + " tag " + std::to_string(tag);
  if (!stream && piper_rt_stream_create(state.context, name.c_str(), &stream) !=
                     PIPER_RT_OK)
    return record("send stream", peer, tag);
  if (piper_rt_send(stream, copy->data(), n, dtype, static_cast<int>(peer),
                    tag) != PIPER_RT_OK)
    return record("send", peer, tag);
  state.staging.push_back(std::move(copy));
}

void recv(int64_t rank, void *desc, int64_t peer, int64_t tag,
          piper_rt_dtype dtype, size_t elt) {
  if (!state.context) {
    state.error = "a plan received a value but piper-run started no runtime";
    return;
  }
  // The compiled code allocates a receive's buffer with the identity layout.
  View v = view(rank, desc);
  if (piper_rt_recv(state.recvStream, v.aligned + v.offset * elt,
                    static_cast<size_t>(v.numel()), dtype,
                    static_cast<int>(peer), tag) != PIPER_RT_OK ||
      piper_rt_stream_synchronize(state.recvStream) != PIPER_RT_OK)
    record("recv", peer, tag);
}

} // namespace

bool piper::run::commStart(piper_rt_context context, std::string &error) {
  state.context = context;
  if (piper_rt_stream_create(context, "recv", &state.recvStream) !=
      PIPER_RT_OK) {
    error = piper_rt_last_error();
    return false;
  }
  return true;
}

bool piper::run::commFinishStep(std::string &error) {
  for (auto &[key, stream] : state.sendStreams)
    if (piper_rt_stream_synchronize(stream) != PIPER_RT_OK)
      record("send", key.first, key.second);
  state.staging.clear();
  if (state.error.empty())
    return true;
  error = state.error;
  state.error.clear();
  return false;
}

bool piper::run::commMoveScalar(double &value, int from, int to, int self,
                                std::string &error) {
  if (from == to || (self != from && self != to))
    return true;
  // The largest tag: compiled programs number their messages from 0.
  piper_rt_status status =
      self == from ? piper_rt_send(state.recvStream, &value, 1, PIPER_RT_F64,
                                   to, PIPER_RT_MAX_TAG)
                   : piper_rt_recv(state.recvStream, &value, 1, PIPER_RT_F64,
                                   from, PIPER_RT_MAX_TAG);
  if (status == PIPER_RT_OK)
    status = piper_rt_stream_synchronize(state.recvStream);
  if (status == PIPER_RT_OK)
    return true;
  error = std::string("loss from rank ") + std::to_string(from) + ": " +
          piper_rt_last_error();
  return false;
}

void piper::run::commStop() {
  for (auto &[key, stream] : state.sendStreams)
    piper_rt_stream_destroy(stream);
  state.sendStreams.clear();
  piper_rt_stream_destroy(state.recvStream);
  state.recvStream = nullptr;
  state.context = nullptr;
}

// The shims, exported from piper-run for the plans' shared objects.
#define PIPER_COMM_SHIMS(SUFFIX, DTYPE, TYPE)                                  \
  extern "C"                                                                   \
      __attribute__((visibility("default"))) void piper_comm_send_##SUFFIX(    \
          int64_t rank, void *desc, int64_t peer, int64_t tag) {               \
    send(rank, desc, peer, tag, DTYPE, sizeof(TYPE));                          \
  }                                                                            \
  extern "C"                                                                   \
      __attribute__((visibility("default"))) void piper_comm_recv_##SUFFIX(    \
          int64_t rank, void *desc, int64_t peer, int64_t tag) {               \
    recv(rank, desc, peer, tag, DTYPE, sizeof(TYPE));                          \
  }
PIPER_COMM_SHIMS(f32, PIPER_RT_F32, float)
PIPER_COMM_SHIMS(f64, PIPER_RT_F64, double)
PIPER_COMM_SHIMS(i64, PIPER_RT_I64, int64_t)
