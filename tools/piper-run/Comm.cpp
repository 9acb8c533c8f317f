//===- Comm.cpp - Send/receive shims of compiled plans --------------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// `piper-program-to-func` lowers communication to calls of the shims listed
// in lib/Conversion/CommCalls.h, e.g.
//   void piper_comm_send_<f32|f64|i64>(int64_t rank, void *desc,
//                                      int64_t peer_offset, int64_t tag)
// (an unranked memref as MLIR passes it, then the peer's world rank minus
// this rank's, and the tag), left undefined in the plan's shared object and
// resolved against piper-run's exported symbols at dlopen time, so plans
// link no MPI.
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
// Collectives run on the plan's communicators (created by commCreate, one
// per (axes, stream), each bound to a runtime stream of that name) and are
// waited for at once: every member runs the same program, so they reach
// them in the same order. Inputs are copied into contiguous staging first
// (they may be strided slices); reduce_scatter zero-pads the flattened
// gradient to members x chunk elements, and all_gather keeps the whole
// tensor's elements of the gathered chunks. all_to_all moves expert
// buffers (CommCalls.h): blocks of contiguous experts out, the received
// blocks interleaved along the slot dimension.
//
//===----------------------------------------------------------------------===//

#include "Comm.h"

#include <cstdint>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <vector>

using namespace piper::run;

