// RUN: split-file %s %t
// RUN: piper-opt %t/model.mlir --piper-autodiff --piper-optimizer="optimizer=sgd lr=0.1" --piper-build-dag --transform-preload-library="transform-library-paths=%t/split.mlir" --transform-interpreter | FileCheck %s
// The split step computes the serial step at the global batch: the MLP
// written at 2 rows, split into 2 microbatches, matches the same MLP written
// at 4 rows over 3 steps (losses and gradients to 1e-9; only the
// association of the sums differs).
// RUN: piper-opt %t/serial.mlir --piper-autodiff --piper-build-dag -o %t/serial.dag.mlir
// RUN: piper-opt %t/model.mlir --piper-autodiff --piper-build-dag --transform-preload-library="transform-library-paths=%t/split.mlir" --transform-interpreter -o %t/split.dag.mlir
// RUN: piper-interp %t/serial.dag.mlir --steps=3 --print-grads > %t/serial.txt
// RUN: piper-interp %t/split.dag.mlir --steps=3 --print-grads > %t/split.txt
// RUN: %numdiff %t/serial.txt %t/split.txt
// The comparison can fail: the model at 2 rows unsplit sees other data.
// RUN: piper-opt %t/model.mlir --piper-autodiff --piper-build-dag -o %t/small.dag.mlir
// RUN: piper-interp %t/small.dag.mlir --steps=3 --print-grads > %t/small.txt
// RUN: not %numdiff %t/serial.txt %t/small.txt

// The data arguments take the global batch; parameters and state do not.
// CHECK-LABEL: func.func @mlp(
// CHECK-SAME:    %[[W1:[a-z0-9]+]]: tensor<8x4xf64> {piper.param
// CHECK-SAME:    %[[W2:[a-z0-9]+]]: tensor<4x4xf64> {piper.param
// CHECK-SAME:    %[[X:[a-z0-9]+]]: tensor<4x8xf64>, %[[L:[a-z0-9]+]]: tensor<4xi64>,
// CHECK-SAME:    tensor<8x4xf64> {piper.state
// Each copy reads its own contiguous rows.
// CHECK:      %[[X0:.*]] = piper.microbatch "arg2[MB=0]" %[[X]][0 of 2] : tensor<4x8xf64> -> tensor<2x8xf64>
// CHECK-NEXT: %[[X1:.*]] = piper.microbatch "arg2[MB=1]" %[[X]][1 of 2] : tensor<4x8xf64> -> tensor<2x8xf64>
// CHECK-NEXT: %[[L0:.*]] = piper.microbatch "arg3[MB=0]" %[[L]][0 of 2] : tensor<4xi64> -> tensor<2xi64>
// CHECK-NEXT: %[[L1:.*]] = piper.microbatch "arg3[MB=1]" %[[L]][1 of 2] : tensor<4xi64> -> tensor<2xi64>
// Copies share the bodies and parameters, and connect within a microbatch.
// CHECK-NEXT: %[[F00:.*]]:2 = piper.task "F{PP=0,MB=0}" @mlp.F.PP0(%[[X0]], %[[W1]]) {pass = #piper<pass F>, tags = {MB = 0 : i64, PP = 0 : i64}}
// CHECK-NEXT: %[[F10:.*]]:2 = piper.task "F{PP=1,MB=0}" @mlp.F.PP1(%[[F00]]#0, %[[W2]], %[[L0]])
// CHECK-NEXT: %[[BI10:.*]]:2 = piper.task "BI{PP=1,MB=0}" @mlp.BI.PP1(%[[F10]]#1, %[[L0]], %[[F00]]#0, %[[W2]])
// CHECK-NEXT: %[[BW10:.*]] = piper.task "BW{PP=1,MB=0}" @mlp.BW.PP1(%[[F00]]#0, %[[W2]], %[[BI10]]#0)
// CHECK-NEXT: %[[BI00:.*]] = piper.task "BI{PP=0,MB=0}" @mlp.BI.PP0(%[[F00]]#1, %[[BI10]]#1)
// CHECK-NEXT: %[[BW00:.*]] = piper.task "BW{PP=0,MB=0}" @mlp.BW.PP0(%[[X0]], %[[W1]], %[[BI00]])
// CHECK-NEXT: %[[F01:.*]]:2 = piper.task "F{PP=0,MB=1}" @mlp.F.PP0(%[[X1]], %[[W1]])
// CHECK-NEXT: %[[F11:.*]]:2 = piper.task "F{PP=1,MB=1}" @mlp.F.PP1(%[[F01]]#0, %[[W2]], %[[L1]])
// CHECK:      %[[BW11:.*]] = piper.task "BW{PP=1,MB=1}"
// CHECK:      %[[BW01:.*]] = piper.task "BW{PP=0,MB=1}" @mlp.BW.PP0(%[[X1]], %[[W1]], %{{.*}})
// The loss and the gradients are means over the microbatches, in order.
// CHECK-NEXT: %[[LOSS:.*]] = piper.accumulate "accumulate(F{PP=1}#0)" %[[F10]]#0, %[[F11]]#0 scale 5.000000e-01 : (tensor<f64>, tensor<f64>) -> tensor<f64>
// CHECK-NEXT: %[[G2:.*]] = piper.accumulate "accumulate(BW{PP=1}#0)" %[[BW10]], %[[BW11]] scale 5.000000e-01
// CHECK-NEXT: %[[G1:.*]] = piper.accumulate "accumulate(BW{PP=0}#0)" %[[BW00]], %[[BW01]] scale 5.000000e-01
// Updates run once per step.
// CHECK-NEXT: piper.task "UPD{PP=0}" @mlp.UPD.PP0(%[[W1]], %[[G1]], %{{.*}})
// CHECK-NEXT: piper.task "UPD{PP=1}" @mlp.UPD.PP1(%[[W2]], %[[G2]], %{{.*}})
// CHECK-NEXT: piper.dag_yield %[[LOSS]],
// The bodies keep the microbatch size; there is one per chunk and pass.
// CHECK:      func.func private @mlp.F.PP0(%{{.*}}: tensor<2x8xf64>, %{{.*}}: tensor<8x4xf64>)
// CHECK-NOT:  func.func private @mlp.F.PP0

