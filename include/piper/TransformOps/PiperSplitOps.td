//===- PiperSplitOps.td - transform.piper ops --------------*- tablegen -*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_TRANSFORMOPS_PIPERSPLITOPS_TD
#define PIPER_TRANSFORMOPS_PIPERSPLITOPS_TD

include "mlir/Dialect/Transform/IR/TransformDialect.td"
include "mlir/Dialect/Transform/Interfaces/TransformInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def SplitOp : Op<Transform_Dialect, "piper.split", [
    DeclareOpInterfaceMethods<TransformOpInterface>,
    DeclareOpInterfaceMethods<MemoryEffectsOpInterface>]> {
  let summary = "microbatches: copies a contiguous sub-DAG `count` times";
  let description = [{
    Replaces the forward and backward `piper.task` nodes in `nodes` by
    `count` copies each, tagged `MB = 0 .. count-1` and named accordingly
    (`F{PP=0,MB=1}`). Every copy calls the same outlined body: the model is
    written at microbatch size, and the step function's data arguments are
    widened to the global batch (`count` times as many rows along `dim`).
    Then:

    - each data argument feeds copy `i` through a `piper.microbatch` node
      holding its `i`-th contiguous slice, so samples are consumed in the
      same order whatever the strategy;
    - data edges among the matched nodes connect the copies of one
      microbatch; parameters and optimizer state are shared;
    - each value the copies hand to the rest of the step (a gradient on its
      way to an update, the loss) becomes a `piper.accumulate` node summing
      the copies in microbatch order times `1/count`: every copy's loss is
      the mean over its rows, so this gives the global-batch loss and
      gradients of the unsplit step.

    Update nodes in `nodes` are left alone: they run once per step on the
    accumulated gradients. Returns the copies, microbatch-major.

    Example:

    ```mlir
    %work = transform.piper.match_nodes {} in %root
        : (!transform.any_op) -> !transform.any_op
    %copies = transform.piper.split %work into 4 microbatches
        : (!transform.any_op) -> !transform.any_op
    ```

    #### Return modes

    Fails (definitely), naming the nodes involved, when a payload op is not
    a DAG task, the handle holds no forward or backward node, a node is
    already split, the matched nodes are not contiguous (a path between two
    of them leaves the set), a forward value leaves the copies (it would
    need concatenating, not summing), a data argument is also used by a node
    that is not split, or communication was already added (apply `split`
    before `place`, `replicate` and `shard`). Consumes the `nodes` handle.

    **Constraints:**
    - `count` is between 1 and 256 (docs/Limits.md) and `dim` is
      non-negative.
  }];
  let arguments = (ins TransformHandleTypeInterface:$nodes, I64Attr:$count,
                       DefaultValuedAttr<I64Attr, "0">:$dim);
  let results = (outs TransformHandleTypeInterface:$copies);
  let assemblyFormat = [{
    $nodes `into` $count `microbatches` (`along` $dim^)? attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
  let cppNamespace = "::mlir::piper";
}

def SplitBackwardOp : Op<Transform_Dialect, "piper.split_backward", [
    DeclareOpInterfaceMethods<TransformOpInterface>,
    DeclareOpInterfaceMethods<MemoryEffectsOpInterface>]> {
  let summary = "splits fused backward nodes into input- and weight-gradient";
  let description = [{
    Replaces every `B` node in `nodes` (as `--piper-build-dag=fuse-backward`
    makes them: a body that calls the chunk's outlined BI body, then its BW
    body) by a `BI` node calling the first and a `BW` node calling the
    second, named `BI{...}` and `BW{...}` with the same tags, microbatch and
    device group. What BI hands to BW becomes a data edge; zero-bubble
    schedules can then run BW later. Temporal edges to the B node now wait
    for both halves. Nodes of other passes in the handle are left alone
    (`--piper-build-dag` without `fuse-backward` already splits every
    backward). Returns the new nodes, BI then BW per split node.

    Example:

    ```mlir
    %b = transform.piper.match_nodes {PASS = "B"} in %root
        : (!transform.any_op) -> !transform.any_op
    %parts = transform.piper.split_backward %b
        : (!transform.any_op) -> !transform.any_op
    ```

    #### Return modes

    Fails (definitely) when a payload op is not a DAG task, or a B node's
    body is not the two calls `--piper-build-dag=fuse-backward` emits,
    naming the node. Consumes the `nodes` handle.
  }];
  let arguments = (ins TransformHandleTypeInterface:$nodes);
  let results = (outs TransformHandleTypeInterface:$parts);
  let assemblyFormat = [{
    $nodes attr-dict `:` functional-type(operands, results)
  }];
  let cppNamespace = "::mlir::piper";
}

#endif // PIPER_TRANSFORMOPS_PIPERSPLITOPS_TD
