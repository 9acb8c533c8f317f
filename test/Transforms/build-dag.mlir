// RUN: piper-opt %s --piper-autodiff --piper-optimizer="optimizer=sgd lr=0.1" --piper-build-dag | FileCheck %s
// RUN: piper-opt %s --piper-autodiff --piper-optimizer="optimizer=sgd lr=0.1" --piper-build-dag | piper-opt | FileCheck %s
// RUN: piper-opt %s --piper-autodiff --piper-optimizer="optimizer=sgd lr=0.1" --piper-build-dag --piper-print-summary -o /dev/null | FileCheck %s --check-prefix=SUMMARY
// SUMMARY: dag: 8 nodes (BI 2, BW 2, F 2, UPD 2), 10 data edges, 0 temporal edges
// One task per top-level chunk, each calling its outlined body; saved
// activations and cotangents are the data edges between tasks.

// CHECK-LABEL: func.func @mlp(
// CHECK-SAME:    %[[W1:[^:]*]]: tensor<8x16xf64> {piper.param
// CHECK-SAME:    %[[W2:[^:]*]]: tensor<16x4xf64> {piper.param
// CHECK-SAME:    %[[X:[^:]*]]: tensor<2x8xf64>, %[[L:[^:]*]]: tensor<2xi64>
// CHECK:         %[[DAG:.*]]:5 = piper.dag
// CHECK-NEXT:      %[[F0:.*]]:2 = piper.task "F{PP=0}" @mlp.F.PP0(%[[X]], %[[W1]]) {pass = #piper<pass F>, tags = {PP = 0 : i64}}
// CHECK-NEXT:      %[[F1:.*]]:2 = piper.task "F{PP=1}" @mlp.F.PP1(%[[F0]]#0, %[[W2]], %[[L]])
// CHECK-NEXT:      %[[BI1:.*]]:2 = piper.task "BI{PP=1}" @mlp.BI.PP1(%[[F1]]#1, %[[L]], %[[F0]]#0, %[[W2]])
// CHECK-NEXT:      %[[BW1:.*]] = piper.task "BW{PP=1}" @mlp.BW.PP1(%[[F0]]#0, %[[W2]], %[[BI1]]#0)
// CHECK-NEXT:      %[[BI0:.*]] = piper.task "BI{PP=0}" @mlp.BI.PP0(%[[F0]]#1, %[[BI1]]#1)
// CHECK-NEXT:      %[[BW0:.*]] = piper.task "BW{PP=0}" @mlp.BW.PP0(%[[X]], %[[W1]], %[[BI0]])
// CHECK-NEXT:      %[[U0:.*]]:2 = piper.task "UPD{PP=0}" @mlp.UPD.PP0(%[[W1]], %[[BW0]], %{{.*}})
// CHECK-NEXT:      %[[U1:.*]]:2 = piper.task "UPD{PP=1}" @mlp.UPD.PP1(%[[W2]], %[[BW1]], %{{.*}})
// CHECK-NEXT:      piper.dag_yield %[[F1]]#0, %[[U0]]#0, %[[U0]]#1, %[[U1]]#0, %[[U1]]#1
// CHECK:         return %[[DAG]]#0, %[[DAG]]#1, %[[DAG]]#2, %[[DAG]]#3, %[[DAG]]#4
// The loss seed constant is cloned into the body that uses it.
// CHECK-LABEL: func.func private @mlp.BI.PP1(
// CHECK:         arith.constant {{.*}}dense<1.000000e+00> : tensor<f64>
// CHECK:         piper.annotate {PP = 1} pass = BI
// CHECK-LABEL: func.func private @mlp.UPD.PP1(
// CHECK:         piper.annotate {PP = 1} pass = UPD
// CHECK:           piper.sgd_update
func.func @mlp(%w1: tensor<8x16xf64> {piper.param = #piper.param<"w1", normal(0.1)>},
               %w2: tensor<16x4xf64> {piper.param = #piper.param<"w2", normal(0.1)>},
               %x: tensor<2x8xf64>, %labels: tensor<2xi64>) -> tensor<f64> {
  %h = piper.annotate {PP = 0} -> tensor<2x16xf64> {
    %a = piper.linear %x, %w1 : tensor<2x8xf64>, tensor<8x16xf64> -> tensor<2x16xf64>
    %r = piper.relu %a : tensor<2x16xf64>
    piper.yield %r : tensor<2x16xf64>
  }
  %loss = piper.annotate {PP = 1} -> tensor<f64> {
    %o = piper.linear %h, %w2 : tensor<2x16xf64>, tensor<16x4xf64> -> tensor<2x4xf64>
    %l = piper.cross_entropy %o, %labels : tensor<2x4xf64>, tensor<2xi64> -> tensor<f64>
    piper.yield %l : tensor<f64>
  }
  return %loss : tensor<f64>
}
