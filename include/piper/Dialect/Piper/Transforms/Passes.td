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

def PiperMixedPrecision : Pass<"piper-mixed-precision", "::mlir::ModuleOp"> {
  let summary = "Rewrite an f32 model into bf16 compute with f32 master weights";
  let description = [{
    Runs on f32 models, before `--piper-autodiff`, and applies a precision
    policy (docs/MixedPrecision.md): every NN op computes in the `compute`
    type (bf16) and its activations are bf16; the loss op
    (`piper.cross_entropy`) computes in the `loss` type (f32) and returns
    it. Parameters keep their f32 type (the master weights) and are cast
    with `piper.cast` at their uses, once per block; float data and
    constants likewise. Because the VJP of a cast is the cast back, every
    parameter's gradient is f32, and so are the optimizer state that
    `--piper-optimizer` appends and the gradient reductions the strategy
    inserts. The function's signature does not change.

    Example: `piper-opt --piper-mixed-precision="precision=bf16-mixed"`.

    ```mlir
    // Before                                   // After
    %y = piper.linear %x, %w                    %x16 = piper.cast %x : ... -> tensor<2x4xbf16>
      : tensor<2x4xf32>, tensor<4x8xf32>        %w16 = piper.cast %w : ... -> tensor<4x8xbf16>
      -> tensor<2x8xf32>                        %y = piper.linear %x16, %w16 : ... -> tensor<2x8xbf16>
    ```

    Errors (at the offending value or op): a float value that is not f32
    (the model must be f32, and the pass runs once), an op of the backward
    or optimizer (`piper.vjp`, updates, a DAG: run the pass before
    `--piper-autodiff`), a non-Piper op on float tensors, and unknown
    option values.

    **Options:** `precision` (`f32`: nothing changes, or `bf16-mixed`),
    `grad-reduce-dtype` (`f32`; `bf16` is parsed and rejected until
    gradients can be reduced before their cast).
  }];
  let options = [
    Option<"precision", "precision", "std::string", "\"bf16-mixed\"",
           "f32 or bf16-mixed">,
    Option<"gradReduceDtype", "grad-reduce-dtype", "std::string", "\"f32\"",
           "element type of gradient reductions (f32)">
  ];
}

