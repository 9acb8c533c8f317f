//===- TraceSummary.cpp - Per-rank time summary of a run's trace ----------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "TraceSummary.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <map>
#include <set>

using namespace piper::run;

namespace {

/// Time of one rank, in microseconds.
struct RankTime {
  std::map<std::string, double> compute; // by node kind
  std::map<std::string, double> comm;    // by operation
  double computeTotal = 0, first = 1e300, last = -1e300;
};

/// The node kind of a launch span: the name up to its tags ("BI{PP=0,...}"
/// -> "BI").
std::string kindOf(llvm::StringRef name) {
  return name.take_until([](char c) { return c == '{'; }).str();
}

} // namespace

bool piper::run::summarizeTrace(const std::string &path, std::string &text,
                                std::string &error) {
  auto buffer = llvm::MemoryBuffer::getFile(path);
  if (!buffer) {
    error =
        "cannot read the trace " + path + ": " + buffer.getError().message();
    return false;
  }
  llvm::Expected<llvm::json::Value> root =
      llvm::json::parse((*buffer)->getBuffer());
  if (!root) {
    error =
        path + " is not a Chrome trace: " + llvm::toString(root.takeError());
    return false;
  }
  const llvm::json::Array *events = root->getAsArray();
  if (const llvm::json::Object *object = root->getAsObject())
    events = object->getArray("traceEvents");
  if (!events) {
    error = path + " is not a Chrome trace (no traceEvents)";
    return false;
  }
  std::map<int64_t, RankTime> ranks;
  std::set<std::string> kinds, comms;
  for (const llvm::json::Value &value : *events) {
    const llvm::json::Object *event = value.getAsObject();
    if (!event || event->getString("ph") != "X")
      continue;
    std::optional<int64_t> pid = event->getInteger("pid");
    std::optional<double> ts = event->getNumber("ts"),
                          dur = event->getNumber("dur");
    std::optional<llvm::StringRef> name = event->getString("name"),
                                   category = event->getString("cat");
    if (!pid || !ts || !dur || !name || !category)
      continue;
    RankTime &rank = ranks[*pid];
    rank.first = std::min(rank.first, *ts);
    rank.last = std::max(rank.last, *ts + *dur);
    if (*category == "compute") {
      std::string kind = kindOf(*name);
      kinds.insert(kind);
      rank.compute[kind] += *dur;
      rank.computeTotal += *dur;
    } else if (*category == "comm") {
      comms.insert(name->str());
      rank.comm[name->str()] += *dur;
    }
  }
  llvm::raw_string_ostream os(text);
  os << "trace summary, ms per rank: compute by node kind; waiting = the "
        "run's span minus compute (pipeline bubbles and exposed "
        "communication); send/recv/... = time each operation was in flight "
        "(overlaps compute):\n";
  os << llvm::format("%-5s", "rank");
  for (const std::string &kind : kinds)
    os << llvm::format(" %9s", kind.c_str());
  os << llvm::format(" %9s %9s %7s", "compute", "waiting", "busy%");
  for (const std::string &comm : comms)
    os << llvm::format(" %11s", comm.c_str());
  os << "\n";
  for (auto &[id, rank] : ranks) {
    double span = rank.last > rank.first ? rank.last - rank.first : 0;
    os << llvm::format("%-5lld", static_cast<long long>(id));
    for (const std::string &kind : kinds)
      os << llvm::format(" %9.3f", rank.compute[kind] / 1000);
    os << llvm::format(" %9.3f %9.3f %6.1f%%", rank.computeTotal / 1000,
                       std::max(0.0, span - rank.computeTotal) / 1000,
                       span > 0 ? 100 * rank.computeTotal / span : 0.0);
    for (const std::string &comm : comms)
      os << llvm::format(" %11.3f", rank.comm[comm] / 1000);
    os << "\n";
  }
  return true;
}
