//===- PyTorchCSV.cpp - torch.distributed.pipelining CSV files ------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "piper/Schedule/PyTorchCSV.h"

#include <algorithm>
#include <map>
#include <set>
#include <utility>

using namespace piper::sched;

namespace {

std::string str(int x) { return std::to_string(x); }

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
    s.remove_prefix(1);
  while (!s.empty() &&
         (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (true) {
    size_t pos = s.find(sep, start);
    if (pos == std::string_view::npos) {
      out.push_back(s.substr(start));
      return out;
    }
    out.push_back(s.substr(start, pos - start));
    start = pos + 1;
  }
}

} // namespace

Result<Schedule> piper::sched::readPyTorchCSV(std::string_view text,
                                              bool *usedBForInput) {
  std::vector<std::string_view> lines = split(text, '\n');
  // A final newline ends the last row; it does not start an empty rank.
  while (!lines.empty() && trim(lines.back()).empty())
    lines.pop_back();
  if (lines.empty())
    return Error{"schedule CSV has no rows"};

  Schedule s;
  s.name = "imported";
  s.numRanks = static_cast<int>(lines.size());
  s.ranks.resize(s.numRanks);
  std::map<int, int> rankOfStage;
  int maxStage = -1, maxMb = -1;
  for (int r = 0; r < s.numRanks; ++r) {
    std::vector<std::string_view> cells = split(lines[r], ',');
    for (size_t c = 0; c < cells.size(); ++c) {
      std::string_view cell = trim(cells[c]);
      if (cell.empty())
        continue; // Idle step.
      Result<Action> a = parseAction(cell);
      if (!a)
        return Error{"line " + str(r + 1) + ", cell " +
                     str(static_cast<int>(c) + 1) + ": " + a.error()};
      for (const Compute &part : a->parts()) {
        auto [it, inserted] = rankOfStage.emplace(part.stage, r);
        if (!inserted && it->second != r)
          return Error{"line " + str(r + 1) + ", cell " +
                       str(static_cast<int>(c) + 1) + ": stage " +
                       str(part.stage) + " already appears on rank " +
                       str(it->second) + "; a stage belongs to one rank"};
        maxStage = std::max(maxStage, part.stage);
        maxMb = std::max(maxMb, part.microbatch);
      }
      s.ranks[r].push_back(*a);
    }
  }
  if (maxStage < 0)
    return Error{"schedule CSV has no actions"};
  s.numStages = maxStage + 1;
  s.numMicrobatches = maxMb + 1;
  s.stageToRank.assign(s.numStages, -1);
  for (int st = 0; st < s.numStages; ++st) {
    auto it = rankOfStage.find(st);
    if (it == rankOfStage.end())
      return Error{"stage " + str(st) + " appears in no row, but stage " +
                   str(maxStage) + " does"};
    s.stageToRank[st] = it->second;
  }

  // Older files spell the input gradient `B` and add a `W` for the weights;
  // a full backward never has a separate W, so a W names its B as an I.
  std::set<std::pair<int, int>> hasW;
  for (const auto &list : s.ranks)
    for (const Action &a : list)
      if (!a.isOverlap() && a.first.kind == Kind::W)
        hasW.insert({a.first.stage, a.first.microbatch});
  bool legacy = false;
  for (auto &list : s.ranks)
    for (Action &a : list)
      if (!a.isOverlap() && a.first.kind == Kind::B &&
          hasW.count({a.first.stage, a.first.microbatch})) {
        a.first.kind = Kind::I;
        legacy = true;
      }
  if (usedBForInput)
    *usedBForInput = legacy;
  return s;
}

Result<std::string>
piper::sched::writePyTorchCSV(const Schedule &s,
                              const CSVWriteOptions &options) {
  if (s.numChains != 1)
    return Error{"PyTorch's schedule CSV has one pipeline; '" + s.name +
                 "' has " + str(s.numChains) +
                 " chains (a bidirectional schedule), which it cannot express"};
  std::string out;
  for (const auto &list : s.ranks) {
    bool firstCell = true;
    for (const Action &a : list) {
      Action spelled = a;
      if (options.bForInput && !a.isOverlap() && a.first.kind == Kind::I)
        spelled.first.kind = Kind::B;
      out += (firstCell ? "" : ",") + spelled.str();
      firstCell = false;
    }
    out += '\n';
  }
  return out;
}
