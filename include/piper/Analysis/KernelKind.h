//===- KernelKind.h - The kind of op a kernel span or rate is for -*- C++
//-*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// One name per kind of op of a task body, shared by the three places that
// must agree on it: the lowering's kernel trace spans (TraceKernels.h), the
// simulator's calibrated kernel rates (CostModel.h) and the calibration
// that fits those rates from the spans (Calibrate.h).
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_ANALYSIS_KERNELKIND_H
#define PIPER_ANALYSIS_KERNELKIND_H

#include "piper/Dialect/Piper/IR/PiperOps.h"

#include <optional>
#include <string>

namespace mlir::piper {

/// The op's name without `piper.` (`matmul`, `adamw_update`); a `piper.vjp`
/// its forward op's with `_vjp` (`rmsnorm_vjp`). Nothing for structure
/// (annotate, yield, collectives, constants, ops with regions), ops of other
/// dialects and ops without tensors.
inline std::optional<std::string> kernelKindOf(Operation *op) {
  if (!isa_and_nonnull<PiperDialect>(op->getDialect()) ||
      isa<AnnotateOp, YieldOp, CollectiveOp>(op) ||
      op->hasTrait<OpTrait::ConstantLike>() || op->getNumRegions() > 0)
    return std::nullopt;
  bool hasTensor =
      llvm::any_of(op->getOperandTypes(), llvm::IsaPred<ShapedType>) ||
      llvm::any_of(op->getResultTypes(), llvm::IsaPred<ShapedType>);
  if (!hasTensor)
    return std::nullopt;
  if (auto vjp = dyn_cast<VJPOp>(op))
    return (StringRef(vjp.getOp()).rsplit('.').second + "_vjp").str();
  return op->getName().stripDialect().str();
}

} // namespace mlir::piper

#endif // PIPER_ANALYSIS_KERNELKIND_H
