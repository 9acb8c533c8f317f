// --piper-gpu-serial-loops: a host loop over buffers (the embedding VJP's
// scatter: read an id, accumulate a row through an outlined kernel) becomes
// one thread of one block, the kernel inlined and lowered to loops.
// RUN: piper-opt %s --piper-gpu-serial-loops | FileCheck %s

#id2 = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @scatter(
// CHECK-SAME:    %[[IDS:.*]]: memref<4xi64>, %[[DY:.*]]: memref<4x8xf32>, %[[DW:.*]]: memref<16x8xf32>)
// CHECK:         scf.parallel (%{{.*}}) = (%[[Z:.*]]) to (%[[O:.*]]) step (%[[O]]) {
// CHECK-NEXT:      scf.parallel (%{{.*}}) = (%[[Z]]) to (%[[O]]) step (%[[O]]) {
// CHECK-NEXT:        scf.for %[[I:.*]] = {{.*}} {
// CHECK-NEXT:          %[[ID:.*]] = memref.load %[[IDS]][%[[I]]] : memref<4xi64>
// CHECK:               memref.subview %[[DW]]
// CHECK-NOT:           call
// CHECK:               scf.for
// CHECK:                 scf.for
// CHECK:                   arith.addf
// CHECK:           } {mapping = [#gpu.loop_dim_map<processor = thread_x
// CHECK:         } {mapping = [#gpu.loop_dim_map<processor = block_x
func.func @scatter(%ids: memref<4xi64>, %dy: memref<4x8xf32>, %dw: memref<16x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.for %i = %c0 to %c4 step %c1 {
    %id = memref.load %ids[%i] : memref<4xi64>
    %row = arith.index_cast %id : i64 to index
    %dst = memref.subview %dw[%row, 0] [1, 8] [1, 1] : memref<16x8xf32> to memref<1x8xf32, strided<[8, 1], offset: ?>>
    %src = memref.subview %dy[%i, 0] [1, 8] [1, 1] : memref<4x8xf32> to memref<1x8xf32, strided<[8, 1], offset: ?>>
    func.call @piper_kernel(%src, %dst) : (memref<1x8xf32, strided<[8, 1], offset: ?>>, memref<1x8xf32, strided<[8, 1], offset: ?>>) -> ()
  }
  return
}
func.func private @piper_kernel(%src: memref<1x8xf32, strided<[8, 1], offset: ?>>, %dst: memref<1x8xf32, strided<[8, 1], offset: ?>>) {
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%src : memref<1x8xf32, strided<[8, 1], offset: ?>>) outs(%dst : memref<1x8xf32, strided<[8, 1], offset: ?>>) {
  ^bb0(%x: f32, %y: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  }
  return
}

// A loop over scalars only stays on the host.
// CHECK-LABEL: func.func @host_only(
// CHECK-NOT:     scf.parallel
// CHECK:         scf.for
func.func @host_only(%n: index) -> index {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %c0) -> index {
    %s = arith.addi %acc, %i : index
    scf.yield %s : index
  }
  return %r : index
}
