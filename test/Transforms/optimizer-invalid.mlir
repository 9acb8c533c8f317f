// RUN: not piper-opt %s --piper-autodiff --piper-optimizer="optimizer=lamb" 2>&1 | FileCheck %s --check-prefix=KIND
// RUN: not piper-opt %s --piper-optimizer 2>&1 | FileCheck %s --check-prefix=NOGRAD
// The optimizer is sgd or adamw, and it needs gradients.

// KIND: error: piper-optimizer: unknown optimizer 'lamb'; expected sgd or adamw
// NOGRAD: error: piper-optimizer: no function returns gradients (piper.grad); run piper-autodiff first
func.func @model(%w: tensor<2x2xf64> {piper.param = #piper.param<"w", zeros>}, %l: tensor<2xi64>) -> tensor<f64> {
  %e = piper.cross_entropy %w, %l : tensor<2x2xf64>, tensor<2xi64> -> tensor<f64>
  return %e : tensor<f64>
}
