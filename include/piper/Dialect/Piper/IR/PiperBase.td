//===- PiperBase.td - Piper dialect definition -------------*- tablegen -*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_DIALECT_PIPER_IR_PIPERBASE_TD
#define PIPER_DIALECT_PIPER_IR_PIPERBASE_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

def Piper_Dialect : Dialect {
  let name = "piper";
  let cppNamespace = "::mlir::piper";
  let summary = "Distributed training: meshes, placements and schedulable chunks";
  let description = [{
    The `piper` dialect describes one training step of a model together with
    how it is to be distributed: the device mesh (`piper.mesh`), where each
    parameter lives (`#piper.placement`), and which operations form
    schedulable chunks (`piper.annotate` regions carrying tags such as `PP`
    and `EP`). Later stages build the global training DAG from this form and
    rewrite it with `transform.piper.*` directives.

    The dialect attribute `piper.placement` may be attached to function
    arguments and results of ranked tensor type; it is verified against the
    referenced mesh and the tensor's shape. `piper.param` marks a function
    argument as a trainable parameter (`#piper.param`). Derived training
    steps mark results with `piper.grad = "<param>"` (a gradient) and
    `piper.updated = "<param>"` (an updated parameter), and optimizer state
    arguments and results with `piper.state` (`#piper.state`).
  }];
  let useDefaultAttributePrinterParser = 1;
  let hasRegionArgAttrVerify = 1;
  let hasRegionResultAttrVerify = 1;
  let hasOperationAttrVerify = 1;
  let extraClassDeclaration = [{
    /// Registers the attributes; defined beside them in PiperAttrs.cpp.
    void registerAttributes();

    /// Name of the discardable attribute carrying a value's placement.
    static constexpr ::llvm::StringLiteral getPlacementAttrName() {
      return ::llvm::StringLiteral("piper.placement");
    }
    /// Name of the result attribute naming the parameter a gradient is of.
    static constexpr ::llvm::StringLiteral getGradAttrName() {
      return ::llvm::StringLiteral("piper.grad");
    }
    /// Name of the result attribute naming the parameter a result updates.
    static constexpr ::llvm::StringLiteral getUpdatedAttrName() {
      return ::llvm::StringLiteral("piper.updated");
    }
    /// Name of the argument/result attribute marking optimizer state.
    static constexpr ::llvm::StringLiteral getStateAttrName() {
      return ::llvm::StringLiteral("piper.state");
    }
    /// Name of the op attribute giving the pass of derived work that lies
    /// outside every chunk (e.g. summing a tied weight's gradients).
    static constexpr ::llvm::StringLiteral getPassAttrName() {
      return ::llvm::StringLiteral("piper.pass");
    }
    /// Name of the argument attribute marking a trainable parameter.
    static constexpr ::llvm::StringLiteral getParamAttrName() {
      return ::llvm::StringLiteral("piper.param");
    }
  }];
}

class Piper_Op<string mnemonic, list<Trait> traits = []>
    : Op<Piper_Dialect, mnemonic, traits>;

class Piper_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<Piper_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

#endif // PIPER_DIALECT_PIPER_IR_PIPERBASE_TD
