//===- PiperOps.td - Piper operations ----------------------*- tablegen -*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_DIALECT_PIPER_IR_PIPEROPS_TD
#define PIPER_DIALECT_PIPER_IR_PIPEROPS_TD

include "piper/Dialect/Piper/IR/PiperAttrs.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "piper/Dialect/Piper/IR/PiperInterfaces.td"
include "piper/Dialect/Piper/IR/PiperNNOps.td"
include "piper/Dialect/Piper/IR/PiperOptimizerOps.td"
include "piper/Dialect/Piper/IR/PiperDAGOps.td"
include "piper/Dialect/Piper/IR/PiperMicrobatchOps.td"
include "piper/Dialect/Piper/IR/PiperProgramOps.td"
include "piper/Dialect/Piper/IR/PiperInterfaces.td"

//===----------------------------------------------------------------------===//
// MeshOp
//===----------------------------------------------------------------------===//

def Piper_MeshOp : Piper_Op<"mesh", [Symbol]> {
  let summary = "a named device mesh with per-axis interconnects";
  let description = [{
    Declares a logical mesh of devices: an ordered list of named axes, each
    with a size and optionally the link class (and bandwidth in GB/s, latency
    in microseconds) joining devices along it. The number of devices is the
    product of the sizes. Placements and directives refer to the mesh by
    symbol and to its axes by name.

    Axes are listed major to minor: with sizes `(s0, ..., sn)`, the device
    with coordinates `(c0, ..., cn)` has linear rank
    `(...((c0 * s1 + c1) * s2 + c2)...) * sn + cn`.

    Example:

    ```mlir
    // 4 nodes of 8 GPUs: data parallel across nodes, pipeline and expert
    // parallel inside a node.
    piper.mesh @cluster axes = [dp = 4 : efa(bandwidth = 50.0, latency = 10.0),
                                pp = 4 : nvlink(bandwidth = 300.0, latency = 1.0),
                                ep = 2 : nvlink]
    ```

    **Constraints:**
    - At least one axis.
    - Axis names are unique within the mesh.
    - Every axis size is >= 1 (checked by `#piper.axis`).
  }];
  let arguments = (ins
    SymbolNameAttr:$sym_name,
    TypedArrayAttrBase<Piper_MeshAxisAttr, "mesh axes">:$axes
  );
  let assemblyFormat = [{
    $sym_name `axes` `=` custom<MeshAxes>($axes) attr-dict
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The axis called `name`, or null.
    ::mlir::piper::MeshAxisAttr getAxis(::llvm::StringRef name);
    /// Product of all axis sizes.
    int64_t getNumDevices();
    /// Axis names joined with ", " for diagnostics.
    std::string getAxisNamesForDiagnostic();
    ::llvm::SmallVector<::mlir::piper::MeshAxisAttr> getAxisList() {
      return ::llvm::to_vector(getAxes().getAsRange<::mlir::piper::MeshAxisAttr>());
    }
  }];
}

//===----------------------------------------------------------------------===//
// AnnotateOp
//===----------------------------------------------------------------------===//

def Piper_AnnotateOp : Piper_Op<"annotate", [
    RecursiveMemoryEffects, SingleBlock]> {
  let summary = "groups operations into a tagged, schedulable chunk";
  let description = [{
    Groups the operations of its single-block region into a chunk carrying
    tags, as Piper's `annotate("PP")`. Tags name the strategy dimensions the
    chunk belongs to: `PP = 0` marks the first pipeline stage, `EP = 1` the
    second expert block. Annotations nest: an `EP` chunk inside a `PP` chunk
    carries both tags. Directives select chunks by tag filters.

    The region sees values of the enclosing scope; the values it yields
    become the op's results.

    Tag names are upper-case identifiers. `PASS` and `MB` are reserved: the
    pass of a chunk is its `pass` attribute, absent (forward) in user code
    and set to `BI` (input gradient), `BW` (weight gradient), `B` (both) or
    `UPD` (optimizer update) on chunks the compiler derives; `split` assigns
    microbatch numbers. Tag values are non-negative integers or strings.

    A backward chunk carries the same tags as the forward chunk it
    differentiates, so a filter `{PP = 1, PASS = "BW"}` selects it.

    Example:

    ```mlir
    %h = piper.annotate {PP = 0} -> tensor<4x16xf32> {
      %y = piper.annotate {EP = 1} -> tensor<4x16xf32> {
        ...
        piper.yield %e : tensor<4x16xf32>
      }
      piper.yield %y : tensor<4x16xf32>
    }
    ```

    **Constraints:**
    - At least one tag.
    - Tag names match `[A-Z][A-Z0-9_]*` and are not `PASS` or `MB`.
    - Tag values are non-negative integers (not `i1`) or strings other than
      `"*"`, which filters use as a wildcard.
    - A tag name is not already set by an enclosing `piper.annotate`.
    - A chunk nested in another has the same `pass` (or none, if the outer
      has none).
    - The region ends in `piper.yield` whose operand types match the results.
  }];
  let arguments = (ins DictionaryAttr:$tags,
                       OptionalAttr<Piper_PassKindAttr>:$pass);
  let results = (outs Variadic<AnyType>:$results);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    custom<Tags>($tags) (`pass` `=` `` $pass^)? (`->` type($results)^)? $body
    attr-dict
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// Tags of this op and of every enclosing piper.annotate, outermost
    /// first.
    ::llvm::SmallVector<::mlir::NamedAttribute> getAllTags();
  }];
}

