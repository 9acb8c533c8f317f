//===- Interpreter.h - Reference interpreter of Piper models ----*- C++ -*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Evaluates a `func.func` of Piper's model IR on the CPU with the f64
// reference kernels (piper/Reference/Kernels.h). This is the numerical
// reference that every distribution strategy is compared against, so it
// executes the IR literally: one reference kernel per op, in program order,
// no fusion and no reordering.
//
// Values are held in f64 (`ref::Tensor`) or int64 (`ref::IndexTensor`)
// whatever the declared element type; integer-element tensors become index
// tensors. In `Precision::F32` every float value is rounded to the nearest
// f32 after each op and on entry, which models f32 storage (the arithmetic
// inside one kernel still runs in f64). In `Precision::BF16Mixed` every
// float value is rounded to its declared element type instead (bf16 through
// f32), the reference of mixed-precision plans.
//
// Supported: every piper NN op, `piper.vjp` of those ops, `piper.annotate`
// with `piper.yield` (the body runs inline), the optimizer updates
// `piper.sgd_update` and `piper.adamw_update` (with `arith.addi` on integer
// tensors, which counts AdamW steps), `arith.constant` of dense tensors and
// `func.return`. Anything else is rejected by `create` with an
// error at the op's location; a failing kernel makes `run` fail with an
// error at the op's location that quotes the kernel, e.g.
// "piper.embedding: id 12 at position 3 is out of range for a table of 10
// rows". Errors go to the context's diagnostic engine.
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_INTERPRETER_INTERPRETER_H
#define PIPER_INTERPRETER_INTERPRETER_H

#include "piper/Reference/Tensor.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>
#include <string>
#include <variant>

namespace mlir::piper {

/// The f64 reference (plain C++, namespace ::piper::ref), reachable from
/// inside mlir::piper, where `piper` names this namespace.
namespace ref = ::piper::ref;

/// The precision the interpreter models.
enum class Precision {
  /// Every value is an exact f64 result of the reference kernels.
  F64,
  /// Every float value is rounded to f32 after each op and on entry.
  F32,
  /// Every float value is rounded to its declared element type after each
  /// op and on entry: bf16 values to f32 then bf16 (what a kernel computing
  /// in f32 and storing bf16 does), f32 ones to f32, f64 ones not at all.
  /// The reference of `--piper-mixed-precision` plans
  /// (docs/MixedPrecision.md).
  BF16Mixed,
};

/// "f64", "f32" or "bf16-mixed" to a Precision; nullopt for anything else.
std::optional<Precision> parsePrecision(StringRef text);
/// The spelling parsePrecision reads.
StringRef stringifyPrecision(Precision precision);

/// A runtime value: a float tensor (any float element type) or an integer
/// tensor (any integer element type).
using RuntimeValue = std::variant<ref::Tensor, ref::IndexTensor>;

/// The float tensor in `value`, or null if it holds an index tensor.
inline const ref::Tensor *getIfTensor(const RuntimeValue &value) {
  return std::get_if<ref::Tensor>(&value);
}
/// The index tensor in `value`, or null if it holds a float tensor.
inline const ref::IndexTensor *getIfIndexTensor(const RuntimeValue &value) {
  return std::get_if<ref::IndexTensor>(&value);
}
/// The shape of either alternative.
const ref::Shape &getShape(const RuntimeValue &value);

/// Rounds every element of `t` to the nearest f32 (round to nearest even);
/// values beyond f32's range become infinities, as a cast would make them.
void roundToF32(ref::Tensor &t);

/// `value` rounded to the nearest bf16 (ties to even), as a float; NaN
/// stays NaN, values past bf16's range become infinities.
float roundF32ToBF16(float value);

/// Rounds every element of `t` to f32, then to bf16 (the double rounding of
/// a kernel that computes in f32 and stores bf16).
void roundToBF16(ref::Tensor &t);

/// Rounds `t`, a value of type `declared` (a tensor type or an element
/// type), as `precision` stores it: F64 not at all, F32 to f32, BF16Mixed
/// to the declared element type.
void roundToStorage(ref::Tensor &t, Type declared, Precision precision);

/// Evaluates one function. Cheap to copy: it refers to the function, which
/// must outlive it, and holds no state between runs.
class Interpreter {
public:
  /// Checks that every op of `fn` (nested ones too) is supported and that
  /// every argument and result is a ranked tensor of floats or integers;
  /// emits an error at the offending op or argument and fails otherwise.
  static FailureOr<Interpreter> create(func::FuncOp fn,
                                       Precision precision = Precision::F64);

  /// Runs the function on `args` (one per argument, of the argument's kind
  /// and static dims) and returns one value per result. Emits a located
  /// error and fails if an argument does not fit or a kernel fails.
  FailureOr<SmallVector<RuntimeValue>> run(ArrayRef<RuntimeValue> args) const;

  func::FuncOp getFunction() const { return fn; }
  Precision getPrecision() const { return precision; }

private:
  Interpreter(func::FuncOp fn, Precision precision)
      : fn(fn), precision(precision) {}

  func::FuncOp fn;
  Precision precision;
};

} // namespace mlir::piper

#endif // PIPER_INTERPRETER_INTERPRETER_H
