// The optimizer updates lower to one elementwise linalg.generic each
// (UpdatesToLinalg.cpp): ref::sgdStep / ref::adamwStep per element, in f64
// from the stored elements, each result rounded once; no kernel call. The
// learning rate is the running step's, read once per update outside the
// loop from the runtime (piper_step_lr; the lr attribute is only the
// plan's default), so it never appears as a constant.
// RUN: piper-opt %s -split-input-file --piper-convert-to-kernels | FileCheck %s -enable-var-scope
// RUN: piper-opt %s -split-input-file --piper-convert-to-kernels | FileCheck %s --check-prefix=NOCALL
// NOCALL-NOT: call @piper_k
// NOCALL-NOT: 1.000000e-01
// NOCALL-NOT: 1.000000e-03

// SGD with momentum and weight decay on f32: g' = g + wd p,
// buf = momentum buf + g', p - lr buf, in f64, both results rounded.
// CHECK-LABEL: func.func @sgd_is_one_generic_in_f64(
// CHECK-SAME:    %[[P:.*]]: tensor<2x3xf32>, %[[G:.*]]: tensor<2x3xf32>, %[[B:.*]]: tensor<2x3xf32>
// CHECK:         %[[LR:.*]] = call @piper_step_lr() : () -> f64
// CHECK:         %[[R:.*]]:2 = linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]} ins(%[[P]], %[[G]], %[[B]] : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) outs(%{{.*}}, %{{.*}} : tensor<2x3xf32>, tensor<2x3xf32>)
// CHECK-NEXT:    ^bb0(%[[PE:.*]]: f32, %[[GE:.*]]: f32, %[[BE:.*]]: f32, %{{.*}}: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[X:.*]] = arith.extf %[[PE]] : f32 to f64
// CHECK-NEXT:      %[[GD:.*]] = arith.extf %[[GE]] : f32 to f64
// CHECK-NEXT:      %[[BD:.*]] = arith.extf %[[BE]] : f32 to f64
// CHECK-NEXT:      %[[WD:.*]] = arith.constant 1.000000e-02 : f64
// CHECK-NEXT:      %[[WDX:.*]] = arith.mulf %[[WD]], %[[X]] : f64
// CHECK-NEXT:      %[[G2:.*]] = arith.addf %[[GD]], %[[WDX]] : f64
// CHECK-NEXT:      %[[MOM:.*]] = arith.constant 9.000000e-01 : f64
// CHECK-NEXT:      %[[MB:.*]] = arith.mulf %[[MOM]], %[[BD]] : f64
// CHECK-NEXT:      %[[NB:.*]] = arith.addf %[[MB]], %[[G2]] : f64
// CHECK-NEXT:      %[[STEP:.*]] = arith.mulf %[[LR]], %[[NB]] : f64
// CHECK-NEXT:      %[[NP:.*]] = arith.subf %[[X]], %[[STEP]] : f64
// CHECK-NEXT:      %[[NPF:.*]] = arith.truncf %[[NP]] : f64 to f32
// CHECK-NEXT:      %[[NBF:.*]] = arith.truncf %[[NB]] : f64 to f32
// CHECK-NEXT:      linalg.yield %[[NPF]], %[[NBF]] : f32, f32
// CHECK:         return %[[R]]#0, %[[R]]#1
func.func @sgd_is_one_generic_in_f64(%p: tensor<2x3xf32>, %g: tensor<2x3xf32>, %b: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  %np, %nb = piper.sgd_update %p, %g, %b {lr = 1.0e-01 : f64, momentum = 9.0e-01 : f64, weight_decay = 1.0e-02 : f64} : tensor<2x3xf32>
  return %np, %nb : tensor<2x3xf32>, tensor<2x3xf32>
}

// -----

