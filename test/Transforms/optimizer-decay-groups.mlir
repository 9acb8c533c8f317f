// Weight decay per parameter group (--piper-optimizer no-decay, defaults in
// runtime/include/piper-rt/train_defaults.h): by default a parameter of
// rank 0 or 1 (a bias, a norm gain) gets weight_decay = 0 and a matrix the
// optimizer's decay (0.01 for AdamW, the op's default, so not printed);
// `none` decays every parameter, `all` none, and name globs pick them.
// RUN: piper-opt %s --piper-autodiff --piper-optimizer | FileCheck %s --check-prefix=DEFAULT
// RUN: piper-opt %s --piper-autodiff --piper-optimizer="no-decay=none" | FileCheck %s --check-prefix=NONE
// RUN: piper-opt %s --piper-autodiff --piper-optimizer="no-decay=w*" | FileCheck %s --check-prefix=GLOB
// RUN: piper-opt %s --piper-autodiff --piper-optimizer="optimizer=sgd weight-decay=0.5 no-decay=all" | FileCheck %s --check-prefix=SGDALL
// RUN: not piper-opt %s --piper-autodiff --piper-optimizer="no-decay=w,,b" 2>&1 | FileCheck %s --check-prefix=BAD

// DEFAULT-LABEL: func.func @bias_and_gain
// DEFAULT:         piper.adamw_update {{.*}} {lr = 1.000000e-03 : f64, piper.pass = #piper<pass UPD>} : tensor<8x4xf64>
// DEFAULT:         piper.adamw_update {{.*}} {lr = 1.000000e-03 : f64, piper.pass = #piper<pass UPD>, weight_decay = 0.000000e+00 : f64} : tensor<4xf64>
// NONE-LABEL: func.func @bias_and_gain
// NONE:         piper.adamw_update {{.*}} {lr = 1.000000e-03 : f64, piper.pass = #piper<pass UPD>} : tensor<8x4xf64>
// NONE:         piper.adamw_update {{.*}} {lr = 1.000000e-03 : f64, piper.pass = #piper<pass UPD>} : tensor<4xf64>
// GLOB-LABEL: func.func @bias_and_gain
// GLOB:         piper.adamw_update {{.*}} {lr = 1.000000e-03 : f64, piper.pass = #piper<pass UPD>, weight_decay = 0.000000e+00 : f64} : tensor<8x4xf64>
// GLOB:         piper.adamw_update {{.*}} {lr = 1.000000e-03 : f64, piper.pass = #piper<pass UPD>} : tensor<4xf64>
// SGDALL-LABEL: func.func @bias_and_gain
// SGDALL-NOT:     weight_decay = 5
// SGDALL:         piper.sgd_update {{.*}} : tensor<8x4xf64>
// SGDALL-NOT:     weight_decay = 5
// BAD: error: piper-optimizer: no-decay rule 'w,,b' has an empty name pattern; expected rank<2, none, all or a comma-separated list of globs
func.func @bias_and_gain(%w: tensor<8x4xf64> {piper.param = #piper.param<"w", normal(0.1)>},
                         %b: tensor<4xf64> {piper.param = #piper.param<"b", zeros>},
                         %x: tensor<2x8xf64>, %labels: tensor<2xi64>) -> tensor<f64> {
  %a = piper.linear %x, %w, %b : tensor<2x8xf64>, tensor<8x4xf64>, tensor<4xf64> -> tensor<2x4xf64>
  %l = piper.cross_entropy %a, %labels : tensor<2x4xf64>, tensor<2xi64> -> tensor<f64>
  return %l : tensor<f64>
}
