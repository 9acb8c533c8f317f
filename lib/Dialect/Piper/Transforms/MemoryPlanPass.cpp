//===- MemoryPlanPass.cpp - --piper-memory-plan ---------------------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The pass around planMemory (MemoryPlan.cpp): prints every group's plan
// and rejects a plan over the user's budget.
//
//===----------------------------------------------------------------------===//

#include "piper/Dialect/Piper/Transforms/MemoryPlan.h"
#include "piper/Dialect/Piper/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include "llvm/Support/raw_ostream.h"

namespace mlir::piper {
#define GEN_PASS_DEF_PIPERMEMORYPLAN
#include "piper/Dialect/Piper/Transforms/Passes.h.inc"
} // namespace mlir::piper

using namespace mlir;
using namespace mlir::piper;

namespace {

struct MemoryPlanPass
    : public mlir::piper::impl::PiperMemoryPlanBase<MemoryPlanPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    llvm::raw_ostream &os = llvm::outs();
    bool found = false, failedAny = false;
    module.walk([&](DAGOp dag) {
      found = true;
      auto plans = planMemory(dag, [&]() { return dag.emitError(); });
      if (failed(plans)) {
        failedAny = true;
        return;
      }
      auto fn = dag->getParentOfType<FunctionOpInterface>();
      os << "memory plan of @" << (fn ? fn.getName() : StringRef("dag"))
         << " (bytes per device)\n";
      for (const DeviceMemoryPlan &plan : *plans) {
        print(os, plan);
        if (driverResults)
          printDriverResults(os, plan);
        if (listBuffers)
          printBuffers(os, plan);
      }
      if (budget <= 0)
        return;
      for (const DeviceMemoryPlan &plan : *plans) {
        if (plan.peakBytes() <= int64_t(budget))
          continue;
        Operation *at =
            plan.steps.empty() ? dag.getOperation() : plan.steps[plan.peakStep];
        at->emitError() << "device group " << plan.group << " needs "
                        << plan.peakBytes() << " bytes at its peak (step "
                        << plan.peakStep + 1 << " of " << plan.steps.size()
                        << ", '" << getNodeName(at) << "'), over the budget of "
                        << int64_t(budget) << " bytes";
        failedAny = true;
      }
    });
    os.flush();
    if (!found) {
      module.emitError() << "no piper.dag to plan memory for; build the "
                            "training DAG (--piper-build-dag) first";
      failedAny = true;
    }
    if (failedAny)
      signalPassFailure();
    markAllAnalysesPreserved();
  }

  /// The step's results `piper-run` holds beside its arguments: it gives
  /// the plan separate output buffers for the updated parameters and state
  /// and copies them over the arguments after the step, so every persistent
  /// buffer has a twin of its bytes for the whole step.
  static void printDriverResults(llvm::raw_ostream &os,
                                 const DeviceMemoryPlan &plan) {
    int64_t results = 0;
    for (const MemoryBuffer &buffer : plan.buffers)
      if (buffer.persistent)
        results += buffer.bytes;
    os << "  driver results " << results << ", peak with them "
       << plan.peakBytes() + results << "\n";
  }

  /// `[first-last] kind bytes what`, steps counted from 1.
  static void printBuffers(llvm::raw_ostream &os,
                           const DeviceMemoryPlan &plan) {
    for (const MemoryBuffer &buffer : plan.buffers) {
      os << "    [" << buffer.start + 1 << "-" << buffer.end + 1 << "] "
         << stringifyMemoryKind(buffer.kind) << " " << buffer.bytes << " ";
      if (!buffer.value) {
        os << "collectives in '" << getNodeName(plan.steps[buffer.start])
           << "'";
      } else if (auto arg = dyn_cast<BlockArgument>(buffer.value)) {
        auto fn = dyn_cast<FunctionOpInterface>(arg.getOwner()->getParentOp());
        if (auto param =
                fn ? fn.getArgAttrOfType<ParamAttr>(
                         arg.getArgNumber(), PiperDialect::getParamAttrName())
                   : ParamAttr())
          os << param.getName().getValue();
        else if (auto state = fn ? fn.getArgAttrOfType<OptStateAttr>(
                                       arg.getArgNumber(),
                                       PiperDialect::getStateAttrName())
                                 : OptStateAttr())
          os << state.getParam().getValue() << "."
             << state.getSlot().getValue();
        else
          os << "arg" << arg.getArgNumber();
      } else {
        auto result = cast<OpResult>(buffer.value);
        os << getNodeName(result.getOwner()) << "#" << result.getResultNumber();
      }
      if (buffer.microbatch)
        os << " (MB " << *buffer.microbatch << ")";
      os << "\n";
    }
  }

  static void print(llvm::raw_ostream &os, const DeviceMemoryPlan &plan) {
    os << plan.group << ": peak " << plan.peakBytes() << " at step "
       << plan.peakStep + 1 << " of " << plan.steps.size();
    if (!plan.steps.empty())
      os << " '" << getNodeName(plan.steps[plan.peakStep]) << "'";
    os << "\n ";
    for (unsigned k = 0; k < kNumMemoryKinds; ++k)
      os << " " << stringifyMemoryKind(MemoryKind(k)) << " "
         << plan.atPeak.bytes[k];
    os << "\n  max:";
    for (unsigned k = 0; k < kNumMemoryKinds; ++k) {
      os << " " << stringifyMemoryKind(MemoryKind(k)) << " "
         << plan.maxPerKind.bytes[k];
      if (MemoryKind(k) == MemoryKind::Activations)
        os << " (" << plan.maxActivationMicrobatches << " microbatches)";
    }
    os << "\n  reuse: " << plan.numTransientBuffers << " buffers in "
       << plan.numAllocations << " allocations, " << plan.reservedBytes
       << " bytes reserved\n";
  }
};

} // namespace
