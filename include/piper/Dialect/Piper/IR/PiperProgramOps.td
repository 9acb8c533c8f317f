//===- PiperProgramOps.td - per-device programs ------------*- tablegen -*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The device level: one `piper.program` per distinct device role, an ordered
// list of instructions on explicit streams. `--piper-partition` produces it
// from a scheduled DAG; `--piper-verify-programs` checks a set of programs
// together; the simulator and the runtime execute it.
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_DIALECT_PIPER_IR_PIPERPROGRAMOPS_TD
#define PIPER_DIALECT_PIPER_IR_PIPERPROGRAMOPS_TD

include "piper/Dialect/Piper/IR/PiperAttrs.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/IR/OpAsmInterface.td"

def Piper_ProgramOp : Piper_Op<"program", [
    Symbol, IsolatedFromAbove, NoTerminator, SingleBlock, NoRegionArguments,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "the instruction list of one device role";
  let description = [{
    What every device of one role runs in one training step. A role is a
    device group: mesh axis -> coordinate (`{pp = 1}`). The devices whose
    coordinates along the role's axes equal it run this program; the axes
    it does not name (data, expert, tensor parallelism) are symmetric, so
    their replicas share the program and tell themselves apart only by their
    coordinates (SPMD). `step` is the training-step function the program
    was partitioned from: `piper.input` and `piper.output` index its
    arguments and results.

    The body is a straight-line list of instructions. Every instruction
    except `piper.input` and `piper.output` runs on one of the declared
    `streams`. A stream executes its instructions one at a time in program
    order; different streams run concurrently and synchronise only through
    events (`piper.record` / `piper.wait`), so a value produced on one
    stream and used on another needs an event between them. Communication
    blocks its stream until the peers take part: a send until the matching
    receive, a collective until every member issues it.

    Example:

    ```mlir
    piper.program @step.pp0 role {pp = 0} of @mesh step @step
        streams ["compute", "pp"] {
      %x = piper.input 0 microbatch 0 of 2 along 0 : tensor<2x8xf32>
      %w = piper.input 1 : tensor<8x8xf32>
      %h = piper.launch "F{PP=0,MB=0}" @step.F.PP0(%x, %w) on "compute"
          : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
      piper.record 0 on "compute"
      piper.wait 0 on "pp"
      piper.send "F{PP=0,MB=0}#0->{pp=1}" %h to @step.pp1 tag 0 on "pp"
          : tensor<2x8xf32>
    }
    ```

    **Constraints:**
    - `mesh` is a `piper.mesh`; every axis of `role` is an axis of it and
      its coordinate an integer within the axis' size.
    - `step` is a `func.func`.
    - `streams` are non-empty and distinct, and every instruction's stream
      is one of them.
    - The body holds only program instructions (`piper.input`,
      `piper.output`, `piper.launch`, `piper.send`, `piper.recv`,
      `piper.comm`, `piper.record`, `piper.wait`, `piper.sum`).
    - Every event is recorded at most once.
    - `buffers` (bytes per buffer) are non-negative; `persistent N` needs
      `buffers` and `0 <= N <=` their number.
    - With `buffers`, every value-defining instruction (`piper.input`,
      `piper.launch`, `piper.recv`, `piper.comm`, `piper.sum`) names one
      buffer per result, each an index into `buffers`; without, none does.

    **Buffers.** `--piper-assign-buffers` gives the program a buffer table:
    `buffers [b0, b1, ...]` the bytes of each buffer (a power-of-two size
    class), the first `persistent N` of them live across steps (parameters
    and optimizer state, updated in place). Every instruction that defines
    values then says which buffer each result is written into:

    ```mlir
    piper.program @step.pp0 role {pp = 0} of @mesh step @step
        streams ["compute"] buffers [256, 128, 128] persistent 1 {
      %w = piper.input 1 buffers [0] : tensor<8x8xf32>
      %x = piper.input 0 buffers [1] : tensor<4x8xf32>
      %h = piper.launch "F" @step.F(%x, %w) on "compute" buffers [2]
          : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
      %y = piper.launch "G" @step.G(%h) on "compute" buffers [1]
          : (tensor<4x8xf32>) -> tensor<4x8xf32>
    }
    ```

    Two values may share a buffer only when one's lifetime ends before the
    other's begins under the happens-before order of the streams and
    events, or when the second is written in place over the first;
    `--piper-verify-programs` checks it (docs/DevicePrograms.md).
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, DictionaryAttr:$role,
                       FlatSymbolRefAttr:$mesh, FlatSymbolRefAttr:$step,
                       StrArrayAttr:$streams,
                       OptionalAttr<DenseI64ArrayAttr>:$buffer_bytes,
                       OptionalAttr<I64Attr>:$persistent_buffers);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $sym_name `role` $role `of` $mesh `step` $step `streams` $streams
    (`buffers` $buffer_bytes^)? (`persistent` $persistent_buffers^)?
    attr-dict-with-keyword $body
  }];
  let builders = [
    OpBuilder<(ins "StringAttr":$sym_name, "DictionaryAttr":$role,
                   "FlatSymbolRefAttr":$mesh, "FlatSymbolRefAttr":$step,
                   "ArrayAttr":$streams), [{
      build($_builder, $_state, sym_name, role, mesh, step, streams,
            /*buffer_bytes=*/nullptr, /*persistent_buffers=*/nullptr);
    }]>
  ];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// Whether `stream` is one of the program's streams.
    bool hasStream(::llvm::StringRef stream);
  }];
}

