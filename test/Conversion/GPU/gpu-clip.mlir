// --piper-gpu-clip: the CPU plan's clipping calls, which read a gradient on
// the host, become linalg on the device buffers and one f64 per gradient
// handed to the host (piper_clip_add_squares); the scale reads the
// coefficient (piper_clip_coefficient) and multiplies on the device. The
// second RUN carries the result through the rest of the GPU target's host
// passes: every op mapped to a kernel, the sum read through a stack copy,
// nothing the host verifier rejects.
// RUN: piper-opt %s --piper-gpu-clip | FileCheck %s
// RUN: piper-opt %s --piper-gpu-clip --piper-gpu-device-memory \
// RUN:   --piper-gpu-map-linalg --convert-parallel-loops-to-gpu \
// RUN:   --piper-gpu-verify-host | FileCheck %s --check-prefix=MAPPED

// A 2-D f32 gradient (a strided view, as the plan passes them): squares per
// row in f64 (one thread each), the rows summed, the total times the
// weight to the host.
// CHECK-DAG:   #[[$ID2:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG:   #[[$ROW:.*]] = affine_map<(d0, d1) -> (d0)>
// CHECK-DAG:   #[[$ID1:.*]] = affine_map<(d0) -> (d0)>
// CHECK-DAG:   #[[$ALL:.*]] = affine_map<(d0) -> ()>
// CHECK-LABEL: func.func @accumulate_2d(
// CHECK-SAME:    %[[G:.*]]: memref<4x8xf32, strided<[?, ?], offset: ?>>, %[[W:.*]]: f64)
// CHECK-DAG:     %[[ZERO:.*]] = arith.constant 0.000000e+00 : f64
// CHECK:         %[[TOTAL:.*]] = memref.alloc() : memref<f64>
// CHECK-NEXT:    linalg.fill ins(%[[ZERO]] : f64) outs(%[[TOTAL]] : memref<f64>)
// CHECK-NEXT:    %[[$ROWS:.*]] = memref.alloc() : memref<4xf64>
// CHECK-NEXT:    linalg.fill ins(%[[ZERO]] : f64) outs(%[[$ROWS]] : memref<4xf64>)
// CHECK-NEXT:    linalg.generic {indexing_maps = [#[[$ID2]], #[[$ROW]]], iterator_types = ["parallel", "reduction"]} ins(%[[G]] : {{.*}}) outs(%[[$ROWS]] : memref<4xf64>)
// CHECK-NEXT:    ^bb0(%[[X:.*]]: f32, %[[ACC:.*]]: f64):
// CHECK-NEXT:      %[[XD:.*]] = arith.extf %[[X]] : f32 to f64
// CHECK-NEXT:      %[[SQ:.*]] = arith.mulf %[[XD]], %[[XD]] : f64
// CHECK-NEXT:      %[[SUM:.*]] = arith.addf %[[ACC]], %[[SQ]] : f64
// CHECK-NEXT:      linalg.yield %[[SUM]] : f64
// CHECK:         linalg.generic {indexing_maps = [#[[$ID1]], #[[$ALL]]], iterator_types = ["reduction"]} ins(%[[$ROWS]] : memref<4xf64>) outs(%[[TOTAL]] : memref<f64>)
// CHECK:         memref.dealloc %[[$ROWS]]
// CHECK-NEXT:    %[[T:.*]] = memref.load %[[TOTAL]][] : memref<f64>
// CHECK-NEXT:    %[[WT:.*]] = arith.mulf %[[W]], %[[T]] : f64
// CHECK-NEXT:    memref.dealloc %[[TOTAL]]
// CHECK-NEXT:    call @piper_clip_add_squares(%[[WT]]) : (f64) -> ()
// CHECK-NEXT:    return
func.func @accumulate_2d(%g: memref<4x8xf32, strided<[?, ?], offset: ?>>, %w: f64) {
  %u = memref.cast %g : memref<4x8xf32, strided<[?, ?], offset: ?>> to memref<*xf32>
  call @piper_clip_accumulate_f32(%u, %w) : (memref<*xf32>, f64) -> ()
  return
}

