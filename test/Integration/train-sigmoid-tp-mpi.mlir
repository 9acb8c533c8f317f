// piper.sigmoid is defined only by its ODS definition and its
// ElementwiseOpInterface methods (PiperNNOps.td, PiperNNOps.cpp). Under
// tensor parallelism (w_up split by columns, w_down by rows over tp = 2) it
// runs natively on each rank's half of the hidden channels, from the same
// definition, and 3 AdamW steps agree with the single-process interpreter
// (losses and final parameters, %numdiff at 1e-9).
// REQUIRES: mpi
// RUN: rm -rf %t && split-file %s %t
// RUN: piper-interp %t/model.mlir --steps=3 --optimizer=adamw --params-out=%t/ref.params > %t/ref.txt
// RUN: piper-compile %t/model.mlir --directives=%t/tp.json -o %t/tp.plan
// RUN: %mpiexec -np 2 piper-run %t/tp.plan --steps=3 --params-out=%t/tp.params > %t/tp.txt
// RUN: %numdiff %t/ref.txt %t/tp.txt && %numdiff %t/ref.params %t/tp.params
// RUN: FileCheck %s --input-file=%t/tp.txt
// The forward body on local types: sigmoid as a linalg.generic over 16 of
// the 32 channels, its VJP likewise.
// RUN: piper-compile %t/model.mlir --directives=%t/tp.json --emit=kernels | FileCheck %s --check-prefix=BODY

// CHECK: step 1 loss 1.88135920340815
// CHECK: step 3 loss

// BODY-LABEL: func.func private @step.F.PP0.local(
// BODY:         linalg.generic
// BODY-SAME:      ins(%{{.*}} : tensor<4x16xf64>)
// BODY:           math.exp
// BODY:           arith.divf
// BODY:         piper_comm_all_reduce_f64
// BODY-LABEL: func.func private @step.BI.PP0.local(
// BODY:         linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<4x16xf64>, tensor<4x16xf64>)
// BODY:           math.exp
// BODY:           arith.mulf

//--- model.mlir
module {
  piper.mesh @mesh axes = [dp = 1, tp = 2]
  func.func @step(%up: tensor<16x32xf64> {piper.param = #piper.param<"mlp.w_up", normal(0.5)>},
                  %down: tensor<32x8xf64> {piper.param = #piper.param<"mlp.w_down", normal(0.5)>},
                  %inputs: tensor<4x16xf64>, %labels: tensor<4xi64>) -> tensor<f64> {
    %loss = piper.annotate {PP = 0} -> tensor<f64> {
      %h = piper.linear %inputs, %up : tensor<4x16xf64>, tensor<16x32xf64> -> tensor<4x32xf64>
      %s = piper.sigmoid %h : tensor<4x32xf64>
      %o = piper.linear %s, %down : tensor<4x32xf64>, tensor<32x8xf64> -> tensor<4x8xf64>
      %l = piper.cross_entropy %o, %labels : tensor<4x8xf64>, tensor<4xi64> -> tensor<f64>
      piper.yield %l : tensor<f64>
    }
    return %loss : tensor<f64>
  }
}

//--- tp.json
{"mesh": "mesh", "directives": [
  {"shard": {"filter": {}, "kind": "tensor", "devices": ["tp"],
             "column": ["mlp.w_up"], "row": ["mlp.w_down"]}},
  {"replicate": {"filter": {}, "devices": ["dp"]}}]}
