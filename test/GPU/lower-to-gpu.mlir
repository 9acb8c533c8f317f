// piper-compile --target=cuda on the tiny MLP, stage by stage: the linalg
// kernels are the CPU target's (--emit=kernels is target-independent); the
// LLVM dialect holds one gpu.binary per kernel for sm_90 (cubin and PTX),
// launches, piper_gpu_gemm calls and the runtime's device allocator; the
// LLVM IR calls upstream MLIR's mgpu* runtime functions.
// REQUIRES: ptxas
// RUN: rm -rf %t && mkdir -p %t
// RUN: piper-gen --model=mlp --config=tiny-mlp --dtype=f32 --mesh=dp=1 -o %t/mlp.mlir
// RUN: piper-compile %t/mlp.mlir --emit=kernels -o %t/cpu.kernels.mlir
// RUN: piper-compile %t/mlp.mlir --target=cuda --emit=kernels -o %t/gpu.kernels.mlir
// RUN: diff %t/cpu.kernels.mlir %t/gpu.kernels.mlir
// RUN: piper-compile %t/mlp.mlir --target=cuda --emit=lowered -o %t/lowered.mlir
// RUN: FileCheck %s --input-file=%t/lowered.mlir
// RUN: FileCheck %s --check-prefix=NOHOST --input-file=%t/lowered.mlir
// RUN: piper-compile %t/mlp.mlir --target=cuda --gpu-arch=sm_80 --emit=lowered | FileCheck %s --check-prefix=SM80
// RUN: piper-compile %t/mlp.mlir --target=cuda --emit=llvm-ir -o %t/mlp.ll
// RUN: FileCheck %s --check-prefix=IR --input-file=%t/mlp.ll

// CHECK-DAG: gpu.binary @[[KERNEL:[a-z_0-9]+]]  [#gpu.object<#nvvm.target<O = 3, chip = "sm_90", features = "+ptx80">, properties = {{.*}}, "
// CHECK-DAG: llvm.call @piper_gpu_gemm(
// CHECK-DAG: gpu.launch_func  @{{[a-z_0-9]+}}::@{{[a-z_0-9]+}} blocks in (
// CHECK-DAG: llvm.func @piper_entry_step.all(%{{.*}}: !llvm.ptr)

// Nothing on the host reads device memory or calls the CPU libraries.
// NOHOST-NOT: piper_k_
// NOHOST-NOT: _mlir_memref_to_llvm_alloc
// NOHOST-NOT: omp.

// SM80: #nvvm.target<O = 3, chip = "sm_80", features = "+ptx80">

// IR-DAG: declare ptr @mgpuModuleLoad(ptr, i64)
// IR-DAG: declare void @mgpuLaunchKernel(ptr, i64, i64, i64, i64, i64, i64, i32, ptr, ptr, ptr, i64)
// IR-DAG: declare ptr @mgpuMemAlloc(i64, ptr, i8)
// IR-DAG: declare void @mgpuMemFree(ptr, ptr)
// IR-DAG: declare void @piper_gpu_gemm(i32, i32, i32, i32, i64, i64, i64, i64, double, ptr, i64, i64, ptr, i64, i64, double, ptr, i64, i64)
// IR-DAG: define void @piper_entry_step.all(ptr
