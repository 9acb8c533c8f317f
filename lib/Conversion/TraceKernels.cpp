//===- TraceKernels.cpp - Trace spans around each op of a body ------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// --piper-trace-kernels (TraceKernels.h): runs after --piper-program-to-func,
// when every launch is a call of a private body (or of its local clone), and
// before the ops become linalg: a piper op is then still one kernel of the
// simulator's count (OpCounts.cpp), so a measured span and a counted op pair
// up one to one. The bracketing calls have side effects, so neither
// bufferization nor the later passes move work across them; an elementwise
// op fused into its consumer is timed with the consumer.
//
//===----------------------------------------------------------------------===//

#include "piper/Conversion/TraceKernels.h"
#include "piper/Analysis/KernelKind.h"
#include "piper/Conversion/Passes.h"
#include "piper/Dialect/Piper/IR/PiperOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"

#include "llvm/ADT/StringMap.h"

#include <set>

namespace mlir::piper {
#define GEN_PASS_DEF_TRACEKERNELSPASS
#include "piper/Conversion/Passes.h.inc"
} // namespace mlir::piper

using namespace mlir;
using namespace mlir::piper;

std::vector<std::string> mlir::piper::collectKernelKinds(ModuleOp module) {
  std::set<std::string> kinds;
  // Bodies only, as the pass: the model and the DAG's step are public.
  for (auto fn : module.getOps<func::FuncOp>())
    if (!fn.isPublic() && !fn.isExternal())
      fn.walk([&](Operation *op) {
        if (std::optional<std::string> kind = kernelKindOf(op))
          kinds.insert(*kind);
      });
  return {kinds.begin(), kinds.end()};
}

void mlir::piper::markKernelTracing(ModuleOp module) {
  Builder b(module.getContext());
  SmallVector<Attribute> names;
  for (const std::string &kind : collectKernelKinds(module))
    names.push_back(b.getStringAttr(kind));
  module->setAttr(kTraceKernelsAttrName, b.getArrayAttr(names));
}

namespace {

/// `private func.func @name(i64)`, declared once.
func::FuncOp declareHook(ModuleOp module, StringRef name) {
  if (auto fn = module.lookupSymbol<func::FuncOp>(name))
    return fn;
  OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
  auto fn = func::FuncOp::create(b, module.getLoc(), name,
                                 b.getFunctionType({b.getI64Type()}, {}));
  fn.setPrivate();
  return fn;
}

struct TraceKernelsPass
    : mlir::piper::impl::TraceKernelsPassBase<TraceKernelsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto list = module->getAttrOfType<ArrayAttr>(kTraceKernelsAttrName);
    if (!list)
      return;
    llvm::StringMap<int64_t> index;
    for (auto [i, name] : llvm::enumerate(list)) {
      auto text = dyn_cast<StringAttr>(name);
      if (!text) {
        module.emitError() << "'" << kTraceKernelsAttrName
                           << "' must be an array of strings; entry #" << i
                           << " is " << name;
        return signalPassFailure();
      }
      index[text.getValue()] = int64_t(i);
    }
    func::FuncOp begin = declareHook(module, "piper_trace_kernel_begin");
    func::FuncOp end = declareHook(module, "piper_trace_kernel_end");
    // Bodies only: a public function is a program's entry (its launches
    // already carry spans) or the model.
    SmallVector<std::pair<Operation *, int64_t>> traced;
    for (auto fn : module.getOps<func::FuncOp>()) {
      if (fn.isPublic() || fn.isExternal())
        continue;
      fn.walk([&](Operation *op) {
        std::optional<std::string> kind = kernelKindOf(op);
        if (!kind)
          return;
        auto it = index.find(*kind);
        if (it != index.end())
          traced.push_back({op, it->second});
      });
    }
    OpBuilder b(&getContext());
    for (auto [op, kind] : traced) {
      Location loc = op->getLoc();
      b.setInsertionPoint(op);
      Value id = arith::ConstantIntOp::create(b, loc, kind, 64);
      func::CallOp::create(b, loc, begin, ValueRange{id});
      b.setInsertionPointAfter(op);
      func::CallOp::create(b, loc, end, ValueRange{id});
    }
  }
};

} // namespace
