//===- Passes.td - The simulator pass ----------------------*- tablegen -*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_SIMULATOR_PASSES_TD
#define PIPER_SIMULATOR_PASSES_TD

include "mlir/Pass/PassBase.td"

def PiperSimulate : Pass<"piper-simulate", "::mlir::ModuleOp"> {
  let summary = "Simulate a module's device programs and print the step";
  let description = [{
    Runs the `piper.program`s of the module together in simulated time on
    the device named by `device` and the links of the mesh's axes, and
    prints the step to standard output: step time, bubble fraction,
    exposed and hidden communication, peak memory per device (from the
    memory plan of the DAG the programs came from), FLOPs, MFU and
    tokens/s as a table (`summary`), Chrome-trace JSON (`chrome`, process =
    program, thread = stream) or an SVG timeline (`svg`).

    Streams run their instructions in order; events, blocking send/recv
    rendezvous and collectives synchronise them across streams and
    programs; one program stands for all replicas of its role. Under
    `costs=model` a launch costs the roofline time of its body's kernels
    (FLOPs and bytes from the op counter, at `compute-efficiency` and
    `memory-efficiency` of the peaks) with the collectives inside the body
    in between, sends and collectives their alpha-beta time on the links
    of their axes, a launch's `sm_share` sets its fraction of the SMs and
    communication slows when it gets fewer SMs than it needs. Under
    `costs=unit` every F, BI and BW launch takes 1 and everything else 0,
    for comparisons with closed-form schedules. A `calibration` JSON file
    of measured times overrides the model (docs/Simulator.md).

    Example: `piper-opt programs.mlir --piper-simulate="device=h100
    format=summary"`. The IR is left unchanged.

    **Options:** `device` (`a100`, `h100` or `h200`; default `a100`),
    `format` (`summary`, `chrome` or `svg`; default `summary`), `costs`
    (`model` or `unit`; default `model`), `calibration` (a JSON file),
    `compute-efficiency` (default 0.7), `memory-efficiency` (default 0.8),
    `interference` (default 0.05).
  }];
  let options = [
    Option<"device", "device", "std::string", "\"a100\"",
           "a100, h100 or h200">,
    Option<"format", "format", "std::string", "\"summary\"",
           "summary, chrome or svg">,
    Option<"costs", "costs", "std::string", "\"model\"", "model or unit">,
    Option<"calibration", "calibration", "std::string", "\"\"",
           "JSON file of measured times">,
    Option<"computeEfficiency", "compute-efficiency", "double", "0.7",
           "fraction of the FLOP/s peaks kernels reach">,
    Option<"memoryEfficiency", "memory-efficiency", "double", "0.8",
           "fraction of the HBM bandwidth kernels reach">,
    Option<"interference", "interference", "double", "0.05",
           "compute slowdown while communication runs">
  ];
}

#endif // PIPER_SIMULATOR_PASSES_TD
