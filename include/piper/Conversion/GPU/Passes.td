//===- Passes.td - The CUDA target's passes ----------------*- tablegen -*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_CONVERSION_GPU_PASSES
#define PIPER_CONVERSION_GPU_PASSES

include "mlir/Pass/PassBase.td"

def GPUGemmPass : Pass<"piper-gpu-gemm", "::mlir::ModuleOp"> {
  let summary = "GEMMs on device buffers to piper_gpu_gemm calls";
  let description = [{
    Runs on buffers, where the CPU pipeline runs `piper-matmul-to-blas`.
    Every GEMM the CPU target hands to BLAS becomes one call of the plan
    ABI's `piper_gpu_gemm` (runtime/include/piper-rt/plan_abi_gpu.h:
    row-major, strided-batched, `C = alpha op(A) op(B) + beta C`, cuBLAS
    with f32 accumulation for f32 and bf16 inputs):

    - `linalg.matmul` (default maps): `beta = 1` (C += A B), batch 1;
    - `linalg.batch_matmul` with default or transposing maps (the forms
      `piper-matmul-to-blas` takes): `beta = 1`, batch = dim 0;
    - calls of the kernel library's `piper_k_vjp_linear_{0,1}_<t>` and
      `piper_k_vjp_matmul_{0,1}_<t>` (dx = dy w^T, dw = x^T dy, ...):
      `beta = 0`, operands read in place with `trans_a`/`trans_b`;
    - `piper_k_vjp_linear_2_<t>` (the bias gradient, a row sum, no GEMM):
      `linalg.fill` and a `linalg.generic` sum, mapped like any kernel.

    Pointers and leading dimensions come from each buffer's strided
    metadata at run time; the innermost stride must be 1 and the leading
    dimensions of a rank > 2 linear operand must be contiguous (what
    bufferization produces). Element types: f32, f64, or bf16 A and B
    with an f32 (matmul) or bf16 (VJP) C.

    Example: `linalg.matmul ins(%a, %b : memref<16x32xf32>,
    memref<32x8xf32>) outs(%c : memref<16x8xf32>)` becomes
    `call @piper_gpu_gemm(%c0_i32, %c0_i32, %c0_i32, %c0_i32, %c1, %c16,
    %c8, %c32, %one, %pa, %lda, %c0, %pb, %ldb, %c0, %one, %pc, %ldc, %c0)`.

    **Options:** none. A GEMM on a buffer whose innermost stride is not 1
    fails with `the GPU target needs unit innermost strides for GEMM
    operands`.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::func::FuncDialect",
    "::mlir::LLVM::LLVMDialect", "::mlir::memref::MemRefDialect",
    "::mlir::linalg::LinalgDialect"
  ];
}

def GPUSerialLoopsPass : Pass<"piper-gpu-serial-loops", "::mlir::ModuleOp"> {
  let summary = "Host loops over device buffers into one-thread kernels";
  let description = [{
    Some lowerings emit loops on buffers directly rather than linalg ops:
    the embedding VJP scatters gradient rows in the order of the ids (an
    `scf.for` reading each id and accumulating a row through an outlined
    kernel), which must stay sequential (two equal ids add to one row).
    On the GPU such a loop reads device memory, so each `scf.for` at the
    top of a host function that loads or stores a buffer, or calls a
    function that does, becomes one thread of one block: the functions it
    calls are inlined, their linalg ops become loops, and the loop is
    wrapped in a one-iteration `scf.parallel` mapped to `block_x` and
    `thread_x`. Sequential, so correct and in the CPU's order, not fast.

    Example: `scf.for %i = 0 to 16 { %id = memref.load %ids[%i] ...
    call @piper_kernel_18(...) }` becomes `scf.parallel (%b) = (0) to (1)
    { scf.parallel (%t) = (0) to (1) { scf.for %i ... { <the kernel's loops
    inline> } } }` with the two mappings.

    **Options:** none.
  }];
  let dependentDialects = [
    "::mlir::scf::SCFDialect", "::mlir::gpu::GPUDialect",
    "::mlir::arith::ArithDialect", "::mlir::memref::MemRefDialect"
  ];
}

