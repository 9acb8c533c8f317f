//===- Balance.cpp - transform.piper.balance ------------------------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The transform op only reads its attributes into BalanceOptions and asks
// lib/Balance, which the strategy search calls directly.
//
//===----------------------------------------------------------------------===//

#include "piper/Balance/StageBalance.h"
#include "piper/TransformOps/PiperTransformOps.h"

#include "mlir/Dialect/Transform/IR/TransformDialect.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace mlir::piper;

LogicalResult BalanceOp::verify() {
  if (getStages() < 1)
    return emitOpError() << "needs at least one stage, got " << getStages();
  if (getCost() != "roofline" && getCost() != "flops")
    return emitOpError() << "unknown cost source '" << getCost()
                         << "'; expected \"roofline\" or \"flops\"";
  if (getMicrobatches() && *getMicrobatches() < 1)
    return emitOpError() << "microbatches must be positive, got "
                         << *getMicrobatches();
  if (getMemoryLimit() && *getMemoryLimit() < 1)
    return emitOpError() << "memory_limit must be a positive number of bytes, "
                            "got "
                         << *getMemoryLimit();
  return success();
}

DiagnosedSilenceableFailure
BalanceOp::apply(transform::TransformRewriter &rewriter,
                 transform::TransformResults &results,
                 transform::TransformState &state) {
  BalanceOptions options;
  options.numStages = getStages();
  options.costSource = getCost().str();
  options.device = getDevice().str();
  options.microbatches = getMicrobatches().value_or(0);
  options.memoryLimit = double(getMemoryLimit().value_or(0));
  for (StringRef axis : getGradAxes().getAsValueRange<StringAttr>())
    options.gradAxes.push_back(axis.str());
  for (StringRef axis : getExpertAxes().getAsValueRange<StringAttr>())
    options.expertAxes.push_back(axis.str());

  SmallVector<func::FuncOp> steps;
  for (Operation *payload : state.getPayloadOps(getRoot())) {
    if (auto step = dyn_cast<func::FuncOp>(payload)) {
      steps.push_back(step);
      continue;
    }
    auto module = dyn_cast<ModuleOp>(payload);
    func::FuncOp step = module ? findStepFunction(module) : func::FuncOp();
    if (!step || step.isExternal())
      return emitDefiniteFailure()
             << "balance found no step function (a func.func with "
                "piper.param arguments) in the payload";
    steps.push_back(step);
  }
  for (func::FuncOp step : steps) {
    FailureOr<StageBalance> balance =
        balanceStages(step, options, [&] { return emitOpError(); });
    if (failed(balance))
      return DiagnosedSilenceableFailure::definiteFailure();
    if (getReport()) {
      InFlightDiagnostic remark = emitRemark()
                                  << "'@" << step.getSymName() << "' in "
                                  << balance->cost.size() << " stages:";
      for (size_t s = 0; s < balance->cost.size(); ++s)
        remark << " [" << s << "] from " << balance->firstUnitName[s]
               << " cost " << llvm::formatv("{0:e3}", balance->cost[s]).str()
               << " bytes " << llvm::formatv("{0:e3}", balance->memory[s]).str()
               << ";";
    }
    applyStageBalance(step, *balance);
  }
  return DiagnosedSilenceableFailure::success();
}

void BalanceOp::getEffects(
    SmallVectorImpl<MemoryEffects::EffectInstance> &effects) {
  transform::onlyReadsHandle(getRootMutable(), effects);
  transform::modifiesPayload(effects);
}
