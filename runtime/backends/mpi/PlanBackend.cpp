//===- PlanBackend.cpp - The plan ABI on the piper_rt_* runtime -----------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The communication, events and trace spans of plan_abi.h's Part 1 on this
// backend's contexts, streams and communicators.
//
// One thread runs a role's streams in program order, and the verifier proved
// that order deadlock-free with rendezvous sends only if a send does not hold
// up this rank's later receives (stage 0 sends microbatch 1 forward before it
// receives microbatch 0's gradient). So a send copies its value (which may be
// a strided slice, freed right after the call) into a staging vector and is
// only enqueued, on a stream of its own per (peer, tag) so that no send waits
// behind another; the step's end waits for them all. Receives share one
// receive stream, so they complete in program order, as the verifier assumed.
// A blocking receive is waited for at once; a nonblocking one (irecv) leaves
// its buffer pending until the program waits for an event recorded after it
// on its program stream, which this backend then records on the receive
// stream.
//
// Collectives run on the plan's communicators (one per (axes, stream), each
// bound to a runtime stream of that name). Inputs are copied into contiguous
// staging first (they may be strided slices); reduce_scatter zero-pads the
// flattened gradient to members x chunk elements, and all_gather keeps the
// whole tensor's elements of the gathered chunks. The nonblocking ones leave
// "finishers" (scaling, copying out of staging) to run once their stream
// completes; a host read of memory a pending collective writes completes
// that stream first.
//
//===----------------------------------------------------------------------===//

#include "../../lib/plan/Backend.h"

#include <cstdint>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <vector>

using namespace piper::plan;

namespace {

using View = piper_memref_view;
using Words = std::vector<uint64_t>;

/// 8-byte words for `bytes` (and one spare, so that no size is 0).
std::shared_ptr<Words> staging(size_t bytes) {
  return std::make_shared<Words>(bytes / 8 + 1, 0);
}
char *bytesOf(Words &w) { return reinterpret_cast<char *>(w.data()); }

template <typename T> void scaleBy(char *data, int64_t n, double scale) {
  T *p = reinterpret_cast<T *>(data);
  for (int64_t i = 0; i < n; ++i)
    p[i] = static_cast<T>(p[i] * scale);
}

void scaleElements(char *data, int64_t n, double scale, piper_rt_dtype dtype) {
  if (scale == 1.0)
    return;
  if (dtype == PIPER_RT_F32)
    scaleBy<float>(data, n, scale);
  else
    scaleBy<double>(data, n, scale);
}

class MPIBackend final : public Backend {
public:
  MPIBackend(piper_rt_context context, StepError &errors)
      : context(context), errors(errors) {}
  ~MPIBackend() override;
  bool start() {
    piper_rt_rank(context, &self);
    return piper_rt_stream_create(context, "recv", &recvStream) == PIPER_RT_OK;
  }

  void send(const View &in, Element e, int64_t peer, int64_t tag) override;
  void recv(const View &out, Element e, int64_t peer, int64_t tag) override;
  void irecv(const View &out, Element e, int64_t peer, int64_t tag,
             int64_t stream) override;
  void iallReduce(const View &in, const View &out, Element e, int64_t comm,
                  double scale) override;
  void ireduceScatter(const View &in, const View &out, Element e, int64_t comm,
                      double scale) override;
  void iallGather(const View &in, const View &out, Element e,
                  int64_t comm) override;
  void allReduce(const View &in, const View &out, Element e, int64_t comm,
                 double scale) override;
  void allToAll(const View &in, const View &out, Element e, int64_t comm,
                int64_t direction) override;
  void shard(const View &in, const View &out, Element e, int64_t comm) override;
  void record(int64_t event, int64_t stream) override;
  void wait(int64_t event) override;
  void syncAll() override;
  void traceBegin(int64_t launch) override;
  void traceEnd(int64_t launch) override;

