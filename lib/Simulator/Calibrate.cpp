//===- Calibrate.cpp - Fitting the cost model to a measured run -----------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "piper/Simulator/Calibrate.h"

#include "piper/Limits.h"

#include "llvm/Support/JSON.h"

#include <algorithm>
#include <array>
#include <cmath>

using namespace piper::sim;
namespace json = llvm::json;

double piper::sim::median(std::vector<double> values) {
  if (values.empty())
    return 0;
  size_t mid = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + mid, values.end());
  double upper = values[mid];
  if (values.size() % 2)
    return upper;
  return (upper + *std::max_element(values.begin(), values.begin() + mid)) / 2;
}

namespace {

/// The root object's array `key`, or an error.
const json::Array *rootArray(const std::string &text, const char *key,
                             json::Value &storage, std::string &error) {
  if (std::optional<std::string> deep = mlir::piper::checkJSONDepth(text)) {
    error = *deep;
    return nullptr;
  }
  llvm::Expected<json::Value> parsed = json::parse(text);
  if (!parsed) {
    error = llvm::toString(parsed.takeError());
    return nullptr;
  }
  storage = std::move(*parsed);
  const json::Object *root = storage.getAsObject();
  const json::Array *array = root ? root->getArray(key) : nullptr;
  if (!array)
    error = std::string("no '") + key + "' array at the top level";
  return array;
}

} // namespace

bool piper::sim::parseTraceEvents(const std::string &text,
                                  std::vector<TraceEvent> &events,
                                  std::string &error) {
  json::Value storage(nullptr);
  const json::Array *array = rootArray(text, "traceEvents", storage, error);
  if (!array)
    return false;
  for (auto [i, value] : llvm::enumerate(*array)) {
    const json::Object *event = value.getAsObject();
    if (!event || event->getString("ph") != "X")
      continue;
    std::optional<int64_t> pid = event->getInteger("pid");
    std::optional<double> ts = event->getNumber("ts"),
                          dur = event->getNumber("dur");
    if (!pid || !ts || !dur) {
      error = "traceEvents[" + std::to_string(i) +
              "]: a complete event needs pid, ts and dur";
      return false;
    }
    TraceEvent e;
    e.pid = int(*pid);
    e.name = event->getString("name").value_or("").str();
    e.category = event->getString("cat").value_or("").str();
    e.start = *ts;
    e.duration = *dur;
    events.push_back(std::move(e));
  }
  return true;
}

Pairing piper::sim::pairKernelSpans(const std::vector<TraceEvent> &events,
                                    const std::vector<std::string> &programOfRank,
                                    const CountedLaunches &counted,
                                    int skipRuns) {
  Pairing out;
  // Per rank, launches and kernels in time order.
  std::map<int, std::vector<const TraceEvent *>> launches, kernels;
  for (const TraceEvent &e : events) {
    if (e.pid < 0 || size_t(e.pid) >= programOfRank.size())
      continue;
    if (e.category == "compute")
      launches[e.pid].push_back(&e);
    else if (e.category == "kernel")
      kernels[e.pid].push_back(&e);
  }
  auto byStart = [](const TraceEvent *a, const TraceEvent *b) {
    return a->start < b->start;
  };
  for (auto &[rank, list] : launches) {
    std::vector<const TraceEvent *> &inside = kernels[rank];
    std::sort(list.begin(), list.end(), byStart);
    std::sort(inside.begin(), inside.end(), byStart);
    std::map<std::string, int> runs;
    size_t k = 0, within = 0;
    for (const TraceEvent *launch : list) {
      double end = launch->start + launch->duration;
      // The kernel spans within this launch's span (1 ns of slack for the
      // trace's rounding to nanoseconds).
      std::vector<const TraceEvent *> spans;
      while (k < inside.size() && inside[k]->start < launch->start - 1e-3)
        ++k;
      while (k < inside.size() && inside[k]->start <= end + 1e-3)
        spans.push_back(inside[k++]);
      within += spans.size();
      auto ops = counted.find({programOfRank[rank], launch->name});
      if (ops == counted.end() || runs[launch->name]++ < skipRuns)
        continue;
      ++out.launches;
      double paired = 0;
      size_t s = 0;
      for (const CountedOp &op : ops->second) {
        size_t from = s;
        while (s < spans.size() && spans[s]->name != op.kind)
          ++s;
        if (s == spans.size()) {
          ++out.missingSpans;
          s = from;
          continue;
        }
        out.unpairedSpans += s - from;
        out.samples.push_back({op, spans[s]->duration * 1e-6});
        paired += spans[s]->duration;
        ++s;
      }
      out.unpairedSpans += spans.size() - s;
      out.launchResiduals.push_back((launch->duration - paired) * 1e-6);
    }
    out.outsideSpans += inside.size() - within;
  }
  // Kernel spans of ranks that ran no launch.
  for (const auto &[rank, list] : kernels)
    if (!launches.count(rank))
      out.outsideSpans += list.size();
  return out;
}

