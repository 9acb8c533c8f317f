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

def Piper_DistributionOpInterface : OpInterface<"DistributionOpInterface"> {
  let cppNamespace = "::mlir::piper";
  let description = [{
    How an op splits over a mesh axis: local types, partial sums, its
    per-device form and its cost.

    The one place that says what an op means when the tensors it reads are
    split over a mesh axis (tensor or expert parallelism). The `shard`
    directive, the local-size analysis (memory plan, simulator), the native
    lowering's re-typing of task bodies and the simulator's op counts all
    ask it (through `DistributionRule`, PiperDistributionRule.h); none of
    them names ops.

    The rule proper is a set of *static* methods over a
    `DistributionQuery` (PiperDistribution.h): the operand and result types
    in the global view, what one device holds of each operand, and the
    op's attributes. Being static, they can be asked for an op that is not
    in the IR: `piper.vjp` implements the instance methods by naming the
    op it differentiates (`getDistributionRuleOp`) and giving a query whose
    `wrt` is set, so the VJP of an op follows that op's rule through the
    registered op's interface model. Each static method answers both the
    forward op (`query.isVJP()` false) and its VJP.

    The default methods are the elementwise rule: tensor operands share one
    local type, which every tensor result takes; one vector FLOP a result
    element (`getFlopsPerElement`), twice the forward's for the VJP; a
    VJP's gradients are held as their primals are. An elementwise op only
    lists the interface (and overrides `getFlopsPerElement` if an element
    costs more than one FLOP):

    ```tablegen
    def Piper_SigmoidOp : Piper_UnaryOp<"sigmoid", [
        Piper_DistributionRule<["getFlopsPerElement"]>]> { ... }
    ```

    ```c++
    double SigmoidOp::getFlopsPerElement() { return 4; }
    ```

    (`Piper_DistributionRule<methods>`, below, is this interface's
    `DeclareOpInterfaceMethods`.) Other ops override `inferLocalForm`
    (local result types, or a diagnostic for a split they cannot run on:
    heads straddling devices, a reshape that moves split channels),
    `getCost`, and where they take part in tensor or expert parallelism
    `getWeightOperand`, `verifyWeightSplit`, `getPartialSums`,
    `getTokenGatheredOperands`, `getChannelGroups`,
    `getExpertWeightOperands` and `getExpertExchanges`. For example, the
    rule of a row-parallel `piper.linear`:

    ```mlir
    // Global view: x [4, 16], w [16, 32] split on dim 0 over tp = 2.
    %y = piper.linear %x, %w : tensor<4x16xf32>, tensor<16x32xf32> -> tensor<4x32xf32>
    // One device: x [4, 8], w [8, 32] give y [4, 32], a partial sum
    // (getPartialSums: {true}) that the directive all-reduces; 2*4*8*32
    // matrix FLOPs (getCost at the local types).
    ```
  }];
  let methods = [
    StaticInterfaceMethod<[{
        One device's result types (and changed attributes) given what it
        holds of each operand (`query.localOperands`). Fails when the op
        cannot run on those types; with `error` given, the rule completes
        the diagnostic `error()` returns with why (the caller has already
        said which op, where).
      }],
      "::llvm::LogicalResult", "inferLocalForm",
      (ins "const ::mlir::piper::DistributionQuery &":$query,
           "::mlir::piper::LocalForm &":$form,
           "::mlir::piper::DistributionErrorFn":$error),
      /*methodBody=*/[{}], /*defaultImplementation=*/[{
        if (query.isVJP())
          return ::mlir::piper::detail::inferFollowPrimalsLocalForm(query,
                                                                    form);
        return ::mlir::piper::detail::inferElementwiseLocalForm(query, form,
                                                                error);
      }]>,
    StaticInterfaceMethod<[{
        The FLOPs and bytes of the op (a VJP: of the gradient of its one
        `wrt` primal) at `query.localOperands` and `query.localResults`;
        the global count is asked with the global types. A device's share
        of a split op is this method at its local types.
      }],
      "::mlir::piper::OpCount", "getCost",
      (ins "const ::mlir::piper::DistributionQuery &":$query),
      /*methodBody=*/[{}], /*defaultImplementation=*/[{
        if (query.isVJP())
          return ::mlir::piper::detail::getDefaultVJPCost(
              query, ConcreteOp::getCost(query.getForward()));
        return ::mlir::piper::detail::getElementwiseCost(
            query, ConcreteOp::getFlopsPerElement());
      }]>,
    StaticInterfaceMethod<[{
        Vector FLOPs a result element of the default (elementwise) cost.
      }],
      "double", "getFlopsPerElement", (ins),
      /*methodBody=*/[{}], /*defaultImplementation=*/[{ return 1; }]>,
    StaticInterfaceMethod<[{
        The operand holding the weight that tensor parallelism splits by
        column (its last dim) or by row (dim 0), if any; for a VJP, the
        same index among the primals.
      }],
      "::std::optional<unsigned>", "getWeightOperand", (ins),
      /*methodBody=*/[{}], /*defaultImplementation=*/[{
        return ::std::nullopt;
      }]>,
    StaticInterfaceMethod<[{
        Whether the op can run with its weight operand split (the other
        operands as in `query`); with `error`, completes the diagnostic.
      }],
      "::llvm::LogicalResult", "verifyWeightSplit",
      (ins "const ::mlir::piper::DistributionQuery &":$query,
           "::mlir::piper::DistributionErrorFn":$error),
      /*methodBody=*/[{}], /*defaultImplementation=*/[{
        return ::llvm::success();
      }]>,
    StaticInterfaceMethod<[{
        Which results are partial sums over the axis when one device holds
        `query.localOperands` (a contraction over a split dim: the output
        of a row-parallel linear, the input gradient of a column-parallel
        one). Only the split operands matter: the answer for a weight split
        alone is the directive's. Empty or false: none.
      }],
      "::llvm::SmallVector<bool>", "getPartialSums",
      (ins "const ::mlir::piper::DistributionQuery &":$query),
      /*methodBody=*/[{}], /*defaultImplementation=*/[{ return {}; }]>,
    StaticInterfaceMethod<[{
        Under sequence parallelism (tokens split between the
        tensor-parallel ops), the operands that must be gathered whole
        along the tokens before the op runs with its weight split as
        `query.localOperands` says.
      }],
      "::llvm::SmallVector<unsigned>", "getTokenGatheredOperands",
      (ins "const ::mlir::piper::DistributionQuery &":$query),
      /*methodBody=*/[{}], /*defaultImplementation=*/[{ return {}; }]>,
    StaticInterfaceMethod<[{
        Expert parallelism: the operands holding expert weights (split by
        experts, dim 0).
      }],
      "::llvm::SmallVector<unsigned>", "getExpertWeightOperands",
      (ins "const ::mlir::piper::DistributionQuery &":$query),
      /*methodBody=*/[{}], /*defaultImplementation=*/[{ return {}; }]>,
    StaticInterfaceMethod<[{
        Expert parallelism: where each result goes (an all-to-all to the
        experts' owners or back); empty: nowhere.
      }],
      "::llvm::SmallVector<::mlir::piper::ExpertExchange>",
      "getExpertExchanges",
      (ins "const ::mlir::piper::DistributionQuery &":$query),
      /*methodBody=*/[{}], /*defaultImplementation=*/[{ return {}; }]>,
    StaticInterfaceMethod<[{
        Whether the result is a partial sum when every operand is one (a
        sum of partial sums): the directive then all-reduces once, after
        the op.
      }],
      "bool", "propagatesPartialSums", (ins),
      /*methodBody=*/[{}], /*defaultImplementation=*/[{ return false; }]>,
    StaticInterfaceMethod<[{
        How many independent groups (attention's heads) the op's channels
        form, which a split of the channels must divide; 0 when any split
        does.
      }],
      "int64_t", "getChannelGroups",
      (ins "::mlir::DictionaryAttr":$attrs),
      /*methodBody=*/[{}], /*defaultImplementation=*/[{ return 0; }]>,
    InterfaceMethod<[{
        The registered op whose rule (the static methods) applies: the op
        itself, or the op a VJP differentiates.
      }],
      "::std::optional<::mlir::RegisteredOperationName>",
      "getDistributionRuleOp", (ins),
      /*methodBody=*/[{}], /*defaultImplementation=*/[{
        return $_op->getName().getRegisteredInfo();
      }]>,
    InterfaceMethod<[{
        The query for this op with one device's operand types
        `localOperands` (and result types `localResults`, when costing).
      }],
      "::mlir::piper::DistributionQuery", "getDistributionQuery",
      (ins "::mlir::TypeRange":$localOperands,
           "::mlir::TypeRange":$localResults),
      /*methodBody=*/[{}], /*defaultImplementation=*/[{
        ::mlir::piper::DistributionQuery query;
        query.operands = $_op->getOperandTypes();
        query.localOperands = localOperands;
        query.results = $_op->getResultTypes();
        query.localResults = localResults;
        query.attrs = $_op->getAttrDictionary();
        query.numPrimals = $_op->getNumOperands();
        return query;
      }]>,
    InterfaceMethod<[{
        Makes the op its per-device form: the result types and attributes
        of `form`.
      }],
      "void", "applyLocalForm",
      (ins "const ::mlir::piper::LocalForm &":$form),
      /*methodBody=*/[{}], /*defaultImplementation=*/[{
        for (auto [result, type] :
             ::llvm::zip($_op->getResults(), form.resultTypes))
          result.setType(type);
        for (::mlir::NamedAttribute attr : form.attrs)
          $_op->setAttr(attr.getName(), attr.getValue());
      }]>
  ];
}

/// An op whose distribution rule (PiperInterfaces.td) overrides `methods`;
/// the others are the elementwise defaults.
class Piper_DistributionRule<list<string> methods = []>
    : DeclareOpInterfaceMethods<Piper_DistributionOpInterface, methods>;

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
    - its distribution rule, FLOPs and bytes are the elementwise defaults of
      `DistributionOpInterface` (listed beside this one; only the FLOPs of
      an element, `getFlopsPerElement`, are the op's own).

    Adding such an op means its ODS definition (listing both interfaces)
    and the four static methods below (plus `getFlopsPerElement`); no
    pass, analysis or kernel changes.
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
           "::mlir::ValueRange":$x, "unsigned":$wrt)>
  ];
  let extraClassDeclaration = [{
    /// The rules of the registered op `name` when it implements this
    /// interface (for `piper.vjp`, which names its primal op), else null.
    static const Concept *lookupElementwise(::llvm::StringRef name,
                                            ::mlir::MLIRContext *context);
  }];
}

#endif // PIPER_DIALECT_PIPER_IR_PIPERINTERFACES_TD
