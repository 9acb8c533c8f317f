// --piper-gpu-clip's rewrite, executed on the CPU: the accumulate and scale
// calls become linalg (lowered here to loops, as the GPU target maps them to
// threads), the plan hands piper_clip_add_squares each gradient's weighted
// sum of squares and scales by piper_clip_coefficient. This module defines
// both runtime functions itself: the first prints what it gets, the second
// returns 0.25. Expected values computed independently (numpy, f64):
//   f32 [[1.5, -2, 3], [0.1, 1.5, -2]], weight 1: 21.51000000029802
//     (0.1f is 0.100000001490116...)
//   f64 [0.5, -4, 0.5, -4], weight 0.5: 16.25
//   scaled by 0.25 in f64, rounded to f32 once.
// REQUIRES: mlir-runner
// RUN: piper-opt %s --piper-gpu-clip | mlir-opt --convert-linalg-to-loops \
// RUN:   --convert-scf-to-cf --expand-strided-metadata --finalize-memref-to-llvm \
// RUN:   --convert-arith-to-llvm --convert-cf-to-llvm --convert-func-to-llvm \
// RUN:   --reconcile-unrealized-casts \
// RUN: | mlir-runner -e main -entry-point-result=void \
// RUN:   -shared-libs=%mlir_lib_dir/libmlir_c_runner_utils.so,%mlir_lib_dir/libmlir_runner_utils.so \
// RUN: | FileCheck %s

// CHECK: 21.51
// CHECK-NEXT: 16.25
// CHECK: Unranked Memref {{.*}} rank = 2 {{.*}} sizes = [2, 3]
// CHECK-NEXT: {{\[}}[0.375,   -0.5,   0.75],
// CHECK-NEXT: [0.025,   0.375,   -0.5]]

func.func private @piper_clip_accumulate_f32(memref<*xf32>, f64)
func.func private @piper_clip_accumulate_f64(memref<*xf64>, f64)
func.func private @piper_clip_scale_f32(memref<*xf32>, memref<*xf32>)
func.func private @printF64(f64)
func.func private @printNewline()
func.func private @printMemrefF32(memref<*xf32>)

// The runtime's side, here in MLIR: print what the plan hands over, and a
// fixed coefficient.
func.func @piper_clip_add_squares(%s: f64) {
  call @printF64(%s) : (f64) -> ()
  call @printNewline() : () -> ()
  return
}
func.func @piper_clip_coefficient() -> f64 {
  %c = arith.constant 0.25 : f64
  return %c : f64
}

func.func @main() {
  %g = memref.alloc() : memref<2x3xf32>
  %v = memref.alloc() : memref<4xf64>
  %i0 = arith.constant 0 : index
  %i1 = arith.constant 1 : index
  %i2 = arith.constant 2 : index
  %i3 = arith.constant 3 : index
  %a = arith.constant 1.5 : f32
  %b = arith.constant -2.0 : f32
  %c = arith.constant 3.0 : f32
  %d = arith.constant 0.1 : f32
  memref.store %a, %g[%i0, %i0] : memref<2x3xf32>
  memref.store %b, %g[%i0, %i1] : memref<2x3xf32>
  memref.store %c, %g[%i0, %i2] : memref<2x3xf32>
  memref.store %d, %g[%i1, %i0] : memref<2x3xf32>
  memref.store %a, %g[%i1, %i1] : memref<2x3xf32>
  memref.store %b, %g[%i1, %i2] : memref<2x3xf32>
  %x = arith.constant 0.5 : f64
  %y = arith.constant -4.0 : f64
  memref.store %x, %v[%i0] : memref<4xf64>
  memref.store %y, %v[%i1] : memref<4xf64>
  memref.store %x, %v[%i2] : memref<4xf64>
  memref.store %y, %v[%i3] : memref<4xf64>
  %gu = memref.cast %g : memref<2x3xf32> to memref<*xf32>
  %vu = memref.cast %v : memref<4xf64> to memref<*xf64>
  %w1 = arith.constant 1.0 : f64
  %w2 = arith.constant 0.5 : f64
  call @piper_clip_accumulate_f32(%gu, %w1) : (memref<*xf32>, f64) -> ()
  call @piper_clip_accumulate_f64(%vu, %w2) : (memref<*xf64>, f64) -> ()
  %o = memref.alloc() : memref<2x3xf32>
  %ou = memref.cast %o : memref<2x3xf32> to memref<*xf32>
  call @piper_clip_scale_f32(%gu, %ou) : (memref<*xf32>, memref<*xf32>) -> ()
  call @printMemrefF32(%ou) : (memref<*xf32>) -> ()
  return
}
