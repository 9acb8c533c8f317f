//===- MixedPrecision.h - Precision policy, model rewrite -------*- C++ -*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// A precision policy says which float type each role of a training step
// uses: compute (NN ops and activations), master (parameters and optimizer
// state), loss and gradient reduction. `applyPrecisionPolicy` rewrites an
// f32 model into that form with `piper.cast` (docs/MixedPrecision.md); the
// `--piper-mixed-precision` pass, `piper-interp --precision=bf16-mixed` and
// the compile driver share it.
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_DIALECT_PIPER_TRANSFORMS_MIXEDPRECISION_H
#define PIPER_DIALECT_PIPER_TRANSFORMS_MIXEDPRECISION_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"

#include <optional>
#include <string>

namespace mlir::piper {

/// The float types a policy assigns. Plain data: no MLIRContext needed.
enum class FloatKind { F32, BF16 };

/// "f32" / "bf16".
StringRef stringifyFloatKind(FloatKind kind);
/// The builtin type of `kind`.
FloatType getFloatType(MLIRContext *context, FloatKind kind);

/// Which float type each role of a training step uses.
struct PrecisionPolicy {
  /// NN ops and the activations between them; parameters are cast to it at
  /// their uses.
  FloatKind compute = FloatKind::F32;
  /// Parameters (master weights) and optimizer state. Always f32: the
  /// parameter types of the model.
  FloatKind master = FloatKind::F32;
  /// The loss op's operands and result (the loss).
  FloatKind loss = FloatKind::F32;
  /// Gradients, their accumulation over microbatches and their reduction
  /// over data-parallel replicas.
  FloatKind gradReduce = FloatKind::F32;

  /// Whether the policy changes an f32 model at all.
  bool isMixed() const { return compute != FloatKind::F32; }
  /// The spelling `parsePrecisionPolicy` reads: "f32" or "bf16-mixed".
  StringRef getName() const { return isMixed() ? "bf16-mixed" : "f32"; }
};

/// The policy named `precision` ("f32" or "bf16-mixed") with the gradient
/// reduction type `gradReduce` ("f32" or "bf16"; empty: f32). On a bad
/// value, nullopt and `error` says why, e.g. "unknown precision 'fp8';
/// expected f32 or bf16-mixed". A bf16 gradient reduction is refused with a
/// reason (see docs/MixedPrecision.md, "Gradient reduction").
std::optional<PrecisionPolicy> parsePrecisionPolicy(StringRef precision,
                                                    StringRef gradReduce,
                                                    std::string &error);

/// Rewrites the f32 model `fn` under `policy` (nothing happens for an f32
/// policy). Emits a located error and fails, leaving `fn` unchanged, when
/// `fn` is not an f32 forward model of Piper ops.
LogicalResult applyPrecisionPolicy(func::FuncOp fn,
                                   const PrecisionPolicy &policy);

/// Whether `fn` holds a `piper.cast`, i.e. already had a mixed policy
/// applied.
bool hasPrecisionCasts(func::FuncOp fn);

} // namespace mlir::piper

#endif // PIPER_DIALECT_PIPER_TRANSFORMS_MIXEDPRECISION_H
