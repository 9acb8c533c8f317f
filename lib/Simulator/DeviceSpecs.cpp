//===- DeviceSpecs.cpp - Accelerators and links the simulator knows -------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Sources: NVIDIA A100 datasheet (80GB SXM: 312 TFLOP/s bf16, 156 TF32,
// 19.5 f32 and f64 tensor core, 2,039 GB/s, 108 SMs, NVLink 3 600 GB/s both
// directions); H100 SXM datasheet (989 TFLOP/s bf16 dense, 494 TF32, 67 f32
// and f64, 3.35 TB/s, 132 SMs, 80 GB, NVLink 4 900 GB/s); H200 SXM datasheet
// (the H100's compute, 141 GB HBM3e at 4.8 TB/s).
//
//===----------------------------------------------------------------------===//

#include "piper/Simulator/DeviceSpecs.h"

#include <algorithm>
#include <cctype>

using namespace piper::sim;

namespace {
constexpr double T = 1e12, G = 1e9, GiB = 1024.0 * 1024 * 1024;
} // namespace

const std::vector<DeviceSpec> &piper::sim::getDeviceSpecs() {
  static const std::vector<DeviceSpec> specs = {
      {"a100", "NVIDIA A100 80GB SXM", 312 * T, 156 * T, 19.5 * T, 19.5 * T,
       2039 * G, 108, 80 * GiB, 300 * G},
      {"h100", "NVIDIA H100 SXM 80GB", 989 * T, 494 * T, 67 * T, 67 * T,
       3350 * G, 132, 80 * GiB, 450 * G},
      {"h200", "NVIDIA H200 SXM 141GB", 989 * T, 494 * T, 67 * T, 67 * T,
       4800 * G, 132, 141 * 1e9, 450 * G},
  };
  return specs;
}

const DeviceSpec *piper::sim::lookupDeviceSpec(std::string_view name) {
  std::string lower(name);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  for (const DeviceSpec &spec : getDeviceSpecs())
    if (spec.name == lower)
      return &spec;
  return nullptr;
}

std::string piper::sim::listDeviceSpecNames() {
  std::string names;
  for (const DeviceSpec &spec : getDeviceSpecs())
    names += (names.empty() ? "" : ", ") + spec.name;
  return names;
}

LinkSpec piper::sim::getDefaultLink(std::string_view linkClass,
                                    const DeviceSpec &device) {
  // Per GPU and direction. NVLink: the device's. Networks: one 200 Gb/s HDR
  // InfiniBand or RoCE NIC per GPU; AWS p4d's EFA is 400 Gb/s per node of 8
  // GPUs (6.25 GB/s each); 25 GbE. NCCL saturates NVLink with about 16
  // channels (SMs) on an A100, a NIC with about 4.
  auto share = [&](double sms) { return sms / double(device.numSMs); };
  if (linkClass.empty() || linkClass == "nvlink")
    return {"nvlink", device.nvlinkBandwidth, 3e-6, share(16)};
  if (linkClass == "pcie")
    return {"pcie", 25 * G, 5e-6, share(4)};
  if (linkClass == "infiniband")
    return {"infiniband", 25 * G, 5e-6, share(4)};
  if (linkClass == "roce")
    return {"roce", 25 * G, 8e-6, share(4)};
  if (linkClass == "efa")
    return {"efa", 6.25 * G, 15e-6, share(4)};
  return {std::string(linkClass), 3.125 * G, 30e-6, share(4)};
}
