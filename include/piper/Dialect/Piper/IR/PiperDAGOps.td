//===- PiperDAGOps.td - The global training DAG ------------*- tablegen -*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_DIALECT_PIPER_IR_PIPERDAGOPS_TD
#define PIPER_DIALECT_PIPER_IR_PIPERDAGOPS_TD

include "piper/Dialect/Piper/IR/PiperAttrs.td"
include "mlir/IR/RegionKindInterface.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Piper_DAGOp : Piper_Op<"dag", [
    SingleBlockImplicitTerminator<"DAGYieldOp">,
    DeclareOpInterfaceMethods<RegionKindInterface>]> {
  let summary = "the global training DAG of one training step";
  let description = [{
    Holds every node of one training step: `piper.task` nodes (a chunk's
    forward, input-gradient, weight-gradient or update work) and, once
    directives place and replicate them, communication nodes. The region is
    a graph region: the order of nodes carries no meaning. Data edges are
    SSA uses; temporal edges are the `after` lists of the nodes. The values
    yielded are the step's results (loss, updated parameters and state).

    Example:

    ```mlir
    %loss = piper.dag -> tensor<f64> {
      %h = piper.task "F{PP=0}" @step.F.PP0(%x, %w) {tags = {PP = 0}, pass = F}
          : (tensor<2x8xf64>, tensor<8x4xf64>) -> tensor<2x4xf64>
      %l = piper.task "F{PP=1}" @step.F.PP1(%h) {tags = {PP = 1}, pass = F,
          after = ["F{PP=0}"]} : (tensor<2x4xf64>) -> tensor<f64>
      piper.dag_yield %l : tensor<f64>
    }
    ```

    **Constraints:**
    - The region holds only nodes (`piper.task`, `piper.transfer`,
      `piper.collective`, `piper.microbatch`, `piper.accumulate`) and the
      terminator.
    - Node names are unique within the DAG.
    - Every `after` entry names a node of the DAG other than the node itself.
    - The yielded types are the result types.
  }];
  let results = (outs Variadic<AnyType>:$results);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "(`->` type($results)^)? $body attr-dict";
  let hasVerifier = 1;
}

def Piper_DAGYieldOp : Piper_Op<"dag_yield", [
    Pure, Terminator, HasParent<"DAGOp">]> {
  let summary = "the results of a training-step DAG";
  let description = [{
    Terminates `piper.dag`; its operands are the DAG's results.

    Example:

    ```mlir
    piper.dag_yield %loss, %w_new : tensor<f64>, tensor<8x4xf64>
    ```

    **Constraints:**
    - Operand types equal the result types of the parent `piper.dag`.
  }];
  let arguments = (ins Variadic<AnyType>:$operands);
  let assemblyFormat = "attr-dict ($operands^ `:` type($operands))?";
  let builders = [OpBuilder<(ins), [{ /* nothing to yield */ }]>];
}

def Piper_TaskOp : Piper_Op<"task", [
    DeclareOpInterfaceMethods<SymbolUserOpInterface>,
    HasParent<"DAGOp">]> {
  let summary = "a compute node: one chunk's work, outlined into a function";
  let description = [{
    Runs the outlined chunk body `callee` on its operands. `tags` and `pass`
    are those of the chunk (directives select nodes by them); `name` is unique
    in the DAG and identifies the node in temporal edges and diagnostics.
    Microbatch copies and replicas of a chunk call the same body: the DAG
    grows with stages x passes x microbatches, not with the model.

    Example:

    ```mlir
    %dx = piper.task "BI{PP=1}" @step.BI.PP1(%a, %dy) {tags = {PP = 1},
        pass = BI, after = ["F{PP=1}"]}
        : (tensor<2x4xf64>, tensor<2x4xf64>) -> tensor<2x4xf64>
    ```

    `devices`, set by `transform.piper.place`, is the device group the node
    runs on: mesh axis -> coordinate (`{pp = 1}`); axes it does not name are
    symmetric (every coordinate runs the same node), so replicas are never
    expanded.

    `overlap`, set by `transform.piper.overlap` and `transform.piper.schedule`,
    names the task this one runs concurrently with on its device group (as
    DualPipe overlaps a forward with a backward); `sm_share` is the fraction
    of the device's SMs it gets meanwhile; what the pair leaves (1 minus
    both shares) is reserved for communication kernels.

    **Constraints:**
    - `callee` is a `func.func` in the enclosing module whose argument and
      result types are the task's operand and result types.
    - `devices` maps axis names to non-negative integers; when the module
      has exactly one mesh, each names one of its axes and is below that
      axis's size.
  }];
  let arguments = (ins StrAttr:$name, FlatSymbolRefAttr:$callee,
                       Variadic<AnyType>:$inputs, DictionaryAttr:$tags,
                       Piper_PassKindAttr:$pass,
                       DefaultValuedAttr<StrArrayAttr, "{}">:$after,
                       OptionalAttr<DictionaryAttr>:$devices,
                       OptionalAttr<StrAttr>:$overlap,
                       OptionalAttr<F64Attr>:$sm_share);
  let results = (outs Variadic<AnyType>:$outputs);
  // Tasks are created unscheduled; `overlap` and `sm_share` come later.
  let builders = [
    OpBuilder<(ins "TypeRange":$outputs, "StringAttr":$name,
                   "FlatSymbolRefAttr":$callee, "ValueRange":$inputs,
                   "DictionaryAttr":$tags, "PassKindAttr":$pass,
                   "ArrayAttr":$after, "DictionaryAttr":$devices), [{
      build($_builder, $_state, outputs, name, callee, inputs, tags, pass,
            after, devices, /*overlap=*/nullptr, /*sm_share=*/nullptr);
    }]>
  ];
  let assemblyFormat = [{
    $name $callee `(` $inputs `)` attr-dict `:` functional-type($inputs, $outputs)
  }];
}

