//===- Passes.td - Lowering device programs to native code -*- tablegen -*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The compiler's back half (docs/Lowering.md): device programs
// (`piper.program`, from --piper-partition) to the LLVM dialect. The
// rewrites live in public populate*Patterns functions (Passes.h); these
// passes only collect them and set the conversion target.
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_CONVERSION_PASSES_TD
#define PIPER_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def ProgramToFuncPass : Pass<"piper-program-to-func", "::mlir::ModuleOp"> {
  let summary = "Turn each piper.program into a public func.func on tensors";
  let description = [{
    Every `piper.program @p` becomes a public `func.func @p` whose arguments
    are the step arguments the program reads (ascending index) and whose
    results are the step results it writes (ascending index), each with the
    type one device holds (`ReplicaLayout::localArgType`: its share of the
    batch, a flat ZeRO chunk, the part of a split expert weight). The
    conversion's type converter maps each program value from its global
    type to that local type.

    One pattern per instruction: `piper.input` is the argument (a
    microbatch input a `tensor.extract_slice` of it, so the host feeds
    whole tensors); `piper.launch` a call of the body (bracketed by
    `piper_trace_begin/end(index)`), of a clone of it on the operands'
    local types under expert parallelism or ZeRO; `piper.sum` one elementwise
    `linalg.generic` adding the values in order, then multiplying by the
    scale (a scalar of the body; none when it is 1); `piper.send`/`piper.recv` and `piper.comm`
    calls of the runtime's `piper_comm_*` entry points; `piper.record` and
    `piper.wait` `piper_comm_record/wait(event, stream)` when the program
    runs collectives (nothing otherwise: one thread runs the streams in
    program order); `piper.output` a result of the final `func.return`,
    after `piper_comm_sync_all()` when there are collectives. The step
    functions, the meshes, bodies holding collectives no call is left to
    and the module's `piper_plan.batch_axes`/`communicators` are erased.

    Example:

    ```mlir
    piper.program @step.all role {} of @mesh step @step streams ["compute"] {
      %x = piper.input 0 : tensor<4xf64>
      %y = piper.launch "F" @body(%x) on "compute"
          : (tensor<4xf64>) -> tensor<4xf64>
      piper.output 0 %y : tensor<4xf64>
    }
    ```

    becomes

    ```mlir
    func.func @step.all(%x: tensor<4xf64>) -> tensor<4xf64>
        attributes {llvm.emit_c_interface, piper_plan.inputs = array<i64: 0>,
                    piper_plan.outputs = array<i64: 0>, piper_plan.role = {}} {
      %c0 = arith.constant 0 : i64
      call @piper_trace_begin(%c0) : (i64) -> ()
      %y = call @body(%x) : (tensor<4xf64>) -> tensor<4xf64>
      call @piper_trace_end(%c0) : (i64) -> ()
      return %y : tensor<4xf64>
    }
    ```

    **Options:** none.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::bufferization::BufferizationDialect",
    "::mlir::func::FuncDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::tensor::TensorDialect",
  ];
}

