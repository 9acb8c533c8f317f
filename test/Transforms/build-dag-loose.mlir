// RUN: piper-opt %s --piper-autodiff --piper-optimizer="optimizer=sgd lr=0.1" --piper-build-dag | FileCheck %s
// Work outside every chunk becomes untagged tasks named after their pass.

// A weight used by two stages: its gradient sum and update lie outside the
// stages' chunks.
// CHECK-LABEL: func.func @tied(
// CHECK:         piper.task "F{PP=0}"
// CHECK:         piper.task "F{PP=1}"
// CHECK:         piper.task "BW{}" @tied.BW(
// CHECK:         piper.task "UPD{}" @tied.UPD(
// CHECK-LABEL: func.func private @tied.BW(
// CHECK:         piper.add {{.*}}{piper.pass = #piper<pass BW>}
// CHECK-LABEL: func.func private @tied.UPD(
// CHECK:         piper.sgd_update
func.func @tied(%w: tensor<4x4xf64> {piper.param = #piper.param<"w", normal(0.1)>},
                %x: tensor<2x4xf64>, %labels: tensor<2xi64>) -> tensor<f64> {
  %h = piper.annotate {PP = 0} -> tensor<2x4xf64> {
    %a = piper.linear %x, %w : tensor<2x4xf64>, tensor<4x4xf64> -> tensor<2x4xf64>
    piper.yield %a : tensor<2x4xf64>
  }
  %loss = piper.annotate {PP = 1} -> tensor<f64> {
    %o = piper.linear %h, %w : tensor<2x4xf64>, tensor<4x4xf64> -> tensor<2x4xf64>
    %l = piper.cross_entropy %o, %labels : tensor<2x4xf64>, tensor<2xi64> -> tensor<f64>
    piper.yield %l : tensor<f64>
  }
  return %loss : tensor<f64>
}