namespace {

/// seconds = overhead + work / rate over (work, seconds, weight) points.
KernelRate fitLine(const std::vector<std::array<double, 3>> &points,
                   bool perFlop) {
  KernelRate rate;
  rate.perFlop = perFlop;
  double n = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (const auto &[x, y, w] : points) {
    n += w;
    sx += w * x;
    sy += w * y;
    sxx += w * x * x;
    sxy += w * x * y;
  }
  double det = n * sxx - sx * sx;
  if (points.size() >= 2 && det > 1e-12 * n * sxx) {
    double slope = (n * sxy - sx * sy) / det;
    double intercept = (sy - slope * sx) / n;
    if (slope > 0 && intercept >= 0) {
      rate.rate = 1 / slope;
      rate.overhead = intercept;
      return rate;
    }
  }
  // Through the origin: the ratio of the totals.
  rate.rate = sy > 0 ? sx / sy : 0;
  return rate;
}

/// The points of `samples` (work by `perFlop`), one per distinct work: its
/// median seconds, weighted by its count.
std::vector<std::array<double, 3>>
medianPoints(const std::vector<const KernelSample *> &samples, bool perFlop) {
  std::map<double, std::vector<double>> byWork;
  for (const KernelSample *s : samples) {
    double work = perFlop ? s->op.matrixFlops + s->op.vectorFlops : s->op.bytes;
    byWork[work].push_back(s->seconds);
  }
  std::vector<std::array<double, 3>> points;
  for (auto &[work, seconds] : byWork)
    points.push_back({work, median(seconds), double(seconds.size())});
  return points;
}

} // namespace

std::map<std::string, KernelRate>
piper::sim::fitKernelRates(const std::vector<KernelSample> &samples) {
  std::map<std::string, std::vector<const KernelSample *>> byKind;
  std::vector<const KernelSample *> all;
  for (const KernelSample &s : samples) {
    byKind[s.op.kind].push_back(&s);
    all.push_back(&s);
  }
  std::map<std::string, KernelRate> rates;
  for (auto &[kind, list] : byKind) {
    bool perFlop = llvm::any_of(
        list, [](const KernelSample *s) { return s->op.matrixFlops > 0; });
    KernelRate rate = fitLine(medianPoints(list, perFlop), perFlop);
    if (rate.rate > 0)
      rates[kind] = rate;
  }
  if (!all.empty()) {
    KernelRate fallback = fitLine(medianPoints(all, false), false);
    if (fallback.rate > 0)
      rates["*"] = fallback;
  }
  return rates;
}

bool piper::sim::fitLink(const std::vector<std::pair<double, double>> &points,
                         LinkFit &link) {
  std::vector<std::array<double, 3>> weighted;
  std::map<double, int> sizes;
  for (const auto &[bytes, seconds] : points) {
    weighted.push_back({bytes, seconds, 1.0});
    ++sizes[bytes];
  }
  if (sizes.size() < 2)
    return false;
  KernelRate line = fitLine(weighted, false);
  if (!(line.rate > 0))
    return false;
  link.bandwidth = line.rate;
  link.latency = line.overhead;
  return true;
}

bool piper::sim::parsePingPong(const std::string &text,
                               std::vector<std::pair<double, double>> &points,
                               std::string &error) {
  json::Value storage(nullptr);
  const json::Array *array = rootArray(text, "pingpong", storage, error);
  if (!array)
    return false;
  for (auto [i, value] : llvm::enumerate(*array)) {
    const json::Object *point = value.getAsObject();
    std::optional<double> bytes = point ? point->getNumber("bytes") : std::nullopt;
    std::optional<double> seconds =
        point ? point->getNumber("seconds") : std::nullopt;
    if (!bytes || !seconds || *bytes < 0 || *seconds < 0) {
      error = "pingpong[" + std::to_string(i) +
              "] needs non-negative numbers bytes and seconds";
      return false;
    }
    points.push_back({*bytes, *seconds});
  }
  return true;
}