def Piper_InputOp : Piper_Op<"input", [HasParent<"ProgramOp">]> {
  let summary = "an argument of the training step (or a microbatch of it)";
  let description = [{
    The step function's argument number `index` as this device holds it: a
    parameter, optimizer state or data. With `microbatch i of n along d`, it
    is the i-th of n contiguous slices of a data argument along dimension
    d, as `piper.microbatch` reads it: the runtime feeds the rows of that
    microbatch. Inputs are available to every stream from the start of the
    step. With a buffer table, `buffers [i]` names the buffer the runtime
    holds the input in (a persistent one for parameters and optimizer
    state).

    Example:

    ```mlir
    %w = piper.input 1 : tensor<8x8xf32>
    %x1 = piper.input 0 microbatch 1 of 2 along 0 : tensor<2x8xf32>
    ```

    **Constraints:**
    - `index` is an argument of the program's step function.
    - Without `microbatch`, the result type is the argument's type; with
      it, `microbatch`, `of` and `along` are all given, `0 <= i < n`, and the
      result is the argument's ranked tensor type with dimension `d`
      divided by `n`.
    - `buffers`, if present, names one buffer.
  }];
  let arguments = (ins I64Attr:$index, OptionalAttr<I64Attr>:$microbatch,
                       OptionalAttr<I64Attr>:$count,
                       OptionalAttr<I64Attr>:$dim,
                       OptionalAttr<DenseI64ArrayAttr>:$buffers);
  let results = (outs AnyType:$result);
  let assemblyFormat = [{
    $index (`microbatch` $microbatch^)? (`of` $count^)? (`along` $dim^)?
    (`buffers` $buffers^)? attr-dict `:` type($result)
  }];
  let builders = [
    OpBuilder<(ins "Type":$result, "int64_t":$index), [{
      build($_builder, $_state, result, $_builder.getI64IntegerAttr(index),
            nullptr, nullptr, nullptr, nullptr);
    }]>
  ];
  let hasVerifier = 1;
}

def Piper_OutputOp : Piper_Op<"output", [HasParent<"ProgramOp">]> {
  let summary = "a result of the training step";
  let description = [{
    Makes `value` the step function's result number `index` (the loss, an
    updated parameter or optimizer state) as this device holds it. Outputs
    are read once every stream of the program has finished.

    Example:

    ```mlir
    piper.output 0 %loss : tensor<f32>
    ```

    **Constraints:**
    - `index` is a result of the program's step function, of the value's
      type.
  }];
  let arguments = (ins I64Attr:$index, AnyType:$value);
  let assemblyFormat = "$index $value attr-dict `:` type($value)";
  let hasVerifier = 1;
}

