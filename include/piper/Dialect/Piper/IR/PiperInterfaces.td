//===- PiperInterfaces.td - Piper op interfaces ------------*- tablegen -*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_DIALECT_PIPER_IR_PIPERINTERFACES_TD
#define PIPER_DIALECT_PIPER_IR_PIPERINTERFACES_TD

include "mlir/IR/OpBase.td"

def Piper_VJPOpInterface : OpInterface<"VJPOpInterface"> {
  let cppNamespace = "::mlir::piper";
  let description = [{
    An operation that reverse-mode autodiff (`piper-autodiff`) can
    differentiate. Given the cotangents of the op's results, `buildVJP`
    emits IR computing the cotangent of each requested operand.

    Rules emit one computation per operand so that the input-gradient part
    (BI) and the weight-gradient part (BW) of a backward pass can be
    separated by dependence alone: the weight gradient of `piper.linear`
    is an op of its own that nothing on the input-gradient path uses.

    The rules are attached to the ops as external models
    (`registerVJPInterfaceExternalModels`), keeping the op definitions free
    of autodiff concerns.
  }];
  let methods = [
    InterfaceMethod<[{
        Emits, at the builder's insertion point, the cotangent of every
        operand `i` with `needed[i]` set, into `operandCotangents[i]` (which
        has one entry per operand; others stay null). `resultCotangents` has
        one entry per result; an entry is null when that result has no
        cotangent (it is an integer, or unused). Fails with a diagnostic on
        the op if it cannot be differentiated.
      }],
      "::llvm::LogicalResult", "buildVJP",
      (ins "::mlir::OpBuilder &":$builder,
           "::mlir::ArrayRef<::mlir::Value>":$resultCotangents,
           "::llvm::ArrayRef<bool>":$needed,
           "::llvm::SmallVectorImpl<::mlir::Value> &":$operandCotangents)>
  ];
}


def Piper_ElementwiseOpInterface : OpInterface<"ElementwiseOpInterface"> {
  let cppNamespace = "::mlir::piper";
  let description = [{
    An op whose every result element is one scalar function of the operand
    elements at the same index, all operands and the result of one float
    tensor type. The op states that function once, as a value and as IR,
    with its partial derivatives; everything else is derived from it:

    - the interpreter evaluates it and its `piper.vjp` in f64;
    - `piper-autodiff` differentiates it into one `piper.vjp` per operand
      (`dx_i = dy * df/dx_i`);
    - the native lowering emits a `linalg.generic` whose payload is
      `buildScalar` (forward) or `dy * buildPartial` (VJP), so the op needs
      no hand-written kernel on any target;
    - distribution rules, FLOPs and bytes follow the elementwise defaults.

    Adding such an op means its ODS definition (listing this interface) and
    the four static methods below; no pass, analysis or kernel changes.
    The methods are static because a `piper.vjp` names the op it
    differentiates without holding one: use `lookupElementwise` to reach them
    by name.

    Example (an op implementing it):

    ```mlir
    %s = piper.sigmoid %x : tensor<4x16xf32>
    ```
  }];
  let methods = [
    StaticInterfaceMethod<[{
        The result element for the operand elements `x` (one per operand).
      }],
      "double", "evaluateScalar", (ins "::llvm::ArrayRef<double>":$x)>,
    StaticInterfaceMethod<[{
        The partial derivative of the result element with respect to operand
        `wrt`, at the operand elements `x`.
      }],
      "double", "evaluatePartial",
      (ins "::llvm::ArrayRef<double>":$x, "unsigned":$wrt)>,
    StaticInterfaceMethod<[{
        Emits the result element for the scalar operand elements `x` (all of
        one float type) at the builder's insertion point.
      }],
      "::mlir::Value", "buildScalar",
      (ins "::mlir::OpBuilder &":$builder, "::mlir::Location":$loc,
           "::mlir::ValueRange":$x)>,
    StaticInterfaceMethod<[{
        Emits the partial derivative with respect to operand `wrt` at the
        scalar operand elements `x`.
      }],
      "::mlir::Value", "buildPartial",
      (ins "::mlir::OpBuilder &":$builder, "::mlir::Location":$loc,
           "::mlir::ValueRange":$x, "unsigned":$wrt)>,
    StaticInterfaceMethod<[{
        Vector FLOPs per result element of the forward (the cost model's
        figure; a VJP costs twice this per operand).
      }],
      "double", "getFlopsPerElement", (ins), [{}], [{ return 1.0; }]>
  ];
  let extraClassDeclaration = [{
    /// The rules of the registered op `name` when it implements this
    /// interface (for `piper.vjp`, which names its primal op), else null.
    static const Concept *lookupElementwise(::llvm::StringRef name,
                                            ::mlir::MLIRContext *context);
  }];
}

#endif // PIPER_DIALECT_PIPER_IR_PIPERINTERFACES_TD
