//===- Builders.cpp - Built-in pipeline schedules -------------------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Each builder follows the published algorithm (described in our own words
// here; see docs/Schedules.md for the sources) and only decides the order of
// each rank's list. Timing is the simulator's job, so a builder never
// assumes costs except ZB-H1, which chooses its order by a greedy pass at
// unit costs as the zero-bubble paper's heuristic scheduler does.
//
//===----------------------------------------------------------------------===//

#include "piper/Schedule/Builders.h"

#include <algorithm>
#include <deque>

using namespace piper::sched;

namespace {

std::string str(int x) { return std::to_string(x); }

/// Common argument checks, worded with the schedule's name.
Status checkCommon(std::string_view name, int p, int m) {
  if (p < 1)
    return Error{std::string(name) +
                 " needs at least 1 rank, got p = " + str(p)};
  if (m < 1)
    return Error{std::string(name) +
                 " needs at least 1 microbatch, got m = " + str(m)};
  return Status::success();
}

/// A schedule with `stages` stages and the given placement, empty lists.
Schedule makeSchedule(std::string name, int ranks, int m,
                      std::vector<int> stageToRank, int chains = 1) {
  Schedule s;
  s.name = std::move(name);
  s.numRanks = ranks;
  s.numStages = static_cast<int>(stageToRank.size());
  s.numMicrobatches = m;
  s.numChains = chains;
  s.stageToRank = std::move(stageToRank);
  s.ranks.resize(ranks);
  return s;
}

std::vector<int> identityPlacement(int p) {
  std::vector<int> out(p);
  for (int s = 0; s < p; ++s)
    out[s] = s;
  return out;
}

/// V order: stage s < R on rank s, stage s >= R on rank 2R-1-s.
std::vector<int> vPlacement(int ranks) {
  std::vector<int> out(2 * ranks);
  for (int s = 0; s < 2 * ranks; ++s)
    out[s] = s < ranks ? s : 2 * ranks - 1 - s;
  return out;
}

} // namespace

Result<Schedule> piper::sched::buildGPipe(int p, int m) {
  if (Status st = checkCommon("GPipe", p, m); !st)
    return Error{st.error()};
  Schedule s = makeSchedule("gpipe", p, m, identityPlacement(p));
  for (int r = 0; r < p; ++r) {
    for (int k = 0; k < m; ++k)
      s.ranks[r].push_back(Action::f(r, k));
    for (int k = 0; k < m; ++k)
      s.ranks[r].push_back(Action::b(r, k));
  }
  return s;
}

Result<Schedule> piper::sched::build1F1B(int p, int m) {
  if (Status st = checkCommon("1F1B", p, m); !st)
    return Error{st.error()};
  if (m < p)
    return Error{"1F1B needs at least as many microbatches as ranks (m >= p), "
                 "got m = " +
                 str(m) + " < p = " + str(p)};
  Schedule s = makeSchedule("1f1b", p, m, identityPlacement(p));
  for (int r = 0; r < p; ++r) {
    // Rank r keeps p - r microbatches in flight: p - r - 1 warm-up forwards,
    // then each forward is followed by the oldest backward.
    int warmup = std::min(p - r - 1, m);
    auto &list = s.ranks[r];
    for (int k = 0; k < warmup; ++k)
      list.push_back(Action::f(r, k));
    for (int k = 0; k < m - warmup; ++k) {
      list.push_back(Action::f(r, warmup + k));
      list.push_back(Action::b(r, k));
    }
    for (int k = m - warmup; k < m; ++k)
      list.push_back(Action::b(r, k));
  }
  return s;
}

