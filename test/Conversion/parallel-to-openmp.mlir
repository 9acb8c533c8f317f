// --piper-parallel-to-openmp: an scf.parallel (a thread-chunked linalg op
// from --piper-tile-linalg) becomes an OpenMP work-sharing loop, with no
// memref.alloca_scope left around its body and no thread count in the code
// (the runtime's, which piper-run --threads sets, decides).
// RUN: piper-opt %s --piper-parallel-to-openmp | FileCheck %s --enable-var-scope

// CHECK-LABEL: func.func @chunks_become_a_wsloop(
// CHECK:         omp.parallel {
// CHECK-NOT:       num_threads
// CHECK:           omp.wsloop {
// CHECK-NEXT:        omp.loop_nest (%[[I:.*]]) : index = (%{{.*}}) to (%{{.*}}) step (%{{.*}}) {
// CHECK-NOT:           memref.alloca_scope
// CHECK:               memref.subview %{{.*}}[%[[I]], 0] [64, 64] [1, 1]
// CHECK:               linalg.generic
// CHECK:               omp.yield
// CHECK:         omp.terminator
// CHECK-NOT:     scf.parallel
func.func @chunks_become_a_wsloop(%a: memref<256x64xf32>, %c: memref<256x64xf32>) {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %c256 = arith.constant 256 : index
  scf.parallel (%i) = (%c0) to (%c256) step (%c64) {
    %sa = memref.subview %a[%i, 0] [64, 64] [1, 1] : memref<256x64xf32> to memref<64x64xf32, strided<[64, 1], offset: ?>>
    %sc = memref.subview %c[%i, 0] [64, 64] [1, 1] : memref<256x64xf32> to memref<64x64xf32, strided<[64, 1], offset: ?>>
    linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
        ins(%sa : memref<64x64xf32, strided<[64, 1], offset: ?>>) outs(%sc : memref<64x64xf32, strided<[64, 1], offset: ?>>) {
    ^bb0(%x: f32, %o: f32):
      %e = math.exp %x : f32
      linalg.yield %e : f32
    }
    scf.reduce
  }
  return
}