// Without momentum or weight decay their terms vanish (as the reference's
// branches skip them) and the buffer passes through.
// CHECK-LABEL: func.func @sgd_without_momentum_keeps_the_buffer(
// CHECK:         %[[LR:.*]] = call @piper_step_lr() : () -> f64
// CHECK:         ^bb0(%[[PE:.*]]: f64, %[[GE:.*]]: f64, %[[BE:.*]]: f64, %{{.*}}: f64, %{{.*}}: f64):
// CHECK-NEXT:      %[[STEP:.*]] = arith.mulf %[[LR]], %[[GE]] : f64
// CHECK-NEXT:      %[[NP:.*]] = arith.subf %[[PE]], %[[STEP]] : f64
// CHECK-NEXT:      linalg.yield %[[NP]], %[[BE]] : f64, f64
func.func @sgd_without_momentum_keeps_the_buffer(%p: tensor<3xf64>, %g: tensor<3xf64>, %b: tensor<3xf64>) -> (tensor<3xf64>, tensor<3xf64>) {
  %np, %nb = piper.sgd_update %p, %g, %b {lr = 1.0e-01 : f64} : tensor<3xf64>
  return %np, %nb : tensor<3xf64>, tensor<3xf64>
}

// -----

// AdamW: the bias corrections 1 - beta^step once from the rank-0 step,
// then one generic; lr * weight_decay is one product of the step's lr and
// the constant before the loop, 1 - beta is folded, as the reference's C++
// evaluates them.
// CHECK-LABEL: func.func @adamw_is_bias_corrections_and_one_generic(
// CHECK-SAME:    %[[P:.*]]: tensor<4xf32>, %[[G:.*]]: tensor<4xf32>, %[[M:.*]]: tensor<4xf32>, %[[V:.*]]: tensor<4xf32>, %[[S:.*]]: tensor<i64>
// CHECK:         %[[T:.*]] = tensor.extract %[[S]][] : tensor<i64>
// CHECK-NEXT:    %[[TF:.*]] = arith.sitofp %[[T]] : i64 to f64
// CHECK-NEXT:    %[[ONE:.*]] = arith.constant 1.000000e+00 : f64
// CHECK-NEXT:    %[[B1:.*]] = arith.constant 9.000000e-01 : f64
// CHECK-NEXT:    %[[B1T:.*]] = math.powf %[[B1]], %[[TF]] : f64
// CHECK-NEXT:    %[[BIAS1:.*]] = arith.subf %[[ONE]], %[[B1T]] : f64
// CHECK:         %[[B2T:.*]] = math.powf %{{.*}}, %[[TF]] : f64
// CHECK-NEXT:    %[[BIAS2:.*]] = arith.subf %{{.*}}, %[[B2T]] : f64
// CHECK-NEXT:    %[[LR:.*]] = call @piper_step_lr() : () -> f64
// CHECK-NEXT:    %[[WD:.*]] = arith.constant 1.000000e-02 : f64
// CHECK-NEXT:    %[[LRWD:.*]] = arith.mulf %[[LR]], %[[WD]] : f64
// CHECK:         %[[R:.*]]:3 = linalg.generic {{.*}} ins(%[[P]], %[[G]], %[[M]], %[[V]] : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
// CHECK:           arith.mulf %[[LRWD]], %{{.*}} : f64
// CHECK:           %[[MHAT:.*]] = arith.divf %{{.*}}, %[[BIAS1]] : f64
// CHECK-NEXT:      %[[VHAT:.*]] = arith.divf %{{.*}}, %[[BIAS2]] : f64
// CHECK-NEXT:      %[[ROOT:.*]] = math.sqrt %[[VHAT]] : f64
// CHECK:           arith.mulf %[[LR]], %[[MHAT]] : f64
// CHECK:           linalg.yield %{{.*}}, %{{.*}}, %{{.*}} : f32, f32, f32
// CHECK:         return %[[R]]#0, %[[R]]#1, %[[R]]#2
func.func @adamw_is_bias_corrections_and_one_generic(%p: tensor<4xf32>, %g: tensor<4xf32>, %m: tensor<4xf32>, %v: tensor<4xf32>, %s: tensor<i64>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %np, %nm, %nv = piper.adamw_update %p, %g, %m, %v, %s {lr = 1.0e-03 : f64, weight_decay = 1.0e-02 : f64} : tensor<4xf32>
  return %np, %nm, %nv : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// The runtime function is declared once per module.
// CHECK: func.func private @piper_step_lr() -> f64
