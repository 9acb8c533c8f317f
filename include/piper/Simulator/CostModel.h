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

/// The knobs of the model; a calibration file may set any of them.
struct CostParameters {
  /// Fraction of the FLOP/s peaks kernels reach.
  double computeEfficiency = 0.7;
  /// Fraction of the HBM bandwidth memory-bound kernels reach.
  double memoryEfficiency = 0.8;
  /// Seconds added per kernel (launch and tail).
  double kernelOverhead = 0;
  /// Compute slowdown while communication runs on the device.
  double interference = 0.05;
  /// Seconds added per launch (the lowering's copies and fills around a
  /// body's kernels; 0 unless calibrated).
  double launchOverhead = 0;
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

/// A kernel kind's fitted rate (piper-calibrate): one op of the kind takes
/// `overhead + work / rate` seconds, `work` being its FLOPs (matrix and
/// vector) when `perFlop`, its bytes otherwise.
struct KernelRate {
  bool perFlop = false;
  double rate = 0;     ///< FLOP/s or bytes/s.
  double overhead = 0; ///< Seconds per op.
  double seconds(double flops, double bytes) const {
    return overhead + (perFlop ? flops : bytes) / rate;
  }
};

/// A measured link: alpha (seconds per message) and 1 / beta (bytes/s).
struct LinkFit {
  double latency = 0;
  double bandwidth = 0;
};

/// Measured times and rates that override the model (a JSON file;
/// docs/Simulator.md, "Calibration", is the schema):
///
///   {
///     "parameters": {"compute_efficiency": 0.6, "memory_efficiency": 0.8,
///                    "kernel_overhead_us": 4, "interference": 0.1,
///                    "launch_overhead_us": 30},
///     "kernels": {"matmul": {"flops_per_s": 2.5e10, "overhead_us": 3},
///                 "softmax": {"bytes_per_s": 4e9}, "*": {...}},
///     "links": {"*": {"latency_us": 2, "bandwidth_gbs": 6}, "pp": {...}},
///     "collectives": {"all_reduce": {"latency_us": 200,
///                                    "bandwidth_gbs": 1.1}},
///     "launches_us": {"F{PP=0,MB=0}": 1250, "@step.BW.PP1": 900},
///     "comms_us": {"all_reduce": 300, "F{PP=0,MB=0}#0->{pp=1}": 40}
///   }
///
/// A launch is looked up by task name, then by body (`@callee`); a send or
/// collective by name, then by kind (`send`, `all_reduce`, ...); an op by
/// its kernel kind (piper/Analysis/KernelKind.h), then `*`; a mesh axis's
/// link by the axis name, then `*`; a collective kind's link replaces every
/// axis' link for collectives of that kind.
struct Calibration {
  std::optional<double> computeEfficiency, memoryEfficiency, kernelOverhead,
      interference, launchOverhead;
  std::map<std::string, double> launches, comms; ///< Seconds.
  std::map<std::string, KernelRate> kernels;
  std::map<std::string, LinkFit> links;
  /// Per collective kind (all_reduce, reduce_scatter, all_gather): the link
  /// that, in the ring model, gives the times measured for that kind; it
  /// replaces every axis' link for it.
  std::map<std::string, LinkFit> collectives;
  void applyTo(CostParameters &params) const;
  /// The rate of `kind`, else of `*`, else null.
  const KernelRate *kernelRate(const std::string &kind) const;
  /// The link of mesh axis `axis`, else of `*`, else null.
  const LinkFit *link(const std::string &axis) const;
};

/// Parses a calibration file's text; on failure returns the reason (the
/// JSON error with its position, or the offending key).
std::optional<Calibration> parseCalibration(const std::string &text,
                                            std::string &error);

/// The file's text for `cal` (what piper-calibrate writes; parses back to
/// the same values).
std::string renderCalibration(const Calibration &cal);

} // namespace piper::sim

#endif // PIPER_SIMULATOR_COSTMODEL_H
