// --piper-gpu-map-linalg: each linalg op on buffers becomes one collapsed
// scf.parallel tiled by block-size, tiles on block_x and a tile's
// iterations on thread_x; reductions stay sequential in the thread. Then
// convert-parallel-loops-to-gpu makes the launches and
// gpu-kernel-outlining the gpu.module kernels.
// RUN: piper-opt %s --pass-pipeline='builtin.module(func.func(piper-gpu-map-linalg{block-size=128}))' | FileCheck %s --check-prefix=MAP
// RUN: piper-opt %s --pass-pipeline='builtin.module(func.func(piper-gpu-map-linalg{block-size=128}),convert-parallel-loops-to-gpu)' | FileCheck %s --check-prefix=LAUNCH
// RUN: piper-opt %s --pass-pipeline='builtin.module(func.func(piper-gpu-map-linalg{block-size=128}),convert-parallel-loops-to-gpu,gpu-kernel-outlining)' | FileCheck %s --check-prefix=OUTLINE

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#scalar = affine_map<(d0) -> ()>
#id1 = affine_map<(d0) -> (d0)>

// A 16x32 elementwise op: 512 iterations in one loop (16 * 32), blocks of
// 128 threads, a bound check, the two indices recovered from the one.
// MAP-LABEL: func.func @elementwise(
// MAP:         %[[R:.*]] = arith.muli %{{.*}}, %c16{{.*}} : index
// MAP:         %[[N:.*]] = arith.muli %[[R]], %[[C32:c32.*]] : index
// MAP:         %[[TILE:.*]] = arith.muli %{{.*}}, %c128{{.*}} : index
// MAP:         scf.parallel (%[[B:.*]]) = (%{{.*}}) to (%[[N]]) step (%[[TILE]]) {
// MAP-NEXT:      scf.parallel (%[[T:.*]]) = (%{{.*}}) to (%[[TILE]]) step (%{{.*}}) {
// MAP-NEXT:        %[[I:.*]] = arith.addi %[[T]], %[[B]] : index
// MAP:             %[[IN:.*]] = arith.cmpi ult, %{{.*}}, %[[N]] : index
// MAP:             scf.if
// MAP-NEXT:          %[[COL:.*]] = arith.remsi %[[I]], %[[C32]] : index
// MAP-NEXT:          %[[ROW:.*]] = arith.divsi %[[I]], %[[C32]] : index
// MAP:               memref.load
// MAP:               math.exp
// MAP:               memref.store
// MAP:           } {mapping = [#gpu.loop_dim_map<processor = thread_x, map = (d0) -> (d0), bound = (d0) -> (d0)>]}
// MAP:         } {mapping = [#gpu.loop_dim_map<processor = block_x, map = (d0) -> (d0), bound = (d0) -> (d0)>]}
// MAP-NOT:     linalg.
// LAUNCH-LABEL: func.func @elementwise(
// LAUNCH:        gpu.launch blocks(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) threads(
// LAUNCH:          gpu.terminator
// LAUNCH-NOT:    scf.parallel
// OUTLINE-LABEL: func.func @elementwise(
// OUTLINE:       gpu.launch_func  @elementwise_kernel::@elementwise_kernel blocks in (%{{.*}}, %{{.*}}, %{{.*}}) threads in (%{{.*}}, %{{.*}}, %{{.*}})
// OUTLINE:     gpu.module @elementwise_kernel
// OUTLINE:       gpu.func @elementwise_kernel(
// OUTLINE-SAME:    kernel
// OUTLINE:         gpu.block_id  x
// OUTLINE:         gpu.thread_id  x
// OUTLINE:         math.exp
// OUTLINE:         gpu.return
func.func @elementwise(%a: memref<16x32xf32>, %b: memref<16x32xf32>) {
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%a : memref<16x32xf32>) outs(%b : memref<16x32xf32>) {
  ^bb0(%x: f32, %y: f32):
    %e = math.exp %x : f32
    linalg.yield %e : f32
  }
  return
}

// A row sum: 16 rows, one thread each (one block of 16), the 32 columns
// summed in order by an scf.for in the thread.
// MAP-LABEL: func.func @row_sum(
// MAP:         %[[TILE:.*]] = arith.muli %{{.*}}, %c16{{.*}} : index
// MAP:         scf.parallel (%{{.*}}) = (%{{.*}}) to (%c16{{.*}}) step (%[[TILE]]) {
// MAP-NEXT:      scf.parallel (%{{.*}}) = (%{{.*}}) to (%[[TILE]]) step (%{{.*}}) {
// MAP:             scf.for
// MAP:               arith.addf
// MAP:           } {mapping = [#gpu.loop_dim_map<processor = thread_x
// MAP:         } {mapping = [#gpu.loop_dim_map<processor = block_x
func.func @row_sum(%a: memref<16x32xf32>, %s: memref<16xf32>) {
  linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]}
      ins(%a : memref<16x32xf32>) outs(%s : memref<16xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %r = arith.addf %x, %acc : f32
    linalg.yield %r : f32
  }
  return
}

// A full reduction has no parallel loop: one thread of one block.
// MAP-LABEL: func.func @total(
// MAP:         %[[TILE:.*]] = arith.muli %{{.*}}, %{{.*}} : index
// MAP:         scf.parallel (%{{.*}}) = (%c0{{.*}}) to (%c1{{.*}}) step (%[[TILE]]) {
// MAP-NEXT:      scf.parallel (%{{.*}}) = (%{{.*}}) to (%[[TILE]]) step (%{{.*}}) {
// MAP:             scf.for
// MAP:           } {mapping = [#gpu.loop_dim_map<processor = thread_x
// MAP:         } {mapping = [#gpu.loop_dim_map<processor = block_x
// OUTLINE-LABEL: func.func @total(
// OUTLINE:       gpu.launch_func  @total_kernel::@total_kernel
// OUTLINE:     gpu.module @total_kernel
func.func @total(%a: memref<64xf32>, %s: memref<f32>) {
  linalg.generic {indexing_maps = [#id1, #scalar], iterator_types = ["reduction"]}
      ins(%a : memref<64xf32>) outs(%s : memref<f32>) {
  ^bb0(%x: f32, %acc: f32):
    %r = arith.addf %x, %acc : f32
    linalg.yield %r : f32
  }
  return
}
