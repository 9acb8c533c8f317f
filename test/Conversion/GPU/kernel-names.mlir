// --piper-gpu-kernel-names: outlined kernels named after Piper's dotted
// function names get PTX identifiers, and their launches follow.
// RUN: piper-opt %s --gpu-kernel-outlining --piper-gpu-kernel-names | FileCheck %s

// CHECK-LABEL: func.func @step.F.PP0(
// CHECK:         gpu.launch_func  @step_F_PP0_kernel::@step_F_PP0_kernel blocks
// CHECK:       gpu.module @step_F_PP0_kernel
// CHECK:         gpu.func @step_F_PP0_kernel(
// CHECK-NOT:   @step.F.PP0_kernel
func.func @step.F.PP0(%a: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  gpu.launch blocks(%bx, %by, %bz) in (%x = %c1, %y = %c1, %z = %c1)
             threads(%tx, %ty, %tz) in (%u = %c1, %w = %c1, %q = %c1) {
    %e = memref.load %a[%c0] : memref<4xf32>
    %d = arith.addf %e, %e : f32
    memref.store %d, %a[%c0] : memref<4xf32>
    gpu.terminator
  }
  return
}