def Piper_TransferOp : Piper_Op<"transfer", [
    Pure, AllTypesMatch<["value", "result"]>, HasParent<"DAGOp">]> {
  let summary = "a data edge between device groups: a send/recv pair";
  let description = [{
    Moves `value` from the devices `from` to the devices `to` (mesh axis ->
    coordinate, as a task's `devices`) on the communication stream
    `stream`. `transform.piper.place` inserts one wherever a data edge
    crosses device groups; partitioning lowers it to a send on the source
    group and the matching recv on the destination group. Its value is its
    operand's.

    Example:

    ```mlir
    %h1 = piper.transfer "F{PP=0}#0->{pp=1}" %h from {pp = 0} to {pp = 1}
        stream "pp" : tensor<2x16xf32>
    ```

    **Constraints:**
    - `from` and `to` differ.
    - The result has the operand's type.
  }];
  let arguments = (ins StrAttr:$name, AnyType:$value, DictionaryAttr:$from,
                       DictionaryAttr:$to, StrAttr:$stream);
  let results = (outs AnyType:$result);
  let assemblyFormat = [{
    $name $value `from` $from `to` $to `stream` $stream attr-dict `:`
    type($value)
  }];
  let hasVerifier = 1;
}

def Piper_CollectiveOp : Piper_Op<"collective", [
    Pure, AllTypesMatch<["value", "result"]>,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "a collective over mesh axes, on a stream";
  let description = [{
    Communication among the devices that differ only in their coordinates
    along `axes` of `mesh` (every such group does the same, symmetrically),
    on the stream `stream`. In the global view of the DAG a value stands for
    all its replicas, so the collective's value is its operand's; `kind`
    says what moves: `all_reduce` and `reduce_scatter` sum gradients over
    data-parallel replicas (ZeRO-0/1 and ZeRO-2/3), `all_gather` collects a
    ZeRO-3 parameter before use (or a ZeRO-1/2 parameter after its sharded
    update), `all_to_all` moves tokens between experts.
    `devices` is the device group it runs on, as for tasks. Collectives with
    the same `bucket` number (set by `replicate`'s `bucket_size`) are issued
    together as one fused call.

    A collective is either a node of a `piper.dag` (between tasks, as
    `transform.piper.replicate` adds them) or an op inside an outlined task
    body (as `transform.piper.shard` adds the all-to-alls of an expert
    block and the all-reduces of tensor parallelism); there it runs on the
    devices of whichever task calls the body, once per call.

    Example:

    ```mlir
    %g = piper.collective "all_reduce(BW{PP=0}#0)" all_reduce %dw over ["dp"]
        of @mesh stream "dp_grad" : tensor<8x4xf32>
    ```

    **Constraints:**
    - `mesh` is a `piper.mesh`, and `axes` are distinct axes of it.
    - The parent is a `piper.dag`, or the op is inside a function body
      outside any `piper.dag`; only a DAG node has `devices`.
  }];
  let arguments = (ins StrAttr:$name, Piper_CollectiveKindAttr:$kind,
                       AnyType:$value, StrArrayAttr:$axes,
                       FlatSymbolRefAttr:$mesh, StrAttr:$stream,
                       OptionalAttr<DictionaryAttr>:$devices,
                       OptionalAttr<I64Attr>:$bucket);
  let results = (outs AnyType:$result);
  let assemblyFormat = [{
    $name `` $kind $value `over` $axes `of` $mesh `stream` $stream attr-dict `:`
    type($value)
  }];
  let hasVerifier = 1;
}

#endif // PIPER_DIALECT_PIPER_IR_PIPERDAGOPS_TD
