// RUN: split-file %s %t
// RUN: piper-opt %t/model.mlir --piper-autodiff --piper-build-dag --transform-preload-library="transform-library-paths=%t/place.mlir" --transform-interpreter -o %t/placed.mlir
// RUN: FileCheck %s --input-file=%t/placed.mlir
// Placing the two stages puts a transfer (send/recv pair) on every data edge
// between them, and the placed DAG computes the same step bit for bit.
// RUN: piper-opt %t/model.mlir --piper-autodiff --piper-build-dag -o %t/unplaced.mlir
// RUN: piper-interp %t/unplaced.mlir --steps=2 --print-grads > %t/unplaced.txt
// RUN: piper-interp %t/placed.mlir --steps=2 --print-grads > %t/placed.txt
// RUN: diff %t/unplaced.txt %t/placed.txt

// CHECK-LABEL: func.func @mlp(
// CHECK:         %[[F0:.*]]:2 = piper.task "F{PP=0}" {{.*}}devices = {pp = 0 : i64}
// Activations go forward once, to the stage that uses them.
// CHECK-NEXT:    %[[H:.*]] = piper.transfer "F{PP=0}#0->{pp=1}" %[[F0]]#0 from {pp = 0 : i64} to {pp = 1 : i64} stream "pp" : tensor<2x4xf64>
// CHECK-NEXT:    %[[F1:.*]]:2 = piper.task "F{PP=1}" @mlp.F.PP1(%[[H]], {{.*}}devices = {pp = 1 : i64}
// CHECK-NEXT:    %[[BI1:.*]]:2 = piper.task "BI{PP=1}" @mlp.BI.PP1({{.*}}%[[H]]
// CHECK-NEXT:    piper.task "BW{PP=1}" @mlp.BW.PP1(%[[H]]
// The input gradient goes back once.
// CHECK-NEXT:    %[[DH:.*]] = piper.transfer "BI{PP=1}#1->{pp=0}" %[[BI1]]#1 from {pp = 1 : i64} to {pp = 0 : i64} stream "pp"
// CHECK-NEXT:    piper.task "BI{PP=0}" @mlp.BI.PP0({{.*}}%[[DH]])
// CHECK-NOT:     piper.transfer

//--- model.mlir
piper.mesh @mesh axes = [dp = 2, pp = 2]
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

//--- place.mlir
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %s0 = transform.piper.match_nodes {PP = 0} in %root : (!transform.any_op) -> !transform.any_op
    %x0 = transform.piper.place %s0 on @mesh {pp = 0} stream "pp" : (!transform.any_op) -> !transform.any_op
    %s1 = transform.piper.match_nodes {PP = 1} in %root : (!transform.any_op) -> !transform.any_op
    %x1 = transform.piper.place %s1 on @mesh {pp = 1} : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}
