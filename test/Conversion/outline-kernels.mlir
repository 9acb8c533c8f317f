// --piper-outline-kernels: each linalg op on buffers becomes a call of a
// private function holding only it, one function per distinct kernel;
// constants the body reads are cloned in, other outside values become
// arguments; fills stay where they are.
// RUN: piper-opt %s --piper-outline-kernels -split-input-file | FileCheck %s --enable-var-scope

#id = affine_map<(d0, d1) -> (d0, d1)>

// Two adds over the same types share one kernel, kept out of line (LLVM
// would inline it back into each caller); an add over another shape gets
// its own, used once, which LLVM may inline.
// CHECK-LABEL: func.func @equal_kernels_share_a_function(
// CHECK-SAME:      %[[A:.*]]: memref<4x8xf32>, %[[B:.*]]: memref<4x8xf32>, %[[C:.*]]: memref<4x8xf32>, %[[D:.*]]: memref<2x8xf32>
// CHECK-NEXT:    call @[[K:piper_kernel]](%[[A]], %[[B]], %[[C]])
// CHECK-NEXT:    call @[[K]](%[[C]], %[[B]], %[[A]])
// CHECK-NEXT:    call @[[K2:piper_kernel_[0-9]+]](%[[D]], %[[D]], %[[D]])
// CHECK-NEXT:    return
// CHECK:       func.func private @[[K]](%{{.*}}: memref<4x8xf32>, %{{.*}}: memref<4x8xf32>, %{{.*}}: memref<4x8xf32>) attributes {passthrough = ["noinline"]}
// CHECK-NEXT:    linalg.generic
// CHECK:         arith.addf
// CHECK:       func.func private @[[K2]](%{{.*}}: memref<2x8xf32>, %{{.*}}: memref<2x8xf32>, %{{.*}}: memref<2x8xf32>) {
// CHECK-NOT:   func.func
func.func @equal_kernels_share_a_function(%a: memref<4x8xf32>, %b: memref<4x8xf32>, %c: memref<4x8xf32>, %d: memref<2x8xf32>) {
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a, %b : memref<4x8xf32>, memref<4x8xf32>) outs(%c : memref<4x8xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%c, %b : memref<4x8xf32>, memref<4x8xf32>) outs(%a : memref<4x8xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%d, %d : memref<2x8xf32>, memref<2x8xf32>) outs(%d : memref<2x8xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  }
  return
}

// -----

#id = affine_map<(d0) -> (d0)>

// Scales by different constants are different kernels (the constant is
// cloned into each); a scale by a runtime scalar passes it as an argument.
// The fill stays inline.
// CHECK-LABEL: func.func @constants_are_cloned_and_scalars_passed(
// CHECK-SAME:      %[[X:.*]]: memref<16xf32>, %[[S:.*]]: f32
// CHECK:         linalg.fill
// CHECK-NEXT:    call @[[K0:piper_kernel]](%[[X]])
// CHECK-NEXT:    call @[[K1:piper_kernel_[0-9]+]](%[[X]])
// CHECK-NEXT:    call @[[K2:piper_kernel_[0-9]+]](%[[X]], %[[S]])
// CHECK:       func.func private @[[K0]](%{{.*}}: memref<16xf32>)
// CHECK-NEXT:    arith.constant 2.000000e+00 : f32
// CHECK:       func.func private @[[K1]](%{{.*}}: memref<16xf32>)
// CHECK-NEXT:    arith.constant 3.000000e+00 : f32
// CHECK:       func.func private @[[K2]](%{{.*}}: memref<16xf32>, %[[ARG:.*]]: f32)
// CHECK:         arith.mulf %{{.*}}, %[[ARG]] : f32
func.func @constants_are_cloned_and_scalars_passed(%x: memref<16xf32>, %s: f32) {
  %two = arith.constant 2.0 : f32
  %three = arith.constant 3.0 : f32
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%x : memref<16xf32>)
  linalg.generic {indexing_maps = [#id], iterator_types = ["parallel"]} outs(%x : memref<16xf32>) {
  ^bb0(%o: f32):
    %m = arith.mulf %o, %two : f32
    linalg.yield %m : f32
  }
  linalg.generic {indexing_maps = [#id], iterator_types = ["parallel"]} outs(%x : memref<16xf32>) {
  ^bb0(%o: f32):
    %m = arith.mulf %o, %three : f32
    linalg.yield %m : f32
  }
  linalg.generic {indexing_maps = [#id], iterator_types = ["parallel"]} outs(%x : memref<16xf32>) {
  ^bb0(%o: f32):
    %m = arith.mulf %o, %s : f32
    linalg.yield %m : f32
  }
  return
}
