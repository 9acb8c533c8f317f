//===- PiperScheduleOps.td - transform.piper scheduling ops -*- tablegen -*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_TRANSFORMOPS_PIPERSCHEDULEOPS_TD
#define PIPER_TRANSFORMOPS_PIPERSCHEDULEOPS_TD

include "mlir/Dialect/Transform/IR/TransformDialect.td"
include "mlir/Dialect/Transform/Interfaces/TransformInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def OrderOp : Op<Transform_Dialect, "piper.order", [
    DeclareOpInterfaceMethods<TransformOpInterface>,
    DeclareOpInterfaceMethods<MemoryEffectsOpInterface>]> {
  let summary = "temporal edges from each group of DAG nodes to the next";
  let description = [{
    `groups` is a list of groups; a group is a tag filter (a dictionary) or
    a list of tag filters, and stands for every `piper.task` under `root`
    that one of its filters selects (as `transform.piper.match_nodes` does).
    Every node of a group is ordered after every node of the group before it
    (its `after` list gains their names); nodes of one group are not ordered
    among themselves, so they may run concurrently (their data edges still
    hold). `{PP = 0, MB = 1, PASS = "B"}` selects both halves of a split
    backward: one group, which exports as one `B` action.

    Example: stage 0 of a 1F1B pipeline of two stages over two microbatches,
    with the second forward free to overlap the first backward.

    ```mlir
    transform.piper.order [{PP = 0, MB = 0, PASS = "F"},
                           [{PP = 0, MB = 1, PASS = "F"},
                            {PP = 0, MB = 0, PASS = "B"} ],
                           {PP = 0, MB = 1, PASS = "B"} ] in %root
        : !transform.any_op
    ```

    #### Return modes

    Fails (definitely) when a filter matches no node (naming the filter), an
    edge would join nodes of different device groups (naming both nodes and
    groups; a placed node and an unplaced one count as different), or the
    new edges with the DAG's data and temporal edges would form a cycle
    (naming the nodes of the cycle). Nothing is changed on failure.
    Modifies the payload; only reads `root`.

    **Constraints:**
    - `groups` holds at least one group; a group is a dictionary or a
      non-empty array of dictionaries, each a well-formed tag filter.
  }];
  let arguments = (ins TransformHandleTypeInterface:$root,
                       ArrayAttr:$groups);
  let assemblyFormat = "$groups `in` $root attr-dict `:` type($root)";
  let hasVerifier = 1;
  let cppNamespace = "::mlir::piper";
}

def ScheduleOp : Op<Transform_Dialect, "piper.schedule", [
    DeclareOpInterfaceMethods<TransformOpInterface>,
    DeclareOpInterfaceMethods<MemoryEffectsOpInterface>]> {
  let summary = "orders a split, placed DAG by a built-in pipeline schedule";
  let description = [{
    Builds the named schedule of the PiperSchedule library (`gpipe`,
    `1f1b`, `interleaved-1f1b`, `zb-h1`, `zb-v`, `dualpipe`, `dualpipev`;
    docs/Schedules.md) for the DAGs under `root` and writes it as temporal
    edges, exactly as `transform.piper.order` would per device group:

    - the stages are the `PP` tags of the forward tasks (0 .. S-1), the
      microbatches their `MB` tags (0 .. m-1, from `transform.piper.split`),
      and the ranks the coordinates along `axis` (default `pp`) of the
      nodes' device groups (0 .. p-1, from `transform.piper.place`);
    - `interleaved-1f1b` runs v = S / p stages per rank, `zb-v` and
      `dualpipev` two (S = 2p), the others one (S = p); `dualpipe` runs the
      S = p stages in both directions, microbatches 0 .. m/2-1 from rank 0
      and m/2 .. m-1 from rank p-1, so stage s of the second half must be
      placed on rank p-1-s; a one-stage schedule also runs k consecutive
      stages per rank (stage s on rank s / k, S = kp) as one stage, the
      forwards in stage order and the backwards in reverse;
    - an action `F`, `I` or `W` of stage s on microbatch i is the group of
      `F`, `BI` or `BW` tasks tagged `PP = s, MB = i`; a `B` action is the
      group of both halves; an overlapped `F&B` pair is one group holding
      the forward and both backward halves, and its forward and
      input-gradient tasks get `overlap` attributes naming each other.

    Untagged work and updates are not ordered: their data edges place them.

    Example:

    ```mlir
    transform.piper.schedule "1f1b" in %root : !transform.any_op
    ```

    #### Return modes

    Fails (definitely), changing nothing, when the DAG is not split into
    microbatches, a stage or microbatch has no node for an action, the
    number of stages does not fit the schedule's placement, the library
    rejects the parameters (its message, e.g. `1F1B needs m >= p`), a node
    sits on another rank than the schedule runs its stage on, or the edges
    would form a cycle with those already there. Modifies the payload.

    **Constraints:**
    - `name` is one of the built-in schedule names.
  }];
  let arguments = (ins TransformHandleTypeInterface:$root, StrAttr:$name,
                       DefaultValuedStrAttr<StrAttr, "pp">:$axis);
  let assemblyFormat = [{
    $name `in` $root (`axis` $axis^)? attr-dict `:` type($root)
  }];
  let hasVerifier = 1;
  let cppNamespace = "::mlir::piper";
}

