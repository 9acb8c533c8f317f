//===- Passes.td - Piper passes ----------------------------*- tablegen -*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_DIALECT_PIPER_TRANSFORMS_PASSES_TD
#define PIPER_DIALECT_PIPER_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def PiperPrintSummary : Pass<"piper-print-summary", "::mlir::ModuleOp"> {
  let summary = "Print the meshes, placements and chunk tags of a module";
  let description = [{
    Prints a readable summary of a Piper model to standard output without
    changing it: every mesh with its device count and per-axis links, every
    placed function argument and result with its per-device shard shape and
    bytes (ZeRO-3 divides parameter storage over the replicated axes), and
    the tree of `piper.annotate` chunks with their full tags, the number of
    top-level operations in each and the number of chunks directly inside.

    Example:

    ```
    $ piper-opt --piper-print-summary model.mlir -o /dev/null
    mesh @cluster: 8 devices
      axis dp: size 2, efa, 50 GB/s, 10 us
      ...
    function @train_step
      param "stage0.w_in" normal(0.02) (arg 0) tensor<16x32xf32> #piper.placement<...>
        per device: tensor<16x32xf32>, 2048 bytes; ZeRO-1 shards optimizer state 1/2
      chunk {PP = 0}: 5 ops
    ```

    **Options:** none.
  }];
}

def PiperAutodiff : Pass<"piper-autodiff", "::mlir::ModuleOp"> {
  let summary = "Append the backward pass, split into BI and BW chunks";
  let description = [{
    Differentiates every function that has `piper.param` arguments and
    returns a single scalar loss. Afterwards the function returns the loss
    followed by the gradient of each parameter in argument order; gradient
    results carry `piper.grad = "<parameter name>"`.

    The backward of each forward chunk (`piper.annotate`) becomes two chunks
    with the same tags: `pass = BI` computes what earlier chunks need (the
    cotangents of data-dependent values, i.e. input gradients) and
    `pass = BW` everything that only parameter gradients need (weight
    gradients and their accumulation). Zero-bubble and DualPipe schedules
    run the two at different times. Linear ops (add, sub, mul, reshape,
    transpose) differentiate into piper ops; every other op into one
    `piper.vjp` per differentiated operand.

    Example: for `%y = piper.linear %x, %w` inside `{PP = 0}` where `%x`
    depends on data, `piper.vjp "piper.linear" wrt [0]` lands in
    `piper.annotate {PP = 0} pass = BI` and `wrt [1]` in `pass = BW`.

    **Options:** none.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

#endif // PIPER_DIALECT_PIPER_TRANSFORMS_PASSES_TD
