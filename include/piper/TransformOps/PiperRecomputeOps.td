//===- PiperRecomputeOps.td - transform.piper.recompute ----*- tablegen -*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_TRANSFORMOPS_PIPERRECOMPUTEOPS_TD
#define PIPER_TRANSFORMOPS_PIPERRECOMPUTEOPS_TD

include "mlir/Dialect/Transform/IR/TransformDialect.td"
include "mlir/Dialect/Transform/Interfaces/TransformInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def RecomputeOp : Op<Transform_Dialect, "piper.recompute", [
    DeclareOpInterfaceMethods<TransformOpInterface>,
    DeclareOpInterfaceMethods<MemoryEffectsOpInterface>]> {
  let summary = "activation recomputation: the backward re-runs the forward";
  let description = [{
    For every forward (`F`) node in `nodes`, the activations its backward
    nodes (`B`, or `BI` and `BW`) read are no longer kept past the forward:
    a new node `R{tags}` (pass `B`, attribute `recomputes = "F{tags}"`, the
    forward's device group) re-runs the forward ops from the chunk's saved
    inputs and feeds the backward. The forward stops returning what nothing
    else reads. R copies the temporal edges of the first backward node that
    reads it and that node waits for R, so the recomputed values live from
    R to the backward only. Nodes of other passes in the handle are skipped.

    With `ops`, only ops of those kinds (`piper.<kind>`, and reshapes of
    their results) are recomputed, the rest saved as before: `ops =
    ["attention"]` recomputes the attention outputs from the saved q, k and
    v (selective recompute). Recomputation is deterministic, so the step's
    losses and gradients are those of the plain DAG, bit for bit.

    Apply after `split`, `place`, `replicate`, `shard` and the schedule:
    a directive applied later would see R as a backward node.

    Example:

    ```mlir
    %f = transform.piper.match_nodes {PP = 0, PASS = "F"} in %root
        : (!transform.any_op) -> !transform.any_op
    %r = transform.piper.recompute %f ops ["attention"]
        : (!transform.any_op) -> !transform.any_op
    ```

    #### Return modes

    Fails (definitely), naming the node, when a payload op is not a DAG
    task, the handle holds no forward node, a forward node has no backward
    node reading its activations, it is already recomputed, an op kind names
    no piper op, or the selected ops compute nothing the backward reads.
    Consumes `nodes`; returns the R nodes.

    **Constraints:**
    - Each of `ops` is a piper op name without the `piper.` prefix.
  }];
  let arguments = (ins TransformHandleTypeInterface:$nodes,
                       DefaultValuedAttr<StrArrayAttr, "{}">:$ops);
  let results = (outs TransformHandleTypeInterface:$recomputes);
  let assemblyFormat = [{
    $nodes (`ops` $ops^)? attr-dict `:` functional-type(operands, results)
  }];
  let cppNamespace = "::mlir::piper";
}

#endif // PIPER_TRANSFORMOPS_PIPERRECOMPUTEOPS_TD