def GPUClipPass : Pass<"piper-gpu-clip", "::mlir::ModuleOp"> {
  let summary = "Gradient-norm clipping on device buffers";
  let description = [{
    Runs on buffers, before `piper-gpu-device-memory`. The CPU plan's
    clipping calls (`--clip-grad-norm`, lib/Conversion/ClipGradNorm.h) read
    each gradient on the host; on the GPU target they become linalg ops on
    the device buffers, mapped to kernels like any other, and one host
    scalar per gradient:

    - `piper_clip_accumulate_<t>(grad, weight)`: the squares of `grad` summed
      in f64 per leading row (one thread per row), the rows summed (one
      thread), that total read on the host and
      `piper_clip_add_squares(weight * total)` called;
    - `piper_clip_scale_<t>(grad, out)`: `c = piper_clip_coefficient()`,
      then `out = t(f64(grad) * c)`, rounded once as on the CPU.

    `piper_clip_finish` stays: it sums the step's total over every rank and
    sets the coefficient (runtime/include/piper-rt/plan_abi.h).

    Example: `call @piper_clip_accumulate_f32(%u, %w) : (memref<*xf32>,
    f64) -> ()` on `%g : memref<4x8xf32>` becomes two `linalg.generic`
    sums into `memref<4xf64>` and `memref<f64>`, a `memref.load` of the
    total and `call @piper_clip_add_squares(%weighted)`.

    **Options:** none. A call whose gradient is not an f32 or f64 buffer
    fails with `@<callee> needs an f32 or f64 buffer as operand #<i>`.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::func::FuncDialect",
    "::mlir::memref::MemRefDialect", "::mlir::linalg::LinalgDialect"
  ];
}

def GPUDeviceMemoryPass : Pass<"piper-gpu-device-memory", "::mlir::ModuleOp"> {
  let summary = "Plan buffers in device memory";
  let description = [{
    Every buffer the plan allocates lives in device memory: `memref.alloc`
    becomes `gpu.alloc`, `memref.dealloc` `gpu.dealloc` (the runtime's
    stream-ordered caching allocator, through `mgpuMemAlloc`/`mgpuMemFree`),
    and `memref.copy` a `linalg.copy`, which `piper-gpu-map-linalg` turns
    into a kernel like any other op (a copy between strided views is no
    contiguous `cudaMemcpy`).

    A scalar the host reads (a step counter's bias correction) is copied
    to a stack slot first: `gpu.wait async`, `gpu.memcpy async` into a
    `memref.alloca`, `gpu.wait`, then the load (gpu-to-llvm: `mgpuMemcpy`
    on the compute stream and `mgpuStreamSynchronize`).

    Example: `%b = memref.alloc() : memref<16xf32>` becomes
    `%b = gpu.alloc () : memref<16xf32>`.

    **Options:** none. A constant buffer (`memref.get_global`) left on the
    host fails with `the GPU target cannot read host constant @<name>`.
  }];
  let dependentDialects = [
    "::mlir::gpu::GPUDialect", "::mlir::linalg::LinalgDialect"
  ];
}

def GPUMapLinalgPass : Pass<"piper-gpu-map-linalg", "::mlir::func::FuncOp"> {
  let summary = "Linalg ops on buffers to loops mapped to blocks and threads";
  let description = [{
    Every linalg op left on buffers (the GEMMs are `piper_gpu_gemm` calls
    by then) becomes an `scf.parallel` over its parallel loops, its
    reduction loops sequential inside each iteration (each output element
    is computed by one thread, in the same order as on the CPU). The
    parallel loops are collapsed into one, tiled by `block-size`, and
    mapped: tiles to `block_x`, the iterations of a tile to `thread_x`
    (`#gpu.loop_dim_map`), any deeper parallel loop sequential.
    `convert-parallel-loops-to-gpu` then makes each a `gpu.launch`.
    An op with no parallel loop (a full reduction, a 0-d update) runs as
    one thread of one block.

    Example: a `linalg.generic` over `memref<16x32xf32>` with iterators
    `[parallel, parallel]` and `block-size=256` becomes
    `scf.parallel (%b) = (0) to (512) step (256)` (mapped to `block_x`)
    around `scf.parallel (%t) = (0) to (256)` (mapped to `thread_x`)
    with a bound check, the body indexing `%b + %t` delinearised.

    **Options:**
    - `block-size` (default 256): threads per block; a positive multiple of
      32 (a warp) up to 1024.

    A bad `block-size` fails the pass with `block-size must be a multiple
    of 32 in [32, 1024], got <N>`; a linalg op with a dynamic iteration
    space fails with `the GPU target maps static iteration spaces only`.
  }];
  let options = [
    Option<"blockSize", "block-size", "int64_t", /*default=*/"256",
           "Threads per block (a multiple of 32, at most 1024)">,
  ];
  let dependentDialects = [
    "::mlir::scf::SCFDialect", "::mlir::gpu::GPUDialect",
    "::mlir::affine::AffineDialect", "::mlir::arith::ArithDialect",
    "::mlir::memref::MemRefDialect"
  ];
}

def GPUVerifyHostPass : Pass<"piper-gpu-verify-host", "::mlir::ModuleOp"> {
  let summary = "Check that host code touches no device memory";
  let description = [{
    Runs after the kernels became `gpu.launch` ops. The host side of a GPU
    plan may only launch kernels, call the plan ABI and compute scalars:
    a `memref.load`/`memref.store` on a heap buffer, a linalg op left
    unmapped, a call of the CPU kernel library (`piper_k_*`) or of the
    host clipping calls (`piper_clip_accumulate_*`, `piper_clip_scale_*`,
    which `piper-gpu-clip` rewrites) outside a kernel would read device
    memory on the CPU. Each is one error at the
    op, e.g. `'func.call' op calls the CPU kernel library
    (@piper_k_vjp_linear_2_f32), which the GPU target cannot run`.

    **Options:** none.
  }];
}

def GPUKernelNamesPass : Pass<"piper-gpu-kernel-names", "::mlir::ModuleOp"> {
  let summary = "PTX-safe names for outlined kernels";
  let description = [{
    `gpu-kernel-outlining` names each kernel after its function
    (`step.F.PP0_kernel`), and PTX identifiers cannot hold `.`: every
    character of a `gpu.module` or kernel name outside `[A-Za-z0-9_$]`
    becomes `_` (a number is appended when that makes two names equal),
    and every `gpu.launch_func` follows.

    Example: `gpu.module @step.F.PP0_kernel` with `gpu.func
    @step.F.PP0_kernel` becomes `@step_F_PP0_kernel::@step_F_PP0_kernel`.

    **Options:** none.
  }];
}

def LowerToGPUPass : Pass<"piper-lower-to-gpu", "::mlir::ModuleOp"> {
  let summary = "Device programs to the LLVM dialect with CUDA kernels";
  let description = [{
    The `--target=cuda` counterpart of `piper-lower-to-llvm`: the same
    kernels (programs to functions, piper ops to linalg, bufferization,
    outlined kernels), then `piper-gpu-gemm`, `piper-gpu-device-memory`,
    `piper-gpu-map-linalg`, `convert-parallel-loops-to-gpu`,
    `piper-gpu-verify-host`, `gpu-kernel-outlining`, `nvvm-attach-target`,
    `convert-gpu-to-nvvm` in each `gpu.module`, the host lowering of the
    CPU pipeline, `gpu-to-llvm`, `gpu-module-to-binary` and
    `piper-packed-entry`. See docs/GPU.md.

    **Options:**
    - `chip` (default `sm_90`): the SM architecture, `sm_<NN>[a]` with
      NN >= 70 (`unknown GPU architecture '<chip>'` otherwise).
    - `features` (default `+ptx80`): PTX ISA features (the PTX 6.0 that
      MLIR picks by default does not assemble for sm_90).
    - `block-size` (default 256): as `piper-gpu-map-linalg`.
    - `format` (default `fatbin`): `fatbin` (cubin and PTX), `bin` (cubin)
      or `isa` (PTX only).
  }];
  let options = [
    Option<"chip", "chip", "std::string", /*default=*/"\"sm_90\"",
           "GPU architecture">,
    Option<"features", "features", "std::string", /*default=*/"\"+ptx80\"",
           "PTX features">,
    Option<"blockSize", "block-size", "int64_t", /*default=*/"256",
           "Threads per block">,
    Option<"format", "format", "std::string", /*default=*/"\"fatbin\"",
           "Binary format: fatbin, bin or isa">,
  ];
}

#endif // PIPER_CONVERSION_GPU_PASSES
