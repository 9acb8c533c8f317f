//===- KernelNames.cpp - PTX-safe names for outlined kernels --------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// --piper-gpu-kernel-names: Piper's function names hold dots (step.F.PP0,
// step.all), which gpu-kernel-outlining copies into kernel names and ptxas
// rejects ("Parsing error near '.F'"). Renamed here, after outlining.
//
//===----------------------------------------------------------------------===//

#include "piper/Conversion/GPU/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/SymbolTable.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"

namespace mlir::piper {
#define GEN_PASS_DEF_GPUKERNELNAMESPASS
#include "piper/Conversion/GPU/Passes.h.inc"
} // namespace mlir::piper

using namespace mlir;

namespace {

/// `name` with every character PTX does not allow in an identifier as `_`.
std::string ptxName(StringRef name) {
  std::string out = name.str();
  for (char &c : out)
    if (!llvm::isAlnum(c) && c != '_' && c != '$')
      c = '_';
  return out;
}

struct GPUKernelNamesPass
    : mlir::piper::impl::GPUKernelNamesPassBase<GPUKernelNamesPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    llvm::StringSet<> taken;
    for (Operation &op : module.getOps())
      if (auto sym = SymbolTable::getSymbolName(&op))
        taken.insert(sym.getValue());
    // Old module name -> new module name; kernels renamed in place.
    llvm::StringMap<std::string> renamed;
    for (auto gpuModule : module.getOps<gpu::GPUModuleOp>()) {
      StringRef old = gpuModule.getName();
      std::string name = ptxName(old);
      if (name == old)
        continue;
      std::string unique = name;
      for (unsigned n = 1; taken.contains(unique); ++n)
        unique = name + "_" + std::to_string(n);
      taken.insert(unique);
      renamed[old] = unique;
      gpuModule.setName(unique);
      for (auto kernel : gpuModule.getOps<gpu::GPUFuncOp>())
        kernel.setName(ptxName(kernel.getName()));
    }
    module.walk([&](gpu::LaunchFuncOp launch) {
      SymbolRefAttr kernel = launch.getKernel();
      auto it = renamed.find(kernel.getRootReference().getValue());
      if (it == renamed.end())
        return;
      launch.setKernelAttr(SymbolRefAttr::get(
          ctx, it->second,
          {FlatSymbolRefAttr::get(ctx, ptxName(kernel.getLeafReference()))}));
    });
  }
};

} // namespace
