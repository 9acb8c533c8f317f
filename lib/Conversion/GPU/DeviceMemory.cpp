//===- DeviceMemory.cpp - Plan buffers in device memory -------------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// --piper-gpu-device-memory: the plan's temporaries live where its kernels
// run. The arguments of a GPU plan are device buffers already (piper-run's
// CUDA backend allocates them); what the plan allocates itself goes through
// gpu.alloc/gpu.dealloc, which gpu-to-llvm lowers to mgpuMemAlloc and
// mgpuMemFree: the runtime's stream-ordered caching allocator, the GPU
// counterpart of the CPU plan's per-size-class cache. Copies become
// linalg.copy so that a copy between strided views is a kernel like the
// rest (a cudaMemcpy moves contiguous bytes only).
//
//===----------------------------------------------------------------------===//

#include "piper/Conversion/GPU/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace mlir::piper {
#define GEN_PASS_DEF_GPUDEVICEMEMORYPASS
#include "piper/Conversion/GPU/Passes.h.inc"
} // namespace mlir::piper

using namespace mlir;

namespace {

/// `load` (a host read of a device buffer, in a function's body) reads a
/// stack copy instead: `gpu.wait async`, `gpu.memcpy async` of the whole
/// buffer (a scalar: the reads are of rank-0 counters), `gpu.wait`.
void copyToHost(OpBuilder &b, memref::LoadOp load) {
  Location loc = load.getLoc();
  auto type = cast<MemRefType>(load.getMemRef().getType());
  b.setInsertionPoint(load);
  Value host = memref::AllocaOp::create(
      b, loc, MemRefType::get(type.getShape(), type.getElementType()));
  Type token = gpu::AsyncTokenType::get(b.getContext());
  Value start =
      gpu::WaitOp::create(b, loc, token, ValueRange()).getAsyncToken();
  Value copied = gpu::MemcpyOp::create(b, loc, token, ValueRange{start}, host,
                                       load.getMemRef())
                     .getAsyncToken();
  gpu::WaitOp::create(b, loc, Type(), ValueRange{copied});
  load->setOperand(0, host);
}

struct GPUDeviceMemoryPass
    : mlir::piper::impl::GPUDeviceMemoryPassBase<GPUDeviceMemoryPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    // A constant on the host would be read by a kernel through a host
    // pointer. The lowering folds splats into the kernels
    // (--piper-fold-splat-constants); nothing else makes globals today.
    WalkResult constants = module.walk([&](memref::GetGlobalOp op) {
      if (op->getParentOfType<gpu::GPUModuleOp>())
        return WalkResult::advance();
      op.emitError() << "the GPU target cannot read host constant @"
                     << op.getName();
      return WalkResult::interrupt();
    });
    if (constants.wasInterrupted())
      return signalPassFailure();

    OpBuilder b(module.getContext());
    // Host reads at the top of a function body: a kernel computes every
    // buffer, the host reads scalars of them (AdamW's step counter).
    SmallVector<memref::LoadOp> reads;
    module.walk([&](memref::LoadOp load) {
      if (isa<func::FuncOp>(load->getParentOp()) &&
          !load.getMemRef().getDefiningOp<memref::AllocaOp>() &&
          load.getMemRefType().getLayout().isIdentity())
        reads.push_back(load);
    });
    for (memref::LoadOp load : reads)
      copyToHost(b, load);

    SmallVector<Operation *> ops;
    module.walk([&](Operation *op) {
      if (isa<memref::AllocOp, memref::DeallocOp, memref::CopyOp>(op) &&
          !op->getParentOfType<gpu::GPUModuleOp>())
        ops.push_back(op);
    });
    for (Operation *op : ops) {
      b.setInsertionPoint(op);
      Location loc = op->getLoc();
      // gpu-to-llvm lowers only the async forms: on the stream of a
      // gpu.wait async (the compute stream), then waited for.
      Type token = gpu::AsyncTokenType::get(b.getContext());
      if (auto alloc = dyn_cast<memref::AllocOp>(op)) {
        Value start =
            gpu::WaitOp::create(b, loc, token, ValueRange()).getAsyncToken();
        auto device = gpu::AllocOp::create(
            b, loc, alloc.getType(), token, ValueRange{start},
            alloc.getDynamicSizes(), alloc.getSymbolOperands());
        gpu::WaitOp::create(b, loc, Type(), ValueRange{device.getAsyncToken()});
        alloc.replaceAllUsesWith(device.getMemref());
      } else if (auto dealloc = dyn_cast<memref::DeallocOp>(op)) {
        Value start =
            gpu::WaitOp::create(b, loc, token, ValueRange()).getAsyncToken();
        auto free = gpu::DeallocOp::create(b, loc, token, ValueRange{start},
                                           dealloc.getMemref());
        gpu::WaitOp::create(b, loc, Type(), ValueRange{free.getAsyncToken()});
      } else {
        auto copy = cast<memref::CopyOp>(op);
        linalg::CopyOp::create(b, loc, copy.getSource(), copy.getTarget());
      }
      op->erase();
    }
  }
};

} // namespace
