//===- Validate.cpp - Structural checks of a schedule ---------------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Checks in the order a user fixing a hand-written schedule wants them:
// shape, then per-action ranges and placement, then duplicates, then missing
// work, then W-before-I, and last (in the simulator's loop) deadlock.
//
//===----------------------------------------------------------------------===//

#include "Detail.h"

#include <map>
#include <tuple>

using namespace piper::sched;

namespace {

std::string str(int x) { return std::to_string(x); }

struct Loc {
  int rank, index;
};

std::string times(size_t n) {
  if (n == 2)
    return "twice";
  return str(static_cast<int>(n)) + " times";
}

/// "0F3, 0F4" for the given microbatches of a stage and kind.
std::string names(int stage, char kind, const std::vector<int> &mbs) {
  std::string out;
  for (int mb : mbs)
    out += (out.empty() ? "" : ", ") + str(stage) + kind + str(mb);
  return out;
}

std::string list(const std::vector<int> &mbs) {
  std::string out;
  for (int mb : mbs)
    out += (out.empty() ? "" : ", ") + str(mb);
  return out;
}

} // namespace

Status piper::sched::detail::checkStructure(const Schedule &s) {
  if (s.numRanks < 1)
    return Error{"schedule has no ranks"};
  if (s.numStages < 1)
    return Error{"schedule has no stages"};
  if (s.numMicrobatches < 1)
    return Error{"schedule has no microbatches"};
  if (s.numChains < 1 || s.numStages % s.numChains != 0)
    return Error{"schedule has " + str(s.numStages) +
                 " stages, which do not split into " + str(s.numChains) +
                 " chains of equal length"};
  if (static_cast<int>(s.stageToRank.size()) != s.numStages)
    return Error{"schedule places " + str(s.stageToRank.size()) +
                 " stages but has " + str(s.numStages)};
  for (int st = 0; st < s.numStages; ++st)
    if (s.stageToRank[st] < 0 || s.stageToRank[st] >= s.numRanks)
      return Error{"stage " + str(st) + " is placed on rank " +
                   str(s.stageToRank[st]) + ", but the schedule has " +
                   str(s.numRanks) + " ranks"};
  if (static_cast<int>(s.ranks.size()) != s.numRanks)
    return Error{"schedule has " + str(s.numRanks) + " ranks but " +
                 str(s.ranks.size()) + " action lists"};

  // (stage, microbatch, kind) -> where it runs.
  std::map<std::tuple<int, int, Kind>, std::vector<Loc>> where;
  for (int r = 0; r < s.numRanks; ++r) {
    for (int k = 0; k < static_cast<int>(s.ranks[r].size()); ++k) {
      const Action &a = s.ranks[r][k];
      std::string at =
          "rank " + str(r) + ", action " + str(k) + " (" + a.str() + "): ";
      if (a.isOverlap() &&
          (a.first.kind != Kind::F || a.overlapped->kind != Kind::B))
        return Error{at + "an overlapped pair is a forward and a full "
                          "backward"};
      for (const Compute &c : a.parts()) {
        if (c.stage < 0 || c.stage >= s.numStages)
          return Error{at + "stage " + str(c.stage) +
                       " does not exist (the schedule has " + str(s.numStages) +
                       " stages)"};
        if (c.microbatch < 0 || c.microbatch >= s.numMicrobatches)
          return Error{at + "microbatch " + str(c.microbatch) +
                       " does not exist (the schedule has " +
                       str(s.numMicrobatches) + " microbatches)"};
        if (s.stageToRank[c.stage] != r)
          return Error{at + "stage " + str(c.stage) + " is placed on rank " +
                       str(s.stageToRank[c.stage])};
        where[{c.stage, c.microbatch, c.kind}].push_back({r, k});
      }
    }
  }

  for (const auto &[key, locs] : where) {
    if (locs.size() < 2)
      continue;
    auto [stage, mb, kind] = key;
    std::string msg =
        Compute{kind, stage, mb}.str() + " appears " + times(locs.size()) + ":";
    for (size_t n = 0; n < locs.size(); ++n)
      msg += std::string(n ? "," : "") + " rank " + str(locs[n].rank) +
             " action " + str(locs[n].index);
    return Error{msg};
  }

  auto count = [&](int stage, int mb, Kind kind) {
    auto it = where.find({stage, mb, kind});
    return it == where.end() ? 0 : static_cast<int>(it->second.size());
  };
  // Missing forwards first: without them nothing downstream can be judged.
  for (int st = 0; st < s.numStages; ++st) {
    std::vector<int> missing;
    for (int mb = 0; mb < s.numMicrobatches; ++mb)
      if (!count(st, mb, Kind::F))
        missing.push_back(mb);
    if (!missing.empty())
      return Error{"stage " + str(st) + " is missing microbatch" +
                   (missing.size() > 1 ? "es " : " ") + list(missing) +
                   ": no " + names(st, 'F', missing)};
  }
  for (int st = 0; st < s.numStages; ++st) {
    std::vector<int> missing;
    for (int mb = 0; mb < s.numMicrobatches; ++mb) {
      std::string b = Compute{Kind::B, st, mb}.str();
      std::string i = Compute{Kind::I, st, mb}.str();
      std::string w = Compute{Kind::W, st, mb}.str();
      int nb = count(st, mb, Kind::B), ni = count(st, mb, Kind::I),
          nw = count(st, mb, Kind::W);
      if (nb && ni)
        return Error{b + " and " + i +
                     " both compute the input gradient of "
                     "stage " +
                     str(st) + ", microbatch " + str(mb)};
      if (nb && nw)
        return Error{b + " and " + w +
                     " both compute the weight gradient of "
                     "stage " +
                     str(st) + ", microbatch " + str(mb)};
      if (ni && !nw)
        return Error{i + " has no " + w + ": the weight gradient of stage " +
                     str(st) + ", microbatch " + str(mb) +
                     " is never computed"};
      if (nw && !ni)
        return Error{w + " has no " + i + ": the input gradient of stage " +
                     str(st) + ", microbatch " + str(mb) +
                     " is never computed"};
      if (!nb && !ni)
        missing.push_back(mb);
    }
    if (!missing.empty())
      return Error{"stage " + str(st) + " is missing microbatch" +
                   (missing.size() > 1 ? "es " : " ") + list(missing) +
                   ": no backward (" + names(st, 'B', missing) + ", or " +
                   names(st, 'I', missing) + " with " +
                   names(st, 'W', missing) + ")"};
  }

  // W reads what I leaves behind on the same rank, so it must come later in
  // that rank's list (placement already put both on the stage's rank).
  for (const auto &[key, locs] : where) {
    auto [stage, mb, kind] = key;
    if (kind != Kind::W)
      continue;
    Loc w = locs.front();
    Loc i = where.at({stage, mb, Kind::I}).front();
    if (w.index < i.index)
      return Error{
          "rank " + str(w.rank) + " runs " + Compute{Kind::W, stage, mb}.str() +
          " (action " + str(w.index) + ") before its " +
          Compute{Kind::I, stage, mb}.str() + " (action " + str(i.index) + ")"};
  }
  return Status::success();
}

Status piper::sched::validate(const Schedule &schedule) {
  if (Status st = detail::checkStructure(schedule); !st)
    return st;
  // Execution order does not depend on costs, so unit costs suffice to
  // prove that every rank reaches the end of its list.
  Result<Timeline> run = detail::execute(schedule, Costs{});
  if (!run)
    return Error{run.error()};
  return Status::success();
}
