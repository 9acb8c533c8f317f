//===- VerifyHost.cpp - Host code of a GPU plan touches no device memory --===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// --piper-gpu-verify-host: after the kernels became gpu.launch ops, the
// host side may launch, call the plan ABI and compute scalars, nothing
// else. Whatever would dereference a device pointer on the CPU (a load or
// store of a heap buffer, an unmapped linalg op, a call of the CPU kernel
// library) is an error here, at compile time, instead of a segfault in
// piper-run on the GPU machine.
//
//===----------------------------------------------------------------------===//

#include "piper/Conversion/GPU/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace mlir::piper {
#define GEN_PASS_DEF_GPUVERIFYHOSTPASS
#include "piper/Conversion/GPU/Passes.h.inc"
} // namespace mlir::piper

using namespace mlir;

namespace {

/// Whether `memref` is host stack memory (which the host may access).
bool isHostStack(Value memref) {
  return memref.getDefiningOp<memref::AllocaOp>() != nullptr;
}

/// The error for `op` on the host, or success.
LogicalResult checkHostOp(Operation *op) {
  if (auto load = dyn_cast<memref::LoadOp>(op)) {
    if (!isHostStack(load.getMemRef()))
      return op->emitError()
             << "reads device memory on the host; the GPU target maps only "
                "linalg ops to kernels";
  } else if (auto store = dyn_cast<memref::StoreOp>(op)) {
    if (!isHostStack(store.getMemRef()))
      return op->emitError()
             << "writes device memory on the host; the GPU target maps only "
                "linalg ops to kernels";
  } else if (isa<linalg::LinalgOp>(op)) {
    return op->emitError() << "was not mapped to a GPU kernel";
  } else if (auto call = dyn_cast<func::CallOp>(op)) {
    if (call.getCallee().starts_with("piper_k_"))
      return op->emitError()
             << "calls the CPU kernel library (@" << call.getCallee()
             << "), which the GPU target cannot run";
    if (call.getCallee().starts_with("piper_clip_accumulate_") ||
        call.getCallee().starts_with("piper_clip_scale_"))
      return op->emitError()
             << "calls @" << call.getCallee()
             << ", which reads device memory on the host (--piper-gpu-clip "
                "rewrites it)";
  }
  return success();
}

struct GPUVerifyHostPass
    : mlir::piper::impl::GPUVerifyHostPassBase<GPUVerifyHostPass> {
  void runOnOperation() override {
    bool failed = false;
    getOperation().walk<WalkOrder::PreOrder>([&](Operation *op) {
      if (isa<gpu::LaunchOp, gpu::GPUModuleOp>(op))
        return WalkResult::skip();
      if (mlir::failed(checkHostOp(op)))
        failed = true;
      return WalkResult::advance();
    });
    if (failed)
      signalPassFailure();
  }
};

} // namespace
