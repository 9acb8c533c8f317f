//===- SimulatePass.cpp - --piper-simulate --------------------------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "piper/Simulator/Passes.h"
#include "piper/Simulator/Simulate.h"

#include "mlir/Pass/Pass.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::piper {
#define GEN_PASS_DEF_PIPERSIMULATE
#include "piper/Simulator/Passes.h.inc"
} // namespace mlir::piper

using namespace mlir;
using namespace mlir::piper;

namespace {

struct PiperSimulatePass
    : public mlir::piper::impl::PiperSimulateBase<PiperSimulatePass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto fail = [&]() {
      signalPassFailure();
      return;
    };
    if (format != "summary" && format != "chrome" && format != "svg") {
      module.emitError() << "unknown format '" << format
                         << "'; expected summary, chrome or svg";
      return fail();
    }
    if (costs != "model" && costs != "unit") {
      module.emitError() << "unknown costs '" << costs
                         << "'; expected model or unit";
      return fail();
    }
    SimulateOptions options;
    options.device = device;
    options.unitCosts = costs == "unit";
    options.params.computeEfficiency = computeEfficiency;
    options.params.memoryEfficiency = memoryEfficiency;
    options.params.interference = interference;
    if (!calibration.empty()) {
      auto file = llvm::MemoryBuffer::getFile(calibration);
      if (!file) {
        module.emitError() << "cannot open calibration file '" << calibration
                           << "': " << file.getError().message();
        return fail();
      }
      std::string error;
      options.calibration =
          sim::parseCalibration((*file)->getBuffer().str(), error);
      if (!options.calibration) {
        module.emitError() << "calibration file '" << calibration
                           << "': " << error;
        return fail();
      }
    }
    FailureOr<SimulationReport> report =
        simulatePrograms(module, options, [&]() { return module.emitError(); });
    if (failed(report))
      return fail();
    llvm::raw_ostream &os = llvm::outs();
    if (format == "summary")
      os << renderSummary(*report);
    else if (format == "chrome")
      os << renderChromeTrace(*report);
    else
      os << renderTimelineSVG(*report);
    os.flush();
  }
};

} // namespace

void mlir::piper::registerSimulatorPasses() {
  static bool registered = [] {
    registerPass([] { return createPiperSimulate(); });
    return true;
  }();
  (void)registered;
}