def Piper_LaunchOp : Piper_Op<"launch", [
    HasParent<"ProgramOp">,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "runs an outlined chunk body on a stream";
  let description = [{
    Runs the function `callee` (a task body outlined by
    `--piper-build-dag`) on `stream` with the given operands; `name` is the
    DAG task it comes from. Collectives inside the body (the expert
    all-to-alls and tensor-parallel all-reduces that `transform.piper.shard`
    adds) run as part of the launch, in body order, each on the
    communicator of its axes and stream; every member of such a
    communicator runs this same program, so they issue them in the same
    order. `overlap` and `sm_share` are the task's: the launch runs
    concurrently with the named one (on another stream) with that fraction
    of the device's SMs. With a buffer table, `buffers` names the buffer
    of each result; a result in the persistent buffer of an operand is
    written in place (an optimizer update).

    Example:

    ```mlir
    %h, %s = piper.launch "F{PP=0,MB=1}" @step.F.PP0(%x, %w) on "compute"
        : (tensor<2x8xf32>, tensor<8x8xf32>) -> (tensor<2x8xf32>, tensor<2x8xf32>)
    ```

    **Constraints:**
    - `callee` is a `func.func` in the enclosing module whose argument and
      result types are the launch's operand and result types.
    - `buffers`, if present, names one buffer per result.
  }];
  let arguments = (ins StrAttr:$name, FlatSymbolRefAttr:$callee,
                       Variadic<AnyType>:$inputs, StrAttr:$stream,
                       OptionalAttr<StrAttr>:$overlap,
                       OptionalAttr<F64Attr>:$sm_share,
                       OptionalAttr<DenseI64ArrayAttr>:$buffers);
  let results = (outs Variadic<AnyType>:$outputs);
  let builders = [
    OpBuilder<(ins "TypeRange":$outputs, "StringRef":$name,
                   "FlatSymbolRefAttr":$callee, "ValueRange":$inputs,
                   "StringRef":$stream), [{
      build($_builder, $_state, outputs, $_builder.getStringAttr(name),
            callee, inputs, $_builder.getStringAttr(stream),
            /*overlap=*/nullptr, /*sm_share=*/nullptr, /*buffers=*/nullptr);
    }]>
  ];
  let assemblyFormat = [{
    $name $callee `(` $inputs `)` `on` $stream (`buffers` $buffers^)?
    attr-dict `:` functional-type($inputs, $outputs)
  }];
}

def Piper_SendOp : Piper_Op<"send", [
    HasParent<"ProgramOp">,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "sends a value to the same replica of another role";
  let description = [{
    Sends `value` on `stream` to the program `peer`: every device of this
    role sends to the device of the peer's role with the same coordinates
    along the axes neither role names (data replica i of stage 0 to data
    replica i of stage 1). `tag` tells apart the messages between the two
    roles; the matching `piper.recv` in the peer names this program and the
    same tag. The send blocks its stream until the peer receives. `name` is
    the DAG transfer it comes from.

    Example:

    ```mlir
    piper.send "F{PP=0,MB=0}#0->{pp=1}" %h to @step.pp1 tag 0 on "pp"
        : tensor<2x8xf32>
    ```

    **Constraints:**
    - `peer` is another `piper.program` of the module.
    - `tag` is non-negative.
  }];
  let arguments = (ins StrAttr:$name, AnyType:$value,
                       FlatSymbolRefAttr:$peer, I64Attr:$tag,
                       StrAttr:$stream);
  let assemblyFormat = [{
    $name $value `to` $peer `tag` $tag `on` $stream attr-dict `:`
    type($value)
  }];
}

def Piper_RecvOp : Piper_Op<"recv", [
    HasParent<"ProgramOp">,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "receives a value from the same replica of another role";
  let description = [{
    Receives on `stream` the value that program `peer` sends with `tag`
    (see `piper.send`). The receive blocks its stream until the message
    arrives. With a buffer table, `buffers [i]` names the buffer it
    receives into.

    Example:

    ```mlir
    %h = piper.recv "F{PP=0,MB=0}#0->{pp=1}" from @step.pp0 tag 0 on "pp"
        : tensor<2x8xf32>
    ```

    **Constraints:**
    - `peer` is another `piper.program` of the module.
    - `tag` is non-negative.
    - `buffers`, if present, names one buffer.
  }];
  let arguments = (ins StrAttr:$name, FlatSymbolRefAttr:$peer, I64Attr:$tag,
                       StrAttr:$stream,
                       OptionalAttr<DenseI64ArrayAttr>:$buffers);
  let results = (outs AnyType:$result);
  let builders = [
    OpBuilder<(ins "Type":$result, "StringAttr":$name,
                   "FlatSymbolRefAttr":$peer, "IntegerAttr":$tag,
                   "StringAttr":$stream), [{
      build($_builder, $_state, result, name, peer, tag, stream,
            /*buffers=*/nullptr);
    }]>
  ];
  let assemblyFormat = [{
    $name `from` $peer `tag` $tag `on` $stream (`buffers` $buffers^)?
    attr-dict `:` type($result)
  }];
}

