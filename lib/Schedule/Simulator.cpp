//===- Simulator.cpp - Event simulation and deadlock detection ------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// With zero communication latency an action starts at
//   max(end of the rank's previous action, end of each dependency),
// so the timeline is the longest-path solution of the DAG formed by the
// per-rank orders and the data dependencies, whatever order the ranks are
// advanced in. The loop advances every rank as far as it can; if some rank
// cannot finish, following "who waits for whom" from a stuck rank must
// revisit a rank, and that cycle is the deadlock we report.
//
//===----------------------------------------------------------------------===//

#include "Detail.h"

#include <algorithm>
#include <limits>

using namespace piper::sched;

double Costs::of(const Action &a) const {
  if (a.isOverlap())
    return fb();
  switch (a.first.kind) {
  case Kind::F:
    return f;
  case Kind::I:
    return i;
  case Kind::W:
    return w;
  case Kind::B:
    return b();
  }
  return 0;
}

namespace {

std::string str(int x) { return std::to_string(x); }

/// What is known about (stage, microbatch): forward done, input gradient
/// done (by I or B), weight gradient done (by W or B).
enum Phase { Fwd = 0, InGrad = 1, WGrad = 2 };

struct Engine {
  const Schedule &s;
  explicit Engine(const Schedule &s) : s(s) {}

  int key(int stage, int mb, Phase phase) const {
    return (stage * s.numMicrobatches + mb) * 3 + phase;
  }

  std::vector<int> needs(const Compute &c) const {
    std::vector<int> out;
    switch (c.kind) {
    case Kind::F:
      if (!s.isFirstInChain(c.stage))
        out.push_back(key(c.stage - 1, c.microbatch, Fwd));
      break;
    case Kind::I:
    case Kind::B:
      out.push_back(key(c.stage, c.microbatch, Fwd));
      if (!s.isLastInChain(c.stage))
        out.push_back(key(c.stage + 1, c.microbatch, InGrad));
      break;
    case Kind::W:
      out.push_back(key(c.stage, c.microbatch, InGrad));
      break;
    }
    return out;
  }

  std::vector<int> produces(const Compute &c) const {
    switch (c.kind) {
    case Kind::F:
      return {key(c.stage, c.microbatch, Fwd)};
    case Kind::I:
      return {key(c.stage, c.microbatch, InGrad)};
    case Kind::W:
      return {key(c.stage, c.microbatch, WGrad)};
    case Kind::B:
      return {key(c.stage, c.microbatch, InGrad),
              key(c.stage, c.microbatch, WGrad)};
    }
    return {};
  }
};

} // namespace

Result<Timeline> piper::sched::detail::execute(const Schedule &s,
                                               const Costs &costs) {
  Engine e(s);
  const double unknown = -1;
  int numKeys = s.numStages * s.numMicrobatches * 3;
  std::vector<double> done(numKeys, unknown);
  // Who produces each key, and as which computation (for messages).
  struct Producer {
    int rank = -1, index = -1;
    Compute compute;
  };
  std::vector<Producer> producer(numKeys);
  for (int r = 0; r < s.numRanks; ++r)
    for (int k = 0; k < static_cast<int>(s.ranks[r].size()); ++k)
      for (const Compute &c : s.ranks[r][k].parts())
        for (int key : e.produces(c))
          producer[key] = {r, k, c};

  Timeline t;
  t.times.resize(s.numRanks);
  t.busy.assign(s.numRanks, 0);
  std::vector<int> next(s.numRanks, 0);
  std::vector<double> freeAt(s.numRanks, 0);
  for (int r = 0; r < s.numRanks; ++r)
    t.times[r].resize(s.ranks[r].size());

  // The first unmet need of rank r's next action, or -1.
  auto unmet = [&](int r) {
    const Action &a = s.ranks[r][next[r]];
    for (const Compute &c : a.parts())
      for (int key : e.needs(c))
        if (done[key] == unknown)
          return key;
    return -1;
  };

  bool progressed = true;
  while (progressed) {
    progressed = false;
    for (int r = 0; r < s.numRanks; ++r) {
      while (next[r] < static_cast<int>(s.ranks[r].size()) && unmet(r) < 0) {
        const Action &a = s.ranks[r][next[r]];
        double start = freeAt[r];
        for (const Compute &c : a.parts())
          for (int key : e.needs(c))
            start = std::max(start, done[key]);
        double end = start + costs.of(a);
        for (const Compute &c : a.parts())
          for (int key : e.produces(c))
            done[key] = end;
        t.times[r][next[r]] = {start, end};
        t.busy[r] += end - start;
        t.makespan = std::max(t.makespan, end);
        freeAt[r] = end;
        ++next[r];
        progressed = true;
      }
    }
  }

  int stuck = -1;
  for (int r = 0; r < s.numRanks && stuck < 0; ++r)
    if (next[r] < static_cast<int>(s.ranks[r].size()))
      stuck = r;
  if (stuck < 0)
    return t;

  // Follow waits until a rank repeats; report only the cycle.
  struct Hop {
    int rank, index, key;
  };
  std::vector<Hop> hops;
  std::vector<int> seenAt(s.numRanks, -1);
  int r = stuck;
  while (seenAt[r] < 0) {
    seenAt[r] = static_cast<int>(hops.size());
    int key = unmet(r);
    hops.push_back({r, next[r], key});
    r = producer[key].rank;
  }
  std::string msg = "deadlock: the per-rank orders wait on each other in a "
                    "cycle: ";
  for (size_t n = seenAt[r]; n < hops.size(); ++n) {
    const Hop &h = hops[n];
    const Producer &p = producer[h.key];
    msg += std::string(n == static_cast<size_t>(seenAt[r]) ? "" : "; ") +
           "rank " + str(h.rank) + " is stuck at " +
           s.ranks[h.rank][h.index].str() + " (action " + str(h.index) +
           "), waiting for " + p.compute.str() + " (rank " + str(p.rank) +
           ", action " + str(p.index) + ")";
  }
  return Error{msg};
}

Result<Timeline> piper::sched::simulate(const Schedule &schedule,
                                        const Costs &costs) {
  if (Status st = detail::checkStructure(schedule); !st)
    return Error{st.error()};
  return detail::execute(schedule, costs);
}
