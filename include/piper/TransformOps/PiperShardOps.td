//===- PiperShardOps.td - transform.piper.shard ------------*- tablegen -*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_TRANSFORMOPS_PIPERSHARDOPS_TD
#define PIPER_TRANSFORMOPS_PIPERSHARDOPS_TD

include "mlir/Dialect/Transform/IR/TransformDialect.td"
include "mlir/Dialect/Transform/Interfaces/TransformInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def ShardOp : Op<Transform_Dialect, "piper.shard", [
    DeclareOpInterfaceMethods<TransformOpInterface>,
    DeclareOpInterfaceMethods<MemoryEffectsOpInterface>]> {
  let summary = "expert or tensor parallelism over a mesh axis";
  let description = [{
    Shards the work of the `piper.task` nodes in `nodes` over one axis of
    `mesh`. Replicas stay symbolic: the directive marks the parameters it
    splits (their `#piper.param` placement on the step function) and adds
    the communication inside the nodes' outlined bodies as
    `piper.collective` ops on `stream`. In the global view collectives are
    identities, so a sharded DAG computes the same step. Returns the
    collectives created.

    `expert` (expert parallelism): every expert block (a chunk tagged `EP`)
    in the bodies gets an `all_to_all` on each edge into the expert
    computation (the result of `piper.dispatch`; in BI, the cotangent from
    the `piper.combine` VJP) and out of it (the result of
    `piper.expert_ffn`; in BI, the cotangent from its input VJP). The
    expert weights are split on dim 0 (the experts) over the axis. BW
    bodies need no communication: their inputs already live with the
    experts.

    `tensor` (Megatron tensor parallelism): parameters whose names match a
    `column` glob are split on dim 1 (the output features of a
    `piper.linear` weight `[in, out]`), those matching a `row` glob on dim
    0. The sum of a row-parallel linear's partial outputs is an
    `all_reduce` after it in F; the sum of a column-parallel linear's
    partial input gradients an `all_reduce` after its input VJP in BI. With
    `sequence_parallel`, activations between the parallel regions are split
    along the tokens: the all-reduces become `reduce_scatter`s and each
    column-parallel input (in F and BW) and row-parallel output cotangent
    (in BI and BW) is first collected by an `all_gather`.

    Example:

    ```mlir
    %experts = transform.piper.shard %nodes expert over @mesh ["ep"]
        : (!transform.any_op) -> !transform.any_op
    %tp = transform.piper.shard %nodes tensor over @mesh ["tp"]
        column ["layers.*.attn.w[qkv]", "layers.*.mlp.w_{gate,up}"]
        row ["layers.*.attn.wo", "layers.*.mlp.w_down"] sequence_parallel
        : (!transform.any_op) -> !transform.any_op
    ```

    #### Return modes

    Fails (definitely), naming the node, parameter or pattern, when the
    mesh or axis does not exist, a payload op is not a DAG node, a node is
    placed on one coordinate of the axis, a parameter is already split
    over the axis (or replicated over it), a size is not divisible by the
    axis (experts, a linear's width, attention heads), no node has an
    expert block (`expert`), a pattern matches no parameter used by the
    nodes or a parameter matches both a column and a row pattern
    (`tensor`), or an expert block was already sharded. Modifies the
    payload; only reads the `nodes` handle.

    **Constraints:**
    - The mode is `expert` or `tensor`; `axes` holds exactly one axis.
    - `column`, `row` and `sequence_parallel` are given only with
      `tensor`, and `tensor` needs at least one pattern.
  }];
  let arguments = (ins TransformHandleTypeInterface:$nodes,
                       StrAttr:$mode, FlatSymbolRefAttr:$mesh,
                       StrArrayAttr:$axes,
                       OptionalAttr<StrArrayAttr>:$column,
                       OptionalAttr<StrArrayAttr>:$row,
                       UnitAttr:$sequence_parallel,
                       OptionalAttr<StrAttr>:$stream);
  let results = (outs TransformHandleTypeInterface:$collectives);
  let assemblyFormat = [{
    $nodes custom<ShardMode>($mode) `over` $mesh $axes
    (`column` $column^)? (`row` $row^)?
    (`sequence_parallel` $sequence_parallel^)? (`stream` $stream^)? attr-dict
    `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
  let cppNamespace = "::mlir::piper";
  let extraClassDeclaration = [{
    /// The mode is a bare keyword (`expert` or `tensor`).
    static ::mlir::ParseResult parseShardMode(::mlir::OpAsmParser &parser,
                                              ::mlir::StringAttr &mode);
    static void printShardMode(::mlir::OpAsmPrinter &printer,
                               ::mlir::Operation *op, ::mlir::StringAttr mode);
    /// The stream collectives run on: `stream`, or the axis name.
    ::llvm::StringRef getStreamName() {
      return getStream() ? *getStream() : getAxisName();
    }
    ::llvm::StringRef getAxisName() {
      return ::llvm::cast<::mlir::StringAttr>(getAxes()[0]).getValue();
    }
  }];
}

#endif // PIPER_TRANSFORMOPS_PIPERSHARDOPS_TD
