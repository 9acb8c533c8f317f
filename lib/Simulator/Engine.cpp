//===- Engine.cpp - Event-driven simulation of device programs ------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// A fluid discrete-event simulation: between two events (a segment ending,
// a latency phase ending) every active segment runs at a constant rate, so
// the next event is the earliest remaining/rate and nothing is sampled. At
// unit costs the rates are 1 or 1/2 and every time is a small dyadic number,
// so the closed-form comparisons in the tests are exact.
//
//===----------------------------------------------------------------------===//

#include "piper/Simulator/Engine.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <tuple>

using namespace piper::sim;

namespace {

/// Communication kernels always get at least this fraction of a device, so
/// that compute shares that fill it cannot starve them.
constexpr double kMinCommShare = 0.02;

struct StreamState {
  size_t pc = 0;
  bool busy = false;
  bool arrived = false;
  size_t segment = 0;
  double start = 0;
};

struct Activity {
  /// (program, stream) of every participant; the first is the leader whose
  /// instruction's segments run.
  std::vector<std::pair<int, int>> members;
  /// The distinct programs (devices) of `members`.
  std::vector<int> devices;
  const Instr *leader = nullptr;
  size_t segment = 0;
  double fixedLeft = 0, workLeft = 0, rate = 0, start = 0;
};

class Runner {
public:
  explicit Runner(const Problem &problem) : problem(problem) {
    for (const Program &p : problem.programs)
      streams.emplace_back(p.streams.size());
    arrivals.resize(problem.rendezvous.size());
    reached.resize(problem.programs.size());
    dirty.assign(problem.programs.size(), 1);
    for (size_t p = 0; p < problem.programs.size(); ++p)
      dirtyList.push_back(int(p));
  }

  Trace run();

private:
  const Instr &instrAt(int p, int s) const {
    return problem.programs[p].streams[s].instrs[streams[p][s].pc];
  }
  bool issue(int p, int s);
  bool startLonePairs();
  void begin(std::vector<std::pair<int, int>> members, const Instr *leader);
  void startSegment(Activity act);
  void finishInstr(const std::vector<std::pair<int, int>> &members,
                   const Instr *leader);
  void computeRates();
  /// Something in program p changed (a stream freed, an event recorded):
  /// its streams may issue again.
  void markDirty(int p) {
    if (!dirty[p]) {
      dirty[p] = 1;
      dirtyList.push_back(p);
    }
  }

  const Problem &problem;
  std::vector<std::vector<StreamState>> streams;
  std::vector<std::vector<std::pair<int, int>>> arrivals;
  std::vector<std::set<long>> reached;
  std::vector<Activity> active;
  /// Paired launches (p, s, pc) that start without their partner: it could
  /// not start before them (below).
  std::set<std::tuple<int, int, size_t>> lone;
  /// Programs whose streams may issue (only what an event touched is
  /// scanned again: a scan of every stream after every event made the
  /// engine quadratic in the programs of a deep pipeline).
  std::vector<char> dirty;
  std::vector<int> dirtyList;
  double now = 0;
  Trace trace;
};

} // namespace

bool Runner::issue(int p, int s) {
  StreamState &st = streams[p][s];
  const Stream &stream = problem.programs[p].streams[s];
  if (st.busy || st.pc >= stream.instrs.size())
    return false;
  const Instr &instr = stream.instrs[st.pc];
  switch (instr.kind) {
  case Instr::Kind::Nop:
    ++st.pc;
    return true;
  case Instr::Kind::Record:
    reached[p].insert(instr.event);
    ++st.pc;
    // A wait of another stream of this program may pass now.
    markDirty(p);
    return true;
  case Instr::Kind::Wait:
    if (!reached[p].count(instr.event))
      return false;
    ++st.pc;
    return true;
  case Instr::Kind::Launch: {
    if (instr.partnerStream >= 0 && !lone.count({p, s, st.pc})) {
      StreamState &other = streams[p][instr.partnerStream];
      // The pair starts together: wait until the partner is at its head.
      if (other.pc < size_t(instr.partnerInstr) ||
          (other.pc == size_t(instr.partnerInstr) && other.busy))
        return false;
      if (other.pc == size_t(instr.partnerInstr)) {
        const Instr &partner = instrAt(p, instr.partnerStream);
        begin({{p, s}}, &instr);
        begin({{p, instr.partnerStream}}, &partner);
        return true;
      }
    }
    begin({{p, s}}, &instr);
    return true;
  }
  case Instr::Kind::Comm: {
    if (instr.rendezvous < 0) {
      begin({{p, s}}, &instr);
      return true;
    }
    if (st.arrived)
      return false;
    st.arrived = true;
    auto &here = arrivals[instr.rendezvous];
    here.push_back({p, s});
    if (int(here.size()) < problem.rendezvous[instr.rendezvous])
      return false;
    // The leader is the participant with the most work (a send, not its
    // receive).
    auto cost = [&](std::pair<int, int> m) {
      double total = 0;
      for (const Segment &seg : instrAt(m.first, m.second).segments)
        total += seg.fixed + seg.work;
      return total;
    };
    std::stable_sort(here.begin(), here.end(),
                     [&](auto a, auto b) { return cost(a) > cost(b); });
    std::vector<std::pair<int, int>> members = std::move(here);
    here.clear();
    for (auto [mp, ms] : members)
      streams[mp][ms].arrived = false;
    begin(members, &instrAt(members[0].first, members[0].second));
    return true;
  }
  }
  return false;
}

