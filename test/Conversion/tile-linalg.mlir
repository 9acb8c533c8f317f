// --piper-tile-linalg: linalg ops on buffers into thread chunks (scf.parallel
// over the outermost parallel loop, only when the op has at least twice
// parallel-grain iterations) and 1 x W vector tiles (W = vector-bytes /
// element size), the innermost loop's tail split off instead of masked.
// RUN: piper-opt %s --pass-pipeline='builtin.module(func.func(piper-tile-linalg{parallel-grain=4096 vector-bytes=32}))' | FileCheck %s --enable-var-scope
// Without options the pass changes nothing.
// RUN: piper-opt %s --piper-tile-linalg | FileCheck %s --check-prefix=NONE

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>
#col = affine_map<(d0, d1) -> (d0)>

// A bias add + exp over 256 x 64 f32 (16,384 iterations): four chunks of 64
// rows (4,096 iterations each) across threads, vector<8xf32> inside.
// CHECK-LABEL: func.func @elementwise_is_split_and_vectorised(
// CHECK:         scf.parallel (%[[I:.*]]) = (%{{.*}}) to (%{{.*}}) step (%[[C64:.*]]) {
// CHECK:           scf.for
// CHECK:             scf.for
// CHECK:               %[[X:.*]] = vector.load {{.*}} vector<8xf32>
// CHECK:               %[[B:.*]] = vector.load {{.*}} vector<8xf32>
// CHECK:               %[[S:.*]] = arith.addf %[[X]], %[[B]] : vector<8xf32>
// The f32 exp is upstream's polynomial on the vector (no math.exp left for
// LLVM to scalarise into libm calls).
// CHECK-NOT:           math.exp
// CHECK:               math.fma {{.*}} : vector<8xf32>
// CHECK-NOT:           math.exp
// CHECK:               arith.bitcast {{.*}} : vector<8xi32> to vector<8xf32>
// CHECK:               vector.store {{.*}} vector<8xf32>
// CHECK:           scf.reduce
// CHECK-NOT:     linalg.generic
// NONE-LABEL: func.func @elementwise_is_split_and_vectorised(
// NONE-NEXT:    linalg.generic
// NONE-NOT:     scf.parallel
func.func @elementwise_is_split_and_vectorised(%a: memref<256x64xf32>, %b: memref<64xf32>, %c: memref<256x64xf32>) {
  linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a, %b : memref<256x64xf32>, memref<64xf32>) outs(%c : memref<256x64xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    %e = math.exp %s : f32
    linalg.yield %e : f32
  }
  return
}

// 6 x 30 f64 is under the grain: no threads. The row sum's 30 columns are 7
// tiles of vector<4xf64> and a tail of vector<2xf64>, each an ordered
// reduction into the row's accumulator (the interpreter's order).
// CHECK-LABEL: func.func @small_reduction_stays_on_one_thread(
// CHECK-NOT:     scf.parallel
// CHECK:         memref.subview %{{.*}}[0, 0] [6, 28] [1, 1]
// CHECK:         scf.for
// CHECK:           scf.for
// CHECK:             vector.load {{.*}} vector<4xf64>
// CHECK:             vector.reduction <add>, %{{.*}}, %{{.*}} : vector<4xf64> into f64
// CHECK:         memref.subview %{{.*}}[0, 28] [6, 2] [1, 1]
// CHECK:             vector.reduction <add>, %{{.*}}, %{{.*}} : vector<2xf64> into f64
// CHECK-NOT:     linalg.generic
func.func @small_reduction_stays_on_one_thread(%a: memref<6x30xf64>, %c: memref<6xf64>) {
  linalg.generic {indexing_maps = [#id, #col], iterator_types = ["parallel", "reduction"]}
      ins(%a : memref<6x30xf64>) outs(%c : memref<6xf64>) {
  ^bb0(%x: f64, %o: f64):
    %s = arith.addf %x, %o : f64
    linalg.yield %s : f64
  }
  return
}

// A column sum over 512 rows of 64 (a bias gradient): the reduction loop
// is outermost, so the threads split the 64 columns (chunks of 8 columns x
// 512 rows = 4,096 iterations); every column is still summed by one thread.
// CHECK-LABEL: func.func @reduction_splits_only_parallel_loops(
// CHECK:         scf.parallel (%{{.*}}) = (%{{.*}}) to (%{{.*}}) step (%{{.*}}) {
// CHECK:           memref.subview %{{.*}}[0, %{{.*}}] [512, 8] [1, 1]
// CHECK:           vector.load {{.*}} vector<8xf32>
// CHECK:           arith.addf {{.*}} : vector<8xf32>
func.func @reduction_splits_only_parallel_loops(%a: memref<512x64xf32>, %c: memref<64xf32>) {
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["reduction", "parallel"]}
      ins(%a : memref<512x64xf32>) outs(%c : memref<64xf32>) {
  ^bb0(%x: f32, %o: f32):
    %s = arith.addf %x, %o : f32
    linalg.yield %s : f32
  }
  return
}

// Fills stay linalg (LLVM makes their loops a memset), and so does a body
// the vectoriser rejects (a gather through memref.load).
// CHECK-LABEL: func.func @fills_and_gathers_keep_their_loops(
// CHECK:         linalg.fill
// CHECK:         linalg.generic
// CHECK:           memref.load
// CHECK-NOT:     vector.
func.func @fills_and_gathers_keep_their_loops(%ids: memref<4xindex>, %table: memref<16x8xf32>, %out: memref<4x8xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%out : memref<4x8xf32>)
  linalg.generic {indexing_maps = [#col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%ids : memref<4xindex>) outs(%out : memref<4x8xf32>) {
  ^bb0(%id: index, %o: f32):
    %j = linalg.index 1 : index
    %v = memref.load %table[%id, %j] : memref<16x8xf32>
    linalg.yield %v : f32
  }
  return
}