def ConvertToKernelsPass : Pass<"piper-convert-to-kernels",
                                "::mlir::ModuleOp"> {
  let summary = "Lower piper ops on tensors to linalg and kernel-library calls";
  let description = [{
    Runs on tensors, before bufferization. `piper.annotate` regions are
    inlined. Every NN op and its `piper.vjp` becomes linalg and tensor ops,
    target-independent so the GPU target can reuse them:
    elementwise ops (`add`/`sub`/`mul`, `arith.addi` on tensors, and the
    ops with an `ElementwiseOpInterface`) become `linalg.generic`s from
    their scalar rule; `matmul` and `linear` become `linalg.matmul` or
    `linalg.batch_matmul` (which `piper-matmul-to-blas` later turns into
    OpenBLAS calls); `attention` becomes per-head `linalg.batch_matmul`s
    around causal-softmax generics, in a private function per shape shared
    by every layer; `softmax`, `rmsnorm`, `layernorm` and `cross_entropy`
    become row-reduction generics (sums in f32 for narrower types);
    `embedding` a gather generic (its VJP an `scf.for` scatter-add over
    tokens); `reshape`/`transpose` `tensor.collapse_shape`/`expand_shape`
    and `linalg.transpose`; the MoE ops gathers, top-k reductions and one
    `scf.for` slot scan; the optimizer updates one generic each. Only the
    VJPs of 2-D `matmul` and `linear` remain calls of the C-ABI kernel
    library (`piper_k_vjp_<op>_<wrt>_<t>`; Kernels.h: BLAS with
    transposes): operands go out through `bufferization.to_buffer` cast to
    unranked memrefs, each result is a fresh `memref.alloc` the kernel
    fills.

    Example:

    ```mlir
    %y = piper.softmax %x : tensor<2x4xf64>
    ```

    becomes four `linalg.generic`s over the rows of `%x`: the row max, `exp(x
    - max)`, the row sum and the division.

    Element types other than f32 and f64, and ops of other dialects than
    func, arith, math, tensor, linalg, bufferization and memref inside a
    function, are rejected with a located error.

    **Options:** none.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::bufferization::BufferizationDialect",
    "::mlir::func::FuncDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect",
  ];
}

def FoldSplatConstantsPass : Pass<"piper-fold-splat-constants",
                                  "::mlir::ModuleOp"> {
  let summary = "Make shape-sized splat constants scalars or fills, never "
                "dense data";
  let description = [{
    Runs on tensors, after `piper-convert-to-kernels` and before
    bufferization, which would make each splat tensor constant a
    `memref.global` of the tensor's size: the plan's object would then grow
    with the model (the microbatch scale `1/n` of every accumulated
    gradient, a zero cotangent). An input of a `linalg.generic` that is a
    splat (`arith.constant` or `linalg.fill` on tensors) is dropped and its
    scalar used in the body, provided the remaining operands still give the
    loop bounds; any other splat `arith.constant` tensor of more than one
    element becomes `tensor.empty` + `linalg.fill`. Rank-0 and one-element
    constants stay. Constants and fills left without readers are erased.

    Example:

    ```mlir
    %s = arith.constant dense<2.500000e-01> : tensor<16x32xf64>
    %y = linalg.generic {indexing_maps = [#id, #id, #id],
                         iterator_types = ["parallel", "parallel"]}
        ins(%g, %s : tensor<16x32xf64>, tensor<16x32xf64>)
        outs(%e : tensor<16x32xf64>) {
    ^bb0(%a: f64, %b: f64, %o: f64):
      %m = arith.mulf %a, %b : f64
      linalg.yield %m : f64
    } -> tensor<16x32xf64>
    ```

    becomes

    ```mlir
    %c = arith.constant 2.500000e-01 : f64
    %y = linalg.generic {indexing_maps = [#id, #id],
                         iterator_types = ["parallel", "parallel"]}
        ins(%g : tensor<16x32xf64>) outs(%e : tensor<16x32xf64>) {
    ^bb0(%a: f64, %o: f64):
      %m = arith.mulf %a, %c : f64
      linalg.yield %m : f64
    } -> tensor<16x32xf64>
    ```

    **Options:** none.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::tensor::TensorDialect",
  ];
}

def MatmulToBlasPass : Pass<"piper-matmul-to-blas", "::mlir::ModuleOp"> {
  let summary = "Replace f32/f64 linalg.matmul on buffers by BLAS kernel calls";
  let description = [{
    Each `linalg.matmul` on buffers in the plain `C += A B` form (default
    indexing maps, no casts: what `piper-convert-to-kernels` emits) with an
    f32 or f64 output becomes a call of `piper_k_gemm_f32`/`_f64(A, B, C)`
    on unranked memrefs (OpenBLAS `sgemm`/`dgemm`). Other matmuls are left
    for `convert-linalg-to-loops`.

    Example:

    ```mlir
    linalg.matmul ins(%a, %b : memref<2x4xf64>, memref<4x3xf64>)
                  outs(%c : memref<2x3xf64>)
    ```

    becomes

    ```mlir
    %0 = memref.cast %a : memref<2x4xf64> to memref<*xf64>
    %1 = memref.cast %b : memref<4x3xf64> to memref<*xf64>
    %2 = memref.cast %c : memref<2x3xf64> to memref<*xf64>
    call @piper_k_gemm_f64(%0, %1, %2)
        : (memref<*xf64>, memref<*xf64>, memref<*xf64>) -> ()
    ```

    **Options:** none.
  }];
  let dependentDialects = [
    "::mlir::func::FuncDialect",
    "::mlir::memref::MemRefDialect",
  ];
}

def BarePtrCallsPass : Pass<"piper-bare-ptr-calls", "::mlir::ModuleOp"> {
  let summary =
      "Internal functions take one pointer per static buffer, not a descriptor";
  let description = [{
    Runs on `func` before func-to-llvm. A function with a body that is only
    ever called directly (`func.call`), is neither a program
    (`llvm.emit_c_interface`) nor a C-interface wrapper, and whose every
    memref argument and result has a static shape, strides and offset gets
    `llvm.bareptr`: func-to-llvm then passes each such memref as its
    aligned pointer instead of expanding its descriptor into 7 to 11
    scalars, at the function and at its calls. A program function's calls
    of its chunk functions shrink from hundreds of stack arguments to one
    per buffer. Anything else (declarations, which are the runtime's ABI;
    dynamic sizes, strides or offsets; a function whose symbol is used other
    than by a call) is left as it is.

    Example:

    ```mlir
    func.func @chunk(%a: memref<4x8xf32>, %b: memref<8xf32>) { ... }
    // becomes
    func.func @chunk(%a: memref<4x8xf32>, %b: memref<8xf32>)
        attributes {llvm.bareptr} { ... }
    ```

    **Options:** none.
  }];
}

def PackedEntryPass : Pass<"piper-packed-entry", "::mlir::ModuleOp"> {
  let summary =
      "Add `void piper_entry_<program>(void **args)` for every program";
  let description = [{
    Runs on the LLVM dialect. For every `llvm.func` carrying
    `piper_plan.inputs` (a lowered program) it adds
    `void piper_entry_<program>(void **args)`: `args[i]` points to the
    memref descriptor of argument `i`, then of each result (the caller
    allocates the results), and the entry calls the
    `_mlir_ciface_<program>` wrapper that `llvm.emit_c_interface` made, so
    the host needs one signature whatever the program. A program without
    that wrapper is an error.

    Example: for `llvm.func @p(...) attributes {piper_plan.inputs = ...}`
    and its `llvm.func @_mlir_ciface_p(%a: !llvm.ptr, %r: !llvm.ptr)`:

    ```mlir
    llvm.func @piper_entry_p(%args: !llvm.ptr) {
      %0 = llvm.getelementptr %args[0] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
      %1 = llvm.load %0 : !llvm.ptr -> !llvm.ptr
      %2 = llvm.getelementptr %args[1] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
      %3 = llvm.load %2 : !llvm.ptr -> !llvm.ptr
      llvm.call @_mlir_ciface_p(%1, %3) : (!llvm.ptr, !llvm.ptr) -> ()
      llvm.return
    }
    ```

    **Options:** none.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

def LowerToLLVMPass : Pass<"piper-lower-to-llvm", "::mlir::ModuleOp"> {
  let summary = "Lower device programs and their bodies to the LLVM dialect";
  let description = [{
    The whole back half as one pass (`buildLowerToLLVMPipeline`):
    `piper-program-to-func`, `piper-convert-to-kernels`, `symbol-dce`,
    `piper-fuse-elementwise`,
    `one-shot-bufferize{bufferize-function-boundaries
    function-boundary-type-conversion=identity-layout-map}`,
    `buffer-results-to-out-params{hoist-static-allocs
    modify-public-functions}`, `buffer-deallocation-pipeline`,
    `piper-matmul-to-blas`, `convert-bufferization-to-memref`,
    `piper-tile-linalg{parallel-grain=32768 vector-bytes=64}` (the host's
    `HostKernelOptions`), `convert-linalg-to-loops`,
    `piper-parallel-to-openmp`, `convert-vector-to-scf`, `lower-affine`,
    `convert-scf-to-cf`, `expand-strided-metadata`, `lower-affine`,
    `convert-vector-to-llvm`, `finalize-memref-to-llvm{use-generic-functions}`,
    `convert-math-to-llvm`, `convert-arith-to-llvm`,
    `convert-openmp-to-llvm`, `convert-func-to-llvm`, `convert-cf-to-llvm`,
    `convert-index-to-llvm`, `reconcile-unrealized-casts` and
    `piper-packed-entry`. Results become caller-allocated out-parameters,
    so the host owns every buffer it sees; allocations go through MLIR's
    generic functions, which the runtime serves from its buffer cache.

    Example: `piper-opt programs.mlir --piper-lower-to-llvm` turns a module
    of `piper.program`s and their bodies into one of `llvm.func`s with a
    `piper_entry_<program>` per program.

    **Options:** none.
  }];
}

def FuseElementwisePass
    : Pass<"piper-fuse-elementwise", "::mlir::func::FuncOp"> {
  let summary = "Fuse elementwise linalg producers into their consumers";
  let description = [{
    Runs on tensors, after `piper-convert-to-kernels` and before
    bufferization: upstream's elementwise fusion
    (`linalg::populateElementwiseOpsFusionPatterns`) merges a
    `linalg.generic` with parallel loops into each `linalg.generic`
    (parallel or reduction) that reads its result, when that result has no
    other use, so the intermediate tensor is never written to memory.
    Fusing a producer with several users would compute it once per user,
    so those stay apart. Unlike upstream's `linalg-fuse-elementwise-ops`
    it adds no reshape propagation and no constant folding (which would
    materialise shape-sized constants in the plan).

    Example: `%t = exp(%x)` then `%y = %t * %z`, `%t` used once, become
    one `linalg.generic` computing `exp(%x) * %z`.

    **Options:** none.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def TileLinalgPass : Pass<"piper-tile-linalg", "::mlir::func::FuncOp"> {
  let summary = "Tile linalg ops on buffers into threads and vectors";
  let description = [{
    Runs on buffers, after `piper-matmul-to-blas` (the GEMMs are BLAS
    calls by then). For every remaining linalg op with a static iteration
    space:

    1. Threads: when the op has at least `parallel-grain` iterations, its
       outermost parallel loop of more than one iteration is tiled into an
       `scf.parallel` whose chunks each hold at least `parallel-grain`
       iterations (later OpenMP's work-sharing loop). Smaller ops stay on
       the calling thread, so they pay no fork and join. Only parallel
       loops are split across threads: every output element is computed by
       one thread in the same order whatever the thread count.
    2. Vectors: the op (or each thread's tile of it) is tiled into
       `scf.for` loops of `1 x ... x 1 x W` tiles, `W` =
       `vector-bytes` / the element size (capped at the innermost extent),
       and each tile is vectorised (`linalg::vectorize`, masked where the
       extent is not a multiple of `W`); a tile the vectoriser does not
       handle stays a linalg op and becomes loops later.

    The tiling choices are options, not constants: the CPU pipeline
    (`buildLowerToLLVMPipeline`) sets them for the host, and another target
    can reuse the same linalg with its own.

    Example: `piper-opt --piper-tile-linalg="parallel-grain=4096
    vector-bytes=32"` turns a `linalg.generic` over `memref<256x64xf32>`
    into `scf.parallel` over 4 chunks of 64 rows, each an `scf.for` nest
    over `vector<1x8xf32>` tiles (`vector.transfer_read`, the body on
    vectors, `vector.transfer_write`).

    **Options:**
    - `parallel-grain` (default 0: no threads): the fewest iterations a
      thread's chunk holds; ops smaller than that run on one thread.
    - `vector-bytes` (default 0: no vectors): the vector register width in
      bytes.

    A negative option or a `vector-bytes` that is not a power of two fails
    the pass with one error naming both values.
  }];
  let options = [
    Option<"parallelGrain", "parallel-grain", "int64_t", /*default=*/"0",
           "Fewest iterations per thread's chunk (0: no threads)">,
    Option<"vectorBytes", "vector-bytes", "int64_t", /*default=*/"0",
           "Vector register width in bytes (0: no vectorisation)">,
  ];
  let dependentDialects = [
    "::mlir::scf::SCFDialect", "::mlir::vector::VectorDialect",
    "::mlir::affine::AffineDialect", "::mlir::memref::MemRefDialect",
    "::mlir::arith::ArithDialect"
  ];
}

def ElideResultCopiesPass
    : Pass<"piper-elide-result-copies", "::mlir::func::FuncOp"> {
  let summary = "Compute a result in its out-parameter instead of copying it there";
  let description = [{
    Runs after `buffer-results-to-out-params` and before the deallocation
    pipeline. A `memref.copy %buf, %out` in a function's entry block, where
    `%out` is an argument of that block used only by the copy, `%buf` a
    `memref.alloc` of the same type in that block and every other use of
    `%buf` before the copy, is removed and `%buf` replaced by `%out`. The
    program function returns the results of its pass functions, which
    upstream's `hoist-static-allocs` does not reach; without this every
    updated parameter and optimizer moment is copied once more per step.
    The out-parameters are buffers of the caller (piper-run allocates them
    apart from the inputs), so writing them early is safe.

    Example: `%b = memref.alloc()`, `call @f(%x, %b)`,
    `memref.copy %b, %out` become `call @f(%x, %out)`.

    **Options:** none.
  }];
}

def EarlyDeallocPass
    : Pass<"piper-early-dealloc", "::mlir::func::FuncOp"> {
  let summary = "Free each buffer right after its last use in its block";
  let description = [{
    Runs right after upstream's deallocation pipeline, which frees the
    buffers a block owns at the end of the block. A training step's program
    is one block: every activation, gathered parameter and microbatch
    gradient would otherwise live until the step returns, so the runtime's
    high-water mark would be everything the step allocates, not what the
    memory plan (`--piper-memory-plan`) schedules. A `memref.dealloc %a` of
    a `memref.alloc` in the same block moves to right after the last op of
    the block that uses `%a` or a view or cast of it. It stays where it is
    when a use is outside the block, is a terminator (the buffer may be
    yielded) or defines a memref that is not a view, and when the last use
    is as the output of a nonblocking collective (`piper_comm_i*`), which
    the runtime may write after the call returns with no later reader
    waiting for it (its input is copied out at once, plan_abi.h).

    Example: `%a = memref.alloc()`, `call @f(%a)`, `call @g(%x)`,
    `memref.dealloc %a` becomes `%a = memref.alloc()`, `call @f(%a)`,
    `memref.dealloc %a`, `call @g(%x)`.

    **Options:** none.
  }];
}

def TraceKernelsPass : Pass<"piper-trace-kernels", "::mlir::ModuleOp"> {
  let summary = "Bracket each op of the launched bodies with kernel trace hooks";
  let description = [{
    Runs after `piper-program-to-func`, on the ops of the private functions
    (launched bodies and their clones) while they are still piper ops. When
    the module carries `piper_plan.trace_kernels` (an array of kernel kind
    names, which `piper-compile --trace-kernels` sets and plan.json lists
    as `kernel_kinds`), every op whose kind is in the list is bracketed by
    `piper_trace_kernel_begin(kind)` and `piper_trace_kernel_end(kind)`,
    `kind` its index in the list; `piper-run --trace` records each pair as a
    span inside its launch's span. A kind is the op's name without
    `piper.` (`matmul`, `adamw_update`); a `piper.vjp`'s is its forward op's
    with `_vjp` (`rmsnorm_vjp`). Without the attribute the pass does
    nothing, so plans compiled without the flag are unchanged.

    Example: `piper.softmax` in a body with kinds `["matmul", "softmax"]`
    becomes `call @piper_trace_kernel_begin(%c1)`, the softmax,
    `call @piper_trace_kernel_end(%c1)`.

    **Options:** none.
  }];
  let dependentDialects = ["::mlir::func::FuncDialect",
                           "::mlir::arith::ArithDialect"];
}

def OutlineKernelsPass : Pass<"piper-outline-kernels", "::mlir::ModuleOp"> {
  let summary = "Outline linalg ops on buffers, one function per distinct kernel";
  let description = [{
    Runs on buffers, after `piper-matmul-to-blas` and before
    `piper-tile-linalg`. Every linalg op with pure buffer semantics other
    than `linalg.fill` becomes a `func.call` of a private function
    `@piper_kernel[_N]` holding only that op; ops that are the same kernel
    (same op, attributes, body, operand types and the same constants read
    by the body) call one function. Values the body reads from outside are
    cloned into the function when they are constants and passed as extra
    arguments otherwise.

    A model repeats its layers, and each per-layer norm, activation,
    residual or optimizer loop was tiled, vectorised, optimised and
    compiled once per copy: shared, each distinct kernel is compiled once.
    A kernel called once is inlined back when the object is emitted.

    Example: two `linalg.generic` adds over `memref<512x256xf32>` in one
    function become two calls of one `@piper_kernel`.

    **Options:** none.
  }];
  let dependentDialects = ["::mlir::func::FuncDialect"];
}

def ParallelToOpenMPPass
    : Pass<"piper-parallel-to-openmp", "::mlir::ModuleOp"> {
  let summary = "Lower scf.parallel to OpenMP work-sharing loops";
  let description = [{
    Upstream `convert-scf-to-openmp` (each `scf.parallel` becomes
    `omp.parallel` around an `omp.wsloop`), then the
    `memref.alloca_scope` that pass wraps every loop body in is inlined
    when the body allocates nothing on the stack (the lowering's bodies
    never do), so `convert-scf-to-cf` can later split the body into
    blocks. No thread count is written into the code: the OpenMP
    runtime's, which `piper-run --threads` sets, decides the team size.

    Example: `scf.parallel (%i) = (%c0) to (%c256) step (%c64) { ... }`
    becomes `omp.parallel { omp.wsloop { omp.loop_nest (%i) : index =
    (%c0) to (%c256) step (%c64) { ... } } }`.

    **Options:** none.
  }];
  let dependentDialects = [
    "::mlir::omp::OpenMPDialect", "::mlir::memref::MemRefDialect",
    "::mlir::LLVM::LLVMDialect"
  ];
}

def ExpandBF16Pass : Pass<"piper-expand-bf16", "::mlir::ModuleOp"> {
  let summary = "Emulate bf16 arithmetic in f32 and expand bf16 conversions "
                "to integer code";
  let description = [{
    Runs in the LLVM lowering after vectorisation, on modules that hold bf16
    values (others are left untouched). bf16 is a storage type on the host:
    the kernels widen it, compute in f32 and round once. Any arith or vector
    op left on bf16 is emulated in f32 (upstream
    `arith-emulate-unsupported-floats`), any math op extended to f32
    (`math-extend-to-supported-types`), and then every `arith.extf` and
    `arith.truncf` between bf16 and f32 becomes integer code (upstream's
    bf16 expansion: a shift to widen; round to nearest even, NaN kept, to
    narrow), so the object needs no `__truncsfbf2` from the C runtime and
    rounds exactly as the kernel library and the interpreter do.

    Example: `%h = arith.truncf %x : f32 to bf16` becomes a bitcast to i32,
    the rounding bias added, a shift right by 16, a truncation to i16 and a
    bitcast to bf16 (with a select for NaN).

    **Options:** none.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::math::MathDialect",
    "::mlir::vector::VectorDialect"
  ];
}

#endif // PIPER_CONVERSION_PASSES_TD
