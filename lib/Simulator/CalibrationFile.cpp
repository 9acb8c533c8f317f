//===- CalibrationFile.cpp - The calibration file: parse and write --------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The schema is CostModel.h's (docs/Simulator.md, "Calibration"). Every
// error names the JSON path of the offending value, so that a hand-edited
// file is fixed from the message alone.
//
//===----------------------------------------------------------------------===//

#include "FormatNumber.h"
#include "piper/Limits.h"
#include "piper/Simulator/CostModel.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"

using namespace piper::sim;
namespace json = llvm::json;

void Calibration::applyTo(CostParameters &params) const {
  if (computeEfficiency)
    params.computeEfficiency = *computeEfficiency;
  if (memoryEfficiency)
    params.memoryEfficiency = *memoryEfficiency;
  if (kernelOverhead)
    params.kernelOverhead = *kernelOverhead;
  if (interference)
    params.interference = *interference;
  if (launchOverhead)
    params.launchOverhead = *launchOverhead;
}

const KernelRate *Calibration::kernelRate(const std::string &kind) const {
  if (auto it = kernels.find(kind); it != kernels.end())
    return &it->second;
  if (auto it = kernels.find("*"); it != kernels.end())
    return &it->second;
  return nullptr;
}

const LinkFit *Calibration::link(const std::string &axis) const {
  if (auto it = links.find(axis); it != links.end())
    return &it->second;
  if (auto it = links.find("*"); it != links.end())
    return &it->second;
  return nullptr;
}

namespace {

/// The object at `path`, or an error.
const json::Object *objectAt(const json::Value &value, const std::string &path,
                             std::string &error) {
  const json::Object *object = value.getAsObject();
  if (!object)
    error = "'" + path + "' must be an object";
  return object;
}

/// A number at `path`, or an error.
std::optional<double> numberAt(const json::Value &value,
                               const std::string &path, std::string &error) {
  std::optional<double> number = value.getAsNumber();
  if (!number)
    error = "'" + path + "' must be a number";
  return number;
}

std::string outOfRange(const std::string &path, double x) {
  return "'" + path + "' is out of range (" + formatNumber("%g", x) + ")";
}

bool parseParameter(Calibration &cal, const std::string &inner, double x,
                    std::string &error) {
  bool known = inner == "compute_efficiency" || inner == "memory_efficiency" ||
               inner == "kernel_overhead_us" || inner == "interference" ||
               inner == "launch_overhead_us";
  if (!known) {
    error = "unknown parameter '" + inner +
            "'; expected compute_efficiency, memory_efficiency, "
            "kernel_overhead_us, launch_overhead_us or interference";
    return false;
  }
  // Efficiencies in (0, 1], interference in [0, 1), overheads >= 0.
  bool overhead =
      inner == "kernel_overhead_us" || inner == "launch_overhead_us";
  bool ok = overhead                  ? x >= 0
            : inner == "interference" ? x >= 0 && x < 1
                                      : x > 0 && x <= 1;
  if (!ok) {
    error = outOfRange("parameters." + inner, x);
    return false;
  }
  if (inner == "compute_efficiency")
    cal.computeEfficiency = x;
  else if (inner == "memory_efficiency")
    cal.memoryEfficiency = x;
  else if (inner == "kernel_overhead_us")
    cal.kernelOverhead = x * 1e-6;
  else if (inner == "launch_overhead_us")
    cal.launchOverhead = x * 1e-6;
  else
    cal.interference = x;
  return true;
}

/// `{"flops_per_s" | "bytes_per_s": rate > 0, "overhead_us": >= 0}`.
bool parseKernel(const json::Object &entry, const std::string &path,
                 KernelRate &rate, std::string &error) {
  bool haveRate = false;
  for (const auto &[key, value] : entry) {
    std::string name = key.str(), at = path + "." + name;
    if (name != "flops_per_s" && name != "bytes_per_s" &&
        name != "overhead_us") {
      error = "unknown key '" + at +
              "'; expected flops_per_s or bytes_per_s, and overhead_us";
      return false;
    }
    std::optional<double> x = numberAt(value, at, error);
    if (!x)
      return false;
    if (name == "overhead_us") {
      if (*x < 0) {
        error = outOfRange(at, *x);
        return false;
      }
      rate.overhead = *x * 1e-6;
      continue;
    }
    if (haveRate) {
      error = "'" + path + "' has both flops_per_s and bytes_per_s";
      return false;
    }
    if (!(*x > 0)) {
      error = outOfRange(at, *x);
      return false;
    }
    haveRate = true;
    rate.perFlop = name == "flops_per_s";
    rate.rate = *x;
  }
  if (!haveRate)
    error = "'" + path + "' needs flops_per_s or bytes_per_s";
  return haveRate;
}

/// `{"latency_us": >= 0, "bandwidth_gbs": > 0}`, both required.
bool parseLink(const json::Object &entry, const std::string &path,
               LinkFit &link, std::string &error) {
  bool latency = false, bandwidth = false;
  for (const auto &[key, value] : entry) {
    std::string name = key.str(), at = path + "." + name;
    if (name != "latency_us" && name != "bandwidth_gbs") {
      error = "unknown key '" + at + "'; expected latency_us and bandwidth_gbs";
      return false;
    }
    std::optional<double> x = numberAt(value, at, error);
    if (!x)
      return false;
    if (name == "latency_us" ? !(*x >= 0) : !(*x > 0)) {
      error = outOfRange(at, *x);
      return false;
    }
    if (name == "latency_us") {
      link.latency = *x * 1e-6;
      latency = true;
    } else {
      link.bandwidth = *x * 1e9;
      bandwidth = true;
    }
  }
  if (!latency || !bandwidth)
    error = "'" + path + "' needs latency_us and bandwidth_gbs";
  return latency && bandwidth;
}

bool parseSection(Calibration &cal, const std::string &name,
                  const json::Object &section, std::string &error) {
  for (const auto &[innerKey, innerValue] : section) {
    std::string inner = innerKey.str(), at = name + "." + inner;
    if (name == "collectives" && inner != "all_reduce" &&
        inner != "reduce_scatter" && inner != "all_gather" &&
        inner != "all_to_all") {
      error = "unknown collective '" + at +
              "'; expected all_reduce, reduce_scatter, all_gather or "
              "all_to_all";
      return false;
    }
    if (name == "kernels" || name == "links" || name == "collectives") {
      const json::Object *entry = objectAt(innerValue, at, error);
      if (!entry)
        return false;
      bool ok = name == "kernels"
                    ? parseKernel(*entry, at, cal.kernels[inner], error)
                    : parseLink(*entry, at,
                                name == "links" ? cal.links[inner]
                                                : cal.collectives[inner],
                                error);
      if (!ok)
        return false;
      continue;
    }
    std::optional<double> number = numberAt(innerValue, at, error);
    if (!number)
      return false;
    if (name == "launches_us")
      cal.launches[inner] = *number * 1e-6;
    else if (name == "comms_us")
      cal.comms[inner] = *number * 1e-6;
    else if (!parseParameter(cal, inner, *number, error))
      return false;
  }
  return true;
}

} // namespace

