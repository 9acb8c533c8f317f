// --piper-fuse-elementwise: an elementwise producer used once is fused into
// its consumer (one linalg.generic computing both bodies); a producer with
// two users stays, so it is not computed twice (the consumer's repeated
// operand is merged into one).
// RUN: piper-opt %s --piper-fuse-elementwise | FileCheck %s --enable-var-scope

#id = affine_map<(d0, d1) -> (d0, d1)>

// CHECK-LABEL: func.func @single_use_producer_is_fused(
// CHECK-SAME:    %[[X:.*]]: tensor<4x8xf32>, %[[Z:.*]]: tensor<4x8xf32>)
// CHECK:         %[[R:.*]] = linalg.generic
// CHECK-SAME:      ins(%[[X]], %[[Z]] : tensor<4x8xf32>, tensor<4x8xf32>)
// CHECK:         ^bb0(%[[A:.*]]: f32, %[[B:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[E:.*]] = math.exp %[[A]] : f32
// CHECK-NEXT:      %[[M:.*]] = arith.mulf %[[E]], %[[B]] : f32
// CHECK-NEXT:      linalg.yield %[[M]] : f32
// CHECK-NOT:     linalg.generic
// CHECK:         return %[[R]]
func.func @single_use_producer_is_fused(%x: tensor<4x8xf32>, %z: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %init = tensor.empty() : tensor<4x8xf32>
  %t = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x8xf32>) outs(%init : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %e = math.exp %a : f32
    linalg.yield %e : f32
  } -> tensor<4x8xf32>
  %y = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%t, %z : tensor<4x8xf32>, tensor<4x8xf32>) outs(%init : tensor<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @shared_producer_is_not_fused(
// CHECK:         %[[T:.*]] = linalg.generic
// CHECK:           math.exp
// CHECK:         %[[Y:.*]] = linalg.generic
// CHECK-SAME:      ins(%[[T]] : tensor<4x8xf32>)
// CHECK-NOT:       math.exp
// CHECK:           arith.mulf %[[IN:.*]], %[[IN]] : f32
// CHECK:         return %[[T]], %[[Y]]
func.func @shared_producer_is_not_fused(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %init = tensor.empty() : tensor<4x8xf32>
  %t = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x8xf32>) outs(%init : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %e = math.exp %a : f32
    linalg.yield %e : f32
  } -> tensor<4x8xf32>
  %y = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%t, %t : tensor<4x8xf32>, tensor<4x8xf32>) outs(%init : tensor<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<4x8xf32>
  return %t, %y : tensor<4x8xf32>, tensor<4x8xf32>
}

// A call between producer and consumer (a kernel launch, a collective in a
// step program) keeps them apart: fused, the producer would run at the
// consumer and its operands stay live across the call (a microbatch's
// gradient added into its running sum only after the last microbatch's).
// CHECK-LABEL: func.func @call_between_is_not_fused(
// CHECK:         %[[S:.*]] = linalg.generic
// CHECK:           arith.addf
// CHECK:         call @launch()
// CHECK:         %[[T:.*]] = linalg.generic
// CHECK-SAME:      ins(%[[S]], %{{.*}} : tensor<4x8xf32>, tensor<4x8xf32>)
// CHECK:           arith.addf
// CHECK:         return %[[T]]
func.func private @launch()
func.func @call_between_is_not_fused(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>, %c: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %init = tensor.empty() : tensor<4x8xf32>
  %s = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a, %b : tensor<4x8xf32>, tensor<4x8xf32>) outs(%init : tensor<4x8xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %r = arith.addf %x, %y : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  call @launch() : () -> ()
  %t = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%s, %c : tensor<4x8xf32>, tensor<4x8xf32>) outs(%init : tensor<4x8xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %r = arith.addf %x, %y : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  return %t : tensor<4x8xf32>
}
