//===- ClipGradNorm.h - Global gradient-norm clipping in programs -*- C++ -*-//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Clipping by the global L2 norm of every parameter's gradient, the norm the
// serial model's gradients have, under any strategy (docs/Training.md):
//
//  1. Before lowering, a program's updates and everything that depends on
//     them move after everything else (orderUpdatesLast), so that when the
//     first update runs, every gradient this device applies is final.
//  2. Each update launch adds its gradients to the step's sum of squares
//     (piper_clip_accumulate_<t>), weighted by 1 / (devices holding the same
//     elements): a data-parallel replica's copy, a tensor-parallel
//     replicated weight and a ZeRO-1 whole gradient count once over their
//     replicas, a ZeRO chunk or a tensor/expert part counts in full, and
//     pipeline stages (distinct roles) add up; a tied parameter's update
//     copied onto another stage (`copy_of`) adds nothing, its original
//     counting the same gradient. These calls are placed before one
//     piper_clip_finish, emitted at the first update, which sums over
//     every rank and sets the clip factor.
//  3. Each update's gradients are multiplied by the factor
//     (piper_clip_scale_<t>) before its body runs.
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_LIB_CONVERSION_CLIPGRADNORM_H
#define PIPER_LIB_CONVERSION_CLIPGRADNORM_H

#include "piper/Conversion/ProgramToFunc.h"

namespace mlir::piper {

/// Whether the module's plan clips gradients (kClipGradNormAttrName).
bool clipsGradNorm(ModuleOp module);

/// Moves every update launch of `program`, and every instruction that
/// depends on one (through values, a record on a stream after one, a wait
/// for such a record), after all the others, keeping the order within each
/// part.
void orderUpdatesLast(ProgramOp program);

/// For update `launch` (operands `operands`, already converted; gradients
/// at `grads`, indices into them): adds their weighted squares to the step's
/// sum before the step's piper_clip_finish (emitted at the first update),
/// then replaces each gradient operand with its clipped value.
LogicalResult clipUpdateGradients(LaunchOp launch, ArrayRef<unsigned> grads,
                                  ArrayRef<unsigned> params,
                                  SmallVectorImpl<Value> &operands,
                                  ProgramLowering &lowering,
                                  ConversionPatternRewriter &rewriter);

/// A program without updates still joins the step's norm sum: a
/// piper_clip_finish call before `fn`'s return.
void finishClipWithoutUpdates(func::FuncOp fn);

} // namespace mlir::piper

#endif // PIPER_LIB_CONVERSION_CLIPGRADNORM_H