std::optional<Calibration> piper::sim::parseCalibration(const std::string &text,
                                                        std::string &error) {
  if (std::optional<std::string> deep = mlir::piper::checkJSONDepth(text)) {
    error = *deep;
    return std::nullopt;
  }
  llvm::Expected<json::Value> parsed = json::parse(text);
  if (!parsed) {
    error = llvm::toString(parsed.takeError());
    return std::nullopt;
  }
  const json::Object *root = parsed->getAsObject();
  if (!root) {
    error = "the top level must be an object";
    return std::nullopt;
  }
  Calibration cal;
  for (const auto &[key, value] : *root) {
    std::string name = key.str();
    if (name != "parameters" && name != "launches_us" && name != "comms_us" &&
        name != "kernels" && name != "links" && name != "collectives") {
      error = "unknown key '" + name +
              "'; expected parameters, kernels, links, collectives, "
              "launches_us or comms_us";
      return std::nullopt;
    }
    const json::Object *section = objectAt(value, name, error);
    if (!section || !parseSection(cal, name, *section, error))
      return std::nullopt;
  }
  return cal;
}

std::string piper::sim::renderCalibration(const Calibration &cal) {
  json::Object root, parameters, kernels, links, collectives, launches, comms;
  auto us = [](double seconds) { return seconds * 1e6; };
  if (cal.computeEfficiency)
    parameters["compute_efficiency"] = *cal.computeEfficiency;
  if (cal.memoryEfficiency)
    parameters["memory_efficiency"] = *cal.memoryEfficiency;
  if (cal.kernelOverhead)
    parameters["kernel_overhead_us"] = us(*cal.kernelOverhead);
  if (cal.launchOverhead)
    parameters["launch_overhead_us"] = us(*cal.launchOverhead);
  if (cal.interference)
    parameters["interference"] = *cal.interference;
  for (const auto &[kind, rate] : cal.kernels)
    kernels[kind] =
        json::Object{{rate.perFlop ? "flops_per_s" : "bytes_per_s", rate.rate},
                     {"overhead_us", us(rate.overhead)}};
  for (const auto &[axis, link] : cal.links)
    links[axis] = json::Object{{"latency_us", us(link.latency)},
                               {"bandwidth_gbs", link.bandwidth / 1e9}};
  for (const auto &[kind, link] : cal.collectives)
    collectives[kind] = json::Object{{"latency_us", us(link.latency)},
                                     {"bandwidth_gbs", link.bandwidth / 1e9}};
  for (const auto &[name, seconds] : cal.launches)
    launches[name] = us(seconds);
  for (const auto &[name, seconds] : cal.comms)
    comms[name] = us(seconds);
  auto add = [&](const char *key, json::Object &section) {
    if (!section.empty())
      root[key] = std::move(section);
  };
  add("parameters", parameters);
  add("kernels", kernels);
  add("links", links);
  add("collectives", collectives);
  add("launches_us", launches);
  add("comms_us", comms);
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::formatv("{0:2}", json::Value(std::move(root))) << "\n";
  return text;
}
