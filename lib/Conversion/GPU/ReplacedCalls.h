//===- ReplacedCalls.h - Host calls a GPU pass replaced --------*- C++ -*-===//
//-*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// GPU passes that rewrite calls of host library functions (GPUGemm.cpp's
// BLAS calls, GPUClip.cpp's host-reading clip calls) erase each replaced
// call with the memref casts only it used, then the declarations nothing
// calls any more.
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_LIB_CONVERSION_GPU_REPLACEDCALLS_H
#define PIPER_LIB_CONVERSION_GPU_REPLACEDCALLS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"

#include "llvm/ADT/SetVector.h"

namespace mlir::piper {

/// Erases `call` and the memref casts of its operands it was the last user
/// of, recording its callee in `callees`.
template <unsigned N>
void eraseReplacedCall(func::CallOp call,
                       llvm::SmallSetVector<StringRef, N> &callees) {
  callees.insert(call.getCallee());
  SmallVector<Value> operands(call.getOperands());
  call.erase();
  for (Value v : operands)
    if (auto cast = v.getDefiningOp<memref::CastOp>())
      if (cast->use_empty())
        cast.erase();
}

/// Erases the declarations among `callees` that nothing in `module` calls.
template <unsigned N>
void eraseUncalledDeclarations(
    ModuleOp module, const llvm::SmallSetVector<StringRef, N> &callees) {
  for (StringRef name : callees) {
    auto fn = module.lookupSymbol<func::FuncOp>(name);
    if (fn && fn.isExternal() && SymbolTable::symbolKnownUseEmpty(fn, module))
      fn.erase();
  }
}

} // namespace mlir::piper

#endif // PIPER_LIB_CONVERSION_GPU_REPLACEDCALLS_H
