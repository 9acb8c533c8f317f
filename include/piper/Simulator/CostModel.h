//===- CostModel.h - Roofline, alpha-beta and calibration -------*- C++ -*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The cost side of the simulator, free of MLIR: a kernel's roofline time
// from its FLOPs and bytes, a collective's alpha-beta time over the links of
// its mesh axes, and the calibration file of measured times that overrides
// both. docs/Simulator.md derives every formula.
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_SIMULATOR_COSTMODEL_H
#define PIPER_SIMULATOR_COSTMODEL_H

#include "piper/Simulator/DeviceSpecs.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace piper::sim {

/// The knobs of the model; a calibration file may set the first four.
struct CostParameters {
  /// Fraction of the FLOP/s peaks kernels reach.
  double computeEfficiency = 0.7;
  /// Fraction of the HBM bandwidth memory-bound kernels reach.
  double memoryEfficiency = 0.8;
  /// Seconds added per kernel (launch and tail).
  double kernelOverhead = 0;
  /// Compute slowdown while communication runs on the device.
  double interference = 0.05;
};

/// Number formats the roofline distinguishes.
enum class Precision { BF16, F32, F64 };

/// Roofline time of one kernel: the larger of its arithmetic time (matrix
/// work at the tensor-core peak, the rest at the vector peak) and its memory
/// time, plus the per-kernel overhead.
double kernelTime(double matrixFlops, double vectorFlops, double bytes,
                  Precision precision, const DeviceSpec &device,
                  const CostParameters &params);

/// The matrix peak of `precision` on `device` (what MFU divides by).
double matrixPeak(Precision precision, const DeviceSpec &device);

/// One mesh axis a collective spans: its size and link.
struct AxisLink {
  std::string name;
  int64_t size = 1;
  LinkSpec link;
};

/// A communication's time, split into the latency part (`fixed`, alpha
/// terms) and the bandwidth part (`work`, beta terms, at full bandwidth).
struct CommTime {
  double fixed = 0, work = 0;
  /// The SM share its kernels need: the largest of its links'.
  double smShare = 0;
  double total() const { return fixed + work; }
};

/// `kind` is `all_reduce`, `reduce_scatter`, `all_gather` or `all_to_all`;
/// `bytes` the size of the full (unsharded) tensor. Axes of size 1 are
/// ignored. All-reduce takes the faster of a hierarchical ring (reduce-
/// scatter up the links from fastest to slowest, all-gather back) and a
/// binary tree on the slowest link.
CommTime collectiveTime(const std::string &kind, double bytes,
                        std::vector<AxisLink> axes);

/// A point-to-point message over `link`.
CommTime sendTime(double bytes, const LinkSpec &link);

/// Measured times that override the model (a JSON file):
///
///   {
///     "parameters": {"compute_efficiency": 0.6, "memory_efficiency": 0.8,
///                    "kernel_overhead_us": 4, "interference": 0.1},
///     "launches_us": {"F{PP=0,MB=0}": 1250, "@step.BW.PP1": 900},
///     "comms_us": {"all_reduce": 300, "F{PP=0,MB=0}#0->{pp=1}": 40}
///   }
///
/// A launch is looked up by task name, then by body (`@callee`); a send or
/// collective by name, then by kind (`send`, `all_reduce`, ...).
struct Calibration {
  std::optional<double> computeEfficiency, memoryEfficiency, kernelOverhead,
      interference;
  std::map<std::string, double> launches, comms; ///< Seconds.

  void applyTo(CostParameters &params) const;
};

/// Parses a calibration file's text; on failure returns the reason (the
/// JSON error with its position, or the offending key).
std::optional<Calibration> parseCalibration(const std::string &text,
                                            std::string &error);

} // namespace piper::sim

#endif // PIPER_SIMULATOR_COSTMODEL_H
