//===- PiperTransformOps.td - transform.piper.* directives -*- tablegen -*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_TRANSFORMOPS_PIPERTRANSFORMOPS_TD
#define PIPER_TRANSFORMOPS_PIPERTRANSFORMOPS_TD

include "mlir/Dialect/Transform/IR/TransformDialect.td"
include "mlir/Dialect/Transform/Interfaces/TransformInterfaces.td"
include "mlir/Dialect/Transform/IR/TransformTypes.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/IR/OpBase.td"

def MatchChunksOp : Op<Transform_Dialect, "piper.match_chunks", [
    DeclareOpInterfaceMethods<TransformOpInterface>,
    DeclareOpInterfaceMethods<MemoryEffectsOpInterface>]> {
  let summary = "selects chunks by a tag filter";
  let description = [{
    Returns a handle to the outermost `piper.annotate` chunks under the
    payload of `root` whose tags match `filter`, in program order. A chunk's
    tags are its own, those of every enclosing chunk, and `PASS` (its pass,
    `F` when none is set). Filter entries must all hold: `KEY = value`
    requires that value, `KEY = "*"` only that the tag is present; `PASS =
    "B"` also matches the `BI` and `BW` halves of a split backward. The empty
    filter `{}` matches every outermost chunk. This is how every Piper
    directive selects the nodes it acts on.

    Example:

    ```mlir
    %bw = transform.piper.match_chunks {PP = 1, PASS = "BW"} in %module
        : (!transform.any_op) -> !transform.any_op
    ```

    #### Return modes

    Emits a silenceable failure naming the filter when it matches no chunk:
    a directive that silently selects nothing is a mistake, not a no-op.
    Only reads the payload and the `root` handle.

    **Constraints:**
    - Filter keys are upper-case identifiers.
    - Filter values are non-negative integers, strings or `"*"`; `PASS`
      takes `F`, `B`, `BI`, `BW`, `UPD` or `"*"`.
  }];
  let arguments = (ins TransformHandleTypeInterface:$root,
                       DictionaryAttr:$filter);
  let results = (outs TransformHandleTypeInterface:$chunks);
  let assemblyFormat = [{
    $filter `in` $root attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
  let cppNamespace = "::mlir::piper";
}

def MatchNodesOp : Op<Transform_Dialect, "piper.match_nodes", [
    DeclareOpInterfaceMethods<TransformOpInterface>,
    DeclareOpInterfaceMethods<MemoryEffectsOpInterface>]> {
  let summary = "selects nodes of the global training DAG by a tag filter";
  let description = [{
    Returns a handle to the `piper.task` nodes under the payload of `root`
    whose tags and pass match `filter`, in IR order, with the same filter
    semantics as `transform.piper.match_chunks` (a node's tags are its
    chunk's; `PASS = "B"` matches BI and BW nodes). The DAG directives act
    on these handles.

    Example:

    ```mlir
    %bw = transform.piper.match_nodes {PP = "*", PASS = "BW"} in %module
        : (!transform.any_op) -> !transform.any_op
    ```

    #### Return modes

    Emits a silenceable failure naming the filter when it matches no node.
    Only reads the payload and the `root` handle.

    **Constraints:**
    - As for `transform.piper.match_chunks`.
  }];
  let arguments = (ins TransformHandleTypeInterface:$root,
                       DictionaryAttr:$filter);
  let results = (outs TransformHandleTypeInterface:$nodes);
  let assemblyFormat = [{
    $filter `in` $root attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
  let cppNamespace = "::mlir::piper";
}

def PlaceOp : Op<Transform_Dialect, "piper.place", [
    DeclareOpInterfaceMethods<TransformOpInterface>,
    DeclareOpInterfaceMethods<MemoryEffectsOpInterface>]> {
  let summary = "places DAG nodes on a device group of a mesh";
  let description = [{
    Sets the device group of the `piper.task` nodes in `nodes` to the mesh
    coordinates `devices` (axis -> coordinate, e.g. `{pp = 1}`); axes not
    named stay symmetric: every coordinate along them runs the node, so
    data/expert/tensor replicas are never expanded. Every data edge between
    two placed nodes on different groups then gets a `piper.transfer` node
    (a send/recv pair) on the stream `stream`; one transfer serves all
    consumers of a value in the same group. Returns the transfers created.

    Example:

    ```mlir
    %s1 = transform.piper.match_nodes {PP = 1} in %root
        : (!transform.any_op) -> !transform.any_op
    %xfers = transform.piper.place %s1 on @mesh {pp = 1} stream "pp"
        : (!transform.any_op) -> !transform.any_op
    ```

    #### Return modes

    Fails (definitely) when the mesh or an axis does not exist, a coordinate
    is out of range, a payload op is not a DAG node, or a node is already
    placed elsewhere (conflicting directives); each diagnostic names the
    node or axis. Modifies the payload; only reads the `nodes` handle.

    **Constraints:**
    - `devices` maps axis names to non-negative integers.
  }];
  let arguments = (ins TransformHandleTypeInterface:$nodes,
                       FlatSymbolRefAttr:$mesh, DictionaryAttr:$devices,
                       DefaultValuedStrAttr<StrAttr, "pp">:$stream);
  let results = (outs TransformHandleTypeInterface:$transfers);
  let assemblyFormat = [{
    $nodes `on` $mesh $devices (`stream` $stream^)? attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
  let cppNamespace = "::mlir::piper";
}

def ReplicateOp : Op<Transform_Dialect, "piper.replicate", [
    DeclareOpInterfaceMethods<TransformOpInterface>,
    DeclareOpInterfaceMethods<MemoryEffectsOpInterface>]> {
  let summary = "data parallelism over mesh axes, with ZeRO stages";
  let description = [{
    Replicates the nodes in `nodes` over `axes` of `mesh` (data
    parallelism): replicas stay symbolic, and the directive adds the
    communication that keeps them consistent:

    - every gradient flowing into a matched `UPD` node is summed over the
      axes by a `piper.collective` on `grad_stream`: `all_reduce` for
      `zero = 0`; `reduce_scatter` for 1, 2 and 3, after which each replica
      updates only its shard of the parameter with its shard of the
      optimizer state;
    - with `zero` 1 and 2 (parameters replicated, optimizer state sharded),
      each updated parameter is then collected by an `all_gather` on
      `param_stream`; ZeRO 1 and 2 move the same bytes (2 (N-1)/N of the
      parameters, as plain data parallelism) and differ in gradient memory;
    - with `zero = 3`, every parameter whose value a matched F, B, BI or BW
      node needs is first collected by an `all_gather` on `param_stream`,
      one per such node (the gathered copy is freed after the node); a node
      that passes the parameter only to VJPs that do not need its value
      (the weight gradient of a linear layer) does not gather it.

    With `bucket_size` > 0 (bytes), gradient collectives of one device group
    are packed, in the order their gradients are produced, into buckets of
    at most that many bytes (a larger gradient fills a bucket alone); the
    collectives of a bucket carry the same `bucket` number and are issued
    as one fused call.

    The stage and the axes are recorded on every updated parameter's
    `#piper.placement` (`replicated`, `zero`), replacing the model's stage:
    memory planning and lowering read them there.

    Returns the collectives created.

    `where`, a tag filter, restricts the directive to the parameters and
    gradients used inside the nodes' bodies in places whose tags match (the
    node's tags plus those of the chunks nested around the use): in a MoE
    model whose experts are split over `ep`, dense parameters are
    replicated over `["dp", "ep"]` with `where {EP = "none"}` and expert
    parameters over `["dp"]` with `where {EP = "*"}`.

    Example:

    ```mlir
    %all = transform.piper.match_nodes {} in %root
        : (!transform.any_op) -> !transform.any_op
    %c = transform.piper.replicate %all over @mesh ["dp"] zero = 3
        : (!transform.any_op) -> !transform.any_op
    %d = transform.piper.replicate %all over @mesh ["dp", "ep"]
        where {EP = "none"} : (!transform.any_op) -> !transform.any_op
    ```

    #### Return modes

    Fails (definitely) when the mesh or an axis does not exist, an axis is
    listed twice, a payload op is not a DAG node, or a parameter used by a
    matched node is already split over one of the axes; each diagnostic
    names the axis, node or parameter. Modifies the payload.

    **Constraints:**
    - `zero` is 0, 1, 2 or 3; `axes` is not empty.
    - `where` is a well-formed tag filter.
    - `bucket_size` is non-negative.
  }];
  let arguments = (ins TransformHandleTypeInterface:$nodes,
                       FlatSymbolRefAttr:$mesh, StrArrayAttr:$axes,
                       DefaultValuedAttr<I64Attr, "0">:$zero,
                       DefaultValuedStrAttr<StrAttr, "dp_grad">:$grad_stream,
                       DefaultValuedStrAttr<StrAttr, "dp_param">:$param_stream,
                       OptionalAttr<DictionaryAttr>:$where,
                       DefaultValuedAttr<I64Attr, "0">:$bucket_size);
  let results = (outs TransformHandleTypeInterface:$collectives);
  let assemblyFormat = [{
    $nodes `over` $mesh $axes (`zero` `=` $zero^)? (`where` $where^)?
    (`bucket_size` `=` $bucket_size^)? attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
  let cppNamespace = "::mlir::piper";
}

include "piper/TransformOps/PiperSplitOps.td"
include "piper/TransformOps/PiperShardOps.td"
include "piper/TransformOps/PiperScheduleOps.td"
include "piper/TransformOps/PiperBalanceOps.td"
include "piper/TransformOps/PiperRecomputeOps.td"

#endif // PIPER_TRANSFORMOPS_PIPERTRANSFORMOPS_TD