// A 1-D f64 gradient (a bias): one reduction, no f32 widening.
// CHECK-LABEL: func.func @accumulate_1d(
// CHECK:         linalg.generic {indexing_maps = [#[[$ID1]], #[[$ALL]]], iterator_types = ["reduction"]} ins(%{{.*}} : memref<16xf64>) outs(%{{.*}} : memref<f64>)
// CHECK-NEXT:    ^bb0(%[[Y:.*]]: f64, %[[B:.*]]: f64):
// CHECK-NEXT:      %[[Y2:.*]] = arith.mulf %[[Y]], %[[Y]] : f64
// CHECK-NEXT:      arith.addf %[[B]], %[[Y2]] : f64
// CHECK:         call @piper_clip_add_squares
func.func @accumulate_1d(%g: memref<16xf64>, %w: f64) {
  %u = memref.cast %g : memref<16xf64> to memref<*xf64>
  call @piper_clip_accumulate_f64(%u, %w) : (memref<*xf64>, f64) -> ()
  return
}

// The scale: f64(g) * c, rounded to f32 once, into the result buffer.
// CHECK-LABEL: func.func @scale(
// CHECK-SAME:    %[[IN:.*]]: memref<4x8xf32>, %[[OUT:.*]]: memref<4x8xf32>)
// CHECK-NEXT:    %[[C:.*]] = call @piper_clip_coefficient() : () -> f64
// CHECK-NEXT:    linalg.generic {indexing_maps = [#[[$ID2]], #[[$ID2]]], iterator_types = ["parallel", "parallel"]} ins(%[[IN]] : memref<4x8xf32>) outs(%[[OUT]] : memref<4x8xf32>)
// CHECK-NEXT:    ^bb0(%[[V:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[VD:.*]] = arith.extf %[[V]] : f32 to f64
// CHECK-NEXT:      %[[P:.*]] = arith.mulf %[[VD]], %[[C]] : f64
// CHECK-NEXT:      %[[R:.*]] = arith.truncf %[[P]] : f64 to f32
// CHECK-NEXT:      linalg.yield %[[R]] : f32
// CHECK:         return
func.func @scale(%g: memref<4x8xf32>, %o: memref<4x8xf32>) {
  %u = memref.cast %g : memref<4x8xf32> to memref<*xf32>
  %v = memref.cast %o : memref<4x8xf32> to memref<*xf32>
  call @piper_clip_scale_f32(%u, %v) : (memref<*xf32>, memref<*xf32>) -> ()
  return
}

// The host-reading declarations are gone; the device-side ones declared.
// CHECK-NOT: @piper_clip_accumulate_
// CHECK-NOT: @piper_clip_scale_
// CHECK-DAG: func.func private @piper_clip_add_squares(f64)
// CHECK-DAG: func.func private @piper_clip_coefficient() -> f64
func.func private @piper_clip_accumulate_f32(memref<*xf32>, f64)
func.func private @piper_clip_accumulate_f64(memref<*xf64>, f64)
func.func private @piper_clip_scale_f32(memref<*xf32>, memref<*xf32>)

// MAPPED-LABEL: func.func @accumulate_2d(
// MAPPED-NOT:     linalg.
// MAPPED:         gpu.launch
// MAPPED:         gpu.launch
// MAPPED:         gpu.launch
// MAPPED:         %[[STACK:.*]] = memref.alloca() : memref<f64>
// MAPPED:         gpu.memcpy {{.*}}%[[STACK]]
// MAPPED:         gpu.wait
// MAPPED:         memref.load %[[STACK]][] : memref<f64>
// MAPPED:         call @piper_clip_add_squares
// MAPPED-LABEL: func.func @scale(
// MAPPED-NOT:     linalg.
// MAPPED:         call @piper_clip_coefficient
// MAPPED:         gpu.launch