//===----------------------------------------------------------------------===//
// YieldOp
//===----------------------------------------------------------------------===//

def Piper_YieldOp : Piper_Op<"yield", [
    Pure, Terminator, HasParent<"AnnotateOp">]> {
  let summary = "yields the results of a piper.annotate chunk";
  let description = [{
    Terminates the region of `piper.annotate`; its operands become the
    results of the enclosing annotation.

    Example:

    ```mlir
    piper.yield %a, %b : tensor<4xf32>, tensor<8xf32>
    ```

    **Constraints:**
    - Operand types equal the result types of the parent `piper.annotate`.
  }];
  let arguments = (ins Variadic<AnyType>:$operands);
  let assemblyFormat = "attr-dict ($operands^ `:` type($operands))?";
  let builders = [OpBuilder<(ins), [{ /* nothing to yield */ }]>];
}

//===----------------------------------------------------------------------===//
// VJPOp
//===----------------------------------------------------------------------===//

def Piper_VJPOp : Piper_Op<"vjp", [Pure, AttrSizedOperandSegments,
    Piper_DistributionRule<[
        "getDistributionRuleOp", "getDistributionQuery", "applyLocalForm"]>]> {
  let summary = "cotangents of some operands of a forward op";
  let description = [{
    The vector-Jacobian product of the forward op named by `op` (a piper NN
    op such as `piper.rmsnorm`), applied to the given forward operands
    (`primals`, in the forward op's operand order) and the cotangents of the
    forward op's results, restricted to the operands listed in `wrt`. The
    forward op's attributes are carried in `forward_attrs`. Autodiff emits
    one `piper.vjp` per differentiated operand so that input- and
    weight-gradient work stay separate; the interpreter and code generators
    execute it with the op's reference VJP.

    Example:

    ```mlir
    // dW of y = linear(x, W): the weight-gradient part (BW).
    %dw = piper.vjp "piper.linear" wrt [1] (%x, %w) cotangents (%dy)
        : (tensor<4x16xf32>, tensor<16x32xf32>), (tensor<4x32xf32>)
        -> tensor<16x32xf32>
    ```

    **Constraints:**
    - `op` names a registered piper operation.
    - `wrt` is non-empty, strictly increasing, and within the primals.
    - There is one result per `wrt` entry, of the type of that primal.
    - There is at least one cotangent.
  }];
  let arguments = (ins
    StrAttr:$op,
    DenseI64ArrayAttr:$wrt,
    Variadic<AnyType>:$primals,
    Variadic<AnyType>:$cotangents,
    DefaultValuedAttr<DictionaryAttr, "{}">:$forward_attrs
  );
  let results = (outs Variadic<AnyType>:$gradients);
  let assemblyFormat = [{
    $op `wrt` $wrt ` ` `(` $primals `)` `cotangents` ` ` `(` $cotangents `)`
    (`forward_attrs` $forward_attrs^)? attr-dict `:`
    `(` type($primals) `)` `,` `(` type($cotangents) `)` `->` type($gradients)
  }];
  let hasVerifier = 1;
}

#endif // PIPER_DIALECT_PIPER_IR_PIPEROPS_TD