def PiperOptimizer : Pass<"piper-optimizer", "::mlir::ModuleOp"> {
  let summary = "Turn gradients into optimizer updates in UPD chunks";
  let description = [{
    Runs on functions produced by `piper-autodiff` (results marked
    `piper.grad`) and makes each a complete training step: for every
    parameter the optimizer state is appended as arguments marked
    `piper.state` (`momentum_buffer` for SGD; `exp_avg`, `exp_avg_sq` and
    the completed-step count `step` for AdamW), and the gradient results are
    replaced by the updated parameter (`piper.updated = "<name>"`) followed
    by its new state. Each update is a `piper.sgd_update` or
    `piper.adamw_update` inside a `pass = UPD` chunk with the tags of the
    innermost forward chunk using the parameter (none if it is used at top
    level or by several stages).

    Example: `piper-opt --piper-autodiff
    --piper-optimizer="optimizer=adamw lr=1e-3 weight-decay=0.01"`.

    Weight decay is per parameter group: a parameter the `no-decay` rule
    selects gets `weight_decay = 0` (by default every parameter of rank 0 or
    1: biases and norm gains). The `lr` attribute of each update is the
    compile-time default only: the native lowering reads the learning rate
    of the running step from the runtime (`piper_step_lr`, docs/Training.md).

    **Options:** `optimizer` (`sgd` or `adamw`), `lr`, `momentum` (SGD),
    `weight-decay` (PyTorch's defaults: 0 for SGD, 0.01 for AdamW), `beta1`,
    `beta2`, `eps` (AdamW), `no-decay` (`rank<2`, `none`, `all` or
    comma-separated name globs). The defaults are every tool's
    (`runtime/include/piper-rt/train_defaults.h`).
  }];
  let options = [
    Option<"optimizer", "optimizer", "std::string",
           "PIPER_TRAIN_DEFAULT_OPTIMIZER", "sgd or adamw">,
    Option<"lr", "lr", "double", "PIPER_TRAIN_DEFAULT_LR",
           "learning rate (> 0)">,
    Option<"momentum", "momentum", "double",
           "PIPER_TRAIN_DEFAULT_MOMENTUM", "SGD momentum">,
    Option<"weightDecay", "weight-decay", "double", "-1.0",
           "weight decay, L2 for SGD and decoupled for AdamW (default, as "
           "in PyTorch: 0 for SGD, 0.01 for AdamW)">,
    Option<"beta1", "beta1", "double", "PIPER_TRAIN_DEFAULT_BETA1",
           "AdamW first-moment decay">,
    Option<"beta2", "beta2", "double", "PIPER_TRAIN_DEFAULT_BETA2",
           "AdamW second-moment decay">,
    Option<"eps", "eps", "double", "PIPER_TRAIN_DEFAULT_EPS",
           "AdamW denominator epsilon">,
    Option<"noDecay", "no-decay", "std::string",
           "PIPER_TRAIN_DEFAULT_NO_DECAY",
           "parameters without weight decay: rank<2, none, all or name globs">
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def PiperBuildDAG : Pass<"piper-build-dag", "::mlir::ModuleOp"> {
  let summary = "Build the global training DAG from a chunked training step";
  let description = [{
    For every function whose top level holds chunks (`piper.annotate`),
    replaces the body by a `piper.dag` with one `piper.task` per top-level
    chunk; each task calls the chunk outlined into a private function
    `@<fn>.<PASS>.<tags>` and carries the chunk's tags and pass. Derived
    work outside every chunk becomes untagged tasks, one per maximal run of
    ops of one pass (`piper.pass`). Constants are cloned into the bodies
    that use them. Data edges are the SSA values between tasks (saved
    activations included); no temporal edges are added.

    Example: `piper-opt --piper-autodiff --piper-optimizer --piper-build-dag`
    turns a two-stage model into the tasks `F{PP=0}`, `F{PP=1}`,
    `BI{PP=1}`, `BW{PP=1}`, `BI{PP=0}`, `BW{PP=0}`, `UPD{PP=0}` and
    `UPD{PP=1}`.

    With `fuse-backward`, each chunk's BI and BW become one `B` node whose
    body `@<fn>.B.<tags>` calls the outlined BI and BW bodies in turn
    (`B{PP=1}`), as schedules without zero-bubble splitting (GPipe, 1F1B)
    see them; `transform.piper.split_backward` splits such nodes back into
    BI and BW.
  }];
  let options = [
    Option<"fuseBackward", "fuse-backward", "bool", /*default=*/"false",
           "Emit one B node per chunk (calling its BI and BW bodies) instead "
           "of separate BI and BW nodes">,
  ];
}

def PiperCommReport : Pass<"piper-comm-report", "::mlir::ModuleOp"> {
  let summary = "Print the bytes each device moves per step, by kind and axis";
  let description = [{
    For every `piper.transfer` and `piper.collective` in the module's DAGs,
    sums the bytes one device sends per training step, by device group,
    kind, mesh axes and stream, and prints the table and per-kind totals to
    standard output. Collectives use ring volumes over N devices (the
    product of their axes' sizes): all_reduce 2 (N-1)/N of the tensor's
    bytes, reduce_scatter, all_gather and all_to_all (N-1)/N; a transfer
    sends its bytes once. Replicas are symbolic, so every device of a group
    moves the same amount.

    **Options:** none.
  }];
}

def PiperExportSchedule : Pass<"piper-export-schedule", "::mlir::ModuleOp"> {
  let summary = "Print the per-rank pipeline schedule of a scheduled DAG";
  let description = [{
    Reads back, for every `piper.dag` in the module, the action list of each
    pipeline rank and prints it through the PiperSchedule library to
    standard output: as PyTorch `torch.distributed.pipelining` compute-only
    CSV, a rank x time-slot text grid, Chrome-trace JSON (Perfetto) or an
    SVG timeline; the pictures use the times of the library's simulator
    with unit costs (F = I = W = 1). The IR is left unchanged.

    The pipeline tasks are the `F`, `B`, `BI` and `BW` tasks with integer
    `PP` and `MB` tags; each must be placed on a coordinate along `axis`,
    which is its rank. A rank runs its tasks in a topological order of the
    data and temporal edges, ties broken by position in the IR; a `BI` and
    `BW` of one stage and microbatch with equal `after` lists (one order
    group) are one `B` action, and a forward whose `overlap` names a
    backward one F&B pair. A stage placed on two ranks is read as the two
    directions of DualPipe, microbatches below m/2 in the first. The result
    is checked like any library schedule (every action once, dependencies
    respected).

    Example: `piper-opt step.mlir --transform-interpreter
    --piper-export-schedule="format=csv"` after `transform.piper.schedule
    "1f1b"` prints what `piper-schedule --schedule=1f1b --format=csv`
    prints for the same ranks and microbatches.

    **Options:** `format` (`csv`, `grid`, `chrome` or `svg`; default
    `grid`), `axis` (the mesh axis whose coordinate is the rank; default
    `pp`), `b-for-input` (CSV: write input gradients as `B`, as older
    PyTorch did).
  }];
  let options = [
    Option<"format", "format", "std::string", "\"grid\"",
           "csv, grid, chrome or svg">,
    Option<"axis", "axis", "std::string", "\"pp\"",
           "mesh axis whose coordinate is the pipeline rank">,
    Option<"bForInput", "b-for-input", "bool", "false",
           "CSV: write input gradients as B (older PyTorch)">
  ];
}

def PiperPartition : Pass<"piper-partition", "::mlir::ModuleOp"> {
  let summary = "Split a scheduled DAG into one device program per role";
  let description = [{
    For every function holding a `piper.dag`, adds one `piper.program` per
    distinct device group of its nodes (`@<fn>.pp0` for `{pp = 0}`; one
    `@<fn>.all` with role `{}` when nothing is placed). Replicas along the
    axes a group does not name share its program, so the programs do not
    depend on the data-, tensor- or expert-parallel degree.

    Nodes are taken in one topological order of the DAG's data and temporal
    edges, ties broken by position in the IR, and each program lists its
    share in that order, so every stream's order follows the directives.
    Tasks become `piper.launch` on stream `compute` (the later task of an
    overlapped pair on `compute_overlap`); a `piper.transfer` becomes a
    `piper.send` in the source program and a `piper.recv` in the
    destination, tagged by their count between the two programs; a DAG
    `piper.collective` becomes a `piper.comm` on its stream; accumulates
    become `piper.sum`, microbatches and step arguments `piper.input`, the
    step's results `piper.output`. Where a value (or an `after` edge)
    crosses streams, the producer's stream records an event that the
    consumer's stream waits for. Collectives inside task bodies stay there.

    First, unplaced nodes that serve placed ones (the untagged sum of a
    parameter's gradient contributions, its accumulation over microbatches
    and its update, which no chunk filter selects) are placed on every
    device group they serve. One group places them there (a tied embedding
    and head folded onto one rank by DualPipeV); several (the tied table on
    the first and last pipeline stages) give one copy per group, named
    `<node>@{group}` with `copy_of = "<node>"`, each fed the other groups'
    contributions by transfers and summing them in the same order, so every
    copy computes the same update bit for bit, and every copy writes the
    step's results, so each group reads the updated value at the next step.

    The step function and its DAG are kept (the interpreter still runs
    them); the programs are added after it.

    **Options:** none.
  }];
}

def PiperVerifyPrograms : Pass<"piper-verify-programs", "::mlir::ModuleOp"> {
  let summary = "Check a module's device programs together";
  let description = [{
    Checks the `piper.program`s of the module as one distributed step:

    - every `piper.send` has exactly one `piper.recv` in its peer naming the
      sender and the same tag, of the same type, and every receive a send;
    - every event waited on is recorded, earlier in program order;
    - the members of each communicator (programs whose roles differ only
      along a collective's axes, on one stream) issue its collectives in
      the same order, with the same kinds and types;
    - the programs cannot deadlock under blocking semantics (a stream runs
      its instructions in order; a send blocks until its receive, a
      collective until every member issues it, a wait until its record):
      the streams are run symbolically, and when none can advance, the
      wait-for relation between blocked streams is searched for a cycle,
      which the error prints with the programs, streams and ops involved;
    - when a program has buffers (`--piper-assign-buffers`), every value
      fits its buffer, and no two values whose lifetimes may overlap share
      one: of two values in a buffer, the earlier one's definition and uses
      must all happen before the later one's definition (program order on
      a stream, record/wait events across streams), unless the later one is
      written in place over it (a collective over its operand, a sum over
      its first operand, an update over a persistent buffer); a value the
      step returns lives to the end, and a persistent buffer is shared only
      in place;
    - every program that reads a parameter (`piper.input` of an argument
      with `piper.param`) writes its update (`piper.output` of the result
      with `piper.updated`) when any program does: the runtime replaces a
      program's arguments only by its own results, so a reader that does
      not write the update would use a stale value from the second step on
      (a tied weight updated on one stage only).

    The IR is left unchanged; the first fault is an error.

    **Options:** none.
  }];
}

def PiperNumberCommunicators
    : Pass<"piper-number-communicators", "::mlir::ModuleOp"> {
  let summary = "Number the communicators the device programs use";
  let description = [{
    The runtime creates every communicator of a plan at start-up, in one
    order all ranks share, and a lowered program names a communicator by its
    index in it. Since each program is lowered alone, the numbering is
    decided here, over all programs of the module at once.

    A communicator is keyed by (axes in mesh order, stream). The keys of
    every `piper.comm` of the programs and of every `piper.collective`
    inside a function a program launches (the expert all-to-alls and
    tensor-parallel all-reduces of a body) are collected and sorted (axes,
    then stream). Then:

    - each `piper.comm` and each such `piper.collective` gets its key's
      index as `piper_plan.comm` (i64);
    - the module gets the list as `piper_plan.communicators`, one
      `[[axes...], stream]` entry per index;
    - the module gets the batch axes as `piper_plan.batch_axes`: the axes
      of every `all_reduce` and `reduce_scatter` of the programs, in mesh
      order (the axes gradients are averaged over).

    Example: the programs

    ```mlir
    piper.mesh @mesh axes = [dp = 2, pp = 2]
    piper.program @step.pp0 role {pp = 0} of @mesh step @step
        streams ["compute", "dp_grad"] {
      %g = piper.input 0 : tensor<4xf32>
      %r = piper.comm "ar" all_reduce %g over ["dp"] on "dp_grad"
          : tensor<4xf32>
    }
    ```

    become

    ```mlir
    module attributes {piper_plan.batch_axes = ["dp"],
                       piper_plan.communicators = [[["dp"], "dp_grad"]]} {
      ...
      %r = piper.comm "ar" all_reduce %g over ["dp"] on "dp_grad"
          {piper_plan.comm = 0 : i64} : tensor<4xf32>
    ```

    **Constraints:**
    - The module holds exactly one `piper.mesh`.
    - No `piper.comm` is an `all_to_all` (between programs it is not
      lowered; the expert all-to-alls live inside launched bodies).

    **Options:** none.
  }];
}

def PiperStampPeerRoles : Pass<"piper-stamp-peer-roles", "::mlir::ModuleOp"> {
  let summary = "Stamp each send and receive with its peer program's role";
  let description = [{
    A `piper.send` or `piper.recv` names its peer by program symbol; the
    lowering turns the peer into a world-rank offset computed from the
    peer's role. Since each program is lowered alone, in a module that no
    longer holds its peers, this pass copies the peer's role onto every
    send and receive of the module's programs as `piper_plan.peer_role` (a
    dictionary, the peer's `role`). Running it again stamps the same roles.

    Example: in

    ```mlir
    piper.program @step.pp0 role {pp = 0} of @mesh step @step streams ["pp"] {
      %x = piper.input 0 : tensor<4xf32>
      piper.send "x" %x to @step.pp1 tag 0 on "pp" : tensor<4xf32>
    }
    ```

    the send becomes

    ```mlir
    piper.send "x" %x to @step.pp1 tag 0 on "pp"
        {piper_plan.peer_role = {pp = 1 : i64}} : tensor<4xf32>
    ```

    **Constraints:**
    - The peer is a `piper.program` of the module (the op verifiers check
      this too).
    - A transfer reaches the device with the sender's coordinates along
      the axes the peer's role does not name, so the peer's role names only
      axes the sender's role names (otherwise every replica along such an
      axis would reach one peer device) and differs from the sender's role
      on at least one of them (otherwise the peer device is the sender).

    **Options:** none.
  }];
}

def PiperEvalPrograms : Pass<"piper-eval-programs", "::mlir::ModuleOp"> {
  let summary = "Derive a forward-only evaluation program from each device "
                "program";
  let description = [{
    Held-out evaluation needs the training step's loss at the current
    parameters, not its backward, gradient communication or update. For
    every training program `@p` this pass adds `@p.eval`
    (`piper_plan.eval_of = @p`): the instructions the loss (`piper.output
    0`) depends on, followed within a program through operands and across
    programs from each needed `piper.recv` to its `piper.send`, plus every
    record and wait (they only order what remains). So a pipeline keeps its
    forward launches and activation transfers, ZeRO-3 keeps the all-gathers
    the forward reads, and the loss is the training step's (the mean over
    microbatches); backward launches, gradient sums and collectives and
    updates go. Transfers name the peers' evaluation programs; each launch
    keeps its training index for the trace hooks
    (`piper_plan.trace_index`). `piper-compile` lowers both programs of a
    role into its object (docs/Runtime.md, "eval").

    Example: a stage that sends its activation and receives the gradient

    ```mlir
    piper.program @step.pp0 role {pp = 0} of @mesh step @step streams ["compute"] {
      %x = piper.input 0 : tensor<4xf32>
      %h = piper.launch "F" @f(%x) on "compute" : (tensor<4xf32>) -> tensor<4xf32>
      piper.send "h" %h to @step.pp1 tag 0 on "compute" : tensor<4xf32>
      %g = piper.recv "g" from @step.pp1 tag 0 on "compute" : tensor<4xf32>
      ...
    }
    ```

    keeps in `@step.pp0.eval` the input, the launch and the send (to
    `@step.pp1.eval`), because `@step.pp1`'s loss needs the matching
    receive.

    **Constraints:**
    - The module has device programs and none is an evaluation program
      yet.
    - Some program outputs step result 0 (the loss).
    - Every needed receive has a matching send.

    **Options:**
    - `only` (default false): keep only the evaluation programs, so that
      `--piper-verify-programs` checks them as one step.
  }];
  let options = [
    Option<"only", "only", "bool", /*default=*/"false",
           "Erase the training programs, keeping the evaluation programs">,
  ];
}

def PiperAssignBuffers : Pass<"piper-assign-buffers", "::mlir::ModuleOp"> {
  let summary = "Give every value of the device programs a buffer, reusing "
                "dead ones";
  let description = [{
    For every `piper.program` of the module, writes a buffer table on the
    program (`buffers [bytes, ...] persistent N`) and, on every instruction
    that defines values (`piper.input`, `piper.launch`, `piper.recv`,
    `piper.comm`, `piper.sum`), the buffer of each result (`buffers [i]`).

    Inputs of parameters and optimizer state get the first N buffers, of
    their exact bytes; they persist across steps, and the optimizer update
    whose result the step returns as the parameter's (or state's) new value
    writes it in place. Every other value takes, in program order, a buffer
    of its size class (bytes rounded up to a power of two) whose latest
    value is dead: its definition and every use *happen before* the new
    value's definition, under program order on one stream and record/wait
    events across streams. A value the step returns lives to the end; a
    microbatch input from the start. A `piper.comm` writes in place over
    its operand and a `piper.sum` over its first operand when the operand
    dies there. Otherwise a new buffer is added.

    Example, two launches on one stream (the second reuses `%x`'s buffer)
    and a receive on another stream that may not:

    ```mlir
    piper.program @p role {} of @mesh step @step streams ["compute", "pp"]
        buffers [64, 64, 64] persistent 0 {
      %x = piper.input 0 microbatch 0 of 2 along 0 buffers [0] : tensor<2x8xf32>
      %h = piper.launch "F" @f(%x) on "compute" buffers [1] : ...
      %y = piper.launch "G" @g(%h) on "compute" buffers [0] : ...
      %r = piper.recv "r" from @q tag 0 on "pp" buffers [2] : tensor<2x8xf32>
    }
    ```

    With `report`, prints per program the values, buffers and reserved
    bytes:

    ```
    buffers of @step.pp0 {pp=0}: 57 values in 17 buffers (7 persistent, 4360 bytes; 10 transient, 5632 bytes), 9992 bytes reserved
    ```

    A module without programs, and a program that already has buffers, are
    errors.

    **Options:** `report` (print the buffers of each program).
  }];
  let options = [
    Option<"report", "report", "bool", /*default=*/"false",
           "print each program's buffers and reserved bytes">
  ];
}

def PiperMemoryPlan : Pass<"piper-memory-plan", "::mlir::ModuleOp"> {
  let summary = "Print the peak memory of each device group, by kind";
  let description = [{
    Plans the memory of every `piper.dag` in the module, per device group
    (one device stands for the group: replicas hold the same): the group's
    nodes are walked in the order it runs them (its tasks in the
    topological order of the data and temporal edges, ties broken by IR
    position; a send, gradient collective or accumulator right after its
    inputs; a receive, ZeRO-3 gather or microbatch slice right before its
    first consumer), and every value lives from the step that produces it
    to its last use in the group. Parameters (per-device shards: split
    axes, and the data-parallel degree at ZeRO-3) and optimizer state
    (sharded over the data-parallel axes from ZeRO-1) live throughout;
    gradients are full until ZeRO-2's reduce-scatter; microbatch
    contributions accumulate in place into one accumulator per gradient;
    updates write in place. The ZeRO stage is read from the collectives of
    `transform.piper.replicate` (an all-reduce: 0; a gather of the
    parameter: 3; a reduce-scatter: 2, or 1 when the parameter's placement
    says `zero = 1`).

    For each group it prints the peak bytes, the step and node where it
    occurs and the breakdown there (params, grads, optimizer, activations,
    comm, other), each kind's own maximum with the most microbatches whose
    saved activations are live at once, and the allocations left after
    greedy reuse of freed buffers of the same power-of-two size class.

    ```
    memory plan of @mlp (bytes per device)
    pp=0: peak 1984 at step 9 of 24 'F{PP=0,MB=3}'
      params 256 grads 0 optimizer 520 activations 1024 comm 0 other 184
      max: params 256 grads 256 optimizer 520 activations 1024 (4 microbatches) comm 0 other 184
      reuse: 26 buffers in 9 allocations, 2552 bytes reserved
    ```

    With `budget` > 0, a group whose peak exceeds it is an error at the
    node of the peak: `device group pp=0 needs 1984 bytes at its peak (step
    9 of 24, 'F{PP=0,MB=3}'), over the budget of 1500 bytes`. A module
    without a DAG, a DAG with both placed and unplaced tasks, and a cycle
    are errors. The IR is left unchanged.

    **Options:** `budget` (bytes per device; 0, the default, checks
    nothing), `list-buffers` (also print every buffer: its first and last
    step, kind, bytes and the value, node result or argument, that
    allocates it), `driver-results` (also print, per group, the bytes
    `piper-run` keeps for the step's results beside its arguments, the
    updated parameters and optimizer state, which the plan counts as
    updated in place, and the peak with them: `driver results 44784,
    peak with them 109352`; what `piper-run --peak-bytes` measures).
  }];
  let options = [
    Option<"budget", "budget", "int64_t", /*default=*/"0",
           "bytes one device may use; 0 for no limit">,
    Option<"listBuffers", "list-buffers", "bool", /*default=*/"false",
           "also print every buffer with its steps, kind and bytes">,
    Option<"driverResults", "driver-results", "bool", /*default=*/"false",
           "also print the bytes piper-run keeps for the step's results "
           "and the peak with them">
  ];
}

#endif // PIPER_DIALECT_PIPER_TRANSFORMS_PASSES_TD
