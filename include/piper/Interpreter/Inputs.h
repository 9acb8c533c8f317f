//===- Inputs.h - Parameters and synthetic data for a model -----*- C++ -*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// What the interpreter feeds to each argument of a model, independent of any
// distribution strategy:
//
//  - a `piper.param` argument gets its initial value from (seed, parameter
//    name) by its `#piper.param` initialiser: `normal(std)` is
//    ref::initNormal(seed, name, shape, std), `zeros` and `ones` constants;
//  - every other argument gets the synthetic batch of SyntheticData.h for
//    (seed, "data.<argument index>", step): standard normal floats, or
//    integers uniform in [0, bound) where the bound comes from how the
//    argument is used (see analyzeArguments).
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_INTERPRETER_INPUTS_H
#define PIPER_INTERPRETER_INPUTS_H

#include "piper/Dialect/Piper/IR/PiperAttrs.h"
#include "piper/Interpreter/Interpreter.h"
#include "piper/Interpreter/ParamsFile.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <cstdint>

namespace mlir::piper {

/// How one argument of a model is filled.
struct ArgumentInfo {
  enum class Kind {
    /// A `piper.param` argument: initialised once, then trained.
    Parameter,
    /// Standard normal data, fresh every step.
    FloatData,
    /// Integers in [0, bound), fresh every step.
    IndexData,
  };
  Kind kind;
  /// Position of the argument in the signature.
  unsigned index;
  /// The argument's static shape.
  ref::Shape shape;
  /// The parameter attribute (Parameter only).
  ParamAttr param;
  /// Values lie in [0, bound) (IndexData only).
  int64_t bound = 0;

  bool isParameter() const { return kind == Kind::Parameter; }
};

/// Classifies every argument of `fn`. Arguments need static shapes. The
/// bound of an integer argument is the smallest of those its uses imply:
/// `piper.cross_entropy` labels -> dim 1 of the logits (V);
/// `piper.embedding` ids -> dim 0 of the table (rows);
/// `piper.dispatch` indices -> dim 0 of the result (experts);
/// `piper.combine` indices -> dim 0 of the expert outputs (experts).
/// Uses by `piper.vjp` (which mirror forward uses) are not consulted. Emits
/// an error naming the argument and fails when a shape is dynamic or an
/// integer argument has no such use.
FailureOr<SmallVector<ArgumentInfo>> analyzeArguments(func::FuncOp fn);

/// The initial value of parameter `arg` under `seed`.
FailureOr<ref::Tensor> initialParameter(func::FuncOp fn,
                                        const ArgumentInfo &arg, uint64_t seed);

/// The initial value of parameter `arg` read from `file` (--params-in).
FailureOr<ref::Tensor> initialParameterFrom(func::FuncOp fn,
                                            const ArgumentInfo &arg,
                                            const ref::ParamsFile &file);

/// The synthetic batch of data argument `arg` at 1-based `step`.
FailureOr<RuntimeValue> syntheticArgument(func::FuncOp fn,
                                          const ArgumentInfo &arg,
                                          uint64_t seed, uint64_t step);

} // namespace mlir::piper

#endif // PIPER_INTERPRETER_INPUTS_H