//--- model.mlir
func.func @mlp(%w1: tensor<8x4xf64> {piper.param = #piper.param<"w1", normal(0.1)>},
               %w2: tensor<4x4xf64> {piper.param = #piper.param<"w2", normal(0.1)>},
               %x: tensor<2x8xf64>, %labels: tensor<2xi64>) -> tensor<f64> {
  %h = piper.annotate {PP = 0} -> tensor<2x4xf64> {
    %a = piper.linear %x, %w1 : tensor<2x8xf64>, tensor<8x4xf64> -> tensor<2x4xf64>
    %r = piper.gelu %a : tensor<2x4xf64>
    piper.yield %r : tensor<2x4xf64>
  }
  %loss = piper.annotate {PP = 1} -> tensor<f64> {
    %o = piper.linear %h, %w2 : tensor<2x4xf64>, tensor<4x4xf64> -> tensor<2x4xf64>
    %l = piper.cross_entropy %o, %labels : tensor<2x4xf64>, tensor<2xi64> -> tensor<f64>
    piper.yield %l : tensor<f64>
  }
  return %loss : tensor<f64>
}

//--- serial.mlir
func.func @mlp(%w1: tensor<8x4xf64> {piper.param = #piper.param<"w1", normal(0.1)>},
               %w2: tensor<4x4xf64> {piper.param = #piper.param<"w2", normal(0.1)>},
               %x: tensor<4x8xf64>, %labels: tensor<4xi64>) -> tensor<f64> {
  %h = piper.annotate {PP = 0} -> tensor<4x4xf64> {
    %a = piper.linear %x, %w1 : tensor<4x8xf64>, tensor<8x4xf64> -> tensor<4x4xf64>
    %r = piper.gelu %a : tensor<4x4xf64>
    piper.yield %r : tensor<4x4xf64>
  }
  %loss = piper.annotate {PP = 1} -> tensor<f64> {
    %o = piper.linear %h, %w2 : tensor<4x4xf64>, tensor<4x4xf64> -> tensor<4x4xf64>
    %l = piper.cross_entropy %o, %labels : tensor<4x4xf64>, tensor<4xi64> -> tensor<f64>
    piper.yield %l : tensor<f64>
  }
  return %loss : tensor<f64>
}

//--- split.mlir
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %all = transform.piper.match_nodes {} in %root : (!transform.any_op) -> !transform.any_op
    %mb = transform.piper.split %all into 2 microbatches : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}
