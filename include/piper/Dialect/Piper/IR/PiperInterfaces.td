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

#endif // PIPER_DIALECT_PIPER_IR_PIPERINTERFACES_TD
