//===- CostModel.cpp - Roofline, alpha-beta and calibration ---------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Collectives follow the alpha-beta model of NCCL's ring and tree
// algorithms (Thakur et al. 2005; NCCL's tuning model): over N devices a
// ring reduce-scatter or all-gather sends (N-1)/N of the tensor per device
// in N-1 steps, an all-reduce is both, a binary tree all-reduce takes
// 2 log2 N steps with twice the tensor per device. Over several axes with
// different links the ring runs hierarchically (as NCCL does across nodes):
// reduce-scatter over the fastest axis first, so the slow link carries only
// 1/(product of the faster sizes) of the tensor.
//
//===----------------------------------------------------------------------===//

#include "piper/Simulator/CostModel.h"

#include <algorithm>
#include <cmath>

using namespace piper::sim;

double piper::sim::matrixPeak(Precision precision, const DeviceSpec &device) {
  switch (precision) {
  case Precision::BF16:
    return device.bf16Flops;
  case Precision::F32:
    return device.tf32Flops;
  case Precision::F64:
    return device.fp64Flops;
  }
  return device.bf16Flops;
}

double piper::sim::kernelTime(double matrixFlops, double vectorFlops,
                              double bytes, Precision precision,
                              const DeviceSpec &device,
                              const CostParameters &params) {
  double vectorPeak =
      precision == Precision::F64 ? device.fp64Flops : device.fp32Flops;
  double arithmetic =
      (matrixFlops / matrixPeak(precision, device) + vectorFlops / vectorPeak) /
      params.computeEfficiency;
  double memory = bytes / (device.hbmBandwidth * params.memoryEfficiency);
  return params.kernelOverhead + std::max(arithmetic, memory);
}

namespace {

/// Ring reduce-scatter (or all-gather) up the axes, fastest link first.
CommTime hierarchicalRing(double bytes, const std::vector<AxisLink> &axes) {
  CommTime t;
  double chunk = bytes;
  for (const AxisLink &axis : axes) {
    double n = double(axis.size);
    t.fixed += (n - 1) * axis.link.latency;
    t.work += (n - 1) / n * chunk / axis.link.bandwidth;
    chunk /= n;
  }
  return t;
}

} // namespace

CommTime piper::sim::collectiveTime(const std::string &kind, double bytes,
                                    std::vector<AxisLink> axes) {
  axes.erase(std::remove_if(axes.begin(), axes.end(),
                            [](const AxisLink &a) { return a.size <= 1; }),
             axes.end());
  CommTime t;
  if (axes.empty())
    return t;
  std::stable_sort(axes.begin(), axes.end(), [](const auto &a, const auto &b) {
    return a.link.bandwidth > b.link.bandwidth;
  });
  for (const AxisLink &axis : axes)
    t.smShare = std::max(t.smShare, axis.link.commSMShare);
  double n = 1;
  for (const AxisLink &axis : axes)
    n *= double(axis.size);
  const LinkSpec &slowest = axes.back().link;
  if (kind == "reduce_scatter" || kind == "all_gather") {
    CommTime ring = hierarchicalRing(bytes, axes);
    t.fixed = ring.fixed;
    t.work = ring.work;
  } else if (kind == "all_reduce") {
    CommTime ring = hierarchicalRing(bytes, axes);
    ring.fixed *= 2;
    ring.work *= 2;
    CommTime tree;
    tree.fixed = 2 * std::ceil(std::log2(n)) * slowest.latency;
    tree.work = 2 * bytes / slowest.bandwidth;
    const CommTime &best = tree.total() < ring.total() ? tree : ring;
    t.fixed = best.fixed;
    t.work = best.work;
  } else {
    // All-to-all: N-1 messages; the share of the tensor whose destination
    // differs along an axis crosses that axis' link, and the most loaded
    // link sets the time.
    double latency = 0;
    for (const AxisLink &axis : axes) {
      latency = std::max(latency, axis.link.latency);
      t.work = std::max(t.work, (1 - 1 / double(axis.size)) * bytes /
                                    axis.link.bandwidth);
    }
    t.fixed = (n - 1) * latency;
  }
  return t;
}

CommTime piper::sim::sendTime(double bytes, const LinkSpec &link) {
  CommTime t;
  t.fixed = link.latency;
  t.work = bytes / link.bandwidth;
  t.smShare = link.commSMShare;
  return t;
}
