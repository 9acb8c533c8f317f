//===- Simulate.h - Simulating a module's device programs -------*- C++ -*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Costs every instruction of the `piper.program`s of a module (unit costs or
// the device model), runs them through the engine and summarises the step:
// time, bubbles, exposed and hidden communication, peak memory (from the
// memory plan of the DAG the programs came from), MFU and tokens/s.
// `--piper-simulate` prints the result; tests and benchmarks call
// `simulatePrograms` directly.
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_SIMULATOR_SIMULATE_H
#define PIPER_SIMULATOR_SIMULATE_H

#include "piper/Simulator/CostModel.h"
#include "piper/Simulator/Engine.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/STLFunctionalExtras.h"

#include <optional>
#include <string>
#include <vector>

namespace mlir::piper {

/// The MLIR-free half of the simulator.
namespace sim = ::piper::sim;

struct SimulateOptions {
  /// A name of the device table (`a100`, `h100`, `h200`).
  std::string device = "a100";
  /// Unit costs: every F, BI and BW launch takes 1 (a fused B 2), all else
  /// (updates, sums, communication) 0; the device is one server, so
  /// concurrent launches share it. For checks against closed forms.
  bool unitCosts = false;
  sim::CostParameters params;
  /// Measured times (see sim::Calibration); applied over `params`.
  std::optional<sim::Calibration> calibration;
  /// Fill SimulationReport::kernels (piper-calibrate pairs them with the
  /// measured kernel spans).
  bool recordKernels = false;
  /// Plan memory for each DeviceSummary::peakMemory (else -1). The search,
  /// which planned the candidate already to reject it by memory, turns it
  /// off rather than plan twice.
  bool planMemory = true;
};

/// One counted op of a launch's body as the cost model saw it: one device's
/// share (LocalSizes) of its FLOPs and bytes. `kind` is kernelKindOf's.
struct KernelRecord {
  std::string program, launch, kind;
  double matrixFlops = 0, vectorFlops = 0, bytes = 0;
};

/// One program (one device standing for its replicas).
struct DeviceSummary {
  std::string program, role;
  /// Seconds (units at unit costs) within the step: computing (the union of
  /// compute segments), communicating, communicating while nothing computes
  /// (exposed), and neither (idle, the bubble).
  double compute = 0, comm = 0, exposedComm = 0, hiddenComm = 0, idle = 0;
  /// FLOPs of one device of the role per step.
  double flops = 0;
  /// Peak bytes per device from the memory plan; -1 when unknown.
  int64_t peakMemory = -1;
};

struct SimulationReport {
  std::string device, deviceDescription;
  bool unitCosts = false;
  /// `ep=4 (efa 6.25 GB/s 15 us), pp=8 (nvlink ...)`.
  std::string mesh;
  int64_t numDevices = 1;
  double stepTime = 0;
  std::vector<DeviceSummary> devices;
  /// Averages over programs of idle / step time and of exposed comm.
  double bubbleFraction = 0, exposedComm = 0, hiddenComm = 0;
  /// Over all devices of the mesh.
  double flopsPerStep = 0, mfu = 0, tokensPerStep = 0, tokensPerSecond = 0;
  double memoryCapacity = 0;
  sim::Problem problem;
  sim::Trace trace;
  /// With SimulateOptions::recordKernels: every launch's ops in body order,
  /// launches in program order (one program, one entry per launch).
  std::vector<KernelRecord> kernels;
};

/// Simulates the programs of `module`. Errors (no programs, an unknown
/// device, a deadlock) go through `emitError`.
FailureOr<SimulationReport>
simulatePrograms(ModuleOp module, const SimulateOptions &options,
                 function_ref<InFlightDiagnostic()> emitError);

/// The summary table.
std::string renderSummary(const SimulationReport &report);
/// Chrome-trace JSON: process = program, thread = stream.
std::string renderChromeTrace(const SimulationReport &report);
/// An SVG timeline, one row per program and stream.
std::string renderTimelineSVG(const SimulationReport &report);

} // namespace mlir::piper

#endif // PIPER_SIMULATOR_SIMULATE_H
