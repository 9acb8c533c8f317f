// Lowering of a device program: the program becomes a public function of
// the step arguments it reads, 2-D linear becomes linalg.matmul (+ a bias
// broadcast), relu and the sum of microbatches elementwise linalg.generic,
// cross_entropy and its VJP row reductions (LossToLinalg.cpp); after the full
// pipeline, matmul is a BLAS call, exp and log are LLVM intrinsics and the
// packed entry point exists.
// RUN: piper-compile %s --emit=kernels | FileCheck %s
// RUN: piper-compile %s --emit=lowered | FileCheck %s --check-prefix=LLVM

piper.mesh @mesh axes = [dp = 1]

func.func @step(%w: tensor<4x3xf64>, %b: tensor<3xf64>, %x: tensor<4x4xf64>,
                %labels: tensor<4xi64>) -> tensor<f64> {
  %cst = arith.constant dense<0.0> : tensor<f64>
  return %cst : tensor<f64>
}

func.func private @body(%x: tensor<2x4xf64>, %w: tensor<4x3xf64>,
                        %b: tensor<3xf64>, %labels: tensor<2xi64>)
    -> (tensor<f64>, tensor<2x3xf64>) {
  %one = arith.constant dense<1.0> : tensor<f64>
  %r:2 = piper.annotate {PP = 0} -> tensor<f64>, tensor<2x3xf64> {
    %h = piper.linear %x, %w, %b : tensor<2x4xf64>, tensor<4x3xf64>, tensor<3xf64> -> tensor<2x3xf64>
    %a = piper.relu %h : tensor<2x3xf64>
    %l = piper.cross_entropy %a, %labels : tensor<2x3xf64>, tensor<2xi64> -> tensor<f64>
    %g = piper.vjp "piper.cross_entropy" wrt [0] (%a, %labels) cotangents (%one) : (tensor<2x3xf64>, tensor<2xi64>), (tensor<f64>) -> tensor<2x3xf64>
    piper.yield %l, %g : tensor<f64>, tensor<2x3xf64>
  }
  return %r#0, %r#1 : tensor<f64>, tensor<2x3xf64>
}

piper.program @step.all role {} of @mesh step @step streams ["compute"] {
  %w = piper.input 0 : tensor<4x3xf64>
  %b = piper.input 1 : tensor<3xf64>
  %x0 = piper.input 2 microbatch 0 of 2 along 0 : tensor<2x4xf64>
  %y0 = piper.input 3 microbatch 0 of 2 along 0 : tensor<2xi64>
  %x1 = piper.input 2 microbatch 1 of 2 along 0 : tensor<2x4xf64>
  %y1 = piper.input 3 microbatch 1 of 2 along 0 : tensor<2xi64>
  %r0:2 = piper.launch "F{MB=0}" @body(%x0, %w, %b, %y0) on "compute" : (tensor<2x4xf64>, tensor<4x3xf64>, tensor<3xf64>, tensor<2xi64>) -> (tensor<f64>, tensor<2x3xf64>)
  %r1:2 = piper.launch "F{MB=1}" @body(%x1, %w, %b, %y1) on "compute" : (tensor<2x4xf64>, tensor<4x3xf64>, tensor<3xf64>, tensor<2xi64>) -> (tensor<f64>, tensor<2x3xf64>)
  %l = piper.sum "loss" %r0#0, %r1#0 scale 5.000000e-01 on "compute" : (tensor<f64>, tensor<f64>) -> tensor<f64>
  piper.output 0 %l : tensor<f64>
}

// CHECK-LABEL: func.func private @body(
// CHECK:         %[[FILL:.*]] = linalg.fill
// CHECK:         %[[MM:.*]] = linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<2x4xf64>, tensor<4x3xf64>) outs(%[[FILL]] : tensor<2x3xf64>)
// CHECK:         %[[H:.*]] = linalg.generic {{.*}} ins(%[[MM]], %{{.*}} : tensor<2x3xf64>, tensor<3xf64>)
// CHECK:         %[[A:.*]] = linalg.generic {{.*}} ins(%[[H]] : tensor<2x3xf64>)
// CHECK:           arith.cmpf ogt
// CHECK:           arith.select
// CHECK:         %[[MAX:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[A]] : tensor<2x3xf64>)
// CHECK:           arith.maximumf
// CHECK:         %[[SP:.*]]:2 = linalg.generic {{.*}} ins(%[[A]], %[[MAX]], %{{.*}} : tensor<2x3xf64>, tensor<2xf64>, tensor<2xi64>)
// CHECK:           math.exp
// CHECK:           linalg.index 1
// CHECK:         %[[TOTAL:.*]] = linalg.generic {{.*}} iterator_types = ["reduction"]} ins(%[[MAX]], %[[SP]]#0, %[[SP]]#1 : tensor<2xf64>, tensor<2xf64>, tensor<2xf64>) outs(%{{.*}} : tensor<f64>)
// CHECK:           math.log
// CHECK:         linalg.generic {{.*}} ins(%[[TOTAL]] : tensor<f64>)
// CHECK:           arith.divf
// CHECK-NOT:     call @piper_k_

// CHECK-LABEL: func.func @step.all(
// CHECK-SAME:      %[[W:.*]]: tensor<4x3xf64>, %[[B:.*]]: tensor<3xf64>, %[[X:.*]]: tensor<4x4xf64>, %[[Y:.*]]: tensor<4xi64>) -> tensor<f64>
// CHECK-SAME:      llvm.emit_c_interface
// CHECK-SAME:      piper_plan.inputs = array<i64: 0, 1, 2, 3>, piper_plan.outputs = array<i64: 0>
// CHECK:         %[[X0:.*]] = tensor.extract_slice %[[X]][0, 0] [2, 4] [1, 1]
// CHECK:         %[[X1:.*]] = tensor.extract_slice %[[X]][2, 0] [2, 4] [1, 1]
// CHECK:         %[[R0:.*]]:2 = call @body(%[[X0]], %[[W]], %[[B]],
// CHECK:         %[[R1:.*]]:2 = call @body(%[[X1]], %[[W]], %[[B]],
// CHECK:         %[[LOSS:.*]] = linalg.generic {{.*}} ins(%[[R0]]#0, %[[R1]]#0 : tensor<f64>, tensor<f64>)
// CHECK:           %[[SUM:.*]] = arith.addf
// CHECK:           %[[HALF:.*]] = arith.constant 5.000000e-01 : f64
// CHECK:           arith.mulf %[[SUM]], %[[HALF]] : f64
// CHECK:         return %[[LOSS]] : tensor<f64>


// LLVM-DAG:    llvm.func @piper_entry_step.all(%{{.*}}: !llvm.ptr)
// LLVM-DAG:    llvm.call @_mlir_ciface_step.all(
// LLVM-DAG:    llvm.call @piper_k_gemm_f64(
// LLVM-DAG:    llvm.intr.exp
// LLVM-DAG:    llvm.intr.log
// LLVM-NOT:    piper.
