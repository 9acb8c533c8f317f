// --piper-fold-splat-constants: no splat tensor constant of more than one
// element reaches bufferization (which would make it a dense global the size
// of the tensor). A splat read by a linalg.generic becomes a scalar of its
// body; any other becomes a linalg.fill; scalars and what is not a splat
// stay.
// RUN: piper-opt %s --split-input-file --piper-fold-splat-constants | FileCheck %s --enable-var-scope

// The microbatch scale of an accumulated gradient: a scalar in the multiply.
// CHECK-LABEL: func.func @scale_is_a_scalar_of_the_body(
// CHECK-SAME:      %[[G:.*]]: tensor<16x32xf64>)
// CHECK-NOT:     dense
// CHECK:         %[[S:.*]] = arith.constant 2.500000e-01 : f64
// CHECK:         linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}], iterator_types = ["parallel", "parallel"]} ins(%[[G]] : tensor<16x32xf64>)
// CHECK-NEXT:    ^bb0(%[[IN:.*]]: f64, %{{.*}}: f64):
// CHECK-NEXT:      %[[M:.*]] = arith.mulf %[[IN]], %[[S]] : f64
// CHECK-NEXT:      linalg.yield %[[M]] : f64
// CHECK-NOT:     linalg.fill
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @scale_is_a_scalar_of_the_body(%g: tensor<16x32xf64>) -> tensor<16x32xf64> {
  %s = arith.constant dense<2.500000e-01> : tensor<16x32xf64>
  %e = tensor.empty() : tensor<16x32xf64>
  %y = linalg.generic {indexing_maps = [#id, #id, #id],
                       iterator_types = ["parallel", "parallel"]}
      ins(%g, %s : tensor<16x32xf64>, tensor<16x32xf64>)
      outs(%e : tensor<16x32xf64>) {
  ^bb0(%a: f64, %b: f64, %o: f64):
    %m = arith.mulf %a, %b : f64
    linalg.yield %m : f64
  } -> tensor<16x32xf64>
  return %y : tensor<16x32xf64>
}

// -----

// A zero cotangent passed to a kernel: filled at run time. The generic that
// also reads it gets the scalar; one fill is left, for the call.
// CHECK-LABEL: func.func @kernel_operand_is_filled(
// CHECK-SAME:      %[[X:.*]]: tensor<8x4xf32>)
// CHECK-NOT:     dense
// CHECK-DAG:     %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG:     %[[EMPTY:.*]] = tensor.empty() : tensor<8x4xf32>
// CHECK:         %[[FILL:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%[[EMPTY]] : tensor<8x4xf32>) -> tensor<8x4xf32>
// CHECK:         call @kernel(%[[FILL]])
// CHECK:         linalg.generic {{.*}} ins(%[[X]] : tensor<8x4xf32>)
// CHECK-NEXT:    ^bb0(%[[IN:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      arith.addf %[[IN]], %{{.*}} : f32
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func private @kernel(tensor<8x4xf32>) -> tensor<8x4xf32>
func.func @kernel_operand_is_filled(%x: tensor<8x4xf32>) -> (tensor<8x4xf32>, tensor<8x4xf32>) {
  %z = arith.constant dense<0.000000e+00> : tensor<8x4xf32>
  %k = call @kernel(%z) : (tensor<8x4xf32>) -> tensor<8x4xf32>
  %e = tensor.empty() : tensor<8x4xf32>
  %y = linalg.generic {indexing_maps = [#id, #id, #id],
                       iterator_types = ["parallel", "parallel"]}
      ins(%x, %z : tensor<8x4xf32>, tensor<8x4xf32>)
      outs(%e : tensor<8x4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<8x4xf32>
  return %k, %y : tensor<8x4xf32>, tensor<8x4xf32>
}

// -----

// A fill read by a generic is a scalar too, and the dead fill goes.
// CHECK-LABEL: func.func @fill_input_is_a_scalar(
// CHECK-SAME:      %[[X:.*]]: tensor<4x4xf64>, %[[V:.*]]: f64)
// CHECK-NOT:     linalg.fill
// CHECK:         linalg.generic {{.*}} ins(%[[X]] : tensor<4x4xf64>)
// CHECK-NEXT:    ^bb0(%[[IN:.*]]: f64, %{{.*}}: f64):
// CHECK-NEXT:      arith.subf %[[V]], %[[IN]] : f64
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @fill_input_is_a_scalar(%x: tensor<4x4xf64>, %v: f64) -> tensor<4x4xf64> {
  %e0 = tensor.empty() : tensor<4x4xf64>
  %f = linalg.fill ins(%v : f64) outs(%e0 : tensor<4x4xf64>) -> tensor<4x4xf64>
  %e = tensor.empty() : tensor<4x4xf64>
  %y = linalg.generic {indexing_maps = [#id, #id, #id],
                       iterator_types = ["parallel", "parallel"]}
      ins(%f, %x : tensor<4x4xf64>, tensor<4x4xf64>)
      outs(%e : tensor<4x4xf64>) {
  ^bb0(%a: f64, %b: f64, %o: f64):
    %s = arith.subf %a, %b : f64
    linalg.yield %s : f64
  } -> tensor<4x4xf64>
  return %y : tensor<4x4xf64>
}

// -----

// Only the splat gives the reduced loop's bound: it stays an operand (as a
// fill, never dense data).
// CHECK-LABEL: func.func @splat_that_bounds_a_loop_stays_an_operand(
// CHECK-NOT:     dense
// CHECK:         %[[FILL:.*]] = linalg.fill
// CHECK:         linalg.generic {{.*}} ins(%[[FILL]] : tensor<4x8xf64>)
func.func @splat_that_bounds_a_loop_stays_an_operand() -> tensor<4xf64> {
  %c = arith.constant dense<1.000000e+00> : tensor<4x8xf64>
  %zero = arith.constant 0.000000e+00 : f64
  %e = tensor.empty() : tensor<4xf64>
  %acc = linalg.fill ins(%zero : f64) outs(%e : tensor<4xf64>) -> tensor<4xf64>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                        affine_map<(d0, d1) -> (d0)>],
                       iterator_types = ["parallel", "reduction"]}
      ins(%c : tensor<4x8xf64>) outs(%acc : tensor<4xf64>) {
  ^bb0(%a: f64, %o: f64):
    %s = arith.addf %a, %o : f64
    linalg.yield %s : f64
  } -> tensor<4xf64>
  return %y : tensor<4xf64>
}

// -----

// Scalars (the AdamW step count, a rank-0 loss seed) and constants that are
// not splats are left alone.
// CHECK-LABEL: func.func @scalars_and_non_splats_stay(
// CHECK-DAG:     arith.constant dense<1> : tensor<i64>
// CHECK-DAG:     arith.constant dense<1.000000e+00> : tensor<1xf32>
// CHECK-DAG:     arith.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
// CHECK-NOT:     linalg.fill
func.func private @use(tensor<i64>, tensor<1xf32>, tensor<2xf32>)
func.func @scalars_and_non_splats_stay() {
  %step = arith.constant dense<1> : tensor<i64>
  %one = arith.constant dense<1.0> : tensor<1xf32>
  %pair = arith.constant dense<[1.0, 2.0]> : tensor<2xf32>
  call @use(%step, %one, %pair) : (tensor<i64>, tensor<1xf32>, tensor<2xf32>) -> ()
  return
}
