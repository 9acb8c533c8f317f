//===- BarePtrCalls.cpp - Internal calls pass one pointer per buffer ------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// --piper-bare-ptr-calls: func-to-llvm expands every memref argument into
// its descriptor's fields (two pointers, an offset, sizes and strides: 7 to
// 11 scalars). A program function calls its chunk functions once per
// microbatch with hundreds of buffers each, so a qwen3_1b PP8 stage's
// program function was 58,000 lines of LLVM dialect, 30,000 of them
// extractvalues, and its calls reached instruction selection with 600
// stack arguments each. The buffers of a plan have static shapes, strides
// and offsets, so their fields are constants apart from the pointer: a
// function whose every memref argument and result is such a buffer, called
// only directly, takes bare pointers instead (`llvm.bareptr`, which
// func-to-llvm honours for the function and its calls alike). Entry points,
// their C-interface wrappers and declarations (the runtime's ABI) keep the
// descriptors. qwen3_1b PP8 x DP4 x EP4 compiled in 14.2 s instead of 20.4
// (26.9 s of CPU instead of 38.5; codegen 7.8 s instead of 16),
// bench/README.md.
//
//===----------------------------------------------------------------------===//

#include "piper/Conversion/Passes.h"

#include "mlir/Conversion/LLVMCommon/TypeConverter.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::piper {
#define GEN_PASS_DEF_BAREPTRCALLSPASS
#include "piper/Conversion/Passes.h.inc"
} // namespace mlir::piper

using namespace mlir;

namespace {

constexpr llvm::StringLiteral kBarePtrAttrName = "llvm.bareptr";

/// Whether every memref `fn` takes or returns can travel as its aligned
/// pointer alone (static shape, strides and offset: the callee rebuilds the
/// rest of the descriptor from the type).
bool hasBarePtrSignature(func::FuncOp fn) {
  auto bare = [](Type type) {
    auto memref = dyn_cast<BaseMemRefType>(type);
    return !memref || LLVMTypeConverter::canConvertToBarePtr(memref);
  };
  return llvm::all_of(fn.getArgumentTypes(), bare) &&
         llvm::all_of(fn.getResultTypes(), bare);
}

struct BarePtrCallsPass
    : mlir::piper::impl::BarePtrCallsPassBase<BarePtrCallsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTableCollection symbols;
    SymbolUserMap users(symbols, module);
    for (auto fn : module.getOps<func::FuncOp>()) {
      if (fn.isExternal() || fn->hasAttr("llvm.emit_c_interface") ||
          fn.getSymName().starts_with("_mlir_ciface_") ||
          !hasBarePtrSignature(fn))
        continue;
      // Called, and only called: an address taken or a symbol named
      // elsewhere (an entry point, a table) would see the other ABI.
      ArrayRef<Operation *> uses = users.getUsers(fn);
      if (uses.empty() || !llvm::all_of(uses, [](Operation *user) {
            return isa<func::CallOp>(user);
          }))
        continue;
      fn->setAttr(kBarePtrAttrName, UnitAttr::get(fn.getContext()));
    }
  }
};

} // namespace
