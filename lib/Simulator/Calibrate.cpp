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
    if (const json::Object *args = event->getObject("args")) {
      std::optional<double> elements = args->getNumber("elements");
      std::optional<llvm::StringRef> dtype = args->getString("dtype");
      if (elements && *elements >= 0 && dtype)
        e.bytes = *elements * (*dtype == "f32" ? 4 : 8);
      if (std::optional<llvm::StringRef> comm = args->getString("comm")) {
        size_t of = comm->find(" of ");
        while (of != llvm::StringRef::npos) {
          llvm::StringRef rest = comm->drop_front(of + 4);
          unsigned n = 0;
          if (!rest.consumeInteger(10, n) && rest.starts_with(":")) {
            e.members = int(n);
            break;
          }
          of = comm->find(" of ", of + 4);
        }
      }
    }
    events.push_back(std::move(e));
  }
  return true;
}

Pairing
piper::sim::pairKernelSpans(const std::vector<TraceEvent> &events,
                            const std::vector<std::string> &programOfRank,
                            const CountedLaunches &counted, int skipRuns) {
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
      int run = runs[launch->name]++;
      if (ops == counted.end() || run < skipRuns)
        continue;
      std::string where = std::to_string(rank) + ":" + launch->name;
      ++out.launches;
      double paired = 0;
      size_t s = 0;
      for (const CountedOp &op : ops->second) {
        // Ops of other dialects (a step counter's arith.addi) are never
        // traced: their time stays with the launch.
        if (op.kind.empty())
          continue;
        size_t from = s;
        while (s < spans.size() && spans[s]->name != op.kind)
          ++s;
        if (s == spans.size()) {
          ++out.missingSpans;
          ++out.missingKinds[op.kind];
          s = from;
          continue;
        }
        out.unpairedSpans += s - from;
        out.samples.push_back({op, spans[s]->duration * 1e-6, where, run});
        paired += spans[s]->duration;
        ++s;
      }
      out.unpairedSpans += spans.size() - s;
      out.launchResiduals[where].push_back((launch->duration - paired) * 1e-6);
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

/// One launch's ops of one kind in its fastest run: n ops, work, seconds.
struct KindPoint {
  double n = 0, work = 0, seconds = 0;
};

/// t = n overhead + work / rate by least squares over `points` (no
/// intercept), else through the origin.
KernelRate fitPoints(const std::vector<KindPoint> &points, bool perFlop) {
  KernelRate rate;
  rate.perFlop = perFlop;
  double nn = 0, nw = 0, ww = 0, nt = 0, wt = 0, sw = 0, st = 0;
  for (const KindPoint &p : points) {
    nn += p.n * p.n;
    nw += p.n * p.work;
    ww += p.work * p.work;
    nt += p.n * p.seconds;
    wt += p.work * p.seconds;
    sw += p.work;
    st += p.seconds;
  }
  double det = nn * ww - nw * nw;
  if (points.size() >= 2 && det > 1e-9 * nn * ww) {
    double overhead = (nt * ww - nw * wt) / det;
    double perWork = (nn * wt - nw * nt) / det;
    if (overhead >= 0 && perWork > 0) {
      rate.overhead = overhead;
      rate.rate = 1 / perWork;
      return rate;
    }
  }
  rate.rate = st > 0 ? sw / st : 0;
  return rate;
}

double workOf(const CountedOp &op, bool perFlop) {
  return perFlop ? op.matrixFlops + op.vectorFlops : op.bytes;
}

/// Per launch, the fastest run's sum over `samples` (whose work is by
/// `perFlop`).
std::vector<KindPoint>
launchPoints(const std::vector<const KernelSample *> &samples, bool perFlop,
             RunStatistic statistic) {
  std::map<std::string, std::map<int, KindPoint>> runs;
  for (const KernelSample *s : samples) {
    KindPoint &p = runs[s->launch][s->run];
    p.n += 1;
    p.work += workOf(s->op, perFlop);
    p.seconds += s->seconds;
  }
  std::vector<KindPoint> points;
  for (auto &[launch, byRun] : runs) {
    std::vector<const KindPoint *> sorted;
    for (auto &[run, p] : byRun)
      sorted.push_back(&p);
    std::sort(sorted.begin(), sorted.end(),
              [](const KindPoint *a, const KindPoint *b) {
                return a->seconds < b->seconds;
              });
    points.push_back(statistic == RunStatistic::Fastest
                         ? *sorted.front()
                         : *sorted[(sorted.size() - 1) / 2]);
  }
  return points;
}

} // namespace