  bool addCommunicator(const std::vector<std::string> &axes,
                       const std::string &stream) override;
  void setStreams(const std::vector<std::string> &names) override {
    programStreams = names;
  }
  bool traceLaunches(const std::vector<std::string> &names) override;
  void traceKernels(const std::vector<std::string> &names) override {
    kernelNames = names;
  }
  void traceKernelBegin(int64_t kind) override;
  void traceKernelEnd(int64_t kind) override;
  void finishStep() override;
  int member(int64_t comm) override;
  bool move(void *data, size_t count, piper_rt_dtype dtype, int from, int to,
            int tag) override;

private:
  piper_rt_context context;
  StepError &errors;
  int self = 0;
  piper_rt_stream recvStream = nullptr;
  /// Program streams (by index) that nonblocking receives were posted on:
  /// an event recorded on one covers the receive stream.
  std::set<int64_t> receivingStreams;
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
  /// What still has to run on the host once a stream's operations complete,
  /// in enqueue order.
  struct Finisher {
    piper_rt_stream stream;
    std::function<void()> run;
  };
  std::deque<Finisher> finishers;
  /// Output ranges still being written: start -> (end, stream).
  std::map<const char *, std::pair<const char *, piper_rt_stream>>
      pendingOutputs;
  /// Staging of the step's collectives and sends, alive until they finish.
  std::vector<std::shared_ptr<Words>> collectiveStaging, sendStaging;
  std::map<std::pair<int64_t, int64_t>, piper_rt_stream> sendStreams;
  /// Launch tracing: the "compute" row, the launch names and a span's start.
  piper_rt_stream computeStream = nullptr;
  std::vector<std::string> launchNames;
  double spanStart = 0;
  std::vector<std::string> kernelNames;
  double kernelStart = 0;