Result<Schedule> piper::sched::buildInterleaved1F1B(int p, int m, int v) {
  if (Status st = checkCommon("interleaved 1F1B", p, m); !st)
    return Error{st.error()};
  if (v < 1)
    return Error{"interleaved 1F1B needs at least 1 stage per rank, got v = " +
                 str(v)};
  if (m % p != 0)
    return Error{"interleaved 1F1B needs the number of microbatches to be a "
                 "multiple of the number of ranks (Megatron's constraint), "
                 "got m = " +
                 str(m) + ", p = " + str(p)};
  // Looped placement: stage s on rank s % p, so stage c * p + r is rank r's
  // chunk c.
  std::vector<int> placement(p * v);
  for (int st = 0; st < p * v; ++st)
    placement[st] = st % p;
  Schedule s = makeSchedule("interleaved-1f1b", p, m, placement);
  int total = m * v;
  // Megatron walks "virtual microbatches" k in groups of p: p microbatches of
  // chunk 0, the same p of chunk 1, ..., then the next p microbatches.
  auto microbatchOf = [&](int k) { return (k / (p * v)) * p + k % p; };
  auto chunkOf = [&](int k, bool forward) {
    int c = (k % (p * v)) / p;
    return forward ? c : v - 1 - c;
  };
  for (int r = 0; r < p; ++r) {
    // Warm-up long enough that the first backward of chunk v-1 finds its
    // gradient ready: 2 per later rank plus a full round of the other chunks.
    // With m == p Megatron runs every forward first.
    int warmup =
        m == p ? total : std::min((p - r - 1) * 2 + (v - 1) * p, total);
    auto &list = s.ranks[r];
    auto fwd = [&](int k) {
      list.push_back(Action::f(chunkOf(k, true) * p + r, microbatchOf(k)));
    };
    auto bwd = [&](int k) {
      list.push_back(Action::b(chunkOf(k, false) * p + r, microbatchOf(k)));
    };
    for (int k = 0; k < warmup; ++k)
      fwd(k);
    for (int k = 0; k < total - warmup; ++k) {
      fwd(warmup + k);
      bwd(k);
    }
    for (int k = total - warmup; k < total; ++k)
      bwd(k);
  }
  return s;
}

Result<Schedule> piper::sched::buildZBH1(int p, int m) {
  if (Status st = checkCommon("ZB-H1", p, m); !st)
    return Error{st.error()};
  if (m < p)
    return Error{"ZB-H1 needs at least as many microbatches as ranks (m >= p), "
                 "got m = " +
                 str(m) + " < p = " + str(p)};
  Schedule s = makeSchedule("zb-h1", p, m, identityPlacement(p));
  // Greedy list scheduling at unit costs (F = I = W = 1), one slot at a time.
  // Priorities: I first (it is on the critical path to stage 0), then F while
  // rank r has fewer than p - r microbatches between F and I (1F1B's
  // activation bound), then the oldest pending W, else idle. The result is
  // only the order; the simulator re-times it for any costs.
  constexpr int notYet = 1 << 30;
  std::vector<std::vector<int>> fDone(p, std::vector<int>(m, notYet));
  std::vector<std::vector<int>> iDone(p, std::vector<int>(m, notYet));
  std::vector<int> nextF(p, 0), nextI(p, 0), nextW(p, 0);
  int remaining = 3 * p * m;
  // Every slot some rank can act (the last unfinished I or F is always
  // eventually ready), so 3pm + 2p slots is far more than enough; the bound
  // only guards against a bug looping forever.
  for (int t = 0; remaining > 0 && t < 4 * p * m + 4 * p; ++t) {
    // Decide every rank's slot from completions before t, then commit, so
    // that the order in which ranks are visited does not matter.
    std::vector<Action> chosen(p);
    std::vector<bool> busy(p, false);
    for (int r = 0; r < p; ++r) {
      int i = nextI[r], f = nextF[r], w = nextW[r];
      if (i < f && fDone[r][i] <= t && (r == p - 1 || iDone[r + 1][i] <= t)) {
        chosen[r] = Action::i(r, i);
      } else if (f < m && f - i < p - r && (r == 0 || fDone[r - 1][f] <= t)) {
        chosen[r] = Action::f(r, f);
      } else if (w < i && iDone[r][w] <= t) {
        chosen[r] = Action::w(r, w);
      } else {
        continue;
      }
      busy[r] = true;
    }
    for (int r = 0; r < p; ++r) {
      if (!busy[r])
        continue;
      const Compute &c = chosen[r].first;
      if (c.kind == Kind::F)
        fDone[r][nextF[r]++] = t + 1;
      else if (c.kind == Kind::I)
        iDone[r][nextI[r]++] = t + 1;
      else
        ++nextW[r];
      s.ranks[r].push_back(chosen[r]);
      --remaining;
    }
  }
  return s;
}