void Runner::begin(std::vector<std::pair<int, int>> members,
                   const Instr *leader) {
  for (auto [p, s] : members) {
    streams[p][s].busy = true;
    streams[p][s].start = now;
    streams[p][s].segment = 0;
  }
  if (leader->segments.empty()) {
    finishInstr(members, leader);
    return;
  }
  Activity act;
  act.members = std::move(members);
  for (auto [p, s] : act.members)
    if (std::find(act.devices.begin(), act.devices.end(), p) ==
        act.devices.end())
      act.devices.push_back(p);
  act.leader = leader;
  startSegment(std::move(act));
}

void Runner::startSegment(Activity act) {
  const Segment &seg = act.leader->segments[act.segment];
  act.fixedLeft = seg.fixed;
  act.workLeft = seg.work;
  act.start = now;
  active.push_back(std::move(act));
}

void Runner::finishInstr(const std::vector<std::pair<int, int>> &members,
                         const Instr *leader) {
  for (auto [p, s] : members) {
    StreamState &st = streams[p][s];
    const Instr &own = problem.programs[p].streams[s].instrs[st.pc];
    if (!leader->segments.empty()) {
      Span span;
      span.program = p;
      span.stream = s;
      span.instr = int(st.pc);
      span.kind = leader->segments.front().kind;
      span.name = own.name;
      span.category = own.category;
      span.start = st.start;
      span.end = now;
      trace.spans.push_back(std::move(span));
    }
    st.busy = false;
    ++st.pc;
    markDirty(p);
  }
}

void Runner::computeRates() {
  // Per device: reserved compute, communication needs, unreserved compute.
  struct DeviceLoad {
    double reserved = 0, commNeed = 0;
    int greedy = 0;
    bool commActive = false;
  };
  std::vector<DeviceLoad> load(problem.programs.size());
  for (const Activity &a : active) {
    const Segment &seg = a.leader->segments[a.segment];
    for (int d : a.devices) {
      if (seg.kind == SegmentKind::Comm) {
        load[d].commNeed += std::max(seg.share, kMinCommShare);
        load[d].commActive = true;
      } else if (seg.share > 0) {
        load[d].reserved += seg.share;
      } else {
        ++load[d].greedy;
      }
    }
  }
  struct Grant {
    double reservedScale = 1, commScale = 1, greedyShare = 0, slowdown = 1;
  };
  std::vector<Grant> grant(load.size());
  for (size_t d = 0; d < load.size(); ++d) {
    const DeviceLoad &l = load[d];
    Grant &g = grant[d];
    // Communication keeps a floor even when reservations fill the device.
    double commFloor = l.commActive ? kMinCommShare : 0;
    double forReserved = 1 - commFloor;
    if (l.reserved > forReserved)
      g.reservedScale = forReserved / l.reserved;
    double left = std::max(0.0, 1 - l.reserved * g.reservedScale);
    if (l.commNeed > 0) {
      g.commScale = std::min(1.0, left / l.commNeed);
      left -= l.commNeed * g.commScale;
    }
    if (l.greedy > 0)
      g.greedyShare = std::max(0.0, left) / l.greedy;
    if (l.commActive)
      g.slowdown = 1 - problem.interference;
  }
  for (Activity &a : active) {
    const Segment &seg = a.leader->segments[a.segment];
    double rate = std::numeric_limits<double>::infinity();
    for (int d : a.devices) {
      const Grant &g = grant[d];
      double r;
      if (seg.kind == SegmentKind::Comm)
        r = g.commScale;
      else if (seg.share > 0)
        r = seg.share * g.reservedScale * g.slowdown;
      else
        r = g.greedyShare * g.slowdown;
      rate = std::min(rate, r);
    }
    a.rate = rate;
  }
}