  void failPeer(const char *what, int64_t peer, int64_t tag) {
    errors.set(std::string(what) + " (peer rank " + std::to_string(peer) +
               ", tag " + std::to_string(tag) + "): " + piper_rt_last_error());
  }
  void failCollective(const char *what, int64_t index) {
    errors.set(std::string(what) + " (communicator #" + std::to_string(index) +
               "): " + piper_rt_last_error());
  }
  piper_rt_comm commAt(int64_t index, const char *what);
  int commSize(piper_rt_comm comm) {
    int members = 1;
    piper_rt_comm_size(comm, &members);
    return members;
  }
  void ready(const View &v, size_t elt);
  void finishStream(piper_rt_stream stream);
  /// Drops the pending ranges of `stream`, whose operations have completed.
  void forgetPending(piper_rt_stream stream);
  /// Marks `[data, data + bytes)` as written by `stream` until `finish` ran.
  void pending(char *data, size_t bytes, piper_rt_stream stream,
               std::function<void()> finish) {
    pendingOutputs[data] = {data + bytes, stream};
    finishers.push_back({stream, std::move(finish)});
  }
};

MPIBackend::~MPIBackend() {
  for (auto &[id, event] : events)
    piper_rt_event_destroy(event);
  for (auto &[name, stream] : streamsByName)
    piper_rt_stream_destroy(stream);
  for (auto &[key, stream] : sendStreams)
    piper_rt_stream_destroy(stream);
  if (computeStream)
    piper_rt_stream_destroy(computeStream);
  piper_rt_stream_destroy(recvStream);
}

//===----------------------------------------------------------------------===//
// Point to point
//===----------------------------------------------------------------------===//

void MPIBackend::send(const View &v, Element e, int64_t offset, int64_t tag) {
  int64_t peer = self + offset;
  ready(v, e.size);
  size_t n = static_cast<size_t>(piper_memref_numel(&v));
  std::shared_ptr<Words> copy = staging(n * e.size);
  piper_memref_gather(&v, e.size, copy->data());
  piper_rt_stream &stream = sendStreams[{peer, tag}];
  // Stream names are unique per context (they label the trace).
  std::string name =
      "send to " + std::to_string(peer) + " tag " + std::to_string(tag);
  if (!stream &&
      piper_rt_stream_create(context, name.c_str(), &stream) != PIPER_RT_OK)
    return failPeer("send stream", peer, tag);
  if (piper_rt_send(stream, copy->data(), n, e.dtype, static_cast<int>(peer),
                    static_cast<int>(tag)) != PIPER_RT_OK)
    return failPeer("send", peer, tag);
  sendStaging.push_back(std::move(copy));
}

void MPIBackend::recv(const View &v, Element e, int64_t offset, int64_t tag) {
  int64_t peer = self + offset;
  // The compiled code allocates a receive's buffer with the identity layout.
  if (piper_rt_recv(recvStream, piper_memref_data(&v, e.size),
                    static_cast<size_t>(piper_memref_numel(&v)), e.dtype,
                    static_cast<int>(peer),
                    static_cast<int>(tag)) != PIPER_RT_OK ||
      piper_rt_stream_synchronize(recvStream) != PIPER_RT_OK)
    return failPeer("recv", peer, tag);
  // Every receive posted before this one has completed too.
  forgetPending(recvStream);
}

void MPIBackend::irecv(const View &v, Element e, int64_t offset, int64_t tag,
                       int64_t stream) {
  int64_t peer = self + offset;
  char *data = piper_memref_data(&v, e.size);
  size_t n = static_cast<size_t>(piper_memref_numel(&v));
  if (piper_rt_recv(recvStream, data, n, e.dtype, static_cast<int>(peer),
                    static_cast<int>(tag)) != PIPER_RT_OK)
    return failPeer("recv", peer, tag);
  // A send or collective reading the value completes the receive first
  // (ready); the program's own reads come after a wait for its event.
  pendingOutputs[data] = {data + n * e.size, recvStream};
  receivingStreams.insert(stream);
}

bool MPIBackend::move(void *data, size_t count, piper_rt_dtype dtype, int from,
                      int to, int tag) {
  if (self != from && self != to)
    return true;
  piper_rt_status status =
      self == from ? piper_rt_send(recvStream, data, count, dtype, to, tag)
                   : piper_rt_recv(recvStream, data, count, dtype, from, tag);
  if (status == PIPER_RT_OK)
    status = piper_rt_stream_synchronize(recvStream);
  return status == PIPER_RT_OK;
}

//===----------------------------------------------------------------------===//
// Streams, events and the end of a step
//===----------------------------------------------------------------------===//

/// Completes `stream` (every operation enqueued so far) and runs its
/// finishers, so the outputs of its nonblocking collectives are final.
void MPIBackend::finishStream(piper_rt_stream stream) {
  if (piper_rt_stream_synchronize(stream) != PIPER_RT_OK)
    errors.set(std::string(stream == recvStream ? "recv: " : "collective: ") +
               piper_rt_last_error());
  std::deque<Finisher> rest;
  for (Finisher &f : finishers) {
    if (f.stream == stream)
      f.run();
    else
      rest.push_back(std::move(f));
  }
  finishers = std::move(rest);
  forgetPending(stream);
}

void MPIBackend::forgetPending(piper_rt_stream stream) {
  for (auto it = pendingOutputs.begin(); it != pendingOutputs.end();)
    it = it->second.second == stream ? pendingOutputs.erase(it) : std::next(it);
}

/// Before the host reads the view `v`: completes the stream of every
/// nonblocking collective that still writes memory the view may touch.
void MPIBackend::ready(const View &v, size_t elt) {
  // The elements a strided view can touch: from its first to its last.
  const char *first = piper_memref_data(&v, elt), *last = first;
  for (int64_t d = 0; d < v.rank; ++d) {
    if (v.sizes[d] == 0)
      return;
    last += (v.sizes[d] - 1) * v.strides[d] * static_cast<int64_t>(elt);
  }
  last += elt;
  for (;;) {
    auto it = pendingOutputs.upper_bound(last - 1);
    if (it == pendingOutputs.begin())
      return;
    --it;
    if (it->second.first <= first)
      return;
    finishStream(it->second.second);
  }
}

void MPIBackend::syncAll() {
  for (auto &[name, stream] : streamsByName)
    finishStream(stream);
  finishStream(recvStream);
}

void MPIBackend::finishStep() {
  syncAll();
  collectiveStaging.clear();
  for (auto &[key, stream] : sendStreams)
    if (piper_rt_stream_synchronize(stream) != PIPER_RT_OK)
      failPeer("send", key.first, key.second);
  sendStaging.clear();
}

void MPIBackend::record(int64_t event, int64_t streamIndex) {
  piper_rt_stream stream = nullptr;
  if (streamIndex >= 0 &&
      static_cast<size_t>(streamIndex) < programStreams.size()) {
    auto it = streamsByName.find(programStreams[streamIndex]);
    if (it != streamsByName.end())
      stream = it->second;
  }
  // A stream the host runs itself has no runtime stream: recorded means
  // complete, unless nonblocking receives were posted on it.
  if (!stream && receivingStreams.count(streamIndex))
    stream = recvStream;
  eventStream[event] = stream;
  if (!stream)
    return;
  piper_rt_event &e = events[event];
  if ((!e && piper_rt_event_create(context, &e) != PIPER_RT_OK) ||
      piper_rt_event_record(e, stream) != PIPER_RT_OK)
    errors.set(std::string("record: ") + piper_rt_last_error());
}

/// The host (which runs every compute stream and enqueues every
/// communication stream) waits for the recorded point and runs the finishers
/// up to there. A wait between two communication streams is kept on the host
/// too: simple, and the collective after it copies its input at enqueue time
/// anyway.
void MPIBackend::wait(int64_t event) {
  auto it = eventStream.find(event);
  if (it == eventStream.end() || !it->second)
    return;
  if (piper_rt_event_synchronize(events[event]) != PIPER_RT_OK) {
    errors.set(std::string("wait: ") + piper_rt_last_error());
    return;
  }
  // Finishing the stream is the simple, safe superset of the finishers of
  // the operations before the record.
  finishStream(it->second);
}

//===----------------------------------------------------------------------===//
// Communicators and collectives
//===----------------------------------------------------------------------===//

bool MPIBackend::addCommunicator(const std::vector<std::string> &axes,
                                 const std::string &streamName) {
  piper_rt_stream &stream = streamsByName[streamName];
  if (!stream && piper_rt_stream_create(context, streamName.c_str(), &stream) !=
                     PIPER_RT_OK)
    return false;
  std::vector<const char *> names;
  for (const std::string &axis : axes)
    names.push_back(axis.c_str());
  piper_rt_comm comm = nullptr;
  if (piper_rt_comm_get(context, names.size(), names.data(), stream, &comm) !=
      PIPER_RT_OK)
    return false;
  comms.push_back(comm);
  commStreams.push_back(stream);
  return true;
}

int MPIBackend::member(int64_t index) {
  int m = 0;
  if (index >= 0 && static_cast<size_t>(index) < comms.size())
    piper_rt_comm_rank(comms[index], &m);
  return m;
}

piper_rt_comm MPIBackend::commAt(int64_t index, const char *what) {
  if (index >= 0 && static_cast<size_t>(index) < comms.size())
    return comms[index];
  errors.set(std::string(what) + ": the plan has no communicator #" +
             std::to_string(index));
  return nullptr;
}

void MPIBackend::shard(const View &in, const View &out, Element e,
                       int64_t index) {
  piper_rt_comm comm = commAt(index, "shard");
  if (!comm)
    return;
  int members = commSize(comm), m = 0;
  piper_rt_comm_rank(comm, &m);
  ready(in, e.size);
  int64_t chunk = piper_memref_numel(&out);
  std::shared_ptr<Words> whole = staging(chunk * members * e.size);
  piper_memref_gather(&in, e.size, whole->data());
  std::memcpy(piper_memref_data(&out, e.size),
              bytesOf(*whole) + m * chunk * e.size, chunk * e.size);
}

void MPIBackend::iallReduce(const View &in, const View &out, Element e,
                            int64_t index, double scale) {
  piper_rt_comm comm = commAt(index, "all_reduce");
  if (!comm)
    return;
  ready(in, e.size);
  char *data = piper_memref_data(&out, e.size);
  piper_memref_gather(&in, e.size, data);
  int64_t n = piper_memref_numel(&in);
  if (piper_rt_all_reduce(comm, data, data, n, e.dtype, PIPER_RT_SUM) !=
      PIPER_RT_OK)
    return failCollective("all_reduce", index);
  piper_rt_dtype dtype = e.dtype;
  pending(data, n * e.size, commStreams[index],
          [=] { scaleElements(data, n, scale, dtype); });
}

/// Tensor parallelism's in-body all-reduce: the body needs the sum next,
/// so the nonblocking form, completed at once.
void MPIBackend::allReduce(const View &in, const View &out, Element e,
                           int64_t index, double scale) {
  iallReduce(in, out, e, index, scale);
  if (index >= 0 && static_cast<size_t>(index) < commStreams.size())
    finishStream(commStreams[index]);
}

void MPIBackend::ireduceScatter(const View &in, const View &out, Element e,
                                int64_t index, double scale) {
  piper_rt_comm comm = commAt(index, "reduce_scatter");
  if (!comm)
    return;
  int members = commSize(comm);
  ready(in, e.size);
  int64_t chunk = piper_memref_numel(&out);
  std::shared_ptr<Words> whole = staging(chunk * members * e.size);
  piper_memref_gather(&in, e.size, whole->data());
  char *data = piper_memref_data(&out, e.size);
  if (piper_rt_reduce_scatter(comm, whole->data(), data, chunk, e.dtype,
                              PIPER_RT_SUM) != PIPER_RT_OK)
    return failCollective("reduce_scatter", index);
  collectiveStaging.push_back(whole);
  piper_rt_dtype dtype = e.dtype;
  pending(data, chunk * e.size, commStreams[index],
          [=] { scaleElements(data, chunk, scale, dtype); });
}

void MPIBackend::iallGather(const View &in, const View &out, Element e,
                            int64_t index) {
  piper_rt_comm comm = commAt(index, "all_gather");
  if (!comm)
    return;
  int members = commSize(comm);
  ready(in, e.size);
  int64_t chunk = piper_memref_numel(&in);
  std::shared_ptr<Words> mine = staging(chunk * e.size);
  std::shared_ptr<Words> all = staging(chunk * members * e.size);
  piper_memref_gather(&in, e.size, mine->data());
  char *data = piper_memref_data(&out, e.size);
  size_t bytes = static_cast<size_t>(piper_memref_numel(&out)) * e.size;
  if (piper_rt_all_gather(comm, mine->data(), all->data(), chunk, e.dtype) !=
      PIPER_RT_OK)
    return failCollective("all_gather", index);
  collectiveStaging.push_back(mine);
  collectiveStaging.push_back(all);
  pending(data, bytes, commStreams[index],
          [=] { std::memcpy(data, all->data(), bytes); });
}

/// Direction 0: `in` [E, C, R...] row-major is already block j = the experts
/// of member j; `out` [E/N, N C, R...] takes source s's block for expert e at
/// [e, s C : (s+1) C]. Direction 1 is the inverse.
void MPIBackend::allToAll(const View &in, const View &out, Element e,
                          int64_t index, int64_t direction) {
  piper_rt_comm comm = commAt(index, "all_to_all");
  if (!comm)
    return;
  int64_t n = commSize(comm);
  const View &tokens = direction == 0 ? in : out;
  if (tokens.rank < 2 || tokens.sizes[0] % n != 0) {
    errors.set("all_to_all (communicator #" + std::to_string(index) +
               "): the buffer does not split into " + std::to_string(n) +
               " expert groups");
    return;
  }
  int64_t local = tokens.sizes[0] / n, slots = tokens.sizes[1];
  int64_t row = 1; // elements of one slot
  for (int64_t d = 2; d < tokens.rank; ++d)
    row *= tokens.sizes[d];
  int64_t block = local * slots * row;
  size_t bytes = static_cast<size_t>(block * n) * e.size;
  size_t piece = static_cast<size_t>(slots * row) * e.size;
  std::shared_ptr<Words> sendBuf = staging(bytes), recvBuf = staging(bytes);
  char *send = bytesOf(*sendBuf), *recv = bytesOf(*recvBuf);
  char *result = piper_memref_data(&out, e.size);
  if (direction == 0) {
    piper_memref_gather(&in, e.size, send);
  } else {
    // [E/N, N C, R]: block j = [:, j C : (j+1) C].
    std::shared_ptr<Words> whole = staging(bytes);
    char *w = bytesOf(*whole);
    piper_memref_gather(&in, e.size, w);
    for (int64_t j = 0; j < n; ++j)
      for (int64_t x = 0; x < local; ++x)
        std::memcpy(send + (j * local + x) * piece, w + (x * n + j) * piece,
                    piece);
  }
  if (piper_rt_all_to_all(comm, send, recv, static_cast<size_t>(block),
                          e.dtype) != PIPER_RT_OK ||
      piper_rt_stream_synchronize(commStreams[index]) != PIPER_RT_OK)
    return failCollective("all_to_all", index);
  if (direction == 0) {
    // recv [s][e][c] to out [e][s C + c].
    for (int64_t s = 0; s < n; ++s)
      for (int64_t x = 0; x < local; ++x)
        std::memcpy(result + (x * n + s) * piece,
                    recv + (s * local + x) * piece, piece);
  } else {
    std::memcpy(result, recv, bytes);
  }
}

//===----------------------------------------------------------------------===//
// Launch tracing
//===----------------------------------------------------------------------===//

bool MPIBackend::traceLaunches(const std::vector<std::string> &names) {
  if (!computeStream &&
      piper_rt_stream_create(context, "compute", &computeStream) != PIPER_RT_OK)
    return false;
  launchNames = names;
  return true;
}

void MPIBackend::traceBegin(int64_t) {
  if (computeStream)
    piper_rt_time(context, &spanStart);
}

void MPIBackend::traceEnd(int64_t launch) {
  if (!computeStream)
    return;
  double end = 0;
  piper_rt_time(context, &end);
  const char *name =
      launch >= 0 && static_cast<size_t>(launch) < launchNames.size()
          ? launchNames[launch].c_str()
          : "launch";
  piper_rt_trace_span(computeStream, name, "compute", spanStart, end);
}

// Kernels do not nest (each brackets one op of a body), so one start time
// serves; a kind outside the list is a plan/manifest mismatch and records
// nothing rather than a misnamed span.
void MPIBackend::traceKernelBegin(int64_t) {
  if (computeStream && !kernelNames.empty())
    piper_rt_time(context, &kernelStart);
}

void MPIBackend::traceKernelEnd(int64_t kind) {
  if (!computeStream || kind < 0 ||
      static_cast<size_t>(kind) >= kernelNames.size())
    return;
  double end = 0;
  piper_rt_time(context, &end);
  piper_rt_trace_span(computeStream, kernelNames[kind].c_str(), "kernel",
                      kernelStart, end);
}

} // namespace

std::unique_ptr<Backend> piper::plan::makeBackend(piper_rt_context context,
                                                  StepError &errors) {
  auto backend = std::make_unique<MPIBackend>(context, errors);
  if (!backend->start())
    return nullptr;
  return backend;
}