namespace {

struct State {
  piper_rt_context context = nullptr;
  int self = 0;
  piper_rt_stream recvStream = nullptr;
  /// The plan's communicators, by index, with the stream each is bound to.
  std::vector<piper_rt_comm> comms;
  std::vector<piper_rt_stream> commStreams;
  std::map<std::string, piper_rt_stream> streamsByName;
  /// The running role's program streams, by index (record/wait operands).
  std::vector<std::string> programStreams;
  /// Program events: where each was last recorded (null: on a stream the
  /// host runs itself, complete as soon as recorded).
  std::map<int64_t, piper_rt_event> events;
  std::map<int64_t, piper_rt_stream> eventStream;
  /// Nonblocking collectives whose results are not final yet: what still
  /// has to run on the host once the stream's operation completes (scaling,
  /// copying out of staging), in enqueue order, and which output buffers
  /// they will write.
  struct Finisher {
    piper_rt_stream stream;
    std::function<void()> run;
  };
  std::deque<Finisher> finishers;
  /// Output ranges still being written: start -> (end, stream).
  std::map<const char *, std::pair<const char *, piper_rt_stream>>
      pendingOutputs;
  /// Staging of the nonblocking collectives, alive until finished.
  std::vector<std::shared_ptr<std::vector<uint64_t>>> collectiveStaging;
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

void ready(const View &v, size_t elt);

void send(int64_t rank, void *desc, int64_t offset, int64_t tag,
          piper_rt_dtype dtype, size_t elt) {
  int64_t peer = state.self + offset;
  if (!state.context) {
    state.error = "a plan sent a value but piper-run started no runtime";
    return;
  }
  View v = view(rank, desc);
  ready(v, elt);
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

void recv(int64_t rank, void *desc, int64_t offset, int64_t tag,
          piper_rt_dtype dtype, size_t elt) {
  int64_t peer = state.self + offset;
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

/// Completes `stream` (every operation enqueued so far) and runs its
/// finishers, so the outputs of its nonblocking collectives are final.
void finishStream(piper_rt_stream stream) {
  if (piper_rt_stream_synchronize(stream) != PIPER_RT_OK) {
    if (state.error.empty())
      state.error = std::string("collective: ") + piper_rt_last_error();
  }
  std::deque<State::Finisher> rest;
  for (State::Finisher &f : state.finishers) {
    if (f.stream == stream)
      f.run();
    else
      rest.push_back(std::move(f));
  }
  state.finishers = std::move(rest);
  for (auto it = state.pendingOutputs.begin();
       it != state.pendingOutputs.end();)
    it = it->second.second == stream ? state.pendingOutputs.erase(it)
                                     : std::next(it);
}

/// Before the host reads the view `v`: completes the stream of every
/// nonblocking collective that still writes memory the view may touch.
void ready(const View &v, size_t elt) {
  // The elements a strided view can touch: from its first to its last.
  const char *first = v.aligned + v.offset * elt, *last = first;
  for (int64_t d = 0; d < v.rank; ++d) {
    if (v.sizes[d] == 0)
      return;
    last += (v.sizes[d] - 1) * v.strides[d] * static_cast<int64_t>(elt);
  }
  last += elt;
  // Any pending output overlapping [first, last): complete its stream.
  for (;;) {
    auto it = state.pendingOutputs.upper_bound(last - 1);
    if (it == state.pendingOutputs.begin())
      return;
    --it;
    if (it->second.first <= first)
      return;
    finishStream(it->second.second);
  }
}

/// Every nonblocking collective completed and finished (a step's results
/// are read, or the step ends).
void finishAll() {
  for (auto &[name, stream] : state.streamsByName)
    finishStream(stream);
}

/// The communicator `index` and its stream; null (with the error recorded)
/// if the plan has no such communicator.
piper_rt_comm commAt(int64_t index, const char *what) {
  if (index < 0 || static_cast<size_t>(index) >= state.comms.size()) {
    if (state.error.empty())
      state.error = std::string(what) + ": the plan has no communicator #" +
                    std::to_string(index);
    return nullptr;
  }
  return state.comms[index];
}

void recordCollective(const char *what, int64_t index) {
  if (!state.error.empty())
    return;
  state.error = std::string(what) + " (communicator #" + std::to_string(index) +
                "): " + piper_rt_last_error();
}

template <typename T> void scaleBy(char *data, int64_t n, double scale) {
  if (scale == 1.0)
    return;
  T *p = reinterpret_cast<T *>(data);
  for (int64_t i = 0; i < n; ++i)
    p[i] = static_cast<T>(p[i] * scale);
}

void scaleElements(char *data, int64_t n, double scale, piper_rt_dtype dtype) {
  if (dtype == PIPER_RT_F32)
    scaleBy<float>(data, n, scale);
  else
    scaleBy<double>(data, n, scale);
}

/// out (a chunk) = this member's chunk of the flattened, zero-padded `in`.
void shard(int64_t rin, void *din, int64_t rout, void *dout, int64_t index,
           piper_rt_dtype dtype, size_t elt) {
  piper_rt_comm comm = commAt(index, "shard");
  if (!comm)
    return;
  int members = 1, member = 0;
  piper_rt_comm_size(comm, &members);
  piper_rt_comm_rank(comm, &member);
  View in = view(rin, din), out = view(rout, dout);
  ready(in, elt);
  int64_t chunk = out.numel();
  std::vector<uint64_t> staging((chunk * members * elt + 7) / 8 + 1, 0);
  gather(in, elt, reinterpret_cast<char *>(staging.data()));
  std::memcpy(out.aligned + out.offset * elt,
              reinterpret_cast<char *>(staging.data()) + member * chunk * elt,
              chunk * elt);
}

/// The nonblocking forms the programs' own collectives (gradient
/// reductions, ZeRO gathers) lower to: the operation is enqueued on the
/// communicator's stream and the call returns; the output is final after the
/// program waits for an event recorded after it on that stream (or the step
/// ends). Inputs are copied out at once (the compiled code may free them),
/// after completing any nonblocking collective that still writes them.
void iallReduce(int64_t rin, void *din, int64_t rout, void *dout, int64_t index,
                double scale, piper_rt_dtype dtype, size_t elt) {
  piper_rt_comm comm = commAt(index, "all_reduce");
  if (!comm)
    return;
  View in = view(rin, din), out = view(rout, dout);
  ready(in, elt);
  char *data = out.aligned + out.offset * elt;
  gather(in, elt, data);
  int64_t n = in.numel();
  piper_rt_stream stream = state.commStreams[index];
  if (piper_rt_all_reduce(comm, data, data, n, dtype, PIPER_RT_SUM) !=
      PIPER_RT_OK)
    return recordCollective("all_reduce", index);
  state.pendingOutputs[data] = {data + n * elt, stream};
  state.finishers.push_back(
      {stream, [=] { scaleElements(data, n, scale, dtype); }});
}

/// Tensor parallelism's in-body all-reduce: the body needs the sum next,
/// so the nonblocking form, completed at once.
void allReduce(int64_t rin, void *din, int64_t rout, void *dout, int64_t index,
               double scale, piper_rt_dtype dtype, size_t elt) {
  iallReduce(rin, din, rout, dout, index, scale, dtype, elt);
  if (index >= 0 && static_cast<size_t>(index) < state.commStreams.size())
    finishStream(state.commStreams[index]);
}

void ireduceScatter(int64_t rin, void *din, int64_t rout, void *dout,
                    int64_t index, double scale, piper_rt_dtype dtype,
                    size_t elt) {
  piper_rt_comm comm = commAt(index, "reduce_scatter");
  if (!comm)
    return;
  int members = 1;
  piper_rt_comm_size(comm, &members);
  View in = view(rin, din), out = view(rout, dout);
  ready(in, elt);
  int64_t chunk = out.numel();
  auto staging = std::make_shared<std::vector<uint64_t>>(
      (chunk * members * elt + 7) / 8 + 1, 0);
  gather(in, elt, reinterpret_cast<char *>(staging->data()));
  char *data = out.aligned + out.offset * elt;
  piper_rt_stream stream = state.commStreams[index];
  if (piper_rt_reduce_scatter(comm, staging->data(), data, chunk, dtype,
                              PIPER_RT_SUM) != PIPER_RT_OK)
    return recordCollective("reduce_scatter", index);
  state.collectiveStaging.push_back(staging);
  state.pendingOutputs[data] = {data + chunk * elt, stream};
  state.finishers.push_back(
      {stream, [=] { scaleElements(data, chunk, scale, dtype); }});
}

void iallGather(int64_t rin, void *din, int64_t rout, void *dout, int64_t index,
                piper_rt_dtype dtype, size_t elt) {
  piper_rt_comm comm = commAt(index, "all_gather");
  if (!comm)
    return;
  int members = 1;
  piper_rt_comm_size(comm, &members);
  View in = view(rin, din), out = view(rout, dout);
  ready(in, elt);
  int64_t chunk = in.numel();
  auto mine =
      std::make_shared<std::vector<uint64_t>>((chunk * elt + 7) / 8 + 1);
  auto all = std::make_shared<std::vector<uint64_t>>(
      (chunk * members * elt + 7) / 8 + 1);
  gather(in, elt, reinterpret_cast<char *>(mine->data()));
  char *data = out.aligned + out.offset * elt;
  size_t bytes = static_cast<size_t>(out.numel()) * elt;
  piper_rt_stream stream = state.commStreams[index];
  if (piper_rt_all_gather(comm, mine->data(), all->data(), chunk, dtype) !=
      PIPER_RT_OK)
    return recordCollective("all_gather", index);
  state.collectiveStaging.push_back(mine);
  state.collectiveStaging.push_back(all);
  state.pendingOutputs[data] = {data + bytes, stream};
  state.finishers.push_back(
      {stream, [=] { std::memcpy(data, all->data(), bytes); }});
}

/// The program's `piper.record event on streams[stream]`.
void recordEvent(int64_t event, int64_t streamIndex) {
  piper_rt_stream stream = nullptr;
  if (streamIndex >= 0 &&
      static_cast<size_t>(streamIndex) < state.programStreams.size()) {
    auto it = state.streamsByName.find(state.programStreams[streamIndex]);
    if (it != state.streamsByName.end())
      stream = it->second;
  }
  state.eventStream[event] = stream;
  if (!stream)
    return; // The host runs that stream: recorded means complete.
  piper_rt_event &e = state.events[event];
  if ((!e && piper_rt_event_create(state.context, &e) != PIPER_RT_OK) ||
      piper_rt_event_record(e, stream) != PIPER_RT_OK) {
    if (state.error.empty())
      state.error = std::string("record: ") + piper_rt_last_error();
  }
}

/// The program's `piper.wait event on ...`: the host (which runs every
/// compute stream and enqueues every communication stream) waits for the
/// recorded point and runs the finishers up to there. A wait between two
/// communication streams is kept on the host too: simple, and the
/// collective after it copies its input at enqueue time anyway.
void waitEvent(int64_t event) {
  auto it = state.eventStream.find(event);
  if (it == state.eventStream.end() || !it->second)
    return;
  if (piper_rt_event_synchronize(state.events[event]) != PIPER_RT_OK) {
    if (state.error.empty())
      state.error = std::string("wait: ") + piper_rt_last_error();
    return;
  }
  // Finishers of operations before the record: all of that stream's so far
  // that completed; finishing the stream is the simple, safe superset.
  finishStream(it->second);
}

/// Expert parallelism's exchange among the N members of communicator
/// `index`. Direction 0 (to the experts' owners): `in` is [E, C, R...]
/// (this member's tokens for every expert); block j, experts [j E/N, (j+1)
/// E/N), goes to member j, and `out` [E/N, N C, R...] holds at [e, s C + c]
/// what source s sent for expert e, slot c. Direction 1 (back): `in` is
/// [E/N, N C, R...]; block j is [:, j C : (j+1) C] and the received blocks,
/// concatenated along dim 0, are `out` [E, C, R...].
void allToAll(int64_t rin, void *din, int64_t rout, void *dout, int64_t index,
              int64_t direction, piper_rt_dtype dtype, size_t elt) {
  piper_rt_comm comm = commAt(index, "all_to_all");
  if (!comm)
    return;
  int members = 1;
  piper_rt_comm_size(comm, &members);
  View in = view(rin, din), out = view(rout, dout);
  const View &tokens = direction == 0 ? in : out;
  if (tokens.rank < 2 || tokens.sizes[0] % members != 0) {
    if (state.error.empty())
      state.error = "all_to_all (communicator #" + std::to_string(index) +
                    "): the buffer does not split into " +
                    std::to_string(members) + " expert groups";
    return;
  }
  int64_t n = members;
  int64_t local = tokens.sizes[0] / n, slots = tokens.sizes[1];
  int64_t row = 1; // elements of one slot
  for (int64_t d = 2; d < tokens.rank; ++d)
    row *= tokens.sizes[d];
  int64_t block = local * slots * row;
  size_t bytes = static_cast<size_t>(block * n) * elt;
  size_t piece = static_cast<size_t>(slots * row) * elt;
  std::vector<uint64_t> sendBuf(bytes / 8 + 1), recvBuf(bytes / 8 + 1);
  char *send = reinterpret_cast<char *>(sendBuf.data());
  char *recv = reinterpret_cast<char *>(recvBuf.data());
  char *result = out.aligned + out.offset * elt;
  if (direction == 0) {
    // [E, C, R] row-major is already block j = the experts of member j.
    gather(in, elt, send);
  } else {
    // [E/N, N C, R]: block j = [:, j C : (j+1) C].
    std::vector<uint64_t> whole(bytes / 8 + 1);
    char *w = reinterpret_cast<char *>(whole.data());
    gather(in, elt, w);
    for (int64_t j = 0; j < n; ++j)
      for (int64_t e = 0; e < local; ++e)
        std::memcpy(send + (j * local + e) * piece, w + (e * n + j) * piece,
                    piece);
  }
  if (piper_rt_all_to_all(comm, send, recv, static_cast<size_t>(block),
                          dtype) != PIPER_RT_OK ||
      piper_rt_stream_synchronize(state.commStreams[index]) != PIPER_RT_OK)
    return recordCollective("all_to_all", index);
  if (direction == 0) {
    // recv [s][e][c] to out [e][s C + c].
    for (int64_t s = 0; s < n; ++s)
      for (int64_t e = 0; e < local; ++e)
        std::memcpy(result + (e * n + s) * piece,
                    recv + (s * local + e) * piece, piece);
  } else {
    std::memcpy(result, recv, bytes);
  }
}

} // namespace

bool piper::run::commStart(piper_rt_context context, std::string &error) {
  state.context = context;
  piper_rt_rank(context, &state.self);
  if (piper_rt_stream_create(context, "recv", &state.recvStream) !=
      PIPER_RT_OK) {
    error = piper_rt_last_error();
    return false;
  }
  return true;
}

bool piper::run::commCreate(
    const std::vector<std::pair<std::vector<std::string>, std::string>> &list,
    std::string &error) {
  for (const auto &[axes, streamName] : list) {
    piper_rt_stream &stream = state.streamsByName[streamName];
    if (!stream && piper_rt_stream_create(state.context, streamName.c_str(),
                                          &stream) != PIPER_RT_OK) {
      error = piper_rt_last_error();
      return false;
    }
    std::vector<const char *> names;
    for (const std::string &axis : axes)
      names.push_back(axis.c_str());
    piper_rt_comm comm = nullptr;
    if (piper_rt_comm_get(state.context, names.size(), names.data(), stream,
                          &comm) != PIPER_RT_OK) {
      error = std::string("communicator over ") +
              (axes.empty() ? std::string() : axes.front()) +
              "...: " + piper_rt_last_error();
      return false;
    }
    state.comms.push_back(comm);
    state.commStreams.push_back(stream);
  }
  return true;
}

int piper::run::commMember(int64_t index) {
  int member = 0;
  if (index >= 0 && static_cast<size_t>(index) < state.comms.size())
    piper_rt_comm_rank(state.comms[index], &member);
  return member;
}

bool piper::run::commFinishStep(std::string &error) {
  finishAll();
  state.collectiveStaging.clear();
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

bool piper::run::commSendRecv(void *data, size_t count, piper_rt_dtype dtype,
                              int from, int to, std::string &error) {
  if (from == to || (state.self != from && state.self != to))
    return true;
  piper_rt_status status =
      state.self == from ? piper_rt_send(state.recvStream, data, count, dtype,
                                         to, PIPER_RT_MAX_TAG - 1)
                         : piper_rt_recv(state.recvStream, data, count, dtype,
                                         from, PIPER_RT_MAX_TAG - 1);
  if (status == PIPER_RT_OK)
    status = piper_rt_stream_synchronize(state.recvStream);
  if (status == PIPER_RT_OK)
    return true;
  error = std::string("moving a tensor from rank ") + std::to_string(from) +
          " to " + std::to_string(to) + ": " + piper_rt_last_error();
  return false;
}

void piper::run::commSetProgramStreams(const std::vector<std::string> &names) {
  state.programStreams = names;
}

void piper::run::commStop() {
  for (auto &[id, event] : state.events)
    piper_rt_event_destroy(event);
  state.events.clear();
  state.eventStream.clear();
  state.comms.clear();
  state.commStreams.clear();
  for (auto &[name, stream] : state.streamsByName)
    piper_rt_stream_destroy(stream);
  state.streamsByName.clear();
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
// Collectives (floating point only: gradients and parameters).
#define PIPER_COLLECTIVE_SHIMS(SUFFIX, DTYPE, TYPE)                            \
  extern "C" __attribute__((visibility("default"))) void                       \
      piper_comm_all_reduce_##SUFFIX(int64_t rin, void *din, int64_t rout,     \
                                     void *dout, int64_t comm, double scale) { \
    allReduce(rin, din, rout, dout, comm, scale, DTYPE, sizeof(TYPE));         \
  }                                                                            \
  extern "C"                                                                   \
      __attribute__((visibility("default"))) void piper_comm_shard_##SUFFIX(   \
          int64_t rin, void *din, int64_t rout, void *dout, int64_t comm) {    \
    shard(rin, din, rout, dout, comm, DTYPE, sizeof(TYPE));                    \
  }                                                                            \
  extern "C" __attribute__((visibility(                                        \
      "default"))) void piper_comm_all_to_all_##SUFFIX(int64_t rin, void *din, \
                                                       int64_t rout,           \
                                                       void *dout,             \
                                                       int64_t comm,           \
                                                       int64_t direction) {    \
    allToAll(rin, din, rout, dout, comm, direction, DTYPE, sizeof(TYPE));      \
  }
// Nonblocking program-level collectives, events and the end-of-step sync.
#define PIPER_ICOLLECTIVE_SHIMS(SUFFIX, DTYPE, TYPE)                           \
  extern "C" __attribute__((visibility("default"))) void                       \
      piper_comm_iall_reduce_##SUFFIX(int64_t rin, void *din, int64_t rout,    \
                                      void *dout, int64_t comm,                \
                                      double scale) {                          \
    iallReduce(rin, din, rout, dout, comm, scale, DTYPE, sizeof(TYPE));        \
  }                                                                            \
  extern "C" __attribute__((visibility("default"))) void                       \
      piper_comm_ireduce_scatter_##SUFFIX(int64_t rin, void *din,              \
                                          int64_t rout, void *dout,            \
                                          int64_t comm, double scale) {        \
    ireduceScatter(rin, din, rout, dout, comm, scale, DTYPE, sizeof(TYPE));    \
  }                                                                            \
  extern "C" __attribute__((visibility("default"))) void                       \
      piper_comm_iall_gather_##SUFFIX(int64_t rin, void *din, int64_t rout,    \
                                      void *dout, int64_t comm) {              \
    iallGather(rin, din, rout, dout, comm, DTYPE, sizeof(TYPE));               \
  }
PIPER_ICOLLECTIVE_SHIMS(f32, PIPER_RT_F32, float)
PIPER_ICOLLECTIVE_SHIMS(f64, PIPER_RT_F64, double)

extern "C" __attribute__((visibility("default"))) void
piper_comm_record(int64_t event, int64_t stream) {
  recordEvent(event, stream);
}
extern "C" __attribute__((visibility("default"))) void
piper_comm_wait(int64_t event, int64_t stream) {
  (void)stream;
  waitEvent(event);
}
extern "C" __attribute__((visibility("default"))) void piper_comm_sync_all() {
  finishAll();
}

PIPER_COLLECTIVE_SHIMS(f32, PIPER_RT_F32, float)
PIPER_COLLECTIVE_SHIMS(f64, PIPER_RT_F64, double)
PIPER_COMM_SHIMS(f32, PIPER_RT_F32, float)
PIPER_COMM_SHIMS(f64, PIPER_RT_F64, double)
PIPER_COMM_SHIMS(i64, PIPER_RT_I64, int64_t)