def ScheduleFromCSVOp : Op<Transform_Dialect, "piper.schedule_from_csv", [
    DeclareOpInterfaceMethods<TransformOpInterface>,
    DeclareOpInterfaceMethods<MemoryEffectsOpInterface>]> {
  let summary = "orders a DAG by a PyTorch pipelining schedule CSV";
  let description = [{
    Reads a compute-only `torch.distributed.pipelining` schedule (one row per
    rank, cells such as `2F0`, `7I0`, `7W0`, `1B2`,
    `(0F7;7B3)OVERLAP_F_B`) from the file `file` (relative to the working
    directory) or from the string `text`, validates it, and writes it onto
    the DAGs under `root` as `transform.piper.schedule` does: CSV stage s is
    the tasks tagged `PP = s`, microbatch i those tagged `MB = i`, row r the
    rank whose coordinate along `axis` is r.

    Example:

    ```mlir
    transform.piper.schedule_from_csv file "zb1p.csv" in %root
        : !transform.any_op
    transform.piper.schedule_from_csv text "0F0,0F1,0B0,0B1" in %root
        : !transform.any_op
    ```

    #### Return modes

    Fails (definitely), changing nothing, when the file cannot be read, the
    CSV does not parse or is not a valid schedule (the library's message),
    or it does not fit the DAG (as for `transform.piper.schedule`).
    Modifies the payload.

    **Constraints:**
    - Exactly one of `file` and `text` is given.
  }];
  let arguments = (ins TransformHandleTypeInterface:$root,
                       OptionalAttr<StrAttr>:$file,
                       OptionalAttr<StrAttr>:$text,
                       DefaultValuedStrAttr<StrAttr, "pp">:$axis);
  let assemblyFormat = [{
    (`file` $file^)? (`text` $text^)? `in` $root (`axis` $axis^)? attr-dict
    `:` type($root)
  }];
  let hasVerifier = 1;
  let cppNamespace = "::mlir::piper";
}

def OverlapOp : Op<Transform_Dialect, "piper.overlap", [
    DeclareOpInterfaceMethods<TransformOpInterface>,
    DeclareOpInterfaceMethods<MemoryEffectsOpInterface>]> {
  let summary = "co-schedules pairs of tasks on one device with an SM split";
  let description = [{
    Pairs the i-th task of `first` with the i-th task of `second` (the
    handles hold equally many): the two run concurrently on their device
    group, as DualPipe runs the forward of one microbatch with the backward
    of another. Each task's `overlap` attribute names its partner. With
    `sm_shares [a, b]`, the first task gets the fraction `a` of the device's
    streaming multiprocessors and the second `b` (`sm_share`); what is left,
    1 - a - b, is reserved for communication kernels. DeepSeek-V3 keeps 20
    of an H800's 132 SMs for all-to-all: `sm_shares [0.4242, 0.4242]`.

    Example:

    ```mlir
    %f = transform.piper.match_nodes {PP = 0, MB = 3, PASS = "F"} in %root
        : (!transform.any_op) -> !transform.any_op
    %b = transform.piper.match_nodes {PP = 7, MB = 0, PASS = "BI"} in %root
        : (!transform.any_op) -> !transform.any_op
    transform.piper.overlap %f with %b sm_shares [0.5, 0.35]
        : !transform.any_op, !transform.any_op
    ```

    #### Return modes

    Fails (definitely), naming the tasks, when a payload op is not a task,
    the handles hold different numbers of tasks, a task is paired with
    itself or already overlaps another, the two are on different device
    groups, or one is ordered before the other by data or temporal edges
    (they could not run together). Modifies the payload; only reads the
    handles.

    **Constraints:**
    - `sm_shares`, if given, holds two numbers in (0, 1] whose sum is at
      most 1.
  }];
  let arguments = (ins TransformHandleTypeInterface:$first,
                       TransformHandleTypeInterface:$second,
                       OptionalAttr<F64ArrayAttr>:$sm_shares);
  let assemblyFormat = [{
    $first `with` $second (`sm_shares` $sm_shares^)? attr-dict `:`
    type($first) `,` type($second)
  }];
  let hasVerifier = 1;
  let cppNamespace = "::mlir::piper";
}

def SetStreamOp : Op<Transform_Dialect, "piper.set_stream", [
    DeclareOpInterfaceMethods<TransformOpInterface>,
    DeclareOpInterfaceMethods<MemoryEffectsOpInterface>]> {
  let summary = "assigns communication nodes to a named stream";
  let description = [{
    Sets the `stream` of every `piper.transfer` and `piper.collective` in
    `nodes` (for instance the handle `place` or `replicate` returned) to
    `stream`. Nodes on different streams may run concurrently with each
    other and with compute; nodes on one stream run in issue order.

    Example:

    ```mlir
    %x = transform.piper.place %s1 on @mesh {pp = 1}
        : (!transform.any_op) -> !transform.any_op
    transform.piper.set_stream %x "pp_fwd" : !transform.any_op
    ```

    #### Return modes

    Fails (definitely) when a payload op is not a transfer or collective,
    naming it. Modifies the payload; only reads the handle.

    **Constraints:**
    - `stream` is not empty.
  }];
  let arguments = (ins TransformHandleTypeInterface:$nodes, StrAttr:$stream);
  let assemblyFormat = "$nodes $stream attr-dict `:` type($nodes)";
  let hasVerifier = 1;
  let cppNamespace = "::mlir::piper";
}

#endif // PIPER_TRANSFORMOPS_PIPERSCHEDULEOPS_TD
