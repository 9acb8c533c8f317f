// --piper-gpu-device-memory: the plan's own buffers are device memory
// (gpu.alloc/gpu.dealloc, the runtime's caching allocator) and copies are
// linalg.copy, mapped to kernels like any other op.
// RUN: piper-opt %s --piper-gpu-device-memory | FileCheck %s

// CHECK-LABEL: func.func @temporaries(
// CHECK-SAME:    %[[ARG:.*]]: memref<16xf32>, %[[OUT:.*]]: memref<4x4xf32, strided<[8, 1]>>)
// CHECK-NEXT:    %[[W0:.*]] = gpu.wait async
// CHECK-NEXT:    %[[T:.*]], %[[A:.*]] = gpu.alloc async [%[[W0]]] () : memref<16xf32>
// CHECK-NEXT:    gpu.wait [%[[A]]]
// CHECK-NEXT:    linalg.copy ins(%[[ARG]] : memref<16xf32>) outs(%[[T]] : memref<16xf32>)
// CHECK-NEXT:    %[[V:.*]] = memref.expand_shape %[[T]]
// CHECK-NEXT:    linalg.copy ins(%[[V]] : memref<4x4xf32>) outs(%[[OUT]] : memref<4x4xf32, strided<[8, 1]>>)
// CHECK-NEXT:    %[[W1:.*]] = gpu.wait async
// CHECK-NEXT:    %[[D:.*]] = gpu.dealloc async [%[[W1]]] %[[T]] : memref<16xf32>
// CHECK-NEXT:    gpu.wait [%[[D]]]
// CHECK-NEXT:    return
// CHECK-NOT:     memref.alloc
func.func @temporaries(%arg: memref<16xf32>, %out: memref<4x4xf32, strided<[8, 1]>>) {
  %t = memref.alloc() {alignment = 64 : i64} : memref<16xf32>
  memref.copy %arg, %t : memref<16xf32> to memref<16xf32>
  %v = memref.expand_shape %t [[0, 1]] output_shape [4, 4] : memref<16xf32> into memref<4x4xf32>
  memref.copy %v, %out : memref<4x4xf32> to memref<4x4xf32, strided<[8, 1]>>
  memref.dealloc %t : memref<16xf32>
  return
}

// A scalar the host reads (AdamW's step counter) is copied to the stack on
// the compute stream first.
// CHECK-LABEL: func.func @host_scalar(
// CHECK-SAME:    %[[STEP:.*]]: memref<i64>)
// CHECK-NEXT:    %[[SLOT:.*]] = memref.alloca() : memref<i64>
// CHECK-NEXT:    %[[T0:.*]] = gpu.wait async
// CHECK-NEXT:    %[[T1:.*]] = gpu.memcpy async [%[[T0]]] %[[SLOT]], %[[STEP]] : memref<i64>, memref<i64>
// CHECK-NEXT:    gpu.wait [%[[T1]]]
// CHECK-NEXT:    %[[V:.*]] = memref.load %[[SLOT]][] : memref<i64>
// CHECK-NEXT:    return %[[V]] : i64
func.func @host_scalar(%step: memref<i64>) -> i64 {
  %v = memref.load %step[] : memref<i64>
  return %v : i64
}