Result<Schedule> piper::sched::buildZBV(int p, int m) {
  if (Status st = checkCommon("ZB-V", p, m); !st)
    return Error{st.error()};
  if (m < p)
    return Error{"ZB-V needs at least as many microbatches as ranks (m >= p), "
                 "got m = " +
                 str(m) + " < p = " + str(p)};
  Schedule s = makeSchedule("zb-v", p, m, vPlacement(p));
  // The paper's hand-crafted V order (as PyTorch's ScheduleZBVZeroBubble
  // builds it): it is written for n >= 2p - 1 microbatches, so smaller m are
  // built as 2p - 1 and the extra microbatches dropped afterwards.
  int n = std::max(2 * p - 1, m);
  for (int r = 0; r < p; ++r) {
    int s0 = r, s1 = 2 * p - 1 - r;
    int f0 = 0, f1 = 0, b0 = 0, b1 = 0;
    std::vector<Action> list;
    auto add = [&](Action a) { list.push_back(a); };
    // Warm-up: fill chunk 0 (deeper for early ranks), then alternate chunk 1
    // and chunk 0 forwards, then start chunk 1 backwards with W right away.
    for (int k = 0; k < 2 * (p - r) - 1; ++k)
      add(Action::f(s0, f0++));
    for (int k = 0; k < r; ++k) {
      add(Action::f(s1, f1++));
      add(Action::f(s0, f0++));
    }
    for (int k = 0; k < p - r; ++k) {
      add(Action::f(s1, f1++));
      add(Action::i(s1, b1));
      add(Action::w(s1, b1++));
    }
    // Steady state: F I W on chunk 0, then on chunk 1.
    while (f1 < f0 || f0 < n) {
      if (f0 < n)
        add(Action::f(s0, f0++));
      add(Action::i(s0, b0));
      add(Action::w(s0, b0++));
      add(Action::f(s1, f1++));
      add(Action::i(s1, b1));
      add(Action::w(s1, b1++));
    }
    // Cool-down: input gradients first (critical path), weights last.
    int w0 = b0, w1 = b1;
    for (int k = 0; k < r; ++k) {
      add(Action::i(s0, b0++));
      add(Action::i(s1, b1++));
    }
    for (int k = 0; k < p - r; ++k) {
      add(Action::i(s0, b0++));
      add(Action::w(s0, w0++));
    }
    while (w1 < b1)
      add(Action::w(s1, w1++));
    while (w0 < b0)
      add(Action::w(s0, w0++));
    for (const Action &a : list)
      if (a.first.microbatch < m)
        s.ranks[r].push_back(a);
  }
  return s;
}

namespace {

/// DeepSeek's eight-phase per-rank program, shared by DualPipe and DualPipeV.
/// `halfRanks` is H (p/2 for DualPipe, R for DualPipeV), `h` the rank's
/// distance from the nearer end, `chunks` the microbatches per chunk (m/2 or
/// m). `stage0` is the stage the rank reaches early in its pipeline, `stage1`
/// the one it reaches late. The rank nearest the middle (h == H-1) does not
/// overlap its first F0 with B1: the backward is not ready yet.
std::vector<Action> dualPipeRank(int halfRanks, int h, int chunks, int stage0,
                                 int stage1) {
  std::vector<Action> list;
  int stage[2] = {stage0, stage1};
  int f[2] = {0, 0}, b[2] = {0, 0};
  std::deque<Compute> pendingW;
  auto F = [&](int c) { list.push_back(Action::f(stage[c], f[c]++)); };
  auto B = [&](int c, bool splitW) {
    if (!splitW) {
      list.push_back(Action::b(stage[c], b[c]++));
      return;
    }
    list.push_back(Action::i(stage[c], b[c]));
    pendingW.push_back(Compute{Kind::W, stage[c], b[c]++});
  };
  auto W = [&] {
    if (pendingW.empty())
      return;
    list.push_back(Action(pendingW.front()));
    pendingW.pop_front();
  };
  auto FB = [&](int fc, int bc) {
    list.push_back(Action::overlap(stage[fc], f[fc]++, stage[bc], b[bc]++));
  };
  int H = halfRanks;
  // 1: nF0, fill the near pipeline.
  for (int i = 0; i < (H - h - 1) * 2; ++i)
    F(0);
  // 2: nF0F1.
  for (int i = 0; i < h + 1; ++i) {
    F(0);
    F(1);
  }
  // 3: nB1W1F1, zero-bubble style.
  for (int i = 0; i < H - h - 1; ++i) {
    B(1, /*splitW=*/true);
    W();
    F(1);
  }
  // 4: nF0B1F1B0, the steady overlapped phase.
  for (int i = 0; i < chunks - 2 * H + h + 1; ++i) {
    if (i == 0 && h == H - 1) {
      F(0);
      B(1, false);
    } else {
      FB(0, 1);
    }
    FB(1, 0);
  }
  // 5: nB1F1B0.
  for (int i = 0; i < H - h - 1; ++i) {
    B(1, false);
    FB(1, 0);
  }
  // 6: nB1B0; from the middle on the backwards split off their W.
  bool split = false;
  int step6 = h + 1;
  for (int i = 0; i < step6; ++i) {
    if (i == step6 / 2 && h % 2 == 1)
      split = true;
    B(1, split);
    if (i == step6 / 2 && h % 2 == 0)
      split = true;
    B(0, split);
  }
  // 7: nWB0.
  for (int i = 0; i < H - h - 1; ++i) {
    W();
    B(0, true);
  }
  // 8: nW, drain.
  for (int i = 0; i < h + 1; ++i)
    W();
  // Anything still queued (none for the published step counts) must run.
  while (!pendingW.empty())
    W();
  return list;
}

} // namespace