def Piper_CommOp : Piper_Op<"comm", [
    HasParent<"ProgramOp">, AllTypesMatch<["value", "result"]>]> {
  let summary = "a collective on the communicator of (mesh axes, stream)";
  let description = [{
    Issues a collective of `kind` on the communicator keyed by (`axes`,
    `stream`): the devices that differ from this one only along `axes` of
    the program's mesh, with one communicator per stream so that
    collectives on different streams overlap. The members are every device
    of this role's replicas along `axes`, and, when `axes` include an axis
    of the role, the devices of the other programs whose roles differ only
    there. The collective blocks its stream until every member has issued
    it; members must issue the collectives of a communicator in the same
    order. `name` is the DAG collective it comes from; collectives with the
    same `bucket` are one fused call. With a buffer table, `buffers [i]`
    names the buffer of the result; it may be the operand's (in place, as
    NCCL allows).

    Example:

    ```mlir
    %g = piper.comm "all_reduce(dW)" all_reduce %dw over ["dp", "ep"]
        on "dp_grad" : tensor<8x8xf32>
    ```

    **Constraints:**
    - `axes` are non-empty, distinct axes of the program's mesh.
    - The result has the operand's type.
    - `buffers`, if present, names one buffer.
  }];
  let arguments = (ins StrAttr:$name, Piper_CollectiveKindAttr:$kind,
                       AnyType:$value, StrArrayAttr:$axes, StrAttr:$stream,
                       OptionalAttr<I64Attr>:$bucket,
                       OptionalAttr<DenseI64ArrayAttr>:$buffers);
  let results = (outs AnyType:$result);
  let builders = [
    OpBuilder<(ins "StringRef":$name, "CollectiveKind":$kind, "Value":$value,
                   "ArrayAttr":$axes, "StringRef":$stream,
                   "IntegerAttr":$bucket), [{
      build($_builder, $_state, value.getType(),
            $_builder.getStringAttr(name),
            CollectiveKindAttr::get($_builder.getContext(), kind), value,
            axes, $_builder.getStringAttr(stream), bucket,
            /*buffers=*/nullptr);
    }]>
  ];
  let assemblyFormat = [{
    $name `` $kind $value `over` $axes `on` $stream (`buffers` $buffers^)?
    attr-dict `:` type($value)
  }];
  let hasVerifier = 1;
}

def Piper_RecordOp : Piper_Op<"record", [HasParent<"ProgramOp">]> {
  let summary = "records an event on a stream";
  let description = [{
    Marks the point of `stream` reached once every instruction before it on
    that stream has finished. A `piper.wait` for the same event on another
    stream holds that stream until this point. Events are numbered per
    program.

    Example:

    ```mlir
    piper.record 3 on "compute"
    ```

    **Constraints:**
    - `event` is non-negative (and, checked by the program, recorded once).
  }];
  let arguments = (ins I64Attr:$event, StrAttr:$stream);
  let assemblyFormat = "$event `on` $stream attr-dict";
  let hasVerifier = 1;
}

def Piper_WaitOp : Piper_Op<"wait", [HasParent<"ProgramOp">]> {
  let summary = "holds a stream until an event is reached";
  let description = [{
    Holds `stream` until the `piper.record` of `event` has been reached on
    its stream. The record comes before the wait in program order (the
    order in which a host issues them), as CUDA's `cudaStreamWaitEvent`
    requires; `--piper-verify-programs` checks it.

    Example:

    ```mlir
    piper.wait 3 on "pp"
    ```

    **Constraints:**
    - `event` is non-negative.
  }];
  let arguments = (ins I64Attr:$event, StrAttr:$stream);
  let assemblyFormat = "$event `on` $stream attr-dict";
  let hasVerifier = 1;
}

def Piper_SumOp : Piper_Op<"sum", [HasParent<"ProgramOp">]> {
  let summary = "sums values in order and scales them, on a stream";
  let description = [{
    The device-level `piper.accumulate`: `(v0 + v1 + ... + vn-1) * scale`,
    summed left to right on `stream` (microbatch losses and gradients).
    With a buffer table, `buffers [i]` names the buffer of the result; it
    may be the first operand's (summed in place).

    Example:

    ```mlir
    %g = piper.sum "accumulate(BW{PP=0}#0)" %g0, %g1 scale 5.000000e-01
        on "compute" : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
    ```

    **Constraints:**
    - At least one operand, each of the result's type.
    - `buffers`, if present, names one buffer.
  }];
  let arguments = (ins StrAttr:$name, Variadic<AnyType>:$values,
                       F64Attr:$scale, StrAttr:$stream,
                       OptionalAttr<DenseI64ArrayAttr>:$buffers);
  let results = (outs AnyType:$result);
  let builders = [
    OpBuilder<(ins "Type":$result, "StringAttr":$name, "ValueRange":$values,
                   "FloatAttr":$scale, "StringAttr":$stream), [{
      build($_builder, $_state, result, name, values, scale, stream,
            /*buffers=*/nullptr);
    }]>
  ];
  let assemblyFormat = [{
    $name $values `scale` $scale `on` $stream (`buffers` $buffers^)?
    attr-dict `:` functional-type($values, $result)
  }];
  let hasVerifier = 1;
}

#endif // PIPER_DIALECT_PIPER_IR_PIPERPROGRAMOPS_TD