/// A pair of launches starts together, but only as a model of how they
/// share the device: on a device each starts when its own stream allows.
/// When nothing runs and the only heads left are launches waiting for a
/// partner that cannot start first (its stream waits, through an event, for
/// work behind this launch: with one collective stream, ZeRO-3's gather for
/// the partner queues behind the reduce-scatters of the launches that
/// follow), they start alone. Returns whether any did.
bool Runner::startLonePairs() {
  bool any = false;
  for (size_t p = 0; p < streams.size(); ++p)
    for (size_t s = 0; s < streams[p].size(); ++s) {
      const StreamState &st = streams[p][s];
      const Stream &stream = problem.programs[p].streams[s];
      if (st.busy || st.pc >= stream.instrs.size())
        continue;
      const Instr &instr = stream.instrs[st.pc];
      if (instr.kind == Instr::Kind::Launch && instr.partnerStream >= 0 &&
          lone.insert({int(p), int(s), st.pc}).second) {
        any = true;
        markDirty(int(p));
      }
    }
  return any;
}

Trace Runner::run() {
  const double inf = std::numeric_limits<double>::infinity();
  while (true) {
    while (!dirtyList.empty()) {
      int p = dirtyList.back();
      dirtyList.pop_back();
      dirty[p] = 0;
      for (size_t s = 0; s < streams[p].size(); ++s)
        while (issue(p, int(s))) {
        }
    }
    if (active.empty()) {
      if (startLonePairs())
        continue;
      break;
    }
    computeRates();
    double dt = inf;
    for (const Activity &a : active) {
      if (a.fixedLeft > 0)
        dt = std::min(dt, a.fixedLeft);
      else if (a.workLeft <= 0)
        dt = 0;
      else if (a.rate > 0)
        dt = std::min(dt, a.workLeft / a.rate);
    }
    if (dt == inf) {
      trace.error = "no segment can progress: every active one has no share "
                    "of its device";
      break;
    }
    now += dt;
    std::vector<Activity> done, running;
    double eps = 1e-12 * std::max(1.0, now);
    for (Activity &a : active) {
      if (a.fixedLeft > 0) {
        a.fixedLeft -= dt;
        if (a.fixedLeft <= eps)
          a.fixedLeft = 0;
      } else {
        a.workLeft -= dt * a.rate;
      }
      if (a.fixedLeft <= 0 && a.workLeft <= eps)
        done.push_back(std::move(a));
      else
        running.push_back(std::move(a));
    }
    active = std::move(running);
    for (Activity &a : done) {
      const Segment &seg = a.leader->segments[a.segment];
      for (auto [p, s] : a.members) {
        Span span;
        span.program = p;
        span.stream = s;
        span.instr = int(streams[p][s].pc);
        span.kind = seg.kind;
        span.isSegment = true;
        span.name = seg.label;
        span.category = a.leader->category;
        span.start = a.start;
        span.end = now;
        trace.spans.push_back(std::move(span));
      }
      if (a.segment + 1 < a.leader->segments.size()) {
        ++a.segment;
        startSegment(std::move(a));
      } else {
        finishInstr(a.members, a.leader);
      }
    }
  }
  trace.makespan = now;
  if (trace.error.empty()) {
    for (size_t p = 0; p < streams.size(); ++p)
      for (size_t s = 0; s < streams[p].size(); ++s) {
        const Stream &stream = problem.programs[p].streams[s];
        if (streams[p][s].pc < stream.instrs.size()) {
          trace.error = "deadlock: stream \"" + stream.name + "\" of @" +
                        problem.programs[p].name + " never gets past '" +
                        stream.instrs[streams[p][s].pc].name + "'";
          return trace;
        }
      }
  }
  return trace;
}

Trace piper::sim::simulate(const Problem &problem) {
  return Runner(problem).run();
}

double piper::sim::unionLength(std::vector<std::pair<double, double>> iv) {
  std::sort(iv.begin(), iv.end());
  double total = 0, start = 0, end = -std::numeric_limits<double>::infinity();
  for (auto [a, b] : iv) {
    if (a > end) {
      if (end > start)
        total += end - start;
      start = a;
      end = b;
    } else {
      end = std::max(end, b);
    }
  }
  if (end > start)
    total += end - start;
  return total;
}

double piper::sim::overlapLength(std::vector<std::pair<double, double>> a,
                                 std::vector<std::pair<double, double>> b) {
  // |A n B| = |A| + |B| - |A u B|.
  double la = unionLength(a), lb = unionLength(b);
  a.insert(a.end(), b.begin(), b.end());
  return la + lb - unionLength(std::move(a));
}
