//===- ExportSchedule.cpp - Per-rank schedules of a scheduled DAG ---------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// A schedule written onto the DAG by directives is only useful to other
// tools (PyTorch's pipelining, a trace viewer, a reviewer's eyes) once it is
// read back per rank. The reading lives in ScheduleDAG.cpp, next to the
// writing, so that the two agree; this pass only picks the output form.
//
//===----------------------------------------------------------------------===//

#include "piper/Dialect/Piper/Transforms/Passes.h"
#include "piper/Dialect/Piper/Transforms/ScheduleDAG.h"
#include "piper/Schedule/Pictures.h"
#include "piper/Schedule/PyTorchCSV.h"
#include "piper/Schedule/Simulator.h"

#include "llvm/Support/raw_ostream.h"

namespace mlir::piper {
#define GEN_PASS_DEF_PIPEREXPORTSCHEDULE
#include "piper/Dialect/Piper/Transforms/Passes.h.inc"
} // namespace mlir::piper

using namespace mlir;
using namespace mlir::piper;

namespace {

struct PiperExportSchedulePass
    : public mlir::piper::impl::PiperExportScheduleBase<
          PiperExportSchedulePass> {
  using Base::Base;

  void runOnOperation() override {
    if (format != "csv" && format != "grid" && format != "chrome" &&
        format != "svg") {
      getOperation().emitError()
          << "--piper-export-schedule: unknown format '" << format
          << "'; expected csv, grid, chrome or svg";
      return signalPassFailure();
    }
    WalkResult walk = getOperation().walk([&](DAGOp dag) {
      auto emitError = [&]() { return dag.emitError(); };
      FailureOr<sched::Schedule> schedule =
          recoverSchedule(dag, axis, emitError);
      if (failed(schedule))
        return WalkResult::interrupt();
      if (format == "csv") {
        sched::CSVWriteOptions options;
        options.bForInput = bForInput;
        sched::Result<std::string> csv = writePyTorchCSV(*schedule, options);
        if (!csv) {
          dag.emitError() << "cannot write the schedule as CSV: "
                          << csv.error();
          return WalkResult::interrupt();
        }
        llvm::outs() << *csv;
        return WalkResult::advance();
      }
      // Recovered schedules are validated, so the unit-cost run succeeds.
      sched::Result<sched::Timeline> timeline = simulate(*schedule);
      if (!timeline) {
        dag.emitError() << "cannot simulate the schedule: " << timeline.error();
        return WalkResult::interrupt();
      }
      if (format == "grid")
        llvm::outs() << renderGrid(*schedule, *timeline);
      else if (format == "chrome")
        llvm::outs() << renderChromeTrace(*schedule, *timeline);
      else
        llvm::outs() << renderSVG(*schedule, *timeline);
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace
