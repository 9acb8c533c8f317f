//===- Train.cpp - Training defaults, LR schedules, clipping, decay -------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// piper-rt/train.h. Every formula is evaluated the same way in every tool
// (one function, one association), so the serial interpreter and a plan
// under any strategy see bit-identical learning rates and clip factors up
// to the order in which the norm's partial sums are added.
//
//===----------------------------------------------------------------------===//

#include "piper-rt/train.h"

#include <algorithm>
#include <cmath>

using namespace piper::train;

double piper::train::defaultWeightDecay(const std::string &optimizer) {
  return optimizer == "sgd" ? kDefaultSgdWeightDecay : kDefaultAdamWWeightDecay;
}

bool piper::train::parseScheduleKind(const std::string &text,
                                     ScheduleKind &kind) {
  if (text == "constant")
    kind = ScheduleKind::Constant;
  else if (text == "cosine")
    kind = ScheduleKind::Cosine;
  else if (text == "linear")
    kind = ScheduleKind::Linear;
  else
    return false;
  return true;
}

const char *piper::train::scheduleKindName(ScheduleKind kind) {
  switch (kind) {
  case ScheduleKind::Constant:
    return "constant";
  case ScheduleKind::Cosine:
    return "cosine";
  case ScheduleKind::Linear:
    return "linear";
  }
  return "constant";
}

std::string piper::train::checkSchedule(const LrSchedule &s) {
  if (!(std::isfinite(s.lr) && s.lr >= 0.0))
    return "the learning rate must be finite and non-negative";
  if (!(std::isfinite(s.minLr) && s.minLr >= 0.0))
    return "the minimum learning rate must be finite and non-negative";
  if (s.warmupSteps < 0)
    return "the warmup step count must be non-negative";
  if (s.decaySteps < 0)
    return "the decay step count must be non-negative";
  return "";
}

double piper::train::lrAt(const LrSchedule &s, int64_t step) {
  if (s.warmupSteps > 0 && step <= s.warmupSteps)
    return s.lr * static_cast<double>(step) /
           static_cast<double>(s.warmupSteps);
  if (s.kind == ScheduleKind::Constant)
    return s.lr;
  double span =
      static_cast<double>(std::max<int64_t>(1, s.decaySteps - s.warmupSteps));
  double p = std::min(
      1.0, std::max(0.0, static_cast<double>(step - s.warmupSteps) / span));
  if (s.kind == ScheduleKind::Cosine)
    return s.minLr + (s.lr - s.minLr) * 0.5 * (1.0 + std::cos(M_PI * p));
  // Weighted so that the end point is minLr exactly.
  return (1.0 - p) * s.lr + p * s.minLr;
}

double piper::train::clipCoefficient(double sumOfSquares, double maxNorm) {
  if (!(maxNorm > 0.0))
    return 1.0;
  double coef = maxNorm / (std::sqrt(sumOfSquares) + kClipEpsilon);
  return std::min(1.0, coef);
}

bool piper::train::globMatch(const std::string &pattern,
                             const std::string &text) {
  // Iterative wildcard matching with one backtrack point (the last '*').
  size_t p = 0, t = 0, star = std::string::npos, mark = 0;
  while (t < text.size()) {
    if (p < pattern.size() && (pattern[p] == '?' || pattern[p] == text[t])) {
      ++p;
      ++t;
    } else if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      mark = t;
    } else if (star != std::string::npos) {
      p = star + 1;
      t = ++mark;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*')
    ++p;
  return p == pattern.size();
}

bool piper::train::parseDecayRule(const std::string &text, DecayRule &rule,
                                  std::string &error) {
  rule = DecayRule();
  if (text == "rank<2") {
    rule.kind = DecayRule::Kind::LowRank;
    return true;
  }
  if (text == "none") {
    rule.kind = DecayRule::Kind::None;
    return true;
  }
  if (text == "all") {
    rule.kind = DecayRule::Kind::All;
    return true;
  }
  rule.kind = DecayRule::Kind::Names;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(',', start);
    if (end == std::string::npos)
      end = text.size();
    std::string glob = text.substr(start, end - start);
    if (glob.empty()) {
      error = "no-decay rule '" + text +
              "' has an empty name pattern; expected rank<2, none, all or a "
              "comma-separated list of globs";
      return false;
    }
    rule.globs.push_back(glob);
    start = end + 1;
  }
  return true;
}

bool piper::train::decays(const DecayRule &rule, const std::string &name,
                          int64_t rank) {
  switch (rule.kind) {
  case DecayRule::Kind::LowRank:
    return rank >= 2;
  case DecayRule::Kind::None:
    return true;
  case DecayRule::Kind::All:
    return false;
  case DecayRule::Kind::Names:
    return !std::any_of(
        rule.globs.begin(), rule.globs.end(),
        [&](const std::string &g) { return globMatch(g, name); });
  }
  return true;
}
