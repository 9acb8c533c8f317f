//===- DeviceSpecs.h - Accelerators and links the simulator knows -*- C++ -*-//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Datasheet numbers of the accelerators the simulator models, and the
// default bandwidth and latency of each link class when a mesh axis names
// the class without measured numbers. docs/Simulator.md lists the table and
// its sources.
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_SIMULATOR_DEVICESPECS_H
#define PIPER_SIMULATOR_DEVICESPECS_H

#include <string>
#include <string_view>
#include <vector>

namespace piper::sim {

/// One accelerator. FLOP/s are dense (no sparsity), bytes are 10^9-based
/// except `memoryBytes`, which is what the device reports.
struct DeviceSpec {
  std::string name;        ///< `a100`, `h100`, `h200`.
  std::string description; ///< `NVIDIA A100 80GB SXM`.
  double bf16Flops = 0;    ///< Tensor-core peak, bf16 and f16.
  double tf32Flops = 0;    ///< Tensor-core peak for f32 matrix products.
  double fp32Flops = 0;    ///< Vector (CUDA core) f32 peak.
  double fp64Flops = 0;    ///< f64 tensor-core peak.
  double hbmBandwidth = 0; ///< Bytes per second.
  int numSMs = 0;
  double memoryBytes = 0;
  /// NVLink bandwidth per device and direction (bytes/s).
  double nvlinkBandwidth = 0;
};

/// The table: a100, h100, h200.
const std::vector<DeviceSpec> &getDeviceSpecs();

/// The spec named `name` (case-insensitive), or null.
const DeviceSpec *lookupDeviceSpec(std::string_view name);

/// `a100, h100, h200`: for diagnostics.
std::string listDeviceSpecNames();

/// A link as the cost model uses it.
struct LinkSpec {
  std::string linkClass; ///< `nvlink`, `efa`, ... (`nvlink` when unnamed).
  double bandwidth = 0;  ///< Bytes per second per device and direction.
  double latency = 0;    ///< Seconds per message (the alpha of alpha-beta).
  /// The fraction of the device's SMs a collective over this link needs to
  /// reach full bandwidth (NCCL channels are one SM each).
  double commSMShare = 0;
};

/// The default link of `linkClass` (`nvlink`, `pcie`, `infiniband`, `roce`,
/// `efa`, `ethernet`) on `device`; an empty class means NVLink.
LinkSpec getDefaultLink(std::string_view linkClass, const DeviceSpec &device);

} // namespace piper::sim

#endif // PIPER_SIMULATOR_DEVICESPECS_H
