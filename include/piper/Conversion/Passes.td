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
    local types under expert parallelism or ZeRO; `piper.sum` an ordered
    add chain then the scale; `piper.send`/`piper.recv` and `piper.comm`
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
    inlined; `add`/`sub`/`mul`/`relu` and `arith.addi` on tensors (the
    AdamW step count) become elementwise `linalg.generic`; 2-D `matmul` and
    `linear` (leading dims of `x` collapsed) become `linalg.fill` +
    `linalg.matmul` (+ a broadcast bias add); an op with an
    `ElementwiseOpInterface` (`relu`, `gelu`, `silu`, `swiglu`, `sigmoid`,
    `tanh`) and its `piper.vjp` become `linalg.generic`s whose payload is the interface's scalar rule
    (`buildScalar`, `dy * buildPartial`); every other NN op, every
    `piper.vjp` and the optimizer updates become a call of the C-ABI kernel
    library `piper_k_<op>_<t>` (`piper_k_vjp_<op>_<wrt>_<t>`; Kernels.h):
    operands go out through `bufferization.to_buffer` as fully strided
    memrefs cast to unranked ones, each result is a fresh `memref.alloc`
    the kernel fills, read back with `bufferization.to_tensor`. Scalar
    attributes follow the buffers as f64 or i64.

    Example:

    ```mlir
    %y = piper.softmax %x : tensor<2x4xf64>
    ```

    becomes

    ```mlir
    %b = bufferization.to_buffer %x read_only
        : tensor<2x4xf64> to memref<2x4xf64, strided<[?, ?], offset: ?>>
    %u = memref.cast %b : memref<2x4xf64, strided<[?, ?], offset: ?>>
        to memref<*xf64>
    %o = memref.alloc() : memref<2x4xf64>
    %v = memref.cast %o : memref<2x4xf64> to memref<*xf64>
    call @piper_k_softmax_f64(%u, %v) : (memref<*xf64>, memref<*xf64>) -> ()
    %y = bufferization.to_tensor %o restrict writable
        : memref<2x4xf64> to tensor<2x4xf64>
    ```

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
    `one-shot-bufferize{bufferize-function-boundaries
    function-boundary-type-conversion=identity-layout-map}`,
    `buffer-results-to-out-params{hoist-static-allocs
    modify-public-functions}`, `buffer-deallocation-pipeline`,
    `piper-matmul-to-blas`, `convert-bufferization-to-memref`,
    `convert-linalg-to-loops`, `lower-affine`, `convert-scf-to-cf`,
    `expand-strided-metadata`, `lower-affine`,
    `finalize-memref-to-llvm{use-generic-functions}`,
    `convert-arith-to-llvm`, `convert-func-to-llvm`, `convert-cf-to-llvm`,
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

#endif // PIPER_CONVERSION_PASSES_TD
