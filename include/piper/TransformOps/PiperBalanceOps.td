//===- PiperBalanceOps.td - transform.piper.balance ------*- tablegen -*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_TRANSFORMOPS_PIPERBALANCEOPS_TD
#define PIPER_TRANSFORMOPS_PIPERBALANCEOPS_TD

include "mlir/Dialect/Transform/IR/TransformDialect.td"
include "mlir/Dialect/Transform/Interfaces/TransformInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def BalanceOp : Op<Transform_Dialect, "piper.balance", [
    DeclareOpInterfaceMethods<TransformOpInterface>,
    DeclareOpInterfaceMethods<MemoryEffectsOpInterface>]> {
  let summary = "assigns a model's layers to pipeline stages by the cost model";
  let description = [{
    Re-cuts the training step under `root` (the model, before autodiff)
    into `stages` top-level `{PP = s}` chunks that minimise the cost of the
    slowest stage. The embedding, every layer, the LM head and the loss
    count at what they cost: a stage may start before any op that exactly
    one value crosses into (before a layer, between a layer's attention and
    its MLP, before the final norm or the head). Existing PP chunks are
    inlined first, so a model generated with any `--pp` can be rebalanced.

    The cost of a stage per step (`cost = "roofline"`, the default): its
    kernels' roofline times on `device` (forward, and twice that for the
    backward) times `microbatches`, plus the expert all-to-alls of its
    dispatch and combine ops over `expert_axes` per microbatch, plus a
    reduce-scatter and an all-gather of every parameter it reads over
    `grad_axes` per step (data parallel, as ZeRO-1; parameters split over a
    grad axis, experts, pay none). `cost = "flops"` counts forward and
    backward FLOPs only. With `memory_limit` (bytes), every stage must hold
    4 x its parameters' bytes (weight, gradient, two moments) plus its
    forward activations times the microbatches 1F1B keeps in flight there
    (`stages - s`, at most `microbatches`).

    With `report`, a remark lists each stage: its first op's name, its cost
    and its estimated bytes.

    Run it before `--piper-autodiff`: as `__transform_model`, the named
    sequence `piper-compile` applies to the model before the DAG is built
    (`piper-opt --transform-interpreter=entry-point=__transform_model`).

    Example:

    ```mlir
    transform.named_sequence @__transform_model(%model: !transform.any_op {transform.readonly}) {
      transform.piper.balance %model into 8 stages
          {device = "a100", microbatches = 16, grad_axes = ["ep"], expert_axes = ["ep"]}
          : !transform.any_op
      transform.yield
    }
    ```

    #### Return modes

    Fails (definitely) when a stage cannot be formed: more stages than
    places to cut, an unknown device or mesh axis, PP chunks nested in other
    chunks, or no split within `memory_limit`. Modifies the payload; only
    reads the handle.

    **Constraints:**
    - `stages` is at least 1.
    - `cost` is `"roofline"` or `"flops"`.
    - `microbatches` and `memory_limit`, when given, are positive.
  }];
  let arguments = (ins TransformHandleTypeInterface:$root,
                       I64Attr:$stages,
                       DefaultValuedStrAttr<StrAttr, "roofline">:$cost,
                       DefaultValuedStrAttr<StrAttr, "a100">:$device,
                       OptionalAttr<I64Attr>:$microbatches,
                       DefaultValuedAttr<StrArrayAttr, "{}">:$grad_axes,
                       DefaultValuedAttr<StrArrayAttr, "{}">:$expert_axes,
                       OptionalAttr<I64Attr>:$memory_limit,
                       UnitAttr:$report);
  let assemblyFormat = "$root `into` $stages `stages` attr-dict `:` type($root)";
  let hasVerifier = 1;
  let cppNamespace = "::mlir::piper";
}

#endif // PIPER_TRANSFORMOPS_PIPERBALANCEOPS_TD
