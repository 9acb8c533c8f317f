// RUN: piper-opt %s -split-input-file -verify-diagnostics --piper-mixed-precision
// RUN: not piper-opt %s --piper-mixed-precision="precision=fp8" 2>&1 | FileCheck %s --check-prefix=PREC
// RUN: not piper-opt %s --piper-mixed-precision="grad-reduce-dtype=f16" 2>&1 | FileCheck %s --check-prefix=GRED
// RUN: not piper-opt %s --piper-mixed-precision="grad-reduce-dtype=bf16" 2>&1 | FileCheck %s --check-prefix=GBF16

// PREC: error: piper-mixed-precision: unknown precision 'fp8'; expected f32 or bf16-mixed
// GRED: error: piper-mixed-precision: unknown grad-reduce-dtype 'f16'; expected f32 or bf16
// GBF16: error: piper-mixed-precision: grad-reduce-dtype 'bf16' is not supported yet: a parameter's gradient is cast to f32 inside its backward task, before any reduction; use f32

// The pass rewrites f32 models: an f64 parameter is rejected at it.
// expected-error@+1 {{piper-mixed-precision: argument #0 of @f64_model_is_rejected has type 'tensor<2x2xf64>'; the pass rewrites f32 models}}
func.func @f64_model_is_rejected(%w: tensor<2x2xf64> {piper.param = #piper.param<"w", zeros>}, %l: tensor<2xi64>) -> tensor<f64> {
  %e = piper.cross_entropy %w, %l : tensor<2x2xf64>, tensor<2xi64> -> tensor<f64>
  return %e : tensor<f64>
}

// -----

// Running the pass twice: the casts of the first run hold bf16 values.
func.func @second_run_is_rejected(%w: tensor<2x2xf32> {piper.param = #piper.param<"w", zeros>}, %l: tensor<2xi64>) -> tensor<f32> {
  // expected-error@+1 {{piper-mixed-precision: 'piper.cast' uses 'tensor<2x2xbf16>'; the pass rewrites f32 models (and runs once)}}
  %h = piper.cast %w : tensor<2x2xf32> -> tensor<2x2xbf16>
  %f = piper.cast %h : tensor<2x2xbf16> -> tensor<2x2xf32>
  %e = piper.cross_entropy %f, %l : tensor<2x2xf32>, tensor<2xi64> -> tensor<f32>
  return %e : tensor<f32>
}

// -----

// After autodiff it is too late: the backward would stay f32.
func.func @differentiated_is_rejected(%w: tensor<2x2xf32> {piper.param = #piper.param<"w", zeros>}, %l: tensor<2xi64>, %dy: tensor<f32>) -> tensor<2x2xf32> {
  // expected-error@+1 {{piper-mixed-precision: 'piper.vjp' belongs to a differentiated step; run --piper-mixed-precision on the model, before --piper-autodiff}}
  %g = piper.vjp "piper.cross_entropy" wrt [0] (%w, %l) cotangents (%dy) : (tensor<2x2xf32>, tensor<2xi64>), (tensor<f32>) -> tensor<2x2xf32>
  return %g : tensor<2x2xf32>
}

// -----

// An op outside Piper's NN ops has no precision rule.
func.func @foreign_op_is_rejected(%w: tensor<2x2xf32> {piper.param = #piper.param<"w", zeros>}, %l: tensor<2xi64>) -> tensor<f32> {
  // expected-error@+1 {{piper-mixed-precision: 'arith.addf' is not a Piper NN op; its precision cannot be chosen}}
  %s = arith.addf %w, %w : tensor<2x2xf32>
  %e = piper.cross_entropy %s, %l : tensor<2x2xf32>, tensor<2xi64> -> tensor<f32>
  return %e : tensor<f32>
}