std::map<std::string, KernelRate>
piper::sim::fitKernelRates(const std::vector<KernelSample> &samples,
                           RunStatistic statistic) {
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
    KernelRate rate =
        fitPoints(launchPoints(list, perFlop, statistic), perFlop);
    if (rate.rate > 0)
      rates[kind] = rate;
  }
  if (!all.empty()) {
    // Through the origin: one line through every kind would give a
    // meaningless overhead.
    std::vector<KindPoint> points = launchPoints(all, false, statistic);
    KernelRate fallback;
    double sw = 0, st = 0;
    for (const KindPoint &p : points) {
      sw += p.work;
      st += p.seconds;
    }
    fallback.rate = st > 0 ? sw / st : 0;
    if (fallback.rate > 0)
      rates["*"] = fallback;
  }
  return rates;
}

double piper::sim::fitLaunchOverhead(const Pairing &pairing,
                                     RunStatistic statistic) {
  std::vector<double> picked;
  for (const auto &[launch, residuals] : pairing.launchResiduals)
    picked.push_back(statistic == RunStatistic::Fastest
                         ? *std::min_element(residuals.begin(), residuals.end())
                         : median(residuals));
  return std::max(0.0, median(picked));
}

bool piper::sim::fitLink(const std::vector<std::pair<double, double>> &points,
                         LinkFit &link) {
  std::map<double, int> sizes;
  double n = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (const auto &[bytes, seconds] : points) {
    ++sizes[bytes];
    n += 1;
    sx += bytes;
    sy += seconds;
    sxx += bytes * bytes;
    sxy += bytes * seconds;
  }
  if (sizes.size() < 2)
    return false;
  double slope = (n * sxy - sx * sy) / (n * sxx - sx * sx);
  if (!(slope > 0))
    return false;
  link.bandwidth = 1 / slope;
  link.latency = std::max(0.0, (sy - slope * sx) / n);
  return true;
}

std::map<std::string, LinkFit>
piper::sim::fitCollectives(const std::vector<TraceEvent> &events) {
  // kind -> members -> bytes -> (sum of seconds, spans).
  std::map<std::string, std::map<int, std::map<double, std::pair<double, int>>>>
      spans;
  for (const TraceEvent &e : events) {
    if (e.category != "comm" || e.members < 2 || e.bytes <= 0 ||
        (e.name != "all_reduce" && e.name != "reduce_scatter" &&
         e.name != "all_gather"))
      continue;
    std::pair<double, int> &sum = spans[e.name][e.members][e.bytes];
    sum.first += e.duration * 1e-6;
    ++sum.second;
  }
  std::map<std::string, LinkFit> links;
  for (const auto &[kind, byMembers] : spans) {
    // The most common member count (a calibration run has one).
    auto most = std::max_element(byMembers.begin(), byMembers.end(),
                                 [](const auto &a, const auto &b) {
                                   return a.second.size() < b.second.size();
                                 });
    double n = most->first;
    // The ring: all_reduce 2(n-1) latencies + 2(n-1)/n bytes / bandwidth;
    // reduce_scatter and all_gather half that.
    double steps = kind == "all_reduce" ? 2 * (n - 1) : n - 1;
    std::vector<std::pair<double, double>> points;
    for (const auto &[bytes, sum] : most->second)
      points.push_back({steps / n * bytes, sum.first / sum.second});
    LinkFit link;
    if (!fitLink(points, link))
      continue;
    link.latency /= steps;
    links[kind] = link;
  }
  return links;
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
    std::optional<double> bytes =
        point ? point->getNumber("bytes") : std::nullopt;
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
