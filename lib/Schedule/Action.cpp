//===- Action.cpp - Spelling and parsing of schedule actions --------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "piper/Schedule/Schedule.h"

#include <cctype>

using namespace piper::sched;

char piper::sched::kindLetter(Kind kind) {
  switch (kind) {
  case Kind::F:
    return 'F';
  case Kind::I:
    return 'I';
  case Kind::W:
    return 'W';
  case Kind::B:
    return 'B';
  }
  return '?';
}

std::string Compute::str() const {
  return std::to_string(stage) + kindLetter(kind) + std::to_string(microbatch);
}

std::vector<Compute> Action::parts() const {
  if (overlapped)
    return {first, *overlapped};
  return {first};
}

std::string Action::str() const {
  if (!overlapped)
    return first.str();
  return "(" + first.str() + ";" + overlapped->str() + ")OVERLAP_F_B";
}

namespace {

/// Parses `<digits><letter><digits>` exactly.
Result<Compute> parseCompute(std::string_view text, std::string_view whole) {
  auto bad = [&](const std::string &why) {
    return Error{"bad action '" + std::string(whole) + "': " + why};
  };
  size_t pos = 0;
  auto number = [&](int &out) {
    size_t start = pos;
    long value = 0;
    while (pos < text.size() && std::isdigit((unsigned char)text[pos])) {
      value = value * 10 + (text[pos] - '0');
      // Far beyond any real schedule; keeps the int conversion defined.
      if (value > 1000000)
        return false;
      ++pos;
    }
    out = static_cast<int>(value);
    return pos > start;
  };
  Compute c;
  if (!number(c.stage))
    return bad("expected a stage number");
  if (pos >= text.size())
    return bad("expected F, I, W or B after the stage");
  switch (text[pos]) {
  case 'F':
    c.kind = Kind::F;
    break;
  case 'I':
    c.kind = Kind::I;
    break;
  case 'W':
    c.kind = Kind::W;
    break;
  case 'B':
    c.kind = Kind::B;
    break;
  default:
    return bad(std::string("unknown computation '") + text[pos] +
               "'; expected F, I, W or B (communication actions are not "
               "supported, only the compute-only form)");
  }
  ++pos;
  if (!number(c.microbatch))
    return bad("expected a microbatch number");
  if (pos != text.size())
    return bad("unexpected '" + std::string(text.substr(pos)) + "'");
  return c;
}

} // namespace

Result<Action> piper::sched::parseAction(std::string_view text) {
  constexpr std::string_view suffix = ")OVERLAP_F_B";
  if (!text.empty() && text.front() == '(') {
    if (text.size() <= suffix.size() + 1 ||
        text.substr(text.size() - suffix.size()) != suffix)
      return Error{"bad action '" + std::string(text) +
                   "': a parenthesised pair must end in )OVERLAP_F_B"};
    std::string_view inner = text.substr(1, text.size() - suffix.size() - 1);
    size_t semi = inner.find(';');
    if (semi == std::string_view::npos)
      return Error{"bad action '" + std::string(text) +
                   "': expected two actions separated by ';'"};
    Result<Compute> f = parseCompute(inner.substr(0, semi), text);
    if (!f)
      return Error{f.error()};
    Result<Compute> b = parseCompute(inner.substr(semi + 1), text);
    if (!b)
      return Error{b.error()};
    if (f->kind != Kind::F || b->kind != Kind::B)
      return Error{"bad action '" + std::string(text) +
                   "': OVERLAP_F_B pairs a forward (F) with a full backward "
                   "(B), in that order"};
    Action a = *f;
    a.overlapped = *b;
    return a;
  }
  Result<Compute> c = parseCompute(text, text);
  if (!c)
    return Error{c.error()};
  return Action(*c);
}

std::vector<int> Schedule::stagesOf(int rank) const {
  std::vector<int> out;
  for (int s = 0; s < static_cast<int>(stageToRank.size()); ++s)
    if (stageToRank[s] == rank)
      out.push_back(s);
  return out;
}

size_t Schedule::size() const {
  size_t n = 0;
  for (const auto &list : ranks)
    n += list.size();
  return n;
}