Result<Schedule> piper::sched::buildDualPipe(int p, int m) {
  if (Status st = checkCommon("DualPipe", p, m); !st)
    return Error{st.error()};
  if (p % 2 != 0)
    return Error{"DualPipe needs an even number of ranks, got p = " + str(p)};
  if (m % 2 != 0)
    return Error{"DualPipe needs an even number of microbatches (half enter "
                 "at each end), got m = " +
                 str(m)};
  if (m < 2 * p)
    return Error{"DualPipe needs m >= 2p microbatches, got m = " + str(m) +
                 " < 2p = " + str(2 * p)};
  // Chain 0: stages 0..p-1 on ranks 0..p-1. Chain 1: stage p + j on rank
  // p-1-j, so its microbatches enter at rank p-1.
  std::vector<int> placement(2 * p);
  for (int j = 0; j < p; ++j) {
    placement[j] = j;
    placement[p + j] = p - 1 - j;
  }
  Schedule s = makeSchedule("dualpipe", p, m / 2, placement, /*chains=*/2);
  int H = p / 2;
  for (int r = 0; r < p; ++r) {
    bool firstHalf = r < H;
    int h = firstHalf ? r : p - 1 - r;
    // stage0: where the rank sits at position h; stage1: at position p-1-h.
    int chain0Stage = r, chain1Stage = p + (p - 1 - r);
    int stage0 = firstHalf ? chain0Stage : chain1Stage;
    int stage1 = firstHalf ? chain1Stage : chain0Stage;
    s.ranks[r] = dualPipeRank(H, h, m / 2, stage0, stage1);
  }
  return s;
}

Result<Schedule> piper::sched::buildDualPipeV(int ranks, int m) {
  if (Status st = checkCommon("DualPipeV", ranks, m); !st)
    return Error{st.error()};
  if (m < 2 * ranks)
    return Error{"DualPipeV needs m >= 2R microbatches (R ranks, 2R stages), "
                 "got m = " +
                 str(m) + " < 2R = " + str(2 * ranks)};
  Schedule s = makeSchedule("dualpipev", ranks, m, vPlacement(ranks));
  for (int r = 0; r < ranks; ++r)
    s.ranks[r] = dualPipeRank(ranks, r, m, r, 2 * ranks - 1 - r);
  return s;
}

const std::vector<std::string_view> &piper::sched::builtinScheduleNames() {
  static const std::vector<std::string_view> names = {
      "gpipe", "1f1b",     "interleaved-1f1b", "zb-h1",
      "zb-v",  "dualpipe", "dualpipev"};
  return names;
}

Result<Schedule> piper::sched::buildSchedule(std::string_view name, int p,
                                             int m, int v) {
  if (name == "interleaved-1f1b")
    return buildInterleaved1F1B(p, m, v);
  if (v != 1) {
    bool known = false;
    for (std::string_view n : builtinScheduleNames())
      known |= n == name;
    if (known)
      return Error{"schedule '" + std::string(name) +
                   "' has a fixed number of stages per rank; only "
                   "interleaved-1f1b takes v (got v = " +
                   str(v) + ")"};
  }
  if (name == "gpipe")
    return buildGPipe(p, m);
  if (name == "1f1b")
    return build1F1B(p, m);
  if (name == "zb-h1")
    return buildZBH1(p, m);
  if (name == "zb-v")
    return buildZBV(p, m);
  if (name == "dualpipe")
    return buildDualPipe(p, m);
  if (name == "dualpipev")
    return buildDualPipeV(p, m);
  std::string known;
  for (std::string_view n : builtinScheduleNames())
    known += (known.empty() ? "" : ", ") + std::string(n);
  return Error{"unknown schedule '" + std::string(name) +
               "'; expected one of " + known};
}
