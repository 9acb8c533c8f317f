//===- PiperMicrobatchOps.td - microbatch nodes of the DAG -*- tablegen -*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_DIALECT_PIPER_IR_PIPERMICROBATCHOPS_TD
#define PIPER_DIALECT_PIPER_IR_PIPERMICROBATCHOPS_TD

include "piper/Dialect/Piper/IR/PiperAttrs.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Piper_MicrobatchOp : Piper_Op<"microbatch", [Pure, HasParent<"DAGOp">]> {
  let summary = "one microbatch of a global-batch data value";
  let description = [{
    The `index`-th of `count` equal, contiguous slices of `value` along
    dimension `dim`. `transform.piper.split` inserts one per data argument
    and microbatch: the step function takes the global batch, and each
    microbatch copy of a node reads its own rows, so the order in which
    samples are consumed never depends on the strategy. `name` identifies
    the node in the DAG.

    Example:

    ```mlir
    %x1 = piper.microbatch "x[MB=1]" %x[1 of 2] : tensor<8x16xf64> -> tensor<4x16xf64>
    ```

    **Constraints:**
    - `0 <= index < count`, `0 <= dim < rank`.
    - The result has the operand's element type and shape, except along
      `dim`, where the operand is `count` times as large.
  }];
  let arguments = (ins StrAttr:$name, AnyRankedTensor:$value,
                       I64Attr:$index, I64Attr:$count,
                       DefaultValuedAttr<I64Attr, "0">:$dim);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $name $value `[` $index `of` $count `]` (`along` $dim^)? attr-dict `:`
    type($value) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Piper_AccumulateOp : Piper_Op<"accumulate", [Pure, HasParent<"DAGOp">]> {
  let summary = "the scaled sum of microbatch contributions, in order";
  let description = [{
    `scale * (values[0] + values[1] + ...)`, summed left to right so the
    reassociation is fixed and runs repeat exactly. `transform.piper.split`
    inserts one for every value its microbatch copies hand to the rest of
    the step: each parameter's gradient and the loss, with `scale = 1/n`
    (every copy's loss is a mean over its rows, so the mean of the copies
    is the global-batch loss, and the same holds for the gradients).

    Example:

    ```mlir
    %g = piper.accumulate "accumulate(BW{PP=0}#0)" %g0, %g1 scale 5.000000e-01
        : (tensor<8x4xf64>, tensor<8x4xf64>) -> tensor<8x4xf64>
    ```

    **Constraints:**
    - At least one value; all values and the result have one type.
  }];
  let arguments = (ins StrAttr:$name, Variadic<AnyRankedTensor>:$values,
                       F64Attr:$scale);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $name $values `scale` $scale attr-dict `:` functional-type($values, $result)
  }];
  let hasVerifier = 1;
}

#endif // PIPER_DIALECT_PIPER_IR_PIPERMICROBATCHOPS_TD
